"""Streamable HTTP ``tools/call`` from the client's side: our client (mcpio) against the official
Python SDK's (mcp==2.3.0), both driving the same mcpio server over HTTP.

A benchmark, not a test: it prints figures (Markdown) and exits 0 whether or not ours is ahead.
It exits non-zero when the SDK is missing, the server does not start or a driver fails (an answer
that is not the echo of what was sent, the wrong protocol version negotiated, a crash).

The server is ``bench/peers/http_mcpio_server.py`` (uvicorn, h11; one process for the whole run,
so both clients meet the same server). Each client runs in its own process, the stdio bench's
drivers (``bench/peers/mcpio_client.py``, ``bench/peers/sdk_client.py``, the loop in
``bench/peers/driver.py``) given ``--url``: ``WARMUP`` calls, then ``ROUNDS`` rounds of ``CALLS``
sequential calls (one in flight) and ``CALLS`` calls with ``CONCURRENCY`` in flight, every answer
checked. Both eras: a legacy session (2025-11-25) and stateless 2026-07-28.

The figure that matters is the client's own CPU time per call (its process's user + system time
over the timed calls): the rates include the server's time and the machine's other load. The
server's CPU per call (from /proc) is printed beside it.

    MCPGEN_BENCH_HTTP_CLIENT_CALLS=500 MCPGEN_BENCH_HTTP_CLIENT_ROUNDS=5 \\
        .venv/bin/python bench/http_client.py
"""

from __future__ import annotations

import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

PEERS = Path(__file__).resolve().parent / "peers"
SDK_VERSION = "2.3.0"
MODES = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}  # mode -> the protocol it must get
# the floors first (bare_client.py --kind ...), then the MCP clients
BARE = {
    "raw": "raw asyncio socket (floor)",
    "aiohttp": "bare aiohttp POST",
    "httpx": "bare httpx POST",
}
CLIENTS = {**BARE, "mcpio": "mcpio", "sdk": f"mcp {SDK_VERSION}"}
CALLS = int(os.environ.get("MCPGEN_BENCH_HTTP_CLIENT_CALLS", "300"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_HTTP_CLIENT_ROUNDS", "3"))
RUNS = int(os.environ.get("MCPGEN_BENCH_HTTP_CLIENT_RUNS", "3"))  # interleaved: spread over runs
SERVER_HTTP = os.environ.get("MCPGEN_BENCH_HTTP_CLIENT_SERVER", "httptools")
CONCURRENCY = 16
WARMUP = 50
KINDS = (("sequential", "1 in flight"), ("concurrent", f"{CONCURRENCY} in flight"))
STARTUP_SECONDS = 30.0
DRIVER_TIMEOUT = 900.0
# with two CPUs or more the server is pinned to the first, each client to the second
PIN = (os.cpu_count() or 1) >= 2 and hasattr(os, "sched_setaffinity")
RETRIED: list[str] = []  # drivers that failed once (printed with the figures)


def installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def start_server(out: Path) -> tuple[subprocess.Popen[bytes], int]:
    with out.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, str(PEERS / "http_mcpio_server.py"), "--http", SERVER_HTTP],
            preexec_fn=pinned(0),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        first = out.read_text(errors="replace").split("\n", 1)
        if len(first) == 2 and first[0].strip().isdigit():
            return server, int(first[0])
        if server.poll() is not None or time.monotonic() > deadline:
            stop(server)
            raise SystemExit(f"error: the mcpio HTTP server did not start:\n{out.read_text()}")
        time.sleep(0.05)


def pinned(cpu: int) -> Any:
    if not PIN:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def drive(client: str, mode: str, url: str, server_pid: int) -> dict[str, Any]:
    script = ["bare_client.py", "--kind", client] if client in BARE else [f"{client}_client.py"]
    command = [
        sys.executable,
        str(PEERS / script[0]),
        *script[1:],
        *("--url", url, "--server-pid", str(server_pid), "--mode", mode),
        *("--calls", str(CALLS), "--rounds", str(ROUNDS)),
        *("--concurrency", str(CONCURRENCY), "--warmup", str(WARMUP)),
    ]
    what = f"{CLIENTS[client]} client, mode {mode}"
    for attempt in (1, 2):
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=DRIVER_TIMEOUT,
                preexec_fn=pinned(1),
            )
        except subprocess.TimeoutExpired:
            raise SystemExit(f"error: {what}: no answer within {DRIVER_TIMEOUT:.0f} s") from None
        if done.returncode == 0:
            break
        failure = done.stderr.strip()[-4000:]
        if attempt == 2:
            raise SystemExit(f"error: {what}: the driver failed twice\n{failure}")
        # a connection the loaded server dropped fails a whole run: one more try, said aloud
        RETRIED.append(f"{what}: {failure.splitlines()[-1] if failure else 'failed'}")
    try:
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"error: {what}: no JSON report on stdout:\n{done.stdout!r}") from None
    if report["protocol"] != MODES[mode]:
        raise SystemExit(f"error: {what}: negotiated {report['protocol']!r}")
    return report


