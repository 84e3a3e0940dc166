"""`make conformance`: the official MCP conformance suite against our fixture server and our
client, over HTTP.

Installs the pinned suite and a Node 22 (the machine's Node 20 cannot run it) from the committed
package-lock into tests/conformance/node_modules.

Server leg: starts `examples/everything_server.py http` on a free loopback port, runs
`conformance server --requirements <revision>` for 2025-11-25 and 2026-07-28, prints each run's
scored pass counts, and fails if any scored scenario fails (no expected-failures file). The
unscored scenarios it runs (pending ones, added after the release, and the Tasks extension's
`tasks-*`) are judged the same way, except those `UNJUDGED` names with its reason (printed on
every run); the extension scenarios are also listed one by one (a scenario the suite skips, with
no checks, is printed as such).

`--proxy` (`make conformance-proxy`): the server leg only, against `mcpio proxy` in front of the
fixture server over stdio in the other era; then FastMCP 4.1.6's server with the same fixtures
(tests/peers/fastmcp_conformance_server.py) scored directly and through `mcpio proxy` (each
scored scenario FastMCP passes directly must pass through the proxy). The scored scenarios that cannot pass through a proxy
to a legacy target are `EXCUSED`, each with its reason and its number of failed checks (printed
on every run); one that fails more checks, passes or no longer runs fails the run.

`--proxy-same-era` (`make conformance-same-era`, part of `make test`): the server leg through
`mcpio proxy` in front of the fixture server in the requirement set's own era; nothing is
excused (every scored scenario must pass, as directly).

Client leg: for each revision, the client scenarios its requirement set scores (`conformance
list --client --requirements <revision>`), the OAuth ones (`auth/...`, our `mcpio.auth._client`)
included, run one by one against `tests/conformance/client.py` (an `mcpio.Client`):
`conformance client --command ... --scenario <name> --spec-version <revision> --force`, which is
how `--requirements` runs each of them (the CLI does not combine `--requirements` with
`--scenario`). `NOT_RUN` lists the scored scenarios still left out, each with its reason; they
are printed with the counts, never skipped silently. Then the unscored auth scenarios we
support (`EXTRA_AUTH`: the 2025-03-26 back-compat ones, client credentials) and those added
after the release (`EXTRA_CLIENT`: JSON Schema 2020-12 kept as served), judged the same way;
the auth extensions left out are printed as not run, with the reason (`EXTRA_NOT_RUN`, empty
now), and an auth scenario of the suite that no list names fails the run. One at a
time, so the timing check of sse-retry is not starved of CPU. A scenario fails on any FAILURE check, and
also on a warning, a client error or a timeout (the CLI's own verdict for a single scenario).

Skills (SEP-2640, `tests/conformance/skills.py`): no requirement set names its scenarios, so
each one the suite lists (`sep-2640-*`) is run by name: the server ones against the fixture
server of each revision, which serves a skills directory this runner writes, and the client
ones with our client at both revisions; the counts and the time they took are printed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import skills
from npm_lock import npm_install_lock

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REQUIREMENTS = ("2025-11-25", "2026-07-28")
SCENARIO = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed$")
CHECK_COUNTS = re.compile(r"Passed: (\d+)/\d+, (\d+) failed, (\d+) warnings")
CLIENT = HERE / "client.py"
# Scored client scenarios not run yet, with the reason (printed on every run).
NOT_RUN: dict[str, str] = {}
# Auth scenarios no requirement set scores that we run anyway (revision, name): the 2025-03-26
# back-compat ones and every auth extension of the pinned suite (client credentials with a
# secret and with private_key_jwt, DPoP with and without nonces, workload identity, the
# enterprise-managed ID-JAG grant); they must pass too.
EXTRA_AUTH = (
    ("2025-03-26", "auth/2025-03-26-oauth-metadata-backcompat"),
    ("2025-03-26", "auth/2025-03-26-oauth-endpoint-fallback"),
    ("2025-11-25", "auth/client-credentials-basic"),
    ("2026-07-28", "auth/client-credentials-basic"),
    ("2025-11-25", "auth/client-credentials-jwt"),
    ("2026-07-28", "auth/client-credentials-jwt"),
    ("2025-11-25", "auth/dpop"),
    ("2026-07-28", "auth/dpop"),
    ("2025-11-25", "auth/dpop-nonce"),
    ("2026-07-28", "auth/dpop-nonce"),
    ("2025-11-25", "auth/wif-jwt-bearer"),
    ("2026-07-28", "auth/wif-jwt-bearer"),
    ("2025-11-25", "auth/enterprise-managed-authorization"),
    ("2026-07-28", "auth/enterprise-managed-authorization"),
)
# Unscored client scenarios we run too (revision, name): added after the release; they must pass.
EXTRA_CLIENT = (
    ("2025-11-25", "json-schema-2020-12-preservation"),
    ("2026-07-28", "json-schema-2020-12-preservation"),
)
# Unscored server scenarios whose failure does not fail the run, by name prefix, with the reason.
UNJUDGED: dict[str, str] = {}
# Unscored auth extensions we do not run, with the reason (printed on every run).
EXTRA_NOT_RUN: dict[str, str] = {}


def install() -> Path:
    bin_dir = HERE / "node_modules" / ".bin"
    with npm_install_lock(HERE):
        if not (bin_dir / "conformance").exists() or not (bin_dir / "node").exists():
            print(
                f"conformance: installing the npm packages of {HERE}/package.json (the"
                " conformance suite and Node 22) with `npm ci`: part of the about 570 MB of npm"
                " packages `make test` installs",
                file=sys.stderr,
                flush=True,
            )
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    return bin_dir


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the fixture server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("the fixture server did not start listening within 30 s")


def scored(output: str, unscored_too: bool = False) -> tuple[int, int, list[str]]:
    """Passed and failed checks of the scored scenarios (with `unscored_too`: of the unscored
    ones instead), and the failing scenarios' names."""
    summary = output.split("=== SUMMARY ===", 1)[-1]
    unscored = set(re.findall(r"^\s+[✓✗] (\S+) \(", summary, re.MULTILINE))
    passed = failed = 0
    failing = []
    for line in summary.splitlines():
        found = SCENARIO.match(line.strip())
        if found is None or (found.group(2) in unscored) != unscored_too:
            continue
        passed += int(found.group(3))
        failed += int(found.group(4))
        if found.group(1) == "✗":
            failing.append(found.group(2))
    return passed, failed, failing


