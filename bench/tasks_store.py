"""The task stores on their own: `MemoryTaskStore`, `SqliteTaskStore` (a file in a temporary
directory) and `RedisTaskStore` (a redis-server started on loopback), each beside the bare backend
doing the same writes and reads (the floor the store adds its rules to: the thread hop, the JSON,
the compare-and-set).

A benchmark, not a test: it prints a Markdown table and exits 0; non-zero when redis-server is
missing (``scripts/ensure-services.sh`` installs it) or a store answers wrong.

Each task goes through what the runtime does to it: ``create`` (working), ``save`` (working, with
a status message), ``save`` (completed, with a result) and ``get``. One at a time: µs per
operation (median), and tasks per second; then ``CONCURRENCY`` tasks in flight at once: tasks
per second. The backends take turns in ``ROUNDS`` rounds (a tenth of the tasks each), so that
the load of a shared machine falls on them alike.

    MCPGEN_BENCH_TASKS=1000      tasks per run (default 1000)
    MCPGEN_BENCH_CONCURRENCY=50  tasks in flight in the concurrent run (default 50)
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path: keep bench/http.py from hiding
# the standard library's `http` package.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import anyio  # noqa: E402
import anyio.to_thread  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from mcpio.tasks._redis import RedisTaskStore  # noqa: E402
from mcpio.tasks._sqlite import SqliteTaskStore  # noqa: E402
from mcpio.tasks._store import MemoryTaskStore, TaskRecord, TaskStore, record_json  # noqa: E402

TASKS = int(os.environ.get("MCPGEN_BENCH_TASKS", "1000"))
CONCURRENCY = int(os.environ.get("MCPGEN_BENCH_CONCURRENCY", "50"))
ROUNDS = 10
STARTUP_SECONDS = 20.0
PHASES = ("create", "save working", "save completed", "get")
RESULT = {"content": [{"type": "text", "text": "x" * 200}], "isError": False}


class BenchError(Exception):
    pass


def new_task() -> TaskRecord:
    now = time.time()
    return TaskRecord(uuid.uuid4().hex, "alice", "tools/call", "working", now, now, 3_600_000)


class Backend:
    """The four operations of one task, on a store or on a bare backend."""

    async def create(self, task: TaskRecord) -> None:
        raise NotImplementedError

    async def save(self, task: TaskRecord) -> None:
        raise NotImplementedError

    async def get(self, task: TaskRecord) -> TaskRecord | None:
        raise NotImplementedError

    async def close(self) -> None:
        pass


class OnStore(Backend):
    def __init__(self, store: TaskStore) -> None:
        self.store = store

    async def create(self, task: TaskRecord) -> None:
        await self.store.create(task)

    async def save(self, task: TaskRecord) -> None:
        if await self.store.save(task) != task:
            raise BenchError(f"save of {task.task_id} ({task.status}) not stored")

    async def get(self, task: TaskRecord) -> TaskRecord | None:
        return await self.store.get(task.task_id, task.owner)

    async def close(self) -> None:
        await self.store.close()


class BareSqlite(Backend):
    """sqlite3 with the store's pragmas: INSERT, UPDATE, SELECT of the JSON, in a worker thread."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE t (id TEXT PRIMARY KEY, record TEXT NOT NULL)")
        self.limiter = anyio.CapacityLimiter(1)

    async def _run(self, sql: str, args: tuple[Any, ...]) -> Any:
        def run() -> Any:
            return self.db.execute(sql, args).fetchone()

        return await anyio.to_thread.run_sync(run, limiter=self.limiter)

    async def create(self, task: TaskRecord) -> None:
        await self._run("INSERT INTO t VALUES (?, ?)", (task.task_id, record_json(task)))

    async def save(self, task: TaskRecord) -> None:
        await self._run("UPDATE t SET record = ? WHERE id = ?", (record_json(task), task.task_id))

    async def get(self, task: TaskRecord) -> TaskRecord | None:
        (text,) = await self._run("SELECT record FROM t WHERE id = ?", (task.task_id,))
        return TaskRecord(**json.loads(text))

    async def close(self) -> None:
        self.db.close()


class BareRedis(Backend):
    """redis-py on the same server: SET with PX, SET, GET of the JSON."""

    def __init__(self, url: str) -> None:
        self.redis = Redis.from_url(url)

    async def create(self, task: TaskRecord) -> None:
        await self.redis.set(f"bare:{task.task_id}", record_json(task), px=3_600_000)

    async def save(self, task: TaskRecord) -> None:
        await self.redis.set(f"bare:{task.task_id}", record_json(task), keepttl=True)

    async def get(self, task: TaskRecord) -> TaskRecord | None:
        text = await self.redis.get(f"bare:{task.task_id}")
        return None if text is None else TaskRecord(**json.loads(text))

    async def close(self) -> None:
        await self.redis.aclose()