def us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


Reports = dict[tuple[str, str], list[dict[str, Any]]]


def run_all(clients: list[str]) -> Reports:
    """Every client in every mode, RUNS times, interleaved (a burst of load on the shared
    machine falls on several clients, not all the runs of one)."""
    reports: Reports = {}
    with tempfile.TemporaryDirectory() as tmp:
        server, port = start_server(Path(tmp) / "server.out")
        try:
            for run in range(RUNS):
                for mode in MODES:
                    for client in clients:
                        print(f"run {run + 1}: {client}, {mode} ...", file=sys.stderr)
                        url = f"http://127.0.0.1:{port}/mcp"
                        reports.setdefault((client, mode), []).append(
                            drive(client, mode, url, server.pid)
                        )
        finally:
            stop(server)
    return reports


def spread(values: list[float], digits: int = 0) -> str:
    middle = statistics.median(values)
    return f"{middle:,.{digits}f} ({min(values):,.{digits}f}..{max(values):,.{digits}f})"


def cpu(runs: list[dict[str, Any]], kind: str, side: str = "client") -> list[float]:
    values = [run["cpu_us_per_call"][kind][side] for run in runs]
    return [v for v in values if v is not None]


def print_table(reports: Reports, clients: list[str]) -> None:
    print(
        "| era (protocol) | client | calls/s, 1 in flight | calls/s, 16 in flight "
        "| client CPU µs/call, 1 in flight | client CPU µs/call, 16 in flight "
        "| server CPU µs/call, 1 / 16 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode, protocol in MODES.items():
        for client in clients:
            runs = reports[(client, mode)]
            rates = [spread([r for run in runs for r in run[k]]) for k, _ in KINDS]
            mine = [spread(cpu(runs, k)) for k, _ in KINDS]
            server = " / ".join(
                us(statistics.median(cpu(runs, k, "server") or [0])) for k, _ in KINDS
            )
            print(
                f"| {mode} ({protocol}) | {CLIENTS[client]} | {rates[0]} | {rates[1]} "
                f"| {mine[0]} | {mine[1]} | {server} |"
            )


def ratios(reports: Reports, top: str, bottom: str, mode: str, kind: str) -> str:
    """top / bottom client CPU per call, run by run (the runs were interleaved)."""
    if (top, mode) not in reports or (bottom, mode) not in reports:
        return "n/a"
    pairs = zip(cpu(reports[(top, mode)], kind), cpu(reports[(bottom, mode)], kind), strict=True)
    return spread([a / b for a, b in pairs], 2) + "x"


def main() -> int:
    if installed("mcp") != SDK_VERSION:
        raise SystemExit(
            f"error: this benchmark needs mcp=={SDK_VERSION} (found: {installed('mcp')})"
        )
    if CALLS < 1 or ROUNDS < 1 or RUNS < 1:
        raise SystemExit("error: the calls, rounds and runs must be at least 1")
    clients = [c for c in CLIENTS if c != "aiohttp" or installed("aiohttp") != "not installed"]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    reports = run_all(clients)
    print("# Streamable HTTP tools/call: the mcpio client vs the official Python SDK's\n")
    print(
        f"Python {platform.python_version()}, mcp {installed('mcp')}, httpx "
        f"{installed('httpx')}, httpcore {installed('httpcore')}, aiohttp "
        f"{installed('aiohttp')}, httptools {installed('httptools')}; {os.cpu_count()} CPUs"
        f"{' (server pinned to CPU 0, clients to CPU 1)' if PIN else ''}; load average {load} "
        f"before, {' '.join(f'{x:.2f}' for x in os.getloadavg())} after.  "
    )
    print(
        f"One mcpio server (uvicorn, {SERVER_HTTP}); {RUNS} interleaved runs of each client, "
        f"each {WARMUP} warm-up calls then {ROUNDS} rounds of {CALLS} calls, 1 and "
        f"{CONCURRENCY} in flight. Figures: median (min..max); rates over rounds, CPU per run.\n"
    )
    print_table(reports, clients)
    print("\n| era | calls | mcpio / floor | SDK / mcpio | aiohttp / floor | httpx / floor |")
    print("|---|---|---:|---:|---:|---:|")
    for mode in MODES:
        for kind, label in KINDS:
            cells = [
                ratios(reports, "mcpio", "raw", mode, kind),
                ratios(reports, "sdk", "mcpio", mode, kind),
                ratios(reports, "aiohttp", "raw", mode, kind),
                ratios(reports, "httpx", "raw", mode, kind),
            ]
            print(f"| {mode} | {label} | {' | '.join(cells)} |")
    print("\nGoals (issue 37): mcpio / floor <= 2.5x and SDK / mcpio >= 5x at 1 in flight.")
    for line in RETRIED:
        print(f"\nRun again after a failure: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