def unjudged(name: str) -> str | None:
    """Why an unscored scenario's failure does not fail the run, or None."""
    return next((why for prefix, why in UNJUDGED.items() if name.startswith(prefix)), None)


def extensions(output: str) -> list[tuple[str, bool, int, int]]:
    """The extension scenarios of a server run: name, whether the suite marks it passing, and
    its passed and failed check counts."""
    summary = output.split("=== SUMMARY ===", 1)[-1]
    counts = {
        found.group(2): (int(found.group(3)), int(found.group(4)))
        for line in summary.splitlines()
        if (found := SCENARIO.match(line.strip())) is not None
    }
    marked = re.findall(r"^\s+([✓✗]) (\S+) \(extension\)", summary, re.MULTILINE)
    return [(name, mark == "✓", *counts.get(name, (0, 0))) for mark, name in marked]


def judge_extensions(output: str, revision: str) -> int:
    """Print the extension scenarios of a run; 1 if any fails."""
    found = extensions(output)
    if not found:
        return 0
    failing = [name for name, ok, _, failed in found if not ok or failed]
    skipped = [name for name, ok, checks, failed in found if ok and not checks and not failed]
    passed = sum(p for _, _, p, _ in found)
    print(
        f"conformance server --requirements {revision}, extension scenarios: "
        f"{len(found) - len(failing) - len(skipped)}/{len(found)} passed ({passed} checks), "
        f"{len(skipped)} skipped by the suite"
        + (f" (failing: {', '.join(failing)})" if failing else "")
    )
    for name, ok, checks, failed in found:
        verdict = "skipped by the suite (no checks)" if ok and not checks and not failed else (
            f"{checks} passed, {failed} failed"
        )  # fmt: skip
        print(f"  {'✓' if ok and not failed else '✗'} {name}: {verdict}")
    return 1 if failing else 0


