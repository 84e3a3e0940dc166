#!/usr/bin/env bash
# Installs the Debian packages that the HTTP scale-out test and benchmark need, if missing:
# nginx (the load balancer of tests/http/test_scale_out.py and bench/http.py), wrk (bench/http.py's
# load generator), redis-server (the bus and task store tests) and chromium (the headless browser
# that renders `mcpio inspect`'s HTML report in tests/inspect/test_inspect.py). Idempotent and quiet when
# all is there.
#
# It starts no service: the tests run their own nginx with their own config, as a child process.
# While it installs, a policy-rc.d forbids the packages' maintainer scripts to start their
# system service (nginx would otherwise take port 80); anything that starts all the same is
# stopped through its own pid file.
set -euo pipefail

# command -> Debian package
declare -A PACKAGES=([nginx]=nginx [wrk]=wrk [redis-server]=redis-server [chromium]=chromium)
COMMANDS=(nginx wrk redis-server chromium)

# nginx and redis-server live in /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

missing=()
for cmd in "${COMMANDS[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${PACKAGES[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "ensure-services: installing the Debian packages ${missing[*]} with apt-get, as root" \
    "(about 15 MB for nginx, wrk and redis-server, about 100 MB for chromium without its" \
    "recommends; no service is started)" >&2

die() {
    echo "ensure-services: $*" >&2
    exit 1
}

[ "$(id -u)" -eq 0 ] || die "missing ${missing[*]}; installing needs root: sudo $0 (or apt-get install ${missing[*]})"
command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and no apt-get here: install them by hand"

POLICY=/usr/sbin/policy-rc.d
BACKUP=""
# pid files of the system services these packages would start
PIDFILES=(/run/nginx.pid /run/redis/redis-server.pid)
declare -A RUNNING_BEFORE=()
for pidfile in "${PIDFILES[@]}"; do
    if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        RUNNING_BEFORE[$pidfile]=1
    fi
done

restore_policy() {
    if [ -n "$BACKUP" ]; then
        mv -f "$BACKUP" "$POLICY"
    else
        rm -f "$POLICY"
    fi
}

if [ -e "$POLICY" ]; then
    BACKUP="$(mktemp /usr/sbin/policy-rc.d.ensure-services.XXXXXX)"
    cp -p "$POLICY" "$BACKUP"
fi
printf '#!/bin/sh\n# ensure-services.sh: no service starts while it installs\nexit 101\n' >"$POLICY"
chmod 755 "$POLICY"
trap restore_policy EXIT

log="$(mktemp)"
if ! {
    apt-get update -q &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
} >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    rm -f "$log"
    die "could not install ${missing[*]} (apt-get failed; its last lines are above)"
fi
rm -f "$log"

# Belt and braces: a service that started anyway (no policy-rc.d honoured) is stopped by its pid.
for pidfile in "${PIDFILES[@]}"; do
    if [ -z "${RUNNING_BEFORE[$pidfile]:-}" ] && [ -s "$pidfile" ]; then
        pid="$(cat "$pidfile")"
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            echo "ensure-services: stopped the system service that $pidfile names ($pid)" >&2
        fi
    fi
done

for cmd in "${COMMANDS[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || die "$cmd is still missing after installing ${missing[*]}"
done
