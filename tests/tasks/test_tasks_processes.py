"""Tasks across real processes (issue 19's process tests): examples/everything_server.py over
HTTP, called with raw 2026-07-28 frames that declare the Tasks extension.

- SQLite (marked `slow`: two server processes, one after the other): an instance with `--tasks sqlite:PATH` is SIGKILLed and another started on the same
  file: a completed task's result is still there, the task that was running reads `failed`
  once its lease runs out (not lost, not stuck in `working`).
- Redis (marked `services`): three instances sharing one Redis (the task store and the
  notification bus) behind nginx: a task created on one is polled on a second and updated and
  cancelled through a third; SIGKILL of the instance running a task turns it `failed` within
  the lease time, as the others read it.
"""

from __future__ import annotations

import json
import secrets
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_wire_runtime.errors import SERVER_BUSY
from mcpio.tasks._store import LEASE_LOST, TaskRecord
from tests.support import ACCEPT, MODERN, until
from tests.support.cluster import NGINX_HEAD, Process, start_instances, start_nginx, start_redis
from tests.support.once import Once
from tests.support.task_processes import CAPS, Peer, handed_back, runs_in_logs, text, url_of

pytestmark = pytest.mark.anyio

LEASE = 2.0  # --task-lease of every instance here
NGINX_CONF = NGINX_HEAD + """\
    upstream mcp {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_buffering off;
        }}
    }}
}}
"""


def assert_lease_lost(task: dict[str, Any]) -> None:
    assert task["status"] == "failed" and task["statusMessage"] == LEASE_LOST, task
    assert task["error"] == {"code": -32603, "message": LEASE_LOST}


@pytest.mark.slow
async def test_a_sqlite_server_killed_and_restarted(tmp_path: Path) -> None:
    spec = f"sqlite:{tmp_path / 'tasks.db'}"
    args = ["--tasks", spec, "--task-lease", str(LEASE)]
    processes: list[Process] = []
    try:
        [first] = start_instances(tmp_path, [("first", None)], processes, args)
        async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
            peer = Peer(http, url_of(first))
            done = await peer.start("slow_compute", seconds=0, label="a")
            assert text(await peer.reaches(done, "completed")) == "computed a after 0.0 s"
            running = await peer.start("slow_compute", seconds=3600, label="b")
            assert (await peer.get(running))["status"] == "working"
            first.kill()
            [second] = start_instances(tmp_path, [("second", None)], processes, args)
            peer = Peer(http, url_of(second))
            kept = await peer.get(done)
            assert kept["status"] == "completed" and text(kept) == "computed a after 0.0 s"
            assert_lease_lost(await peer.reaches(running, "failed", timeout=LEASE + 10))
            assert_lease_lost(await peer.get(running))  # and stays so
    finally:
        for process in processes:
            process.stop()


@dataclass
class Cluster:
    instances: list[Process]
    front: str  # nginx


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("tasks-cluster")
    processes: list[Process] = []
    try:
        redis = start_redis(tmp, processes)
        url = f"redis://127.0.0.1:{redis.port}/0"
        key = secrets.token_hex(32)
        names = [(f"instance-{n}", key) for n in range(3)]
        args = ["--redis", url, "--tasks", url, "--task-lease", str(LEASE)]
        instances = start_instances(tmp, names, processes, args)
        servers = "\n".join(f"        server 127.0.0.1:{p.port};" for p in instances)
        nginx = start_nginx(
            tmp, lambda port: NGINX_CONF.format(tmp=tmp, port=port, servers=servers), processes
        )
        yield Cluster(instances, f"http://127.0.0.1:{nginx.port}/mcp")
    finally:
        for process in sorted(reversed(processes), key=lambda p: p.name == "redis"):
            process.stop()


