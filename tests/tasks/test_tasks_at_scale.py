"""Tasks at the scale of issue 30, across real processes: two HTTP instances of
examples/everything_server.py behind nginx (round-robin, one `MCPIO_STATE_KEY`), sharing one
Redis as task store, queue and bus, and three `mcpio worker` processes.

- 300 tasks, both eras: 200 modern (2026-07-28) task calls through nginx, run by the workers
  (half of a retry-safe tool, some longer than the lease), and 100 legacy (2025-11-25) ones on
  a session with each instance (those run where they were accepted). Every task completes
  exactly once with its own result, and reads the same through either instance.
- A rolling restart under that load: while tasks are created and polled through nginx (modern
  round-robin, legacy sessions by client address), three new workers start, then each HTTP
  instance in turn is taken out of nginx's rotation (a reload), SIGTERMed with an old worker
  (they drain), started again on its port and put back; then the last old worker stops. No
  accepted task is lost, none runs twice but a retry-safe one handed back by a stopping worker
  (its runs recorded), and the clients see no error but the retryable ones (HTTP 503 with
  `Retry-After`; a legacy session ended by its instance's shutdown or moved by nginx, -32600
  `sessionExpired`, after which a new session follows its tasks on). SIGTERM without taking
  the instance out of rotation first would let nginx send it requests its closing listener
  resets (502): a deploy takes an instance out of its balancer before stopping it.
- A kill at that scale: 300 modern tasks through nginx (half retry-safe, one in ten longer
  than the lease); once a third started, one worker is SIGKILLed and another SIGTERMed. Every
  retry-safe task completes once, after its failed runs (all recorded); every other one
  completes or fails with the reason of the worker it ran on; none stays `working` on a dead
  worker past the lease and a second; none's result is lost or duplicated.

Marked `slow` and `services` (nginx, redis-server: `make services`).
"""

from __future__ import annotations

import functools
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from mcpio import Client
from mcpio._core.errors import ConnectionClosed, McpError
from mcpio.tasks._client import TaskHandle
from mcpio.tasks._engine import SHUT_DOWN
from mcpio.tasks._redis import RedisTaskStore
from mcpio.tasks._store import LEASE_LOST, TaskRecord
from tests.support import until
from tests.support.cluster import (
    EVERYTHING,
    NGINX_HEAD,
    Process,
    start_instances,
    start_nginx,
    start_redis,
    start_workers,
    wait_listening,
    worker_name,
)
from tests.support.task_processes import Peer, handed_back, runs_in_logs, url_of
from tests.support.task_processes import text as text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.services]

# Leases long enough for a worker stalled a second or two by a loaded 2-core machine (with a
# 2 s lease, 1 task in ~200 lost its lease that way: see the report of issue 30's scale run).
LEASE = 4.0
LEGACY = "2025-11-25"
MODERN_TASKS = 200
LEGACY_TASKS = 100
SECONDS = (0.05, 0.2, 0.5)
LONG = 5.0  # longer than the lease
SLOTS = 16  # each worker's --concurrency
WORKER_ARGS = [
    "--lease",
    str(LEASE),
    "--concurrency",
    str(SLOTS),
    "--grace",
    "5",
    "--attempts",
    "3",
]
IN_FLIGHT = 40
NGINX_CONF = NGINX_HEAD + """\
    upstream mcp {{
{servers}
    }}
    upstream sticky {{
        hash $remote_addr consistent;
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_buffering off;
        location = /mcp {{ proxy_pass http://mcp; }}
        location = /sticky/mcp {{ proxy_pass http://sticky/mcp; }}
    }}
}}
"""


