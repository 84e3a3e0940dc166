"""Task bounds fair between clients (issue 46): what a requestor holds (running tasks and ended
ones whose records are kept, by count and bytes) counts per client (its address, or its
principal), not per owner: every legacy session and every anonymous 2026-07-28 request of one
address spend one budget; another address, or a principal, keeps its own; the instance-wide
bounds and the queue keep room that one requestor cannot take."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from mcp_wire_runtime.errors import SERVER_BUSY, ProtocolError
from mcpio import Server
from mcpio.auth import Principal, ResourceServerAuth
from mcpio.tasks._engine import TASKS_EXTENSION, TaskEngine
from mcpio.tasks._queue import Job, RedisTaskQueue
from tests.support import ACCEPT, MODERN, serve_app, until

pytestmark = pytest.mark.anyio

JSON_HEADERS = {"content-type": "application/json", "accept": ACCEPT}
MODERN_TASKS = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
}
RESOURCE = "http://127.0.0.1/mcp"


def tasks_server(engine: TaskEngine) -> Server:
    server = Server("fair", "1.0", tasks=engine)

    @server.tool(task="optional")
    async def blob(size: int) -> str:
        """A result of `size` characters."""
        return "x" * size

    return server


@asynccontextmanager
async def served(server: Server, **options: Any) -> AsyncIterator[str]:
    async with serve_app(server.http_app(**options)) as web:
        yield web.url


@asynccontextmanager
async def peer(
    url: str, address: str, token: str | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client whose connections come from `address` (127.0.0.x: loopback)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    headers = {} if token is None else {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        base_url=url, transport=transport, timeout=10, headers=headers
    ) as http:
        yield http


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The one JSON-RPC answer of a response (JSON or SSE)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        frames = [
            json.loads(line[5:]) for line in response.text.splitlines() if line[:5] == "data:"
        ]
        return [f for f in frames if "id" in f][-1]
    return response.json()


async def modern_task(http: httpx.AsyncClient, size: int) -> dict[str, Any]:
    """A 2026-07-28 `tools/call` of `blob` as a task: the answer (a task, or an error)."""
    frame = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"_meta": MODERN_TASKS, "name": "blob", "arguments": {"size": size}},
    }  # fmt: skip
    headers = {
        **JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": "tools/call",
        "mcp-name": "blob",
    }  # fmt: skip
    with anyio.fail_after(10):
        return answer_of(await http.post("/mcp", content=json.dumps(frame), headers=headers))


async def legacy_session(http: httpx.AsyncClient) -> dict[str, str]:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tasks": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    frame = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    response = await http.post("/mcp", content=json.dumps(frame), headers=JSON_HEADERS)
    assert response.status_code == 200, response.text
    session = {
        **JSON_HEADERS,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post("/mcp", content=json.dumps(note), headers=session)
    return session


async def legacy_task(
    http: httpx.AsyncClient, session: dict[str, str], size: int
) -> dict[str, Any]:
    """A 2025-11-25 task-augmented `tools/call` of `blob` on `session`: the answer."""
    params = {"name": "blob", "arguments": {"size": size}, "task": {"ttl": 60_000}}
    frame = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    with anyio.fail_after(10):
        return answer_of(await http.post("/mcp", content=json.dumps(frame), headers=session))


def created(answer: dict[str, Any]) -> bool:
    """Whether the answer is a task created (else: a -32005 refusal, anything else fails)."""
    if "result" in answer:
        return "task" in answer["result"] or "taskId" in answer["result"]
    assert answer["error"]["code"] == SERVER_BUSY, answer
    return False


async def test_an_address_storing_results_past_its_byte_share_is_refused_others_served() -> None:
    """One anonymous 2026-07-28 client stores results until its byte share is reached: its next
    task is refused (-32005, HTTP 503) and its results stay readable; a client of another address
    is still served (before: only running tasks counted, so results piled up without bound)."""
    engine = TaskEngine(max_kept_bytes_per_requestor=20_000, max_kept_bytes=1_000_000)
    async with (
        served(tasks_server(engine)) as url,
        peer(url, "127.0.0.2") as hog,
        peer(url, "127.0.0.1") as other,
    ):
        accepted: list[str] = []
        for _ in range(10):
            answer = await modern_task(hog, 4_000)
            if not created(answer):
                break
            accepted.append(answer["result"]["taskId"])
            await until(lambda: not engine._runs)  # pyright: ignore[reportPrivateUsage]
        else:
            pytest.fail("ten results of 4,000 bytes kept for one client past its 20,000")
        count, size = engine.ledger.held("127.0.0.2")  # the results kept, as stored
        assert count == len(accepted) >= 2 and size >= 20_000
        assert "too many task results kept for this requestor" in answer["error"]["message"]
        assert answer["error"]["data"]["retryAfterSeconds"] >= 1
        for task_id in accepted:  # none accepted is lost
            kept = await engine.get(task_id, None)
            assert kept is not None and kept.status == "completed"
        assert created(await modern_task(other, 4_000))


async def test_an_address_past_its_task_count_is_refused_others_served() -> None:
    """Ended tasks count until they expire: one address's share of tasks is reached by tasks
    that ended at once, while another address still gets its own."""
    engine = TaskEngine(max_tasks_per_requestor=3)
    async with (
        served(tasks_server(engine)) as url,
        peer(url, "127.0.0.2") as hog,
        peer(url, "127.0.0.1") as other,
    ):
        for _ in range(3):
            assert created(await modern_task(hog, 1))
            await until(lambda: not engine._runs)  # pyright: ignore[reportPrivateUsage]
        refused = await modern_task(hog, 1)
        assert not created(refused)
        assert "too many tasks for this requestor (3)" in refused["error"]["message"]
        assert created(await modern_task(other, 1))


async def test_ten_legacy_sessions_of_one_address_share_one_budget() -> None:
    """Sessions are free to open: each is not a budget of its own. Ten legacy sessions of one
    address together get the address's share (before: each session was an owner with its own
    share, so one address took ten); another address is still served."""
    engine = TaskEngine(max_tasks_per_requestor=5)
    async with (
        served(tasks_server(engine)) as url,
        peer(url, "127.0.0.2") as hog,
        peer(url, "127.0.0.1") as other,
    ):
        sessions = [await legacy_session(hog) for _ in range(10)]
        outcomes = [created(await legacy_task(hog, session, 1)) for session in sessions]
        assert outcomes == [True] * 5 + [False] * 5
        assert created(await legacy_task(other, await legacy_session(other), 1))


async def verify(token: str) -> Principal | None:
    return Principal(token) if token in ("mallory", "alice") else None


async def test_a_principal_is_served_after_another_took_its_share_from_the_same_address() -> None:
    """With authorization, the principal is the requestor: one that took its share (from an
    address another principal shares) leaves the other's budget whole."""
    engine = TaskEngine(max_tasks_per_requestor=2)
    auth = ResourceServerAuth(verify, RESOURCE, ["http://127.0.0.1/issuer"])
    async with (
        served(tasks_server(engine), auth=auth) as url,
        peer(url, "127.0.0.2", "mallory") as mallory,
        peer(url, "127.0.0.2", "alice") as alice,
    ):
        assert [created(await modern_task(mallory, 1)) for _ in range(3)] == [True, True, False]
        assert created(await modern_task(alice, 1))


