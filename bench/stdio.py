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

The rounds are interleaved: all the pairs of an era are started (and warmed up) first, then round
1 of every pair runs, then round 2, and so on, each round beginning with the next pair (the
drivers run ``--paced``). A comparison's two sides thus meet the machine's changing load alike;
run one after the other, minutes apart, they did not (on a VM whose cross-CPU wake-ups cost tens
of µs, the one-in-flight rate of one pair moved by 1.5x between runs, the ratios with it).

Both eras: mode ``"legacy"`` (the initialize handshake, 2025-11-25) and ``"2026-07-28"``.

* server comparison: our client drives our server, the SDK's server and FastMCP's;
* client comparison: our client, the SDK's client and FastMCP's drive our server;
* reference: the SDK's client against the SDK's server (the SDK's own stack).

FastMCP's server is much slower than the others (a hundred or two calls/s on a loaded 2-core
machine, with 16 in flight as with one), so the runs with a FastMCP side time ``FASTMCP_CALLS``
calls per round and kind instead of ``CALLS``; rates are per call either way.

Figures are calls/s, the median over the rounds, with the min..max spread; a ratio is
ours/theirs of the medians; the goals (against the SDK: the server >= 3x, the client >= 2x) are
judged on these. Beside it, "per round": the ratio of the two sides' figures in each round (run
side by side), median (min..max): the spread of the comparison itself. Both processes of a pair share
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
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, NoReturn, cast

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
    seconds: float  # wall time of its timed rounds

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


class Driver:
    """A client driver process run ``--paced``: warmed up when started, then one round per
    `round()` (both kinds), so that the bench interleaves the rounds of all its pairs."""

    def __init__(self, client: str, server: str, mode: str) -> None:
        self.client, self.server, self.mode = client, server, mode
        self.what = f"{NAME[client]} client -> {NAME[server]} server, mode {mode}"
        calls = FASTMCP_CALLS if "fastmcp" in (client, server) else CALLS
        command = [
            sys.executable,
            str(PEERS / f"{client}_client.py"),
            *("--server", str(PEERS / f"{server}_server.py"), "--mode", mode),
            *("--calls", str(calls), "--rounds", "0", "--concurrency", str(CONCURRENCY)),
            *("--warmup", str(WARMUP), "--paced"),
        ]
        self.errors = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.rounds: list[dict[str, Any]] = []
        self.seconds = 0.0  # wall time of the timed rounds, with the pacing between them
        self.protocol = str(self._next("ready")["protocol"])
        if self.protocol != PROTOCOL[mode]:
            self.fail(f"negotiated {self.protocol!r}, expected {PROTOCOL[mode]!r}")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")  # the end

    def _next(self, key: str) -> dict[str, Any]:
        """The driver's next JSON line that has `key` (a library may print other lines)."""
        while True:
            try:
                line = self.lines.get(timeout=DRIVER_TIMEOUT)
            except queue.Empty:
                self.fail(f"no answer within {DRIVER_TIMEOUT:.0f} s")
            if not line:
                self.fail(f"the driver ended (exit status {self.process.wait()})")
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if isinstance(report, dict) and key in report:
                return cast(dict[str, Any], report)

    def round(self) -> None:
        """Run one round (both kinds) and keep its figures."""
        assert self.process.stdin is not None
        start = time.perf_counter()
        self.process.stdin.write("round\n")
        self.process.stdin.flush()
        report = self._next("sequential")
        self.seconds += time.perf_counter() - start
        if any(float(report[kind]) <= 0 for kind, _ in KINDS):
            self.fail(f"a malformed report: {report!r}")
        self.rounds.append(report)

    def finish(self) -> Run:
        """End the driver (its stdin ends) and return its figures."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            status = self.process.wait(timeout=DRIVER_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail(f"did not end within {DRIVER_TIMEOUT:.0f} s")
        if status != 0:
            self.fail(f"the driver failed (exit status {status})")
        rates = {kind: [float(r[kind]) for r in self.rounds] for kind, _ in KINDS}
        cpu: dict[str, dict[str, float | None]] = {}
        for kind, _ in KINDS:  # rounds of equal calls: the mean of the rounds' figures
            per_round = [r["cpu_us_per_call"][kind] for r in self.rounds]
            cpu[kind] = {
                side: None if None in (v := [f[side] for f in per_round]) else statistics.mean(v)
                for side in ("client", "server")
            }
        return Run(self.client, self.server, self.mode, self.protocol, rates, cpu, self.seconds)

    def fail(self, why: str) -> NoReturn:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.errors.seek(0)
        raise SystemExit(f"error: {self.what}: {why}\n{self.errors.read().strip()[-4000:]}")


def interleaved(mode: str) -> dict[tuple[str, str, str], Run]:
    """Every pair's rounds in one mode, interleaved: round r of every pair, then round r + 1,
    each round starting from the next pair (so that no pair always follows the same one). The
    pairs meet the machine's other load alike; one pair's drift shows in every pair."""
    drivers: list[Driver] = []
    try:
        for client, server in PAIRS:  # started one at a time: the warm-ups do not overlap
            print(f"starting {client} client -> {server} server, {mode} ...", file=sys.stderr)
            drivers.append(Driver(client, server, mode))
        for r in range(ROUNDS):
            print(f"round {r + 1}/{ROUNDS}, {mode} ...", file=sys.stderr)
            for i in range(len(drivers)):
                drivers[(r + i) % len(drivers)].round()
        return {(d.client, d.server, mode): d.finish() for d in drivers}
    finally:
        for driver in drivers:
            if driver.process.poll() is None:
                driver.process.kill()
                driver.process.wait()


def verdict(ratio: float, goal: float) -> str:
    return "met" if ratio >= goal else "missed"


def cpu_ratio(mine: Run, theirs: Run, kind: str, side: str) -> str:
    cpu_mine, cpu_theirs = mine.cpu[kind][side], theirs.cpu[kind][side]
    return "n/a" if not cpu_mine or cpu_theirs is None else f"{cpu_theirs / cpu_mine:.2f}x"


def paired(mine: Run, theirs: Run, kind: str) -> str:
    """The ratio of each round's two figures (the rounds run side by side): median (min..max)."""
    ratios = [a / b for a, b in zip(mine.rates[kind], theirs.rates[kind], strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}..{max(ratios):.2f})"


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
        f"| ours/SDK | per round | goal | | ours/FastMCP | {side} CPU/call, SDK/ours "
        f"| {side} CPU/call, FastMCP/ours |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for mode in MODES:
        mine, theirs, fast = runs[(*ours, mode)], runs[(*sdk, mode)], runs[(*fastmcp, mode)]
        for kind, label in KINDS:
            ratio = mine.median(kind) / theirs.median(kind)
            print(
                f"| {mode} ({mine.protocol}) | {label} | {mine.figure(kind)} "
                f"| {theirs.figure(kind)} | {fast.figure(kind)} | {ratio:.2f}x "
                f"| {paired(mine, theirs, kind)} | >= {goal:g}x | {verdict(ratio, goal)} "
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
        f"Figures: calls/s, median (min..max) over the rounds; ratios: of the medians "
        "(per round: of each round's two figures, median (min..max)); the rounds of all pairs "
        "interleaved. "
        f"Whole run: {elapsed:.0f} s.\n"
    )
    print("## All runs\n")
    print(
        f"| client | server | era (protocol) | 1 in flight | {CONCURRENCY} in flight | rounds s |"
    )
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
        runs.update(interleaved(mode))
    report(runs, load_before, time.perf_counter() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
