#!/usr/bin/env bash
# `make test` once its prerequisites are done: pytest in the foreground and, beside it on the
# second core, the static checks and both conformance runs (each lane waits on processes and
# the network much of its time). The second lane's output goes to a log, shown at the end.
set -u
cd "$(dirname "$0")/.."
log=.test-logs/checks.log
mkdir -p .test-logs
(
    set -e
    make --no-print-directory lint typecheck
    .venv/bin/mcp-codegen check
    make --no-print-directory conformance conformance-same-era
) >"$log" 2>&1 &
checks=$!
.venv/bin/pytest
tests=$?
wait "$checks"
checked=$?
echo "---- lint, check, typecheck, conformance (log: $log) ----"
cat "$log"
echo "make test: pytest exited $tests; lint, check, typecheck and conformance exited $checked"
[ "$tests" -eq 0 ] && [ "$checked" -eq 0 ]