async def test_one_requestor_cannot_take_the_instance_s_share_of_kept_results() -> None:
    """The instance-wide bound on kept results is reached by several requestors only: each
    requestor's share is below it; once it is reached, every new task waits for room."""
    now = [1_000.0]
    engine = TaskEngine(
        max_kept_bytes_per_requestor=3_000, max_kept_bytes=5_000, ttl_ms=60_000,
        clock=lambda: now[0],
    )  # fmt: skip

    async def result(inputs: Any, status: Any) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "x" * 2_000}], "isError": False}

    async def one(requestor: str) -> None:
        record = await engine.start(
            owner=None, requestor=requestor, method="tools/call", work=result
        )
        await engine.wait(record.task_id, None)

    await one("ann")
    await one("ann")  # over its share now: kept all the same
    with pytest.raises(ProtocolError) as caught:
        await one("ann")
    assert "for this requestor" in caught.value.message
    assert caught.value.data == {"retryAfterSeconds": 60}
    await one("bob")  # the instance has room left (ann took less than all of it)
    with pytest.raises(ProtocolError) as caught:
        await one("carol")  # now it has none
    assert caught.value.code == SERVER_BUSY
    assert caught.value.message.startswith("too many task results kept (")
    now[0] += 61  # they expired: room again
    await one("carol")
    await engine.aclose()


# ---------------------------------------------------------------------- the queue (Redis)


def job(requestor: str | None) -> Job:
    return Job(task_id=uuid.uuid4().hex, owner=None, tool="blob", arguments={}, revision=MODERN,
               requestor=requestor)  # fmt: skip


