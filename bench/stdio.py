"""stdio ``tools/call`` round trips per second: mcpio against the official Python SDK (mcp==2.3.0)
and FastMCP.

A benchmark, not a test: it prints figures (Markdown) and exits 0 whether or not the goals are
met. It exits non-zero only when the SDK or FastMCP is missing or a driver fails (an answer that
is not the echo of what was sent, the wrong protocol version negotiated, a crash).

The tool is a trivial ``echo(text: str) -> str``, served by ``bench/peers/mcpio_server.py`` (our
runtime), ``bench/peers/sdk_server.py`` (mcp==2.3.0) and ``bench/peers/fastmcp_server.py``
(FastMCP; each the same answer on the wire: one text block, no structured content). Each client
runs in its own process, a driver (``bench/peers/mcpio_client.py``, ``bench/peers/sdk_client.py``,
``bench/peers/fastmcp_client.py``, the loop in ``bench/peers/driver.py``) that spawns the server
over stdio, warms up (``WARMUP`` calls), then runs ``ROUNDS`` rounds, each timing ``CALLS``
sequential calls (one in flight: the round-trip rate) and ``CALLS`` calls with ``CONCURRENCY`` in
flight (throughput). Every answer is checked.

Both eras: mode ``"legacy"`` (the initialize handshake, 2025-11-25) and ``"2026-07-28"``.

* server comparison: our client drives our server, the SDK's server and FastMCP's;
* client comparison: our client, the SDK's client and FastMCP's drive our server;
* reference: the SDK's client against the SDK's server (the SDK's own stack).

FastMCP's server is much slower than the others (a hundred or two calls/s on a loaded 2-core
machine, with 16 in flight as with one), so the runs with a FastMCP side time ``FASTMCP_CALLS``
calls per round and kind instead of ``CALLS``; rates are per call either way.

Figures are calls/s, the median over the rounds, with the min..max spread; a ratio is
ours/theirs of the medians; the goals (against the SDK: the server >= 3x, the client >= 2x) are
judged on these. Both processes of a pair share
this machine's cores: the figures are end-to-end (client + server + pipes) and sensitive to other
load (the load average is printed). With one call in flight the two sides mostly take turns, so
a pair's rate includes the CPU time of the side that is not being compared, which pulls each
ratio towards 1x; the drivers therefore also report the CPU time per call of each process, and
the comparisons show that ratio too (for information, no goal).

    MCPGEN_BENCH_CALLS=2000 MCPGEN_BENCH_ROUNDS=9 MCPGEN_BENCH_FASTMCP_CALLS=1000 \
        .venv/bin/python bench/stdio.py
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

PEERS = Path(__file__).resolve().parent / "peers"
SDK_VERSION = "2.3.0"
MODES = ("legacy", "2026-07-28")
PROTOCOL = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}  # what each mode must negotiate
# Sized so that the whole run takes about a minute or two on a 2-core machine (the runs with an
# SDK side are the slow part); raise them for steadier figures.
CALLS = int(os.environ.get("MCPGEN_BENCH_CALLS", "1000"))  # timed calls per round and kind
# timed calls per round and kind of the runs with a FastMCP side
FASTMCP_CALLS = int(os.environ.get("MCPGEN_BENCH_FASTMCP_CALLS", "200"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "5"))
CONCURRENCY = 16  # calls in flight for the throughput figure
WARMUP = 200
GOAL = {"server": 3.0, "client": 2.0}  # ours/SDK, at least
DRIVER_TIMEOUT = 900.0  # seconds per driver process

# (client, server): which side is ours or the SDK's
PAIRS = (
    ("mcpio", "mcpio"),
    ("mcpio", "sdk"),
    ("mcpio", "fastmcp"),
    ("sdk", "mcpio"),
    ("fastmcp", "mcpio"),
    ("sdk", "sdk"),
)
KINDS = (("sequential", "1 in flight"), ("concurrent", f"{CONCURRENCY} in flight"))
NAME = {"mcpio": "mcpio", "sdk": f"mcp {SDK_VERSION}", "fastmcp": "FastMCP"}


@dataclass(frozen=True)
class Run:
    client: str
    server: str
    mode: str
    protocol: str
    rates: dict[str, list[float]]  # kind -> calls/s per round
    cpu: dict[str, dict[str, float | None]]  # kind -> side ("client", "server") -> CPU µs/call
    seconds: float  # wall time of the driver process, start-up included

    def median(self, kind: str) -> float:
        return statistics.median(self.rates[kind])

    def figure(self, kind: str) -> str:
        rates = self.rates[kind]
        return f"{self.median(kind):,.0f} ({min(rates):,.0f}..{max(rates):,.0f})"

    def cpu_figure(self, side: str) -> str:
        values = [self.cpu[kind][side] for kind, _ in KINDS]
        return " / ".join("n/a" if v is None else f"{v:,.0f}" for v in values)


def installed(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def drive(client: str, server: str, mode: str) -> Run:
    command = [
        sys.executable,
        str(PEERS / f"{client}_client.py"),
        "--server",
        str(PEERS / f"{server}_server.py"),
        "--mode",
        mode,
        "--calls",
        str(FASTMCP_CALLS if "fastmcp" in (client, server) else CALLS),
        "--rounds",
        str(ROUNDS),
        "--concurrency",
        str(CONCURRENCY),
        "--warmup",
        str(WARMUP),
    ]
    what = f"{NAME[client]} client -> {NAME[server]} server, mode {mode}"
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=DRIVER_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"error: {what}: no answer within {DRIVER_TIMEOUT:.0f} s") from None
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"error: {what}: the driver failed (exit status {done.returncode})\n"
            f"{done.stderr.strip()[-4000:]}"
        )
    try:
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"error: {what}: no JSON report on stdout:\n{done.stdout!r}") from None
    if report["protocol"] != PROTOCOL[mode]:
        raise SystemExit(
            f"error: {what}: negotiated {report['protocol']!r}, expected {PROTOCOL[mode]!r}"
        )
    rates = {kind: [float(x) for x in report[kind]] for kind, _ in KINDS}
    if any(len(values) != ROUNDS or min(values) <= 0 for values in rates.values()):
        raise SystemExit(f"error: {what}: a malformed report: {report!r}")
    cpu = {kind: dict(report["cpu_us_per_call"][kind]) for kind, _ in KINDS}
    return Run(client, server, mode, report["protocol"], rates, cpu, seconds)


def verdict(ratio: float, goal: float) -> str:
    return "met" if ratio >= goal else "missed"


def cpu_ratio(mine: Run, theirs: Run, kind: str, side: str) -> str:
    cpu_mine, cpu_theirs = mine.cpu[kind][side], theirs.cpu[kind][side]
    return "n/a" if not cpu_mine or cpu_theirs is None else f"{cpu_theirs / cpu_mine:.2f}x"


def comparison(
    title: str,
    runs: dict[tuple[str, str, str], Run],
    ours: tuple[str, str],
    sdk: tuple[str, str],
    fastmcp: tuple[str, str],
) -> None:
    side = "server" if ours[0] == sdk[0] else "client"
    goal = GOAL[side]
    print(f"## {title}\n")
    print(
        f"| era (protocol) | calls | mcpio {side} | mcp {SDK_VERSION} {side} | FastMCP {side} "
        f"| ours/SDK | goal | | ours/FastMCP | {side} CPU/call, SDK/ours "
        f"| {side} CPU/call, FastMCP/ours |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for mode in MODES:
        mine, theirs, fast = runs[(*ours, mode)], runs[(*sdk, mode)], runs[(*fastmcp, mode)]
        for kind, label in KINDS:
            ratio = mine.median(kind) / theirs.median(kind)
            print(
                f"| {mode} ({mine.protocol}) | {label} | {mine.figure(kind)} "
                f"| {theirs.figure(kind)} | {fast.figure(kind)} | {ratio:.2f}x "
                f"| >= {goal:g}x | {verdict(ratio, goal)} "
                f"| {mine.median(kind) / fast.median(kind):.2f}x "
                f"| {cpu_ratio(mine, theirs, kind, side)} | {cpu_ratio(mine, fast, kind, side)} |"
            )
    print()


def report(runs: dict[tuple[str, str, str], Run], load_before: str, elapsed: float) -> None:
    print("# stdio tools/call round trips: mcpio vs the official Python SDK and FastMCP\n")
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"mcp {installed('mcp')}, mcp-types {installed('mcp-types')}, "
        f"pydantic {installed('pydantic')} (pydantic-core {installed('pydantic-core')}), "
        f"anyio {installed('anyio')}, fastmcp {installed('fastmcp')}, "
        f"mcpgen {installed('mcpgen')}; "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs.  "
    )
    print(f"Load average (1, 5, 15 min): {load_before} before, {load()} after.  ")
    print(
        f"Each client in its own process, spawning its server over stdio; {WARMUP} warm-up "
        f"calls, then {ROUNDS} rounds of {CALLS} timed calls ({FASTMCP_CALLS} with a "
        "FastMCP side), one in flight and "
        f"{CONCURRENCY} in flight. Tool: `echo(text)`, every answer checked. "
        f"Figures: calls/s, median (min..max) over the rounds; ratios: of the medians. "
        f"Whole run: {elapsed:.0f} s.\n"
    )
    print("## All runs\n")
    print(f"| client | server | era (protocol) | 1 in flight | {CONCURRENCY} in flight | wall s |")
    print("|---|---|---|---:|---:|---:|")
    for mode in MODES:
        for client, server in PAIRS:
            run = runs[(client, server, mode)]
            print(
                f"| {NAME[client]} | {NAME[server]} | {mode} ({run.protocol}) "
                f"| {run.figure('sequential')} | {run.figure('concurrent')} | {run.seconds:.1f} |"
            )
    print()
    print(
        f"CPU time per call in µs (1 in flight / {CONCURRENCY} in flight), over all rounds: the "
        "client's process, and the server's (read from /proc, in 10 ms ticks).\n"
    )
    print("| client | server | era | client CPU µs/call | server CPU µs/call |")
    print("|---|---|---|---:|---:|")
    for mode in MODES:
        for client, server in PAIRS:
            run = runs[(client, server, mode)]
            print(
                f"| {NAME[client]} | {NAME[server]} | {mode} | {run.cpu_figure('client')} "
                f"| {run.cpu_figure('server')} |"
            )
    print()
    comparison(
        "Servers (each driven by the mcpio client)",
        runs,
        ("mcpio", "mcpio"),
        ("mcpio", "sdk"),
        ("mcpio", "fastmcp"),
    )
    comparison(
        "Clients (each driving the mcpio server)",
        runs,
        ("mcpio", "mcpio"),
        ("sdk", "mcpio"),
        ("fastmcp", "mcpio"),
    )
    print("## Reference: each stack end to end (mcpio/mcpio vs mcp/mcp), no goal\n")
    print("| era (protocol) | calls | mcpio -> mcpio | mcp -> mcp | ratio |")
    print("|---|---|---:|---:|---:|")
    for mode in MODES:
        mine, theirs = runs[("mcpio", "mcpio", mode)], runs[("sdk", "sdk", mode)]
        for kind, label in KINDS:
            ratio = mine.median(kind) / theirs.median(kind)
            print(
                f"| {mode} ({mine.protocol}) | {label} | {mine.figure(kind)} "
                f"| {theirs.figure(kind)} | {ratio:.2f}x |"
            )
    print()


def main() -> int:
    if installed("mcp") != SDK_VERSION:
        raise SystemExit(
            f"error: this benchmark needs mcp=={SDK_VERSION} (found: {installed('mcp')}); "
            f"install it with: {sys.executable} -m pip install mcp=={SDK_VERSION}"
        )
    if installed("fastmcp") == "not installed":
        raise SystemExit(
            f"error: this benchmark needs fastmcp; install it with: {sys.executable} -m pip "
            "install fastmcp (a dev dependency: pip install -e '.[dev]')"
        )
    if CALLS < 1 or ROUNDS < 1 or FASTMCP_CALLS < 1:
        raise SystemExit(
            "error: MCPGEN_BENCH_CALLS, MCPGEN_BENCH_FASTMCP_CALLS and MCPGEN_BENCH_ROUNDS must "
            "be at least 1"
        )
    load_before = load()
    start = time.perf_counter()
    runs: dict[tuple[str, str, str], Run] = {}
    for mode in MODES:
        for client, server in PAIRS:
            print(f"running {client} client -> {server} server, {mode} ...", file=sys.stderr)
            runs[(client, server, mode)] = drive(client, server, mode)
    report(runs, load_before, time.perf_counter() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