@pytest.mark.services
async def test_three_instances_share_tasks_through_redis(cluster: Cluster) -> None:
    async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
        one, two, three = (Peer(http, url_of(p)) for p in cluster.instances)
        front = Peer(http, cluster.front)

        # Created on one, polled on two, answered through three (the bus carries the answer to
        # one, which runs it), read through the front.
        asking = await one.start("confirm_delete", filename="report.txt")
        question = await two.reaches(asking, "input_required")
        [key] = question["inputRequests"]
        assert question["inputRequests"][key]["method"] == "elicitation/create"
        answer = {"action": "accept", "content": {"confirm": True}}

        async def answered() -> dict[str, Any] | None:
            task = await front.get(asking)
            if task["status"] == "input_required":  # not subscribed yet: answer again
                await three.call("tasks/update", taskId=asking, inputResponses={key: answer})
            return task if task["status"] == "completed" else None

        assert text(await until(answered, timeout=15)) == "deleted report.txt"

        # Cancelled through three while one runs it.
        slow = await one.start("slow_compute", seconds=3600, label="c")
        assert (await two.get(slow))["status"] == "working"

        async def cancelled() -> dict[str, Any] | None:
            task = await two.get(slow)
            if task["status"] == "working":
                await three.call("tasks/cancel", taskId=slow)
            return task if task["status"] == "cancelled" else None

        await until(cancelled, timeout=15)
        assert (await front.get(slow))["status"] == "cancelled"

        # The instance running a task dies: the others read it failed once its lease ran out.
        orphan = await one.start("slow_compute", seconds=3600, label="d")
        assert (await three.get(orphan))["status"] == "working"
        cluster.instances[0].kill()
        killed = time.monotonic()
        assert_lease_lost(await two.reaches(orphan, "failed", timeout=LEASE + 10))
        assert time.monotonic() - killed <= LEASE + 1.0  # within the lease (and a poll)
        assert_lease_lost(await three.get(orphan))


# ---------------------------------------------------------------------- workers (issue 30)

WORKER_ARGS = ["--lease", str(LEASE), "--concurrency", "4", "--grace", "1", "--attempts", "3"]


@pytest.fixture(scope="module")
def once() -> Once:
    return Once()


@pytest.fixture(scope="module")
def workers_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of `workers_killed_and_restarted`'s processes (their logs)."""
    return tmp_path_factory.mktemp("workers")


@dataclass
class WorkersSeen:
    """What `workers_killed_and_restarted` saw."""

    plan: dict[str, tuple[str, float, str]]  # task id: tool, seconds, label
    killed: str  # the SIGKILLed worker's process name
    stopped: str  # the SIGTERMed one's
    chosen_after: float  # seconds until a worker ran a long retry-safe task
    expected: set[str]  # the reasons at-most-once tasks must fail with
    stop_took: float  # from the SIGKILL to the SIGTERMed worker's end
    final: dict[str, TaskRecord]  # each task's record once it ended
    missing: list[str]  # tasks the store did not know while polling
    held_by_killed: list[TaskRecord]  # records a SIGKILLed worker held past its lease and 1 s
    held_by_stopped: list[TaskRecord]  # records the SIGTERMed worker held after it stopped
    logs: dict[str, list[tuple[str, str]]]  # each task's lines in the workers' logs