# `--proxy`: the server leg against `mcpio proxy` in front of the fixture server (over stdio),
# the proxy's target pinned to the other era than the requirement set's.
OTHER_ERA = {"2025-11-25": "2026-07-28", "2026-07-28": "2025-11-25"}
# What cannot pass through a proxy to a legacy target, by requirement set: scenario -> (its
# failed checks there, why). Printed on every run; more failed checks than that, or an excused
# scenario that passes (or no longer runs), fail the run.
_CAPABILITIES_ONCE = (
    "a legacy session declares the client's capabilities once, at initialize: the proxy's "
    "session declares all it can carry (elicitation, sampling, roots), so the target cannot "
    "see that this request's client lacks {} (a session per capability set would show it, but "
    "the target would then refuse in its era's code, -32601, which the proxy cannot tell from "
    "other -32601 errors to answer the -32021 a 2026-07-28 client is owed)"
)
EXCUSED: dict[str, dict[str, tuple[int, str]]] = {
    "2026-07-28": {
        "server-stateless": (
            2,
            "ServerRejectsUndeclaredCapability: "
            + _CAPABILITIES_ONCE.format("sampling")
            + " (test_missing_capability runs instead of answering -32021)",
        ),
        "input-required-result-capability-check": (
            1,
            _CAPABILITIES_ONCE.format("elicitation")
            + " (the target asks it; the proxy then answers -32021)",
        ),
        "input-required-result-basic-elicitation": (
            1,
            "the suite checks the target's own inputRequests key (user_name); a legacy target "
            "asks with a real elicitation/create request, which carries no key, so the proxy "
            "names the round's keys itself",
        ),
    },
}


def fixture(
    port: int, proxy_mode: str | None, skills_dir: Path | None = None
) -> subprocess.Popen[bytes]:
    example = str(ROOT / "examples" / "everything_server.py")
    if proxy_mode is None:
        command = [sys.executable, example, "http", "--port", str(port)]
        command += ["--skills", str(skills_dir)] if skills_dir is not None else []
    else:
        command = [
            sys.executable, "-m", "mcpio", "proxy", "--transport", "http", "--port", str(port),
            "--mode", proxy_mode, "--", sys.executable, example, "stdio",
        ]  # fmt: skip
    return subprocess.Popen(command, stderr=subprocess.DEVNULL)


def server_leg(bin_dir: Path, env: dict[str, str], proxy: str | None = None) -> int:
    """The server leg at each revision: against the fixture server; with `proxy`, through
    `mcpio proxy` in front of it, its target in the other era ("other") or the same ("same")."""
    status = 0
    with tempfile.TemporaryDirectory(prefix="mcpio-skills-") as scratch:
        skills_dir = None if proxy else skills.write_fixture(Path(scratch))
        for revision in REQUIREMENTS:
            status = server_revision(bin_dir, env, revision, proxy, skills_dir) or status
    return status


def server_revision(
    bin_dir: Path, env: dict[str, str], revision: str, proxy: str | None, skills_dir: Path | None
) -> int:
    """The server leg at one revision against a fixture server of its own (`proxy`: see
    `server_leg`); with `skills_dir` (served by it) the Skills scenarios too. Through a proxy
    to a target of the same era nothing is excused."""
    status = 0
    port = free_port()
    target = None if proxy is None else OTHER_ERA[revision] if proxy == "other" else revision
    server = fixture(port, target, skills_dir)
    try:
        wait_until_listening(port, server)
        excused = EXCUSED.get(revision, {}) if proxy == "other" else {}
        if target is not None:
            print(f"through mcpio proxy, the fixture server in {target}:")
        status = server_run(bin_dir, env, port, revision, excused) or status
        if skills_dir is not None:
            started = time.monotonic()
            url = f"http://127.0.0.1:{port}/mcp"
            status = skills.server_runs(bin_dir, env, url, revision) or status
            print(f"    ({time.monotonic() - started:.1f} s)")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a proxy still closing its target: not a verdict
            server.kill()
            server.wait()
    return status


