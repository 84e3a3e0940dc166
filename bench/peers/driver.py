"""The timing loop both client drivers share (``mcpio_client.py`` and ``sdk_client.py``).

A driver spawns the server over stdio with its client, then warms up with ``warmup`` calls (the
first half sequential, the rest with ``concurrency`` in flight); then ``rounds`` rounds, each
timing ``calls`` sequential calls (one in flight), then ``calls`` calls with ``concurrency`` in
flight. Every call sends a new text and must get exactly that text back, else the driver stops
with an error (exit status 2).

It prints one JSON object on stdout (nothing else goes there): calls/s per round and kind, and
the CPU time per call of the client (this process) and of the server (its child process, read
from ``/proc``; ``null`` where that is not available), summed over the rounds, per kind.

With ``--paced`` it runs its rounds on demand instead, so that a bench can interleave the rounds
of several drivers (each kept warm, its server running) and compare them under the same load:
after the warm-up it prints a ready line (``{"ready": true, "protocol": ...}``), then one round
per line it reads on stdin, each answered by one JSON line (that round's calls/s per kind and CPU
µs per call), until stdin ends.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio

# text sent -> text answered (the driver checks the result's shape and reads its one text block)
Echo = Callable[[str], Awaitable[str]]
# (server command, mode) -> a connected client: (negotiated protocol version, echo)
Connect = Callable[[list[str], str], AbstractAsyncContextManager[tuple[str, Echo]]]
KINDS = ("sequential", "concurrent")


class WrongAnswer(Exception):
    """A response that is not the echo of what was sent."""


def arguments(client: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=f"stdio tools/call driver: the {client} client")
    parser.add_argument("--server", help="the server script (run with python)")
    parser.add_argument("--url", help="instead: a running HTTP server's MCP endpoint")
    parser.add_argument("--server-pid", type=int, help="with --url: its process (for its CPU)")
    parser.add_argument("--mode", required=True, help='"legacy" or a modern revision')
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per round and kind")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight (throughput)")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--profile", help="write a cProfile (CPU time) of the timed rounds here")
    parser.add_argument(
        "--paced",
        action="store_true",
        help="after the warm-up, print a ready line, then run one round per line read on stdin "
        "and print its figures (a JSON line), until stdin ends: lets a bench interleave drivers",
    )
    args = parser.parse_args()
    if (args.server is None) == (args.url is None):
        parser.error("give --server or --url")
    return args


def check(sent: str, got: object) -> None:
    if got != sent:
        raise WrongAnswer(f"echo answered {got!r} to {sent!r}")


async def sequential(echo: Echo, texts: Iterator[str]) -> None:
    for text in texts:
        check(text, await echo(text))


async def concurrent(echo: Echo, texts: Iterator[str], concurrency: int) -> None:
    async def worker() -> None:
        for text in texts:  # one shared iterator: each text is sent exactly once
            check(text, await echo(text))

    async with anyio.create_task_group() as tasks:
        for _ in range(concurrency):
            tasks.start_soon(worker)


def texts(tag: str, n: int) -> Iterator[str]:
    return (f"{tag}-{i}" for i in range(n))


def child_pids() -> list[int]:
    """This process's children (the server), from /proc; empty where there is none."""
    pids: list[int] = []
    try:
        for task in Path("/proc/self/task").iterdir():
            pids += [int(p) for p in (task / "children").read_text().split()]
    except OSError:
        return []
    return pids


