"""Task workers: queued tasks run by `mcpio worker` processes (1, 2 and 4, Redis store, queue and
bus) beside the same tasks run in process (the Redis store, no queue).

A benchmark, not a test: it prints a Markdown table and exits 0; non-zero when a task ends
wrong (every task must complete once, with its own result).

The tool `stamp(text)` answers its text and the time it started. A driver process (this one)
starts `TASKS` tasks through our client over the in-memory transport (2026-07-28, `CONCURRENCY`
in flight, each polled with `tasks/get` until completed) against a server that either runs
them itself or queues them. Per configuration: tasks per second (wall clock, first start to
last completion); CPU per task (this process, the workers and redis-server, from /proc: user +
system) and what that adds over running in process; queue latency, accepted (the stored task's
`created_at`) to started (the tool's stamp), p50 and p99.

    .venv/bin/python bench/task_workers.py
    MCPGEN_BENCH_TASKS=400 MCPGEN_BENCH_CONCURRENCY=50 MCPGEN_BENCH_WORKERS=1,2,4
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path: keep bench/http.py from hiding
# the standard library's `http` package.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import anyio  # noqa: E402

from mcpio import Client, Server  # noqa: E402
from mcpio.tasks._client import TaskHandle  # noqa: E402
from mcpio.tasks._engine import TaskEngine  # noqa: E402
from mcpio.tasks._queue import RedisTaskQueue  # noqa: E402
from mcpio.tasks._redis import RedisTaskStore  # noqa: E402

TASKS = int(os.environ.get("MCPGEN_BENCH_TASKS", "400"))
CONCURRENCY = int(os.environ.get("MCPGEN_BENCH_CONCURRENCY", "50"))
WORKERS = [int(n) for n in os.environ.get("MCPGEN_BENCH_WORKERS", "1,2,4").split(",")]
MODERN = "2026-07-28"
TICK = os.sysconf("SC_CLK_TCK")

server = Server("bench-workers", "1.0")  # what `mcpio worker bench/task_workers.py` runs


@server.tool(task="optional")
def stamp(text: str) -> str:
    return f"{time.time()!r} {text}"


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def front(url: str, queued: bool) -> Server:
    queue = RedisTaskQueue(url, max_queued=TASKS * 2) if queued else None
    server.tasks = TaskEngine(RedisTaskStore(url), queue=queue)
    return server


async def drive(client: Client) -> tuple[float, list[float]]:
    """Wall seconds for all tasks, and each one's queue latency (seconds)."""
    latencies: list[float] = []
    limit = anyio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with limit:
            handle = await client.start_tool("stamp", {"text": f"t{i}"})
            if not isinstance(handle, TaskHandle):
                sys.exit(f"task {i}: answered without a task")
            while (await handle.refresh())["status"] != "completed":
                if handle.status != "working":
                    sys.exit(f"task {i}: ended {handle.status}: {handle.task}")
                await anyio.sleep(0.005)
        started, text = handle.task["result"]["content"][0]["text"].split(" ", 1)
        if text != f"t{i}":
            sys.exit(f"task {i}: wrong result {text!r}")
        record = await server.tasks.get(handle.task_id, None)  # accepted: its created_at
        assert record is not None
        latencies.append(float(started) - record.created_at)

    began = time.perf_counter()
    async with anyio.create_task_group() as group:
        for i in range(TASKS):
            group.start_soon(one, i)
    return time.perf_counter() - began, latencies


def start_redis(tmp: str) -> tuple[subprocess.Popen[bytes], str]:
    from bench.tasks import start_redis as start

    return start(Path(tmp))


def run(url: str, redis_pid: int, workers: int) -> tuple[float, float, list[float]]:
    """tasks/s, CPU seconds per task, latencies; `workers` 0: in process."""
    procs: list[subprocess.Popen[bytes]] = []
    for _ in range(workers):
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "mcpio", "worker", __file__, "--redis", url]
                + ["--concurrency", "16"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    time.sleep(1.5 if workers else 0)  # the workers import and connect
    pids = [p.pid for p in procs] + [redis_pid]
    before = sum(cpu_of(pid) for pid in pids) + time.process_time()

    async def main() -> tuple[float, list[float]]:
        async with Client(front(url, workers > 0), mode=MODERN, tasks=True) as client:
            return await drive(client)

    wall, latencies = anyio.run(main)
    cpu = sum(cpu_of(pid) for pid in pids) + time.process_time() - before
    for proc in procs:
        proc.terminate()
        proc.wait(20)
    return TASKS / wall, cpu / TASKS, latencies


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-workers-") as tmp:
        redis, url = start_redis(tmp)
        try:
            rows = [(n, *run(url, redis.pid, n)) for n in [0, *WORKERS]]
        finally:
            redis.terminate()
            redis.wait(10)
    print("## Task workers (Redis queue) beside in-process tasks\n")
    print(
        f"{TASKS} tasks per row, {CONCURRENCY} in flight, each polled until completed; workers"
        f" run 16 at a time; Python {platform.python_version()}, {platform.machine()},"
        f" {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| tasks run | tasks/s | CPU µs per task (all processes) | added CPU µs per task |"
        " queue latency p50 ms | p99 ms |"
    )
    print("|---|---|---|---|---|---|")
    base = rows[0][2]
    for n, rate, cpu, latencies in rows:
        where = "in process" if n == 0 else f"{n} worker{'s' if n > 1 else ''}"
        cuts = statistics.quantiles(latencies, n=100)
        print(
            f"| {where} | {rate:.0f} | {cpu * 1e6:.0f} | {(cpu - base) * 1e6:+.0f} |"
            f" {cuts[49] * 1000:.1f} | {cuts[98] * 1000:.1f} |"
        )
    print(f"\nevery task completed exactly once with its own result ({TASKS} per row)\n")


if __name__ == "__main__":
    main()
