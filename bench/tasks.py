"""Tasks through the runtime: what running a tool call as a task costs over answering it
synchronously, in one process (our client and server over the in-memory transport, 2026-07-28,
the Tasks extension declared), with a task store given on the command line.

A benchmark, not a test: it prints a Markdown table and exits 0; non-zero when a task ends
wrong (every task must complete once, with its own result) or the store cannot be opened.

The tool is a trivial `echo(text) -> text` registered with `task="optional"`:

- sync: `TASKS` calls by a client that does not declare the extension (plain results);
- task: `TASKS` calls by a client that does (each answered with a `CreateTaskResult`, the
  handler run in the background), then one `tasks/get` per task (its inlined result checked;
  a task not yet completed is read again);
- both with one call in flight, then `CONCURRENCY` in flight.

Per call: µs (the median of `ROUNDS` rounds, the rounds taking turns so that the load of a
shared machine falls on both alike); tasks/s; the added cost of a task (create + fetch) over a
synchronous call. No peer is measured beside it: the official Python SDK (mcp 2.3.0) has no
tasks runtime.

    .venv/bin/python bench/tasks.py [--store memory | sqlite:PATH | redis://HOST:PORT/DB]
    MCPGEN_BENCH_TASKS=1000 MCPGEN_BENCH_ROUNDS=5 MCPGEN_BENCH_CONCURRENCY=50
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path: keep bench/http.py from hiding
# the standard library's `http` package.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import anyio  # noqa: E402

from mcpio import Client, Server  # noqa: E402
from mcpio.tasks.client import TaskHandle  # noqa: E402
from mcpio.tasks.engine import TaskEngine  # noqa: E402
from mcpio.tasks.store import MemoryTaskStore, TaskStore  # noqa: E402

TASKS = int(os.environ.get("MCPGEN_BENCH_TASKS", "1000"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "5"))
CONCURRENCY = int(os.environ.get("MCPGEN_BENCH_CONCURRENCY", "50"))
MODERN = "2026-07-28"


def open_store(spec: str) -> TaskStore:
    """`memory`, or what `open_task_store` (the task stores' module) opens, where present."""
    if spec == "memory":
        return MemoryTaskStore()
    try:
        from mcpio.tasks.stores import open_task_store  # pyright: ignore
    except ImportError:
        sys.exit(f"task store {spec!r}: only `memory` is available in this checkout")
    return open_task_store(spec)  # pyright: ignore


def make_server(store: TaskStore) -> Server:
    server = Server("bench-tasks", "1.0", tasks=TaskEngine(store))

    @server.tool(task="optional")
    def echo(text: str) -> str:
        return text

    return server


def text_of(result: Any) -> str:
    return result.content[0].text


async def sync_calls(client: Client, n: int, in_flight: int, tag: str) -> None:
    async def one(i: int) -> None:
        result = await client.call_tool("echo", {"text": f"{tag}{i}"})
        if text_of(result) != f"{tag}{i}":
            sys.exit(f"sync call {i}: wrong answer {text_of(result)!r}")

    await in_parallel(one, n, in_flight)


async def task_calls(client: Client, n: int, in_flight: int, tag: str) -> None:
    async def one(i: int) -> None:
        handle = await client.start_tool("echo", {"text": f"{tag}{i}"})
        if not isinstance(handle, TaskHandle):
            sys.exit(f"task call {i}: answered without a task")
        while (await handle.refresh())["status"] != "completed":
            if handle.status != "working":
                sys.exit(f"task {i}: ended {handle.status}")
            await anyio.sleep(0)
        if handle.task["result"]["content"][0]["text"] != f"{tag}{i}":
            sys.exit(f"task {i}: wrong result {handle.task['result']!r}")

    await in_parallel(one, n, in_flight)


async def in_parallel(one: Callable[[int], Awaitable[None]], n: int, in_flight: int) -> None:
    limit = anyio.Semaphore(in_flight)

    async def bounded(i: int) -> None:
        async with limit:
            await one(i)

    async with anyio.create_task_group() as group:
        for i in range(n):
            group.start_soon(bounded, i)


async def run(spec: str) -> None:
    store = open_store(spec)
    server = make_server(store)
    completed: list[str] = []

    async def count(record: Any) -> None:
        if record.status == "completed":
            completed.append(record.task_id)

    server.tasks.watchers.append(count)
    per_round = max(1, TASKS // ROUNDS)
    timings: dict[tuple[str, int], list[float]] = {}
    async with (
        Client(server, mode=MODERN) as plain,
        Client(server, mode=MODERN, tasks=True) as tasking,
    ):
        await sync_calls(plain, 50, 1, "warm")
        await task_calls(tasking, 50, 1, "warm")
        for r in range(ROUNDS):
            for in_flight in (1, CONCURRENCY):
                for kind, calls in (("sync", sync_calls), ("task", task_calls)):
                    client = plain if kind == "sync" else tasking
                    started = time.perf_counter()
                    await calls(client, per_round, in_flight, f"{kind}{r}-{in_flight}-")
                    elapsed = time.perf_counter() - started
                    timings.setdefault((kind, in_flight), []).append(elapsed / per_round)
    await store.close()
    expected = 50 + ROUNDS * per_round * 2
    if len(completed) != expected or len(set(completed)) != expected:
        sys.exit(f"{len(completed)} completions ({len(set(completed))} tasks), expected {expected}")
    print(f"## Tasks through the runtime, store `{spec}`\n")
    print(
        f"{ROUNDS} rounds of {per_round} calls per kind (one in flight, then {CONCURRENCY});"
        f" Python {platform.python_version()}, {platform.machine()},"
        f" load average {os.getloadavg()[0]:.1f}; in-memory transport, {MODERN}\n"
    )
    print("| in flight | sync call µs | task µs (create + fetch) | tasks/s | added per call µs |")
    print("|---|---|---|---|---|")
    for in_flight in (1, CONCURRENCY):
        sync = statistics.median(timings[("sync", in_flight)]) * 1e6
        task = statistics.median(timings[("task", in_flight)]) * 1e6
        print(f"| {in_flight} | {sync:.0f} | {task:.0f} | {1e6 / task:.0f} | {task - sync:+.0f} |")
    print(f"\nevery task completed exactly once with its own result ({expected} tasks)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--store", default="memory", help="memory | sqlite:PATH | redis://...")
    args = parser.parse_args()
    anyio.run(run, args.store)


if __name__ == "__main__":
    main()