def cpu_of(pid: int | None) -> float | None:
    """A process's user + system CPU seconds so far (Linux /proc; 10 ms ticks)."""
    if pid is None:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Meter:
    """Wall time, this process's CPU time, and the server's CPU time of timed sections."""

    def __init__(self, server_pid: int | None) -> None:
        self.server_pid = server_pid
        self.client_cpu = dict.fromkeys(KINDS, 0.0)
        self.server_cpu: dict[str, float | None] = dict.fromkeys(KINDS, 0.0)
        self.calls = dict.fromkeys(KINDS, 0)

    async def time(self, kind: str, run: Coroutine[Any, Any, None], calls: int) -> float:
        server_start = cpu_of(self.server_pid)
        cpu_start = time.process_time()
        start = time.perf_counter()
        await run
        wall = time.perf_counter() - start
        self.client_cpu[kind] += time.process_time() - cpu_start
        server_end = cpu_of(self.server_pid)
        used = self.server_cpu[kind]
        if used is None or server_start is None or server_end is None:
            self.server_cpu[kind] = None
        else:
            self.server_cpu[kind] = used + server_end - server_start
        self.calls[kind] += calls
        return calls / wall

    def per_call_us(self) -> dict[str, dict[str, float | None]]:
        out: dict[str, dict[str, float | None]] = {}
        for kind in KINDS:
            n = self.calls[kind] or 1
            server = self.server_cpu[kind]
            out[kind] = {
                "client": 1e6 * self.client_cpu[kind] / n,
                "server": None if server is None else 1e6 * server / n,
            }
        return out


async def drive(args: argparse.Namespace, client: str, connect: Connect) -> dict[str, Any]:
    # the connect function gets the server's command, or a one-item list holding the URL
    command = [args.url] if args.url else [sys.executable, args.server]
    rates: dict[str, list[float]] = {kind: [] for kind in KINDS}
    # CPU time, not wall time: waiting for the server is not the client's cost
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    before = set(child_pids())
    async with connect(command, args.mode) as (protocol, echo):
        spawned = [pid for pid in child_pids() if pid not in before]
        meter = Meter(args.server_pid if args.url else spawned[0] if len(spawned) == 1 else None)
        await sequential(echo, texts("warm-seq", args.warmup // 2))
        await concurrent(echo, texts("warm-conc", args.warmup - args.warmup // 2), args.concurrency)
        if args.paced:
            await paced(args, protocol, echo, meter)
            return {}
        if profiler is not None:
            profiler.enable()
        for r in range(args.rounds):
            run = sequential(echo, texts(f"s{r}", args.calls))
            rates["sequential"].append(await meter.time("sequential", run, args.calls))
            run = concurrent(echo, texts(f"c{r}", args.calls), args.concurrency)
            rates["concurrent"].append(await meter.time("concurrent", run, args.calls))
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
    return {
        "client": client,
        "server": args.server or args.url,
        "mode": args.mode,
        "protocol": protocol,
        "calls": args.calls,
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "warmup": args.warmup,
        "python": platform.python_version(),
        **rates,
        "cpu_us_per_call": meter.per_call_us(),
    }


async def paced(args: argparse.Namespace, protocol: str, echo: Echo, meter: Meter) -> None:
    """Rounds on demand: a ready line (the protocol), then for each line read on stdin one round
    and its figures on one line (calls/s per kind; this round's CPU µs per call), until stdin
    ends. Waiting for the next line is outside every timed section."""
    print(json.dumps({"ready": True, "protocol": protocol}), flush=True)
    r = 0
    while await anyio.to_thread.run_sync(sys.stdin.readline):
        rates: dict[str, float] = {}
        this_round = Meter(meter.server_pid)
        run = sequential(echo, texts(f"s{r}", args.calls))
        rates["sequential"] = await this_round.time("sequential", run, args.calls)
        run = concurrent(echo, texts(f"c{r}", args.calls), args.concurrency)
        rates["concurrent"] = await this_round.time("concurrent", run, args.calls)
        print(json.dumps({**rates, "cpu_us_per_call": this_round.per_call_us()}), flush=True)
        r += 1


def first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def main(client: str, connect: Connect, run: Callable[..., Any] = anyio.run) -> int:
    """`run`: what runs the driver's loop (a client library's own runner, if it has one)."""
    args = arguments(client)
    report: dict[str, Any] | None = None
    wrong: BaseException | None = None
    try:
        report = run(drive, args, client, connect)
    except* WrongAnswer as group:  # raised inside task groups: it comes wrapped
        wrong = first_leaf(group)
    if wrong is not None or report is None:
        print(f"error: {client} client, {args.server}, mode {args.mode}: {wrong}", file=sys.stderr)
        return 2
    if not args.paced:
        print(json.dumps(report))
    return 0
