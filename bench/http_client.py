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
CLIENTS = {"mcpio": "mcpio", "sdk": f"mcp {SDK_VERSION}"}
CALLS = int(os.environ.get("MCPGEN_BENCH_HTTP_CLIENT_CALLS", "300"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_HTTP_CLIENT_ROUNDS", "3"))
CONCURRENCY = 16
WARMUP = 50
KINDS = (("sequential", "1 in flight"), ("concurrent", f"{CONCURRENCY} in flight"))
STARTUP_SECONDS = 30.0
DRIVER_TIMEOUT = 900.0


def installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def start_server(out: Path) -> tuple[subprocess.Popen[bytes], int]:
    with out.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, str(PEERS / "http_mcpio_server.py")],
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


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def drive(client: str, mode: str, url: str, server_pid: int) -> dict[str, Any]:
    command = [
        sys.executable,
        str(PEERS / f"{client}_client.py"),
        *("--url", url, "--server-pid", str(server_pid), "--mode", mode),
        *("--calls", str(CALLS), "--rounds", str(ROUNDS)),
        *("--concurrency", str(CONCURRENCY), "--warmup", str(WARMUP)),
    ]
    what = f"{CLIENTS[client]} client, mode {mode}"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=DRIVER_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"error: {what}: no answer within {DRIVER_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        raise SystemExit(f"error: {what}: the driver failed\n{done.stderr.strip()[-4000:]}")
    try:
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"error: {what}: no JSON report on stdout:\n{done.stdout!r}") from None
    if report["protocol"] != MODES[mode]:
        raise SystemExit(f"error: {what}: negotiated {report['protocol']!r}")
    return report


def us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def main() -> int:
    if installed("mcp") != SDK_VERSION:
        raise SystemExit(
            f"error: this benchmark needs mcp=={SDK_VERSION} (found: {installed('mcp')})"
        )
    if CALLS < 1 or ROUNDS < 1:
        raise SystemExit("error: the calls and rounds must be at least 1")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    reports: dict[tuple[str, str], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server, port = start_server(Path(tmp) / "server.out")
        try:
            for mode in MODES:
                for client in CLIENTS:
                    print(f"running {client} client, {mode} ...", file=sys.stderr)
                    url = f"http://127.0.0.1:{port}/mcp"
                    reports[(client, mode)] = drive(client, mode, url, server.pid)
        finally:
            stop(server)
    print("# Streamable HTTP tools/call: the mcpio client vs the official Python SDK's\n")
    print(
        f"Python {platform.python_version()}, mcp {installed('mcp')}, httpx "
        f"{installed('httpx')}, httpcore {installed('httpcore')}, sniffio "
        f"{installed('sniffio')}; {os.cpu_count()} CPUs; load average {load} before, "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} after.  "
    )
    print(
        f"One mcpio server (uvicorn, h11); {WARMUP} warm-up calls, then {ROUNDS} rounds of "
        f"{CALLS} calls, 1 and {CONCURRENCY} in flight. Rates: calls/s, median (min..max); CPU: "
        "µs per call over all rounds, 1 / 16 in flight.\n"
    )
    print(
        "| era (protocol) | client | 1 in flight | 16 in flight | client CPU µs/call "
        "| server CPU µs/call |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for mode, protocol in MODES.items():
        for client, name in CLIENTS.items():
            report = reports[(client, mode)]
            rates = [
                f"{statistics.median(report[k]):,.0f} ({min(report[k]):,.0f}.."
                f"{max(report[k]):,.0f})"
                for k, _ in KINDS
            ]
            cpu = report["cpu_us_per_call"]
            client_cpu = " / ".join(us(cpu[k]["client"]) for k, _ in KINDS)
            server_cpu = " / ".join(us(cpu[k]["server"]) for k, _ in KINDS)
            print(
                f"| {mode} ({protocol}) | {name} | {rates[0]} | {rates[1]} | {client_cpu} "
                f"| {server_cpu} |"
            )
    print("\n| era | calls | client CPU per call, SDK / mcpio |")
    print("|---|---|---:|")
    for mode in MODES:
        for kind, label in KINDS:
            ours = reports[("mcpio", mode)]["cpu_us_per_call"][kind]["client"]
            theirs = reports[("sdk", mode)]["cpu_us_per_call"][kind]["client"]
            print(f"| {mode} | {label} | {theirs / ours:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