@dataclass
class SharedQueue:
    """Two queue objects (two instances) on one Redis queue of five entries, two a requestor."""

    one: RedisTaskQueue
    two: RedisTaskQueue


@pytest.fixture
async def shared_queue(redis_url: str) -> AsyncIterator[SharedQueue]:
    prefix = f"test:{uuid.uuid4().hex}"
    one = RedisTaskQueue(redis_url, prefix=prefix, max_queued=5, max_queued_per_requestor=2)
    two = RedisTaskQueue(redis_url, prefix=prefix, max_queued=5, max_queued_per_requestor=2)
    try:
        yield SharedQueue(one, two)
    finally:
        await one.close()
        await two.close()


async def share_filled(queue: SharedQueue) -> None:
    """10.0.0.1 fills its share (and is refused twice), 10.0.0.2 and no requestor queue one
    each (as `test_a_requestor_fills_its_share_not_the_queue` checks)."""
    for queue_object, requestor in (
        (queue.one, "10.0.0.1"),
        (queue.two, "10.0.0.1"),
        (queue.one, "10.0.0.1"),
        (queue.two, "10.0.0.1"),
        (queue.two, "10.0.0.2"),
        (queue.one, None),
    ):
        await queue_object.put(job(requestor))


async def requeued_and_done(queue: SharedQueue) -> None:
    """`share_filled`, then the first entry requeued and the second done (twice)."""
    await share_filled(queue)
    [first, second, *_] = await queue.two.read("w", 4, 100)
    await queue.two.requeue(first)
    await queue.two.done(second.id)
    await queue.two.done(second.id)


@pytest.mark.services
async def test_a_requestor_fills_its_share_not_the_queue(shared_queue: SharedQueue) -> None:
    """One requestor fills its share of the queue, not the queue: another's job is queued, so
    is one of no requestor; the counts live in Redis (either queue object put them)."""
    one, two = shared_queue.one, shared_queue.two
    assert await one.put(job("10.0.0.1")) == "queued"
    assert await two.put(job("10.0.0.1")) == "queued"
    assert await one.put(job("10.0.0.1")) == "share"
    assert await two.put(job("10.0.0.1")) == "share"
    assert await two.put(job("10.0.0.2")) == "queued"
    assert await one.put(job(None)) == "queued"
    assert await shared_queue.one.queued_for("10.0.0.1") == 2


@pytest.mark.services
async def test_a_requeued_entry_still_counts_once(shared_queue: SharedQueue) -> None:
    await share_filled(shared_queue)
    [first, *_] = await shared_queue.two.read("w", 4, 100)
    await shared_queue.two.requeue(first)  # still queued: still counts
    assert await shared_queue.one.queued_for("10.0.0.1") == 2
    assert await shared_queue.one.put(job("10.0.0.1")) == "share"


@pytest.mark.services
async def test_an_ended_entry_frees_its_share_once(shared_queue: SharedQueue) -> None:
    """Its entry done (twice: counted once), the requestor may queue one more."""
    await requeued_and_done(shared_queue)
    assert await shared_queue.one.queued_for("10.0.0.1") == 1
    assert await shared_queue.one.put(job("10.0.0.1")) == "queued"


@pytest.mark.services
async def test_the_queue_s_bound_holds_whatever_the_shares(shared_queue: SharedQueue) -> None:
    """Five entries: the queue's bound, though the next requestor has its share left."""
    await requeued_and_done(shared_queue)
    await shared_queue.one.put(job("10.0.0.1"))
    assert await shared_queue.one.put(job("10.0.0.3")) == "queued"
    assert await shared_queue.one.put(job("10.0.0.4")) == "full"
    assert await shared_queue.one.length() == 5


@pytest.mark.services
async def test_a_requestor_past_its_queue_share_is_refused_with_a_clear_error(
    redis_url: str,
) -> None:
    prefix = f"test:{uuid.uuid4().hex}"
    queue = RedisTaskQueue(redis_url, prefix=prefix, max_queued=100, max_queued_per_requestor=1)
    engine = TaskEngine(queue=queue)
    try:
        await engine.enqueue(job(None), owner=None, requestor="10.0.0.1")
        with pytest.raises(ProtocolError) as caught:
            await engine.enqueue(job(None), owner=None, requestor="10.0.0.1")
        assert caught.value.code == SERVER_BUSY
        assert caught.value.message == (
            "too many queued tasks for this requestor (1): retry when one has ended"
        )
        await engine.enqueue(job(None), owner=None, requestor="10.0.0.2")
    finally:
        await engine.aclose()
        await queue.close()