def scenario_counts(output: str) -> dict[str, tuple[int, int]]:
    """Each scenario of a run: its passed and failed check counts."""
    summary = output.split("=== SUMMARY ===", 1)[-1]
    return {
        found.group(2): (int(found.group(3)), int(found.group(4)))
        for line in summary.splitlines()
        if (found := SCENARIO.match(line.strip())) is not None
    }


def judge_excused(
    counts: dict[str, tuple[int, int]], failing: list[str], excused: dict[str, tuple[int, str]]
) -> tuple[list[str], list[str]]:
    """The failing scenarios that fail the run (not excused, or failing more checks than
    excused), and the lines to print about the excused ones (a stale one fails the run too)."""
    judged = [name for name in failing if name not in excused]
    lines = []
    for name, (allowed, why) in excused.items():
        passed, failed = counts.get(name, (0, 0))
        if name not in counts:
            judged.append(name)
            lines.append(f"  excused, but not run: {name}: take it off the excused list")
        elif failed == 0:
            judged.append(name)
            lines.append(f"  excused, but passed: {name}: take it off the excused list")
        elif failed > allowed:
            judged.append(name)
            lines.append(f"  excused for {allowed} failed checks, failed {failed}: {name}")
        else:
            lines.append(f"  excused: {name} ({failed} failed checks): {why}")
    return judged, lines


# `--proxy` too: FastMCP 4.1.6's server with the suite's 2025-11-25 fixtures (its questions asked
# as a session's requests), scored directly (HTTP) and through `mcpio proxy --transport http` in
# front of it (stdio, in 2025-11-25); the proxy must pass every scored scenario that FastMCP
# passes directly.
FASTMCP = ROOT / "tests" / "peers" / "fastmcp_conformance_server.py"


def fastmcp_commands(port: int) -> dict[str, list[str]]:
    fixture = [sys.executable, str(FASTMCP)]
    return {
        "directly": [*fixture, "http", "--port", str(port)],
        "through mcpio proxy": [
            sys.executable, "-m", "mcpio", "proxy", "--transport", "http", "--port", str(port),
            "--mode", "2025-11-25", "--", *fixture, "stdio",
        ],
    }  # fmt: skip


def fastmcp_leg(bin_dir: Path, env: dict[str, str]) -> int:
    status = 0
    for revision in REQUIREMENTS:
        failing: dict[str, list[str]] = {}
        for label in ("directly", "through mcpio proxy"):
            port = free_port()
            server = subprocess.Popen(fastmcp_commands(port)[label], stderr=subprocess.DEVNULL)
            try:
                wait_until_listening(port, server)
                failing[label] = fastmcp_run(bin_dir, env, port, revision, label)
            finally:
                stop(server)
        lost = [n for n in failing["through mcpio proxy"] if n not in failing["directly"]]
        if lost:
            print(f"  failing through the proxy only: {', '.join(lost)}")
            status = 1
    return status