@dataclass
class Cluster:
    tmp: Path
    instances: list[Process]
    workers: list[Process]
    front: str  # nginx: /mcp round-robin, /sticky/mcp by client address (legacy sessions)
    redis_url: str
    key: str
    processes: list[Process]
    nginx: Process

    def rotate(self, down: set[int]) -> None:
        """nginx reloaded with the instances on the ports `down` out of its rotation (what a
        deploy does before stopping one: no new request reaches it, those it has finish)."""
        ports = [p.port for p in self.instances]
        conf = nginx_conf(self.tmp, ports, down, self.nginx.port)
        (self.tmp / "nginx.conf").write_text(conf, encoding="utf-8")
        self.nginx.popen.send_signal(signal.SIGHUP)
        time.sleep(1.0)  # the new nginx workers take over; the old ones finish their requests

    def instance_args(self) -> list[str]:
        url = self.redis_url
        return ["--redis", url, "--tasks", url, "--task-queue", url]  # fmt: skip

    def restart(self, instance: Process) -> Process:
        """`instance` (stopped) started again on its port, with its arguments."""
        env = {**os.environ, "MCPIO_STATE_KEY": self.key}
        with instance.log.open("ab") as out:
            popen = subprocess.Popen(
                [sys.executable, str(EVERYTHING), "http", "--host", "127.0.0.1"]
                + ["--port", str(instance.port), *self.instance_args()]
                + ["--task-lease", str(LEASE), "--task-grace", "5"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        again = Process(instance.name, popen, instance.log, instance.port)
        self.processes.append(again)
        assert not wait_listening([again]), again.tail()
        return again


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The cluster; its workers with the arguments `request.param` (WORKER_ARGS)."""
    worker_args = getattr(request, "param", WORKER_ARGS)
    processes: list[Process] = []
    try:
        redis = start_redis(tmp_path, processes)
        url = f"redis://127.0.0.1:{redis.port}/0"
        key = secrets.token_hex(32)
        args = ["--redis", url, "--tasks", url, "--task-queue", url]
        args += ["--task-lease", str(LEASE), "--task-grace", "5"]
        names = [("http-1", key), ("http-2", key)]
        instances = start_instances(tmp_path, names, processes, args)
        workers = start_workers(tmp_path, ["w1", "w2", "w3"], processes, url, worker_args)
        conf = functools.partial(nginx_conf, tmp_path, [p.port for p in instances], set())
        nginx = start_nginx(tmp_path, conf, processes)
        front = f"http://127.0.0.1:{nginx.port}"
        yield Cluster(tmp_path, instances, workers, front, url, key, processes, nginx)
    finally:
        stop_all(processes)


def stop_all(processes: list[Process]) -> None:
    """SIGTERM to all at once (Redis last), then wait for each."""
    for process in processes:
        if process.name != "redis" and process.popen.poll() is None:
            process.popen.send_signal(signal.SIGTERM)
    for process in sorted(processes, key=lambda p: p.name == "redis"):
        process.stop()


def nginx_conf(tmp: Path, ports: list[int], down: set[int], port: int) -> str:
    servers = "\n".join(
        f"        server 127.0.0.1:{p}{' down' if p in down else ''};" for p in ports
    )
    return NGINX_CONF.format(tmp=tmp, port=port, servers=servers)


def plan_of(i: int) -> tuple[str, float, str]:
    """The i-th task: its tool (every other one retry-safe), how long it runs (every 25th
    longer than the lease), its label."""
    tool = "retried_compute" if i % 2 == 0 else "slow_compute"
    seconds = LONG if i % 25 == 0 else SECONDS[(i // 2) % len(SECONDS)]
    return tool, seconds, f"t{i}"


async def ends(peer: Peer, task_id: str) -> dict[str, Any]:
    """The task once it ended (completed, failed or cancelled), polled every 200 ms."""

    async def ended() -> dict[str, Any] | None:
        task = await peer.get(task_id)
        return task if task["status"] in ("completed", "failed", "cancelled") else None

    return await until(ended, timeout=60, interval=0.2)


def expected(plan: tuple[str, float, str]) -> str:
    _tool, seconds, label = plan
    return f"computed {label} after {seconds} s"


async def modern_tasks(peer: Peer, first: int, count: int) -> dict[str, tuple[str, float, str]]:
    """`count` modern tasks started through `peer` (IN_FLIGHT at a time), polled until
    completed; their plan by id."""
    started: dict[str, tuple[str, float, str]] = {}
    limit = anyio.Semaphore(IN_FLIGHT)

    async def one(i: int) -> None:
        async with limit:
            tool, seconds, label = plan = plan_of(i)
            task_id = await peer.start(tool, seconds=seconds, label=label)
            started[task_id] = plan
            task = await ends(peer, task_id)
            assert text_of(task) == expected(plan), task

    async with anyio.create_task_group() as group:
        for i in range(first, first + count):
            group.start_soon(one, i)
    return started


async def legacy_tasks(url: str, first: int, count: int) -> dict[str, tuple[str, float, str]]:
    """`count` legacy tasks on one session with the instance at `url`, awaited."""
    started: dict[str, tuple[str, float, str]] = {}
    async with Client(url, mode=LEGACY, tasks=True) as client:

        async def one(i: int) -> None:
            tool, seconds, label = plan = plan_of(i)
            handle = await client.start_tool(tool, {"seconds": seconds, "label": label})
            assert isinstance(handle, TaskHandle), handle
            started[handle.task_id] = plan
            result = await handle.result()
            assert result.content[0].text == expected(plan)  # type: ignore[union-attr]

        async with anyio.create_task_group() as group:
            for i in range(first, first + count):
                group.start_soon(one, i)
    return started


async def read_back(
    http: httpx.AsyncClient,
    instances: list[Process],
    redis_url: str,
    modern: dict[str, tuple[str, float, str]],
    legacy: dict[str, tuple[str, float, str]],
) -> None:
    """Every modern task read through each instance: the same, completed, with its own result.
    Legacy tasks belong to the session that made them (no authorization here: issue 31's
    isolation), so a new session with either instance reads each as unknown; the store holds
    each completed with its own result."""
    limit = anyio.Semaphore(IN_FLIGHT)

    async def one_modern(peer: Peer, task_id: str) -> None:
        async with limit:
            task = await peer.get(task_id)
        assert task["status"] == "completed" and text_of(task) == expected(modern[task_id]), task

    async def one_legacy(client: Client, task_id: str) -> None:
        async with limit:
            with pytest.raises(McpError) as refused:
                await client.task(task_id).refresh()
        assert refused.value.code == -32602, refused.value  # unknown to this session

    for instance in instances:
        peer = Peer(http, url_of(instance))
        async with (
            Client(url_of(instance), mode=LEGACY, tasks=True) as client,
            anyio.create_task_group() as group,
        ):
            for task_id in modern:
                group.start_soon(one_modern, peer, task_id)
            for task_id in legacy:
                group.start_soon(one_legacy, client, task_id)
    for task_id, record in (await stored(redis_url, legacy)).items():
        assert record.status == "completed", record
        assert (record.result or {})["content"][0]["text"] == expected(legacy[task_id]), record


def assert_ran_once_each(
    workers: list[Process], records: dict[str, TaskRecord], retried: set[str] = frozenset()
) -> None:
    """Per queued task, what the workers' logs say: one completion; one run, or (for the ids
    in `retried`, handed back by a stopping worker) as many runs as its record counts."""
    logs = runs_in_logs(workers)
    for task_id, record in records.items():
        lines = logs.get(task_id, [])
        runs = [w for what, w in lines if what == "run"]
        completions = [w for what, w in lines if what == "completed"]
        assert record.status == "completed" and len(completions) == 1, (record, lines)
        assert len(runs) == record.attempts, (record, lines)
        if task_id not in retried:
            assert record.attempts == 1, (record, lines)


async def stored(url: str, ids: Any) -> dict[str, TaskRecord]:
    """The tasks' records as the store holds them, whoever owns them."""
    store = RedisTaskStore(url)
    try:
        records = {task_id: (await store._settled(task_id))[0] for task_id in ids}
    finally:
        await store.close()
    assert all(r is not None for r in records.values())
    return {k: v for k, v in records.items() if v is not None}


async def test_300_tasks_on_two_instances_and_three_workers(cluster: Cluster) -> None:
    async with httpx.AsyncClient(timeout=30, trust_env=False) as http:
        front = Peer(http, f"{cluster.front}/mcp")
        one, two = cluster.instances
        modern: dict[str, tuple[str, float, str]] = {}
        legacy: list[dict[str, tuple[str, float, str]]] = [{}, {}]

        async def run_modern() -> None:
            modern.update(await modern_tasks(front, 0, MODERN_TASKS))

        async def run_legacy(n: int, instance: Process) -> None:
            half = LEGACY_TASKS // 2
            legacy[n] = await legacy_tasks(url_of(instance), MODERN_TASKS + n * half, half)

        async with anyio.create_task_group() as group:
            group.start_soon(run_modern)
            group.start_soon(run_legacy, 0, one)
            group.start_soon(run_legacy, 1, two)
        assert len(modern) == MODERN_TASKS and sum(map(len, legacy)) == LEGACY_TASKS

        await read_back(http, [one, two], cluster.redis_url, modern, {**legacy[0], **legacy[1]})

    # Exactly once: each queued task ran once and completed once, on some worker.
    records = await stored(cluster.redis_url, modern)
    assert_ran_once_each(cluster.workers, records)
    assert all(r.max_attempts == (3 if plan_of_id(modern, i) else 1) for i, r in records.items())
    assert len({w for lines in runs_in_logs(cluster.workers).values() for _, w in lines}) == 3


def plan_of_id(plans: dict[str, tuple[str, float, str]], task_id: str) -> bool:
    """Whether the task is of the retry-safe tool."""
    return plans[task_id][0] == "retried_compute"


# ---------------------------------------------------------------------- the rolling restart

RETRYABLE_STATUS = 503  # with Retry-After: the only HTTP error a client may see here
ROLLING_SECONDS = (0.05, 0.2, 0.5)  # at-most-once tasks: within a stopping worker's grace
HANDED_BACK = 3.0  # a retry-safe task past that grace: handed back, run again elsewhere
ROLLING_WORKER_ARGS = [*WORKER_ARGS[:-4], "--grace", "1", "--attempts", "3"]


@dataclass
class Load:
    """What the clients of the rolling restart saw."""

    plans: dict[str, tuple[str, float, str]]
    legacy: dict[str, tuple[str, float, str]]
    errors: list[str]  # anything but a retryable refusal
    refused: int = 0  # HTTP 503 with Retry-After, retried
    sessions_ended: int = 0  # legacy sessions ended by a stopping instance, reopened
    creating: bool = True


class Retrying(Peer):
    """A `Peer` that retries an HTTP 503 carrying `Retry-After` (counted in `load.refused`)
    and records any other failure in `load.errors`."""

    def __init__(self, http: httpx.AsyncClient, url: str, load: Load) -> None:
        super().__init__(http, url)
        self.load = load
        self.http = httpx.AsyncClient(transport=_Refusals(http, load), trust_env=False)


class _Refusals(httpx.AsyncBaseTransport):
    """Sends through `http`; a 503 with Retry-After is waited out and sent again, any other
    status but 200 (or a transport error) is recorded."""

    def __init__(self, http: httpx.AsyncClient, load: Load) -> None:
        self.http = http
        self.load = load

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        while True:
            try:
                response = await self.http.post(
                    str(request.url), content=body, headers=request.headers
                )
            except httpx.HTTPError as exc:
                self.load.errors.append(f"{request.headers.get('mcp-method')}: {exc!r}")
                raise
            if response.status_code == RETRYABLE_STATUS and "retry-after" in response.headers:
                self.load.refused += 1
                await anyio.sleep(float(response.headers["retry-after"]))
                continue
            if response.status_code != 200:
                what = f"{request.headers.get('mcp-method')}: HTTP {response.status_code}"
                self.load.errors.append(f"{what} {response.text[:200]}")
            return httpx.Response(
                response.status_code, headers=response.headers, content=response.content
            )


async def modern_load(peer: Retrying, load: Load, first: int) -> None:
    """Tasks created through nginx (IN_FLIGHT at a time) while `load.creating`, each polled
    until it ends."""
    limit = anyio.Semaphore(IN_FLIGHT // 2)

    async def one(i: int) -> None:
        tool = "retried_compute" if i % 2 == 0 else "slow_compute"
        seconds = HANDED_BACK if i % 10 == 0 else ROLLING_SECONDS[(i // 2) % 3]
        plan = (tool, seconds, f"r{i}")
        task_id = await peer.start(tool, seconds=seconds, label=plan[2])
        load.plans[task_id] = plan
        task = await ends(peer, task_id)
        assert task["status"] == "completed" and text_of(task) == expected(plan), task

    async with anyio.create_task_group() as group:
        i = first
        while load.creating:
            await limit.acquire()
            i += 1

            async def run(i: int = i) -> None:
                try:
                    await one(i)
                finally:
                    limit.release()

            group.start_soon(run)
            await anyio.sleep(0.05)


def fresh_connections() -> httpx.AsyncClient:
    """An HTTP client opening a connection per request: nginx's reload (`Cluster.rotate`)
    closes idle keep-alive connections, and a request sent on one as it closes fails (a race
    of any client and load balancer, not of the instances under test)."""
    limits = httpx.Limits(max_keepalive_connections=0)
    return httpx.AsyncClient(timeout=30, trust_env=False, limits=limits)


async def legacy_load(url: str, load: Load, first: int) -> None:
    """Legacy tasks on a session through nginx (by client address) while `load.creating`,
    each awaited; a session its instance ended (`sessionExpired`) is opened again. The tasks
    not yet seen to end stay the old session's (issue 31: a new session cannot reach them
    without authorization): `read_back` finds them completed in the store."""
    count = iter(range(first, first + 1_000_000))
    pending: set[str] = set()
    while load.creating or pending:
        try:
            async with (
                fresh_connections() as http,
                Client(url, mode=LEGACY, tasks=True, http=http) as client,
            ):
                await follow_legacy(client, load, pending, count)
        except* (McpError, ConnectionClosed) as group:
            for exc in group.exceptions:
                data = getattr(exc, "data", None) or {}
                if not (isinstance(data, dict) and data.get("sessionExpired")):
                    load.errors.append(f"legacy: {exc!r}")
                    raise
            load.sessions_ended += 1
            pending.clear()  # the ended session's: checked in the store at the end


async def follow_legacy(
    client: Client, load: Load, pending: set[str], count: Iterator[int]
) -> None:
    async def resume(task_id: str) -> None:
        result = await client.task(task_id).result()
        assert result.content[0].text == expected(load.legacy[task_id])  # type: ignore[union-attr]
        pending.discard(task_id)

    async def one(i: int) -> None:
        plan = ("slow_compute", ROLLING_SECONDS[i % 3], f"l{i}")
        handle = await client.start_tool(plan[0], {"seconds": plan[1], "label": plan[2]})
        assert isinstance(handle, TaskHandle), handle
        load.legacy[handle.task_id] = plan
        pending.add(handle.task_id)
        await resume(handle.task_id)

    async with anyio.create_task_group() as group:
        for task_id in list(pending):
            group.start_soon(resume, task_id)
        while load.creating:
            group.start_soon(one, next(count))
            await anyio.sleep(0.1)


def roll(cluster: Cluster) -> list[Process]:
    """Three new workers started; then each HTTP instance in turn taken out of nginx's
    rotation, SIGTERMed with a worker, started again on its port and put back; then the last
    old worker SIGTERMed. The new workers."""
    time.sleep(1.0)
    fresh = start_workers(
        cluster.tmp, ["w4", "w5", "w6"], cluster.processes, cluster.redis_url, ROLLING_WORKER_ARGS
    )
    old = list(cluster.workers)
    for k, instance in enumerate(list(cluster.instances)):
        cluster.rotate({instance.port})
        instance.popen.send_signal(signal.SIGTERM)
        old[k].popen.send_signal(signal.SIGTERM)
        assert stopped(instance), instance.tail()
        cluster.instances[k] = cluster.restart(instance)
        cluster.rotate(set())
    old[-1].popen.send_signal(signal.SIGTERM)
    for worker in old:
        assert stopped(worker), worker.tail()
    return fresh


def stopped(process: Process) -> bool:
    """Whether the SIGTERMed `process` ended well in time (uvicorn raises the signal again
    once it shut down gracefully: -SIGTERM is a clean stop too)."""
    return process.popen.wait(15) in (0, -signal.SIGTERM)


@pytest.mark.parametrize("cluster", [ROLLING_WORKER_ARGS], indirect=True)
async def test_a_rolling_restart_under_load_loses_and_repeats_nothing(cluster: Cluster) -> None:
    load = Load({}, {}, [])
    old_workers = list(cluster.workers)
    async with fresh_connections() as http:
        front = Retrying(http, f"{cluster.front}/mcp", load)

        async def restarts() -> None:
            try:
                fresh = await anyio.to_thread.run_sync(roll, cluster)
                cluster.workers += fresh
                await anyio.sleep(1.0)  # and some load after
            finally:
                load.creating = False

        async with anyio.create_task_group() as group:
            group.start_soon(restarts)
            group.start_soon(modern_load, front, load, 0)
            group.start_soon(legacy_load, f"{cluster.front}/sticky/mcp", load, 0)
        assert not load.errors, load.errors
        await read_back(http, cluster.instances, cluster.redis_url, load.plans, load.legacy)
    assert len(load.plans) >= 50 and len(load.legacy) >= 10, (len(load.plans), len(load.legacy))
    records = await stored(cluster.redis_url, load.plans)
    retried = {i for i, r in records.items() if load.plans[i][0] == "retried_compute"}
    assert_ran_once_each(cluster.workers, records, retried)
    assert_handed_back_by_stopped_workers(old_workers, cluster.workers, records)
    print(
        f"{len(load.plans)} modern and {len(load.legacy)} legacy tasks; {load.refused} refusals"
        f" retried, {load.sessions_ended} legacy sessions reopened, handed back and run again:"
        f" {sum(r.attempts > 1 for r in records.values())}"
    )


def assert_handed_back_by_stopped_workers(
    stopped: list[Process], workers: list[Process], records: dict[str, TaskRecord]
) -> None:
    """A task run more than once was handed back (not ended) by a worker that was stopped, and
    got each such run back (its `max_attempts`)."""
    names = {w.name for w in stopped}
    logs = runs_in_logs(workers)
    for task_id, record in records.items():
        if record.attempts > 1:
            ended = [(what, w) for what, w in logs[task_id] if what != "run"]
            assert ended[-1][0] == "completed", (record, logs[task_id])
            assert all(w in names and what != "completed" for what, w in ended[:-1]), (
                record,
                logs[task_id],
            )
            # each run a stopping worker handed back was given back: never failed for it
            assert record.max_attempts == 3 + handed_back(logs[task_id]), (record, logs[task_id])


# ---------------------------------------------------------------------- a kill at scale

KILL_TASKS = 300
KILL_WORKER_ARGS = ROLLING_WORKER_ARGS  # a 1 s grace: a SIGTERM hands back or fails long runs
KILLED_AT = KILL_TASKS // 3  # runs started when one worker is SIGKILLed and another SIGTERMed


def kill_plan_of(i: int) -> tuple[str, float, str]:
    """The i-th task of the kill: every other one retry-safe; two in 20 (one of each tool)
    longer than the lease, the rest short."""
    tool = "retried_compute" if i % 2 == 0 else "slow_compute"
    seconds = LONG if i % 20 in (0, 5) else SECONDS[(i // 2) % len(SECONDS)]
    return tool, seconds, f"k{i}"


def in_flight(worker: Process) -> list[str]:
    """The tasks whose last run the worker's log shows started and not ended."""
    return [t for t, lines in runs_in_logs([worker]).items() if lines[-1][0] == "run"]


async def create_all(peer: Peer) -> dict[str, tuple[str, float, str]]:
    """KILL_TASKS tasks created through `peer` (IN_FLIGHT requests at a time), not awaited."""
    plans: dict[str, tuple[str, float, str]] = {}
    limit = anyio.Semaphore(IN_FLIGHT)

    async def one(i: int) -> None:
        async with limit:
            tool, seconds, label = plan = kill_plan_of(i)
            plans[await peer.start(tool, seconds=seconds, label=label)] = plan

    async with anyio.create_task_group() as group:
        for i in range(KILL_TASKS):
            group.start_soon(one, i)
    return plans


async def watch_until_ended(
    store: RedisTaskStore, ids: set[str], dead: dict[str, float], must_end: dict[str, float]
) -> dict[str, TaskRecord]:
    """Each task's record polled until it ends (60 s at most); meanwhile none is held by a
    worker of `dead` (its holder name: when it died) past the lease and a second, and each of
    `must_end` has ended by its time."""
    final: dict[str, TaskRecord] = {}
    deadline = time.monotonic() + 60
    while len(final) < len(ids):
        assert time.monotonic() < deadline, f"{len(ids) - len(final)} tasks never ended"
        for task_id in ids - final.keys():
            record = await store.get(task_id, None)
            assert record is not None, task_id
            if record.terminal:
                final[task_id] = record
            elif record.lease_holder in dead:
                assert time.monotonic() <= dead[record.lease_holder] + LEASE + 1, record
            else:
                assert time.monotonic() <= must_end.get(task_id, deadline), record
        await anyio.sleep(0.2)
    return final


@dataclass
class Kill:
    """The SIGKILLed worker, the SIGTERMed one, when, and what each ran at that moment."""

    killed: Process
    stopped: Process
    at: float
    on_killed: list[str]
    on_stopped: list[str]
    stopped_at: float = 0.0


def kill_two(workers: list[Process], plans: dict[str, tuple[str, float, str]]) -> Kill:
    """Once KILLED_AT runs started: the worker running the most longer-than-the-grace tasks
    SIGTERMed, another SIGKILLed; the first waited for (its grace, and some)."""
    while sum(len(r) for r in runs_in_logs(workers).values()) < KILLED_AT:
        time.sleep(0.05)

    def long_runs(worker: Process) -> int:
        return sum(plans.get(t, ("", 0.0))[1] == LONG for t in in_flight(worker))

    termed, killed = sorted(workers, key=long_runs, reverse=True)[:2]
    on_killed, on_stopped = in_flight(killed), in_flight(termed)
    killed.kill()
    at = time.monotonic()
    termed.popen.send_signal(signal.SIGTERM)
    assert termed.popen.wait(1 + 5) in (0, -signal.SIGTERM), termed.tail()
    kill = Kill(killed, termed, at, on_killed, on_stopped, time.monotonic())
    assert kill.stopped_at - at < 1 + 3, "the SIGTERMed worker took too long to stop"
    return kill


@pytest.mark.parametrize("cluster", [KILL_WORKER_ARGS], indirect=True)
async def test_300_tasks_survive_a_sigkill_and_a_sigterm_of_workers(cluster: Cluster) -> None:
    """300 modern tasks through nginx (half retry-safe, one in ten longer than the lease) for
    the three workers; once a third of them started, one worker is SIGKILLed and another
    SIGTERMed (1 s grace). Every retry-safe task completes, once, after its failed runs (on
    the two stopped workers, all recorded); every other one completes, or fails with the
    reason of the worker it ran on; none is left working on a dead worker past the lease and
    a second; each reads the same through nginx as in the store."""
    workers = list(cluster.workers)
    name_of = {w.name: worker_name(w) or "" for w in workers}
    store = RedisTaskStore(cluster.redis_url)
    started = time.monotonic()
    try:
        async with httpx.AsyncClient(timeout=30, trust_env=False) as http:
            front = Peer(http, f"{cluster.front}/mcp")
            plans: dict[str, tuple[str, float, str]] = {}
            kills: list[Kill] = []

            async def create() -> None:
                plans.update(await create_all(front))

            async def kill() -> None:
                kills.append(await anyio.to_thread.run_sync(kill_two, workers, plans))

            async with anyio.create_task_group() as group:
                group.start_soon(create)
                group.start_soon(kill)
            [k] = kills
            assert len(plans) == KILL_TASKS
            dead = {name_of[k.killed.name]: k.at, name_of[k.stopped.name]: k.stopped_at - LEASE}
            must_end = {t: k.at + LEASE + 1 for t in k.on_killed if plans[t][0] == "slow_compute"}
            must_end |= {t: k.stopped_at for t in k.on_stopped if plans[t][0] == "slow_compute"}
            final = await watch_until_ended(store, set(plans), dead, must_end)
            await read_through(front, final)
    finally:
        await store.close()
    figures = assert_kill_outcome(workers, k, plans, final)
    print(
        f"{KILL_TASKS} tasks in {time.monotonic() - started:.1f} s; at the kill"
        f" {len(k.on_killed)} running on the SIGKILLed worker, {len(k.on_stopped)} on the"
        f" SIGTERMed one (stopped {k.stopped_at - k.at:.1f} s after); {figures}"
    )


async def read_through(front: Peer, final: dict[str, TaskRecord]) -> None:
    """Each task read through nginx: as its record ended, with its result or its reason."""
    limit = anyio.Semaphore(IN_FLIGHT)

    async def one(task_id: str, record: TaskRecord) -> None:
        async with limit:
            task = await front.get(task_id)
        assert task["status"] == record.status, (task, record)
        if record.status == "completed":
            assert task["result"] == record.result, (task, record)
        else:
            assert task["statusMessage"] == record.status_message, (task, record)
            assert task["error"] == {"code": -32603, "message": record.status_message}, task

    async with anyio.create_task_group() as group:
        for task_id, record in final.items():
            group.start_soon(one, task_id, record)


def assert_kill_outcome(
    workers: list[Process],
    kill: Kill,
    plans: dict[str, tuple[str, float, str]],
    final: dict[str, TaskRecord],
) -> str:
    """What the records and the workers' logs say of each task, as issue 30 asks; the figures."""
    logs = runs_in_logs(workers)
    reason_of = {kill.killed.name: LEASE_LOST, kill.stopped.name: SHUT_DOWN}
    failed: dict[str, int] = {LEASE_LOST: 0, SHUT_DOWN: 0}
    rerun = lost_claims = 0
    ended_on_killed: set[str] = set()
    for task_id, plan in plans.items():
        record, lines = final[task_id], logs.get(task_id, [])
        runs = [w for what, w in lines if what == "run"]
        completions = [w for what, w in lines if what == "completed"]
        # Every run is recorded; the store also counts a claim the SIGKILLed worker made and
        # never ran (killed between the store's answer and its log line): one per task at most.
        unlogged = record.attempts - len(runs)
        assert unlogged in (0, 1) and record.attempts >= 1, (record, lines)
        lost_claims += unlogged
        runs = runs or [kill.killed.name]  # a task whose only claim was lost ran there
        if record.status == "completed":  # its own result, once
            # (a worker SIGKILLed between storing the result and logging it leaves no line)
            unlogged = not completions and runs[-1] == kill.killed.name
            assert record.result is not None and (len(completions) == 1 or unlogged), lines
            if unlogged or completions[-1:] == [kill.killed.name]:
                ended_on_killed.add(task_id)
            assert record.result["content"][0]["text"] == expected(plan), record
        else:
            assert not completions, (record, lines)
        if plan[0] == "retried_compute":
            assert record.status == "completed", (record, lines)
            assert record.max_attempts == 3 + handed_back(lines), (record, lines)
            assert all(w in reason_of for w in runs[:-1]), (record, lines)  # failed runs
            rerun += record.attempts > 1
        else:
            assert record.max_attempts == 1, (record, lines)
            assert record.status in ("completed", "failed"), (record, lines)
            if record.status == "failed":
                assert record.status_message == reason_of.get(runs[0]), (record, lines)
                failed[reason_of[runs[0]]] += 1
    # What ran on the SIGKILLed worker (and did not end there in the instant before, its
    # result stored, logged or not) ran again if retry-safe, else failed with its lease lost.
    for task_id in kill.on_killed:
        if task_id not in ended_on_killed:
            record = final[task_id]
            assert record.attempts > 1 or record.status_message == LEASE_LOST, record
    assert any(plans[t][0] == "retried_compute" for t in kill.on_killed), kill
    assert (
        lost_claims <= SLOTS
    ), f"{lost_claims} claims without a run: more than the killed had slots"
    assert rerun >= 1, "the SIGKILL should have re-run retry-safe tasks"
    return (
        f"{sum(r.status == 'completed' for r in final.values())} completed,"
        f" {failed[LEASE_LOST]} failed with the lease lost, {failed[SHUT_DOWN]} with the"
        f" shutdown, {rerun} retry-safe ones run again"
        f" ({sum(r.attempts - 1 for r in final.values())} extra runs)"
    )
