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

    .venv/bin/python bench/tasks.py [--store memory | sqlite:PATH | redis://HOST:PORT/DB ...]

Without ``--store``: memory, SQLite (a file in a temporary directory) and Redis (a redis-server
started on loopback for the run; ``scripts/ensure-services.sh`` installs it), one table.
    MCPGEN_BENCH_TASKS=1000 MCPGEN_BENCH_ROUNDS=5 MCPGEN_BENCH_CONCURRENCY=50
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
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
from mcpio.tasks._client import TaskHandle  # noqa: E402
from mcpio.tasks._engine import TaskEngine  # noqa: E402
from mcpio.tasks._store import TaskStore, TaskStoreError  # noqa: E402
from mcpio.tasks._stores import open_task_store  # noqa: E402

TASKS = int(os.environ.get("MCPGEN_BENCH_TASKS", "1000"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "5"))
CONCURRENCY = int(os.environ.get("MCPGEN_BENCH_CONCURRENCY", "50"))
MODERN = "2026-07-28"


def open_store(spec: str) -> TaskStore:
    try:
        return open_task_store(spec)
    except (ValueError, TaskStoreError) as exc:
        sys.exit(f"bench/tasks.py: {exc}")


def start_redis(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server on a free loopback port, no persistence; its URL."""
    found = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/sbin")
    if found is None:
        sys.exit("bench/tasks.py: redis-server is not installed: run scripts/ensure-services.sh")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    argv = [found, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(tmp)]
    popen = subprocess.Popen(
        [*argv, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return popen, f"redis://127.0.0.1:{port}/0"
        except OSError:
            if popen.poll() is not None or time.monotonic() > deadline:
                popen.kill()
                sys.exit("bench/tasks.py: redis-server did not start")
            time.sleep(0.05)


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


async def run(name: str, spec: str) -> list[str]:
    """The table's rows for one store."""
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
    rows: list[str] = []
    for in_flight in (1, CONCURRENCY):
        sync = statistics.median(timings[("sync", in_flight)]) * 1e6
        task = statistics.median(timings[("task", in_flight)]) * 1e6
        rows.append(
            f"| {name} | {in_flight} | {sync:.0f} | {task:.0f} | {1e6 / task:.0f} |"
            f" {task - sync:+.0f} |"
        )
    return rows


def report(rows: list[str]) -> None:
    per_round = max(1, TASKS // ROUNDS)
    print("## Tasks through the runtime\n")
    print(
        f"{ROUNDS} rounds of {per_round} calls per kind and store (one in flight, then"
        f" {CONCURRENCY}); Python {platform.python_version()}, {platform.machine()},"
        f" load average {os.getloadavg()[0]:.1f}; in-memory transport, {MODERN}\n"
    )
    print(
        "| store | in flight | sync call µs | task µs (create + fetch) | tasks/s |"
        " added per call µs |"
    )
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    expected = 50 + ROUNDS * per_round * 2
    print(f"\nevery task completed exactly once with its own result ({expected} per store)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--store",
        action="append",
        help="memory | sqlite:PATH | redis://... (repeatable; default: all three)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-tasks-") as tmp:
        redis: subprocess.Popen[bytes] | None = None
        if args.store:
            stores = [(spec.partition(":")[0], spec) for spec in args.store]
        else:
            redis, url = start_redis(Path(tmp))
            stores = [
                ("memory", "memory"),
                ("SQLite", f"sqlite:{Path(tmp) / 'tasks.db'}"),
                ("Redis", url),
            ]
        try:
            rows = [row for name, spec in stores for row in anyio.run(run, name, spec)]
        finally:
            if redis is not None:
                redis.terminate()
                redis.wait(10)
    report(rows)


if __name__ == "__main__":
    main()