def fastmcp_run(
    bin_dir: Path, env: dict[str, str], port: int, revision: str, label: str
) -> list[str]:
    """One scored run against FastMCP's server: its failing scored scenarios (printed)."""
    url = f"http://127.0.0.1:{port}/mcp"
    command = [str(bin_dir / "conformance"), "server", "--url", url, "--requirements", revision]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    passed, failed, failing = scored(done.stdout)
    print(
        f"FastMCP 4.1.6 {label}, conformance server --requirements {revision}: "
        f"{passed} passed, {failed} failed in scored scenarios"
        + (f" (failing: {', '.join(failing)})" if failing else "")
    )
    return failing if passed else ["(nothing passed)"]


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def server_run(
    bin_dir: Path,
    env: dict[str, str],
    port: int,
    revision: str,
    excused: dict[str, tuple[int, str]] | None = None,
) -> int:
    status = 0
    command = [
        str(bin_dir / "conformance"),
        "server",
        "--url",
        f"http://127.0.0.1:{port}/mcp",
        "--requirements",
        revision,
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    passed, failed, failing = scored(done.stdout)
    print(
        f"conformance server --requirements {revision}: "
        f"{passed} passed, {failed} failed in scored scenarios"
        + (f" (failing: {', '.join(failing)})" if failing else "")
    )
    bad, excuses = judge_excused(scenario_counts(done.stdout), failing, excused or {})
    for line in excuses:
        print(line)
    extra_passed, extra_failed, extra_failing = scored(done.stdout, unscored_too=True)
    judged = [name for name in extra_failing if unjudged(name) is None]
    print(
        f"  unscored scenarios: {extra_passed} passed, {extra_failed} failed"
        + (f" (failing: {', '.join(extra_failing)})" if extra_failing else "")
    )
    for name in extra_failing:
        if name not in judged:
            print(f"  not judged: {name}: {unjudged(name)}")
    extension_status = judge_extensions(done.stdout, revision)
    broken = bad if excused else (done.returncode != 0 or failed)
    if broken or not passed or judged or extension_status:
        print(done.stdout[-6000:], done.stderr[-2000:], sep="\n")
        status = 1
    return status


def client_scenarios(bin_dir: Path, env: dict[str, str], revision: str | None) -> list[str]:
    """The client scenarios the requirement set of `revision` scores (None: all of them)."""
    command = [str(bin_dir / "conformance"), "list", "--client"]
    command += ["--requirements", revision] if revision is not None else []
    listing = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    block = listing.stdout.split("Client scenarios (test against a client):", 1)
    if len(block) < 2:
        sys.exit(f"conformance list printed no client scenarios for {revision}")
    names: list[str] = []
    for line in block[1].splitlines()[1:]:
        if not line.startswith("  - "):
            break
        names.append(line[4:].split(" [", 1)[0].strip())
    return names


def run_client_scenario(
    bin_dir: Path, env: dict[str, str], revision: str, name: str
) -> tuple[int, int, int, bool, str]:
    """Passed, failed and warning checks of one scenario, whether it failed, and its output."""
    client = f"{shlex.quote(sys.executable)} {shlex.quote(str(CLIENT))}"
    command = [
        str(bin_dir / "conformance"),
        "client",
        "--command",
        client,
        "--scenario",
        name,
        "--spec-version",
        revision,
        "--force",
        "--verbose",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    try:
        checks = json.loads(done.stdout)
        statuses = [check.get("status") for check in checks]
        passed, failed = statuses.count("SUCCESS"), statuses.count("FAILURE")
        warnings = statuses.count("WARNING")
        bad = [
            f"  {check.get('status')} {check.get('id')}: "
            f"{check.get('errorMessage') or check.get('description')}"
            for check in checks
            if check.get("status") in ("FAILURE", "WARNING")
        ]
        output = "\n".join([*bad, done.stderr[-3000:]])
    except (ValueError, AttributeError):
        output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        found = CHECK_COUNTS.search(done.stderr)
        if found is None:  # skipped, or the runner itself broke
            return 0, 0, 0, True, output
        passed, failed, warnings = (int(group) for group in found.groups())
    failing = done.returncode != 0 or failed > 0 or passed == 0
    return passed, failed, warnings, failing, output


def client_leg(bin_dir: Path, env: dict[str, str]) -> int:
    status = 0
    started = time.monotonic()
    covered = {name for _, name in EXTRA_AUTH} | set(EXTRA_NOT_RUN)
    for revision in REQUIREMENTS:
        names = client_scenarios(bin_dir, env, revision)
        covered.update(names)
        skipped = [name for name in names if name in NOT_RUN]
        passed = failed = 0
        failing: list[str] = []
        auth_run = auth_ok = 0
        for name in names:
            if name in skipped:
                continue
            ok, bad, warned, broken, output = run_client_scenario(bin_dir, env, revision, name)
            passed += ok
            failed += bad
            if name.startswith("auth/"):
                auth_run += 1
                auth_ok += not broken
            if broken:
                failing.append(name + (f" ({warned} warnings)" if warned and not bad else ""))
                print(f"--- client scenario {name} at {revision}:\n{output}")
        print(
            f"conformance client --requirements {revision}: "
            f"{passed} passed, {failed} failed in scored scenarios; "
            f"auth scenarios: {auth_ok}/{auth_run} passed"
            + (f" (failing: {', '.join(failing)})" if failing else "")
        )
        for name in skipped:
            print(f"  not run: {name}: {NOT_RUN[name]}")
        if failing or not passed:
            status = 1
    ok_extra = 0
    for revision, name in (*EXTRA_AUTH, *EXTRA_CLIENT):
        ok, bad, warned, broken, output = run_client_scenario(bin_dir, env, revision, name)
        ok_extra += not broken
        if broken:
            status = 1
            print(f"--- client scenario {name} at {revision}:\n{output}")
    extras = len(EXTRA_AUTH) + len(EXTRA_CLIENT)
    print(
        "unscored client scenarios (auth back-compat and extensions, added after the release):"
        f" {ok_extra}/{extras} passed"
    )
    for name, reason in EXTRA_NOT_RUN.items():
        print(f"  not run: {name}: {reason}")
    # An auth scenario of the suite that none of the lists above names fails the run.
    for name in client_scenarios(bin_dir, env, None):
        if name.startswith("auth/") and name not in covered:
            print(f"  not run: {name}: in the suite, but in none of run.py's lists")
            status = 1
    skills_started = time.monotonic()
    status = skills.client_runs(bin_dir, env, CLIENT) or status
    print(f"  ({time.monotonic() - skills_started:.1f} s)")
    print(f"client leg: {time.monotonic() - started:.1f} s")
    return status


def client_proxy_leg(bin_dir: Path, env: dict[str, str]) -> int:
    """`--client-proxy`: the scored client scenarios but the OAuth ones (the proxy is not the
    suite's OAuth client), each run directly and with `mcpio proxy` (stdio, its target the
    suite's server in the run's revision) between the suite and our client; each scenario that
    passes directly must pass through the proxy."""
    status = 0
    via = dict(env, MCPIO_CONFORMANCE_VIA_PROXY="1")
    for revision in REQUIREMENTS:
        names = [n for n in client_scenarios(bin_dir, env, revision) if not n.startswith("auth/")]
        lost: list[str] = []
        totals = {"directly": [0, 0, 0], "through mcpio proxy": [0, 0, 0]}
        for name in names:
            verdicts = []
            for label, where in (("directly", env), ("through mcpio proxy", via)):
                ok, bad, _, broken, output = run_client_scenario(bin_dir, where, revision, name)
                totals[label][0] += ok
                totals[label][1] += bad
                totals[label][2] += not broken
                verdicts.append(broken)
                if broken and label != "directly":
                    print(f"--- client scenario {name} at {revision} through the proxy:\n{output}")
            if verdicts[1] and not verdicts[0]:
                lost.append(name)
        for label, (ok, bad, good) in totals.items():
            print(
                f"conformance client --requirements {revision} {label} (no auth/ scenarios): "
                f"{good}/{len(names)} scenarios passed; {ok} checks passed, {bad} failed"
            )
        if lost:
            print(f"  failing through the proxy only: {', '.join(lost)}")
            status = 1
    return status


def main() -> int:
    bin_dir = install()
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    if "--client-proxy" in sys.argv[1:]:
        return client_proxy_leg(bin_dir, env)
    if "--proxy" in sys.argv[1:]:
        status = server_leg(bin_dir, env, proxy="other")
        return fastmcp_leg(bin_dir, env) or status
    if "--proxy-same-era" in sys.argv[1:]:
        return server_leg(bin_dir, env, proxy="same")
    status = server_leg(bin_dir, env)
    return client_leg(bin_dir, env) or status


if __name__ == "__main__":
    sys.exit(main())
