"""Task workers over HTTP, mcpio beside FastMCP + fastmcp-tasks (Docket on Redis), in one run:
the same tool, the same load, the same driver, one Redis.

A benchmark, not a test: it prints a Markdown table and exits 0; non-zero when a task ends
wrong (every task must complete once, with its own result) or a peer does not start.

Each side is one HTTP server process (uvicorn, stateless, JSON answers) and task workers on
one redis-server (a database of its own per row):

- mcpio (bench/peers/tasks_mcpio_server.py): the HTTP process stores and queues each task
  (`RedisTaskStore`, `RedisTaskQueue`) and runs none; `WORKERS` `mcpio worker` processes run
  them, 16 at a time each.
- FastMCP 4.1.4 + fastmcp-tasks 4.1.4 (bench/peers/tasks_fastmcp_server.py): the HTTP process
  always runs a Docket worker of its own; `WORKERS - 1` more run as
  `python -m fastmcp_tasks.worker_cli worker`, each with concurrency 16. So both sides have
  `WORKERS` task workers (mcpio one process more).

The tool `stamp(text)` answers its text and the time it started. The driver (this process,
httpx, raw 2026-07-28 frames declaring the Tasks extension, the same for both) starts `TASKS`
tasks, `CONCURRENCY` in flight, each polled with `tasks/get` every 50 ms until completed.
Per row: tasks/s (wall clock, first call to last completion); CPU per task of the servers,
workers and redis-server (from /proc: user + system); start latency (call sent -> tool
started) and end-to-end latency (call sent -> seen completed), p50 and p99; the requests a
server dropped (closed the connection without an answer: both did on a machine at load
average 15, most likely uvicorn closing a keep-alive connection idle past its 5 s as the next
request went out), each sent again and counted (`MAX_DROPPED` per row at most; a dropped `tools/call` may leave a task no
one reads). The sides take turns row by row, so the load of a shared machine falls on both
alike.

fastmcp-tasks pins FastMCP 4.1.4 (and redis 8.0.1), the dev extra FastMCP 4.1.6: the peer gets
a venv of its own, `.venv-peers/fastmcp-tasks` (made here with `pip install` on first use,
then reused).

    .venv/bin/python bench/task_workers_http.py
    MCPGEN_BENCH_TASKS=500 MCPGEN_BENCH_CONCURRENCY=50 MCPGEN_BENCH_WORKERS=1,2
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path: keep bench/http.py from hiding
# the standard library's `http` package.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import anyio  # noqa: E402
import httpx  # noqa: E402

TASKS = int(os.environ.get("MCPGEN_BENCH_TASKS", "500"))
CONCURRENCY = int(os.environ.get("MCPGEN_BENCH_CONCURRENCY", "50"))
WORKERS = [int(n) for n in os.environ.get("MCPGEN_BENCH_WORKERS", "1,2").split(",")]
WARMUP = 50
POLL = 0.05
MAX_DROPPED = 50  # per row: more, and the row fails
MODERN = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / "peers"
PEER_VENV = ROOT / ".venv-peers" / "fastmcp-tasks"
PEER_PINS = ["fastmcp-tasks==4.1.4", "fastmcp-slim==4.1.4"]
TICK = os.sysconf("SC_CLK_TCK")
STARTUP_SECONDS = 60.0


def peer_python() -> str:
    """The peer venv's python, made and installed on first use."""
    python = PEER_VENV / "bin" / "python"
    stamp = PEER_VENV / ".installed"
    if not stamp.exists() or stamp.read_text() != " ".join(PEER_PINS):
        print(f"making {PEER_VENV} ({', '.join(PEER_PINS)})", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        install = [str(python), "-m", "pip", "install", "--quiet", *PEER_PINS]
        if subprocess.run(install).returncode != 0:
            sys.exit("bench/task_workers_http.py: could not install " + " ".join(PEER_PINS))
        stamp.write_text(" ".join(PEER_PINS))
    return str(python)


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


@dataclass
class Side:
    name: str
    python: str
    server: str  # its file in bench/peers
    worker: list[str]  # the worker command after the python, {url} replaced
    env: dict[str, str] = field(default_factory=dict[str, str])  # {url} replaced
    ready: str = ""  # what a worker prints once it takes tasks
    extra_workers: int = 0  # workers beside the HTTP process's own, for `WORKERS` workers


def sides() -> list[Side]:
    ours = Side(
        "mcpio",
        sys.executable,
        "tasks_mcpio_server.py",
        ["-m", "mcpio", "worker", str(PEERS / "tasks_mcpio_server.py")]
        + ["--redis", "{url}", "--concurrency", "16"],
        {"MCPGEN_BENCH_REDIS": "{url}"},
        " taking tasks ",
    )
    theirs = Side(
        "FastMCP + fastmcp-tasks",
        peer_python(),
        "tasks_fastmcp_server.py",
        ["-m", "fastmcp_tasks.worker_cli", "worker", str(PEERS / "tasks_fastmcp_server.py")],
        {"FASTMCP_DOCKET_URL": "{url}", "FASTMCP_DOCKET_CONCURRENCY": "16"},
        "Starting worker",
        -1,
    )
    return [ours, theirs]


@dataclass
class Running:
    processes: list[subprocess.Popen[bytes]]
    url: str  # the MCP endpoint

    def cpu(self) -> float:
        return sum(cpu_of(p.pid) for p in self.processes)

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def launch(side: Side, redis_url: str, workers: int, logs: Path) -> Running:
    """The side's HTTP server and task workers on the Redis database at `redis_url`, each
    ready (listening; saying it takes tasks)."""
    env = {**os.environ, **{k: v.format(url=redis_url) for k, v in side.env.items()}}
    server_log = (logs / f"{side.server}.{workers}.log").open("wb")
    server = subprocess.Popen(
        [side.python, str(PEERS / side.server)],
        cwd=PEERS,
        env=env,
        stdout=subprocess.PIPE,
        stderr=server_log,
    )
    assert server.stdout is not None
    line = server.stdout.readline().strip()
    if not line.isdigit():
        server.kill()
        sys.exit(f"bench/task_workers_http.py: {side.name}'s server did not start: {line!r}")
    running = Running([server], f"http://127.0.0.1:{int(line)}/mcp")
    paths: list[Path] = []
    for n in range(workers + side.extra_workers):
        path = logs / f"{side.server}.{workers}.worker{n}.log"
        with path.open("wb") as out:
            running.processes.append(
                subprocess.Popen(
                    [side.python, *(a.format(url=redis_url) for a in side.worker)],
                    cwd=PEERS, env=env, stdout=out, stderr=subprocess.STDOUT,
                )  # fmt: skip
            )
        paths.append(path)
    deadline = time.monotonic() + STARTUP_SECONDS
    while not all(side.ready in p.read_text(errors="replace") for p in paths):
        if time.monotonic() > deadline or any(p.poll() is not None for p in running.processes):
            running.stop()
            sys.exit(f"bench/task_workers_http.py: {side.name}'s workers did not start ({logs})")
        time.sleep(0.1)
    return running


class Driver:
    """Raw 2026-07-28 task calls to one endpoint."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.ids = iter(range(1, 10**9))
        self.dropped = 0  # requests whose connection the server closed unanswered, sent again

    async def call(self, method: str, target: str, **params: Any) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
        }
        frame = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        frame["params"] = {**params, "_meta": meta}
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
            "mcp-name": target,
        }
        while True:
            try:
                response = await self.http.post(
                    self.url, content=json.dumps(frame), headers=headers
                )
                break
            except (httpx.ReadError, httpx.RemoteProtocolError):
                self.dropped += 1  # a lost tools/call answer leaves a task no one reads
                if self.dropped > MAX_DROPPED:
                    raise
        answer = response.json()
        if response.status_code != 200 or "result" not in answer:
            sys.exit(f"bench/task_workers_http.py: {method}: HTTP {response.status_code} {answer}")
        return answer["result"]

    async def task(self, text: str) -> tuple[float, float]:
        """One task to its end: (call sent -> tool started, call sent -> seen completed)."""
        sent = time.time()
        created = await self.call("tools/call", "stamp", name="stamp", arguments={"text": text})
        if created.get("resultType") != "task":
            sys.exit(f"bench/task_workers_http.py: answered without a task: {created}")
        task_id = created["taskId"]
        while True:
            task = await self.call("tasks/get", task_id, taskId=task_id)
            if task["status"] == "completed":
                break
            if task["status"] != "working":
                sys.exit(f"bench/task_workers_http.py: task {text} ended {task['status']}: {task}")
            await anyio.sleep(POLL)
        seen = time.time()
        started, answered = task["result"]["content"][0]["text"].split(" ", 1)
        if answered != text:
            sys.exit(f"bench/task_workers_http.py: task {text}: wrong result {answered!r}")
        return float(started) - sent, seen - sent


async def drive(url: str, count: int, tag: str) -> tuple[float, list[tuple[float, float]], int]:
    """Wall seconds for `count` tasks (CONCURRENCY in flight), each one's latencies, and the
    requests sent again (`Driver.dropped`)."""
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    latencies: list[tuple[float, float]] = []
    async with httpx.AsyncClient(timeout=60, trust_env=False, limits=limits) as http:
        driver = Driver(http, url)
        limit = anyio.Semaphore(CONCURRENCY)

        async def one(i: int) -> None:
            async with limit:
                latencies.append(await driver.task(f"{tag}{i}"))

        began = time.perf_counter()
        async with anyio.create_task_group() as group:
            for i in range(count):
                group.start_soon(one, i)
        return time.perf_counter() - began, latencies, driver.dropped


@dataclass
class Row:
    side: str
    workers: int
    rate: float  # tasks/s
    cpu: float  # seconds per task
    start: list[float]  # seconds
    end: list[float]
    dropped: int  # requests the server dropped (connection closed unanswered), sent again


def measure(side: Side, redis_url: str, redis_pid: int, workers: int, logs: Path) -> Row:
    running = launch(side, redis_url, workers, logs)
    try:
        anyio.run(drive, running.url, WARMUP, "warm")
        before = running.cpu() + cpu_of(redis_pid)
        wall, latencies, dropped = anyio.run(drive, running.url, TASKS, "t")
        cpu = running.cpu() + cpu_of(redis_pid) - before
    except* httpx.HTTPError as group:
        sys.exit(f"bench/task_workers_http.py: {side.name}, {workers} workers: {group.exceptions}")
    finally:
        running.stop()
    return Row(
        side.name, workers, TASKS / wall, cpu / TASKS,
        [s for s, _ in latencies], [e for _, e in latencies], dropped,
    )  # fmt: skip


def percentile(values: Sequence[float], p: int) -> float:
    return statistics.quantiles(values, n=100)[p - 1] * 1000


def report(rows: list[Row]) -> None:
    print("## Task workers over HTTP: mcpio beside FastMCP + fastmcp-tasks (Docket), one Redis\n")
    print(
        f"{TASKS} tasks per row ({WARMUP} warm-up first), {CONCURRENCY} in flight, each polled"
        f" every {POLL * 1000:.0f} ms until completed; workers run 16 at a time; Python"
        f" {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, load"
        f" average {os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| server | workers | tasks/s | CPU µs per task (all processes) | start p50 ms | p99 ms |"
        " end-to-end p50 ms | p99 ms | requests dropped by the server |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row.side} | {row.workers} | {row.rate:.0f} | {row.cpu * 1e6:.0f} |"
            f" {percentile(row.start, 50):.1f} | {percentile(row.start, 99):.1f} |"
            f" {percentile(row.end, 50):.1f} | {percentile(row.end, 99):.1f} | {row.dropped} |"
        )
    print("\n| workers | tasks/s, mcpio / FastMCP | CPU per task, FastMCP / mcpio |"
          " end-to-end p50, FastMCP / mcpio |")  # fmt: skip
    print("|---|---|---|---|")
    for n in WORKERS:
        ours, theirs = (r for r in rows if r.workers == n)
        print(
            f"| {n} | {ours.rate / theirs.rate:.2f} | {theirs.cpu / ours.cpu:.2f} |"
            f" {percentile(theirs.end, 50) / percentile(ours.end, 50):.2f} |"
        )
    print(f"\nevery task read completed with its own result ({TASKS} per row)\n")


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from bench.tasks import start_redis

    both = sides()
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-task-http-") as tmp:
        redis, url = start_redis(Path(tmp))
        base = url.rsplit("/", 1)[0]
        rows: list[Row] = []
        try:
            for n in WORKERS:
                for side in both:
                    rows.append(measure(side, f"{base}/{len(rows)}", redis.pid, n, Path(tmp)))
        finally:
            redis.terminate()
            redis.wait(10)
    report(rows)


if __name__ == "__main__":
    main()