async def workers_killed_and_restarted(tmp_path: Path) -> WorkersSeen:
    """One HTTP instance queues 24 tasks (half retry-safe; 0.4 s to 5 s, some longer than the
    2 s lease) for three workers of 4 slots; mid-run one worker is SIGKILLed and another
    SIGTERMed (1 s grace) while a fourth starts; the store is polled until every task ended."""
    from mcpio.tasks._engine import SHUT_DOWN
    from mcpio.tasks._redis import RedisTaskStore
    from tests.support.cluster import start_workers, worker_name

    processes: list[Process] = []
    try:
        redis = start_redis(tmp_path, processes)
        url = f"redis://127.0.0.1:{redis.port}/0"
        args = ["--redis", url, "--tasks", url, "--task-queue", url, "--task-lease", str(LEASE)]
        [front] = start_instances(tmp_path, [("http", None)], processes, args)
        workers = start_workers(tmp_path, ["a", "b", "c"], processes, url, WORKER_ARGS)
        name_of = {w.name: worker_name(w) for w in workers}
        store = RedisTaskStore(url)
        async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
            peer = Peer(http, url_of(front))
            plan: dict[str, tuple[str, float, str]] = {}  # id: tool, seconds, label
            for i in range(24):
                tool = "retried_compute" if i % 2 == 0 else "slow_compute"
                seconds = (0.4, 1.0, 3.0, 5.0)[(i // 2) % 4]
                label = f"t{i}"
                plan[await peer.start(tool, seconds=seconds, label=label)] = (tool, seconds, label)
            time.sleep(1.5)

            def in_flight(worker: Process, tool: str, at_least: float = 0.0) -> list[str]:
                return [
                    task_id for task_id, lines in runs_in_logs([worker]).items()
                    if lines[-1][0] == "run" and plan[task_id][0] == tool
                    and plan[task_id][1] >= at_least
                ]  # fmt: skip

            # SIGKILL a worker in the middle of a retry-safe task of 3 s or more (so it is still
            # running when the signal lands), SIGTERM one running an at-most-once task longer than
            # its grace if any does, else the one running the most at-most-once tasks.
            started = time.monotonic()
            while not (holding := [w for w in workers if in_flight(w, "retried_compute", 3.0)]):
                if time.monotonic() > started + 10:
                    raise AssertionError("no worker ran a long retry-safe task")
                time.sleep(0.1)
            chosen_after = time.monotonic() - started
            a = holding[0]
            b = max(
                (w for w in workers if w is not a),
                key=lambda w: (
                    bool(in_flight(w, "slow_compute", 5.0)),
                    len(in_flight(w, "slow_compute")),
                ),
            )
            expected = {LEASE_LOST} if in_flight(a, "slow_compute") else set()
            if in_flight(b, "slow_compute", 5.0):  # past the grace for sure
                expected.add(SHUT_DOWN)
            a.kill()
            killed = time.monotonic()  # the lease of its tasks ran out by killed + LEASE
            b.popen.send_signal(signal.SIGTERM)
            workers += start_workers(tmp_path, ["d"], processes, url, WORKER_ARGS)
            b.popen.wait(1 + 5)  # its grace, and some
            stop_took = time.monotonic() - killed

            final: dict[str, TaskRecord] = {}
            missing: list[str] = []
            held_by_killed: list[TaskRecord] = []
            held_by_stopped: list[TaskRecord] = []
            deadline = time.monotonic() + 45
            while len(final) < len(plan) and time.monotonic() < deadline:
                for task_id in plan.keys() - final.keys():
                    record = await store.get(task_id, None)
                    if record is None:
                        missing.append(task_id)
                        continue
                    if record.terminal:
                        final[task_id] = record
                        continue
                    holder = record.lease_holder
                    if time.monotonic() > killed + LEASE + 1 and holder == name_of[a.name]:
                        held_by_killed.append(record)
                    if holder == name_of[b.name]:
                        held_by_stopped.append(record)  # not handed back at once
                await anyio.sleep(0.2)
        await store.close()
        return WorkersSeen(
            plan,
            a.name,
            b.name,
            chosen_after,
            expected,
            stop_took,
            final,
            missing,
            held_by_killed,
            held_by_stopped,
            runs_in_logs(workers),
        )
    finally:
        for process in sorted(reversed(processes), key=lambda p: p.name == "redis"):
            process.stop()


@dataclass
class Ended:
    """A task of `workers_killed_and_restarted` as it ended, and its runs in the logs."""

    tool: str
    seconds: float
    label: str
    record: TaskRecord
    lines: list[tuple[str, str]]
    runs: list[str]  # the workers that logged a run of it (the killed one if none did)
    completions: list[str]
    unlogged: int  # runs the store counts and no log holds
    unlogged_end: bool  # completed by the killed worker, which died before it logged so


def ended_tasks(seen: WorkersSeen) -> list[Ended]:
    ended = []
    for task_id, record in seen.final.items():
        tool, seconds, label = seen.plan[task_id]
        lines = seen.logs.get(task_id, [])
        logged_runs = [w for what, w in lines if what == "run"]
        completions = [w for what, w in lines if what == "completed"]
        # the store also counts a claim the SIGKILLed worker made and never ran (killed
        # between the store's answer and its log line): one per task at most
        unlogged = record.attempts - len(logged_runs)
        runs = logged_runs or [seen.killed]
        # a worker SIGKILLed between storing a result and logging it leaves no line
        unlogged_end = record.status == "completed" and not completions and runs[-1] == seen.killed
        ended.append(
            Ended(tool, seconds, label, record, lines, runs, completions, unlogged, unlogged_end)
        )
    return ended


@pytest.mark.services
async def test_a_worker_runs_a_long_retry_safe_task_soon(once: Once, workers_tmp: Path) -> None:
    seen = await once(workers_killed_and_restarted, workers_tmp)
    assert seen.chosen_after < 10, "no worker ran a long retry-safe task"


@pytest.mark.services
async def test_a_sigtermed_worker_stops_within_its_grace(once: Once, workers_tmp: Path) -> None:
    seen = await once(workers_killed_and_restarted, workers_tmp)
    assert seen.stop_took < 1 + 3, "the SIGTERMed worker took too long to stop"


@pytest.mark.services
async def test_every_queued_task_ends_and_stays_known(once: Once, workers_tmp: Path) -> None:
    seen = await once(workers_killed_and_restarted, workers_tmp)
    assert seen.missing == []
    assert len(seen.final) == len(seen.plan), f"{len(seen.plan) - len(seen.final)} never ended"


@pytest.mark.services
async def test_no_dead_worker_holds_a_task(once: Once, workers_tmp: Path) -> None:
    """The killed worker's tasks are free once their lease (and a poll) is over; the stopped
    worker's at once."""
    seen = await once(workers_killed_and_restarted, workers_tmp)
    assert seen.held_by_killed == []
    assert seen.held_by_stopped == []  # handed back at once


@pytest.mark.services
async def test_each_run_is_counted_in_the_task_s_record(once: Once, workers_tmp: Path) -> None:
    """The store counts the runs the logs show, and at most one more per task (a claim the
    SIGKILLed worker made and never ran), no more such claims than it had slots."""
    ended = ended_tasks(await once(workers_killed_and_restarted, workers_tmp))
    for task in ended:
        assert task.unlogged in (0, 1) and task.record.attempts >= 1, (task.record, task.lines)
    lost_claims = sum(task.unlogged for task in ended)
    assert lost_claims <= 4, f"{lost_claims} claims without a run: more than the killed had slots"


@pytest.mark.services
async def test_a_completed_task_holds_its_result_once(once: Once, workers_tmp: Path) -> None:
    for task in ended_tasks(await once(workers_killed_and_restarted, workers_tmp)):
        if task.record.status == "completed":
            assert task.record.result is not None
            text = task.record.result["content"][0]["text"]
            assert text == f"computed {task.label} after {task.seconds} s"
            # no result lost or duplicated
            assert len(task.completions) == 1 or task.unlogged_end, (task.record, task.lines)


@pytest.mark.services
async def test_every_retry_safe_task_completes_after_as_many_runs_as_it_counts(
    once: Once, workers_tmp: Path
) -> None:
    seen = await once(workers_killed_and_restarted, workers_tmp)
    retried = 0
    for task in ended_tasks(seen):
        if task.tool != "retried_compute":
            continue
        record, lines = task.record, task.lines
        assert record.status == "completed", (record, lines)
        assert record.max_attempts == 3 + handed_back(lines), (record, lines)
        assert 1 <= record.attempts <= record.max_attempts
        # a run on the killed or stopped worker that did not complete there is run again
        unfinished = sum(
            (what == "run") - (what == "completed")
            for what, w in lines
            if w in (seen.killed, seen.stopped)
        )
        if unfinished and not task.unlogged_end:
            assert record.attempts > 1, (record, lines)
        retried += record.attempts > 1
    assert retried >= 1, "the killed worker's retry-safe task should have run again"


@pytest.mark.services
async def test_an_at_most_once_task_runs_once_and_fails_only_with_its_worker_s_end(
    once: Once, workers_tmp: Path
) -> None:
    """It completes, or fails with the reason: the lease lost on the killed worker, the
    shutdown on the stopped one."""
    from mcpio.tasks._engine import SHUT_DOWN

    seen = await once(workers_killed_and_restarted, workers_tmp)
    reasons: set[str] = set()
    for task in ended_tasks(seen):
        if task.tool == "retried_compute":
            continue
        record, lines = task.record, task.lines
        assert record.max_attempts == 1 and record.attempts == 1
        if record.status == "failed":
            reasons.add(record.status_message or "")
            assert task.runs[0] in (seen.killed, seen.stopped), (record, lines)
            reason = LEASE_LOST if task.runs[0] == seen.killed else SHUT_DOWN
            assert record.status_message == reason, (record, lines)
        else:
            assert record.status == "completed", (record, lines)
    assert seen.expected and seen.expected <= reasons, (seen.expected, reasons)


@pytest.mark.services
async def test_a_full_queue_refuses_with_503_and_keeps_what_it_accepted(tmp_path: Path) -> None:
    processes: list[Process] = []
    try:
        redis = start_redis(tmp_path, processes)
        url = f"redis://127.0.0.1:{redis.port}/0"
        args = ["--tasks", url, "--task-queue", url, "--task-queue-max", "2"]
        [front] = start_instances(tmp_path, [("http", None)], processes, args)
        async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
            peer = Peer(http, url_of(front))
            kept = [await peer.start("slow_compute", seconds=0.1, label=str(i)) for i in range(2)]
            frame = {
                "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": {
                    "name": "slow_compute", "arguments": {"seconds": 0.1},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": MODERN,
                        "io.modelcontextprotocol/clientCapabilities": CAPS,
                    },
                },
            }  # fmt: skip
            headers = {
                "content-type": "application/json", "accept": ACCEPT,
                "mcp-protocol-version": MODERN, "mcp-method": "tools/call",
                "mcp-name": "slow_compute",
            }  # fmt: skip
            refused = await http.post(url_of(front), content=json.dumps(frame), headers=headers)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
            error = refused.json()["error"]
            assert error["code"] == SERVER_BUSY and "queue is full" in error["message"], error
            for task_id in kept:  # accepted: still there, waiting for a worker
                assert (await peer.get(task_id))["status"] == "working"
            # A worker comes: both run.
            from tests.support.cluster import start_workers

            start_workers(tmp_path, ["w"], processes, url, WORKER_ARGS)
            for task_id in kept:
                await peer.reaches(task_id, "completed")
    finally:
        for process in sorted(reversed(processes), key=lambda p: p.name == "redis"):
            process.stop()


@pytest.mark.slow
async def test_a_sigterm_fails_in_process_tasks_at_once(tmp_path: Path) -> None:
    """An instance running its tasks itself (SQLite), SIGTERMed with a task running past its
    grace: the task reads failed, saying the server shut down, as soon as it stopped (not
    `working` until its lease runs out); one that ends within the grace completes."""
    from mcpio.tasks._engine import SHUT_DOWN

    spec = f"sqlite:{tmp_path / 'tasks.db'}"
    args = ["--tasks", spec, "--task-lease", "60", "--task-grace", "1"]
    processes: list[Process] = []
    try:
        [first] = start_instances(tmp_path, [("first", None)], processes, args)
        async with httpx.AsyncClient(timeout=10, trust_env=False) as http:
            peer = Peer(http, url_of(first))
            long = await peer.start("slow_compute", seconds=3600, label="long")
            short = await peer.start("slow_compute", seconds=0.5, label="short")
            first.popen.send_signal(signal.SIGTERM)
            first.popen.wait(15)
            [second] = start_instances(tmp_path, [("second", None)], processes, args)
            peer = Peer(http, url_of(second))
            failed = await peer.get(long)
            assert failed["status"] == "failed" and failed["statusMessage"] == SHUT_DOWN, failed
            assert failed["error"] == {"code": -32603, "message": SHUT_DOWN}
            assert text(await peer.get(short)) == "computed short after 0.5 s"
    finally:
        for process in processes:
            process.stop()