async def one_task(backend: Backend, times: list[list[float]] | None) -> None:
    task = new_task()
    working = dataclasses.replace(task, status_message="half way", updated_at=time.time())
    done = dataclasses.replace(working, status="completed", result=RESULT, updated_at=time.time())
    steps: list[Callable[[], Awaitable[Any]]] = [
        lambda: backend.create(task),
        lambda: backend.save(working),
        lambda: backend.save(done),
        lambda: backend.get(done),
    ]
    got: Any = None
    for i, step in enumerate(steps):
        start = time.perf_counter()
        got = await step()
        if times is not None:
            times[i].append(time.perf_counter() - start)
    if got != done:
        raise BenchError(f"get of {task.task_id} read {got!r}")


@dataclass
class Row:
    name: str
    backend: Backend
    times: list[list[float]] = field(default_factory=lambda: [[] for _ in PHASES])
    sequential_s: float = 0.0
    concurrent_s: float = 0.0


async def sequential(row: Row, count: int) -> None:
    start = time.perf_counter()
    for _ in range(count):
        await one_task(row.backend, row.times)
    row.sequential_s += time.perf_counter() - start


async def concurrent(row: Row, count: int) -> None:
    limiter = anyio.Semaphore(CONCURRENCY)

    async def bounded() -> None:
        async with limiter:
            await one_task(row.backend, None)

    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(bounded)
    row.concurrent_s += time.perf_counter() - start


async def measure(rows: list[Row]) -> None:
    """Every backend in turn, `ROUNDS` times, so that a busy moment of the machine falls on all
    of them alike."""
    for row in rows:
        for _ in range(20):  # warm up: connections, statements, scripts
            await one_task(row.backend, None)
    for run in (sequential, concurrent):
        for _ in range(ROUNDS):
            for row in rows:
                await run(row, TASKS // ROUNDS)
    for row in rows:
        await row.backend.close()


def tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None:
        raise BenchError(f"{name} is not installed: run scripts/ensure-services.sh")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(tmp: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    argv = [tool("redis-server"), "--bind", "127.0.0.1", "--port", str(port), "--dir", str(tmp)]
    argv += ["--save", "", "--appendonly", "no"]
    popen = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return popen, port
        except OSError:
            if popen.poll() is not None or time.monotonic() > deadline:
                popen.kill()
                raise BenchError("redis-server did not start") from None
            time.sleep(0.05)


def filesystem(path: Path) -> str:
    done = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


async def run_all(tmp: Path, redis_url: str) -> list[Row]:
    rows = [
        Row("MemoryTaskStore", OnStore(MemoryTaskStore())),
        Row("SqliteTaskStore", OnStore(SqliteTaskStore(tmp / "tasks.db"))),
        Row("bare sqlite3 (same pragmas)", BareSqlite(tmp / "bare.db")),
        Row("RedisTaskStore", OnStore(RedisTaskStore(redis_url))),
        Row("bare redis-py (SET/GET)", BareRedis(redis_url)),
    ]
    await measure(rows)
    return rows


def report(rows: list[Row], tmp: Path) -> None:
    redis = subprocess.run([tool("redis-server"), "--version"], capture_output=True, text=True)
    print("# Task stores: 1 task = create, save working, save completed, get\n")
    print(
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version} (WAL, "
        f"synchronous=FULL, on {filesystem(tmp)}), redis-py {version('redis')}, "
        f"{redis.stdout.split(' sha=')[0].strip()} on loopback (no persistence); "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs. {TASKS} tasks one at "
        f"a time (median µs per operation, tasks/s), then {TASKS} with {CONCURRENCY} in flight.\n"
    )
    head = " | ".join(f"{p} µs" for p in PHASES)
    print(f"| store | {head} | tasks/s one at a time | tasks/s {CONCURRENCY} in flight |")
    print("|---|" + "---:|" * (len(PHASES) + 2))
    done = TASKS // ROUNDS * ROUNDS
    for r in rows:
        ops = " | ".join(f"{statistics.median(t) * 1e6:,.0f}" for t in r.times)
        print(f"| {r.name} | {ops} | {done / r.sequential_s:,.0f} | {done / r.concurrent_s:,.0f} |")
    print()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-tasks-") as name:
        tmp = Path(name)
        try:
            popen, port = start_redis(tmp)
        except BenchError as exc:
            print(f"bench/tasks_store.py: {exc}", file=sys.stderr)
            return 1
        try:
            print("timing the task stores ...", file=sys.stderr)
            rows = anyio.run(run_all, tmp, f"redis://127.0.0.1:{port}/0")
        except BenchError as exc:
            print(f"bench/tasks_store.py: {exc}", file=sys.stderr)
            return 1
        finally:
            popen.terminate()
            popen.wait(10)
        report(rows, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
