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
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpio.tasks.engine import TASKS_EXTENSION
from mcpio.tasks.store import LEASE_LOST
from tests.cluster import Process, start_instances, start_nginx, start_redis
from tests.support import ACCEPT, MODERN, until

pytestmark = pytest.mark.anyio

LEASE = 2.0  # --task-lease of every instance here
CAPS = {"extensions": {TASKS_EXTENSION: {}}, "elicitation": {}}
NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
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


def url_of(process: Process) -> str:
    return f"http://127.0.0.1:{process.port}/mcp"


class Peer:
    """Raw 2026-07-28 requests to one URL (an instance, or nginx in front of them)."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.ids = iter(range(1, 1_000_000))

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """The request's result (fails on an error)."""
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": CAPS,
        }
        frame = {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": method,
            "params": {**params, "_meta": meta},
        }
        headers = {
            "content-type": "application/json",
            "accept": ACCEPT,
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
        }
        name = params.get("name", params.get("taskId"))
        if name is not None:
            headers["mcp-name"] = name
        response = await self.http.post(self.url, content=json.dumps(frame), headers=headers)
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("text/event-stream"):
            datas = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
            answer = [a for a in map(json.loads, datas) if a.get("id") == frame["id"]][0]
        else:
            answer = response.json()
        assert "result" in answer, answer
        return answer["result"]

    async def start(self, tool: str, **arguments: Any) -> str:
        created = await self.call("tools/call", name=tool, arguments=arguments)
        assert created["resultType"] == "task" and created["status"] == "working", created
        return created["taskId"]

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.call("tasks/get", taskId=task_id)

    async def reaches(self, task_id: str, status: str, timeout: float = 15.0) -> dict[str, Any]:
        async def there() -> dict[str, Any] | None:
            task = await self.get(task_id)
            return task if task["status"] == status else None

        return await until(there, timeout=timeout, interval=0.05)


def text(task: dict[str, Any]) -> str:
    return task["result"]["content"][0]["text"]


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
