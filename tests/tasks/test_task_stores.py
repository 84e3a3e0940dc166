"""The task store contract (the rules of `mcpio.tasks._store`'s docstring), held against every
store: `MemoryTaskStore`, `SqliteTaskStore` (a file in tmp_path) and `RedisTaskStore` (a
redis-server of tests/support/cluster.py on a loopback port: marked `services`). Times come from an
injected clock; the durable stores are also read through a second store object on the same
file / Redis, as another process or instance would."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, Server
from mcpio._core.bus import Bus, BusUnavailable, Event
from mcpio.tasks._client import TaskCancelled, TaskHandle
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._redis import RedisTaskStore
from mcpio.tasks._sqlite import SqliteTaskStore
from mcpio.tasks._store import (
    LEASE_LOST,
    RUN_AGAIN,
    MemoryTaskStore,
    TaskRecord,
    TaskStore,
    TaskStoreError,
    cursor_of,
    place_of,
    record_from_json,
    record_json,
)
from mcpio.tasks._stores import open_task_store
from tests.support import ROOT

pytestmark = pytest.mark.anyio

MINUTE_MS = 60_000


class Clock:
    """The stores' clock, moved by the test; the wall clock's once `real` (a test through the
    task engine, whose lease renewals sleep)."""

    def __init__(self) -> None:
        self.now = time.time()
        self.real = False

    def __call__(self) -> float:
        return time.time() if self.real else self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


Open = Callable[[], TaskStore]  # another store object on the same backend


@pytest.fixture
def clock() -> Clock:
    return Clock()


KINDS = [
    pytest.param("memory"),
    pytest.param("sqlite"),
    pytest.param("redis", marks=pytest.mark.services),
]


@pytest.fixture
async def opener(
    request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> AsyncIterator[Open]:
    kind: str = request.param
    prefix = f"test:{uuid.uuid4().hex}"
    url = request.getfixturevalue("redis_url") if kind == "redis" else ""
    memory = MemoryTaskStore(clock)
    opened: list[TaskStore] = []

    def open_() -> TaskStore:
        store: TaskStore
        if kind == "memory":
            store = memory  # one process: "another store object" is the same one
        elif kind == "sqlite":
            store = SqliteTaskStore(tmp_path / "tasks.db", clock)
        else:
            store = RedisTaskStore(url, prefix=prefix, clock=clock)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        if store is not memory:
            await store.close()


def stores(*kinds: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        "opener", [p for p in KINDS if p.values[0] in kinds], indirect=True
    )


every_store = stores("memory", "sqlite", "redis")
durable_stores = stores("sqlite", "redis")


@pytest.fixture
def store(opener: Open) -> TaskStore:
    return opener()


def record(clock: Clock, **fields: Any) -> TaskRecord:
    base: dict[str, Any] = {
        "task_id": uuid.uuid4().hex,
        "owner": None,
        "method": "tools/call",
        "status": "working",
        "created_at": clock(),
        "updated_at": clock(),
        "ttl_ms": MINUTE_MS,
    }
    return TaskRecord(**(base | fields))


def completed(task: TaskRecord, value: str = "done") -> TaskRecord:
    result = {"content": [{"type": "text", "text": value}]}
    return dataclasses.replace(task, status="completed", result=result)


# --- create, get, save


@every_store
async def test_created_task_reads_back(opener: Open, clock: Clock) -> None:
    store = opener()
    task = record(clock, owner="alice", poll_interval_ms=500, status_message="started")
    await store.create(task)
    assert await opener().get(task.task_id, "alice") == task
    assert await store.get("no-such-task", "alice") is None


@every_store
async def test_create_of_an_existing_id_is_refused(store: TaskStore, clock: Clock) -> None:
    task = record(clock)
    await store.create(task)
    with pytest.raises(TaskStoreError, match="exists already"):
        await store.create(dataclasses.replace(task, owner="mallory"))
    assert await store.get(task.task_id, None) == task


@every_store
async def test_save_stores_and_returns_the_task(store: TaskStore, clock: Clock) -> None:
    task = record(clock)
    await store.create(task)
    clock.advance(1)
    asking = dataclasses.replace(
        task, status="input_required", input_requests={"q": {"method": "elicitation/create"}}
    )
    assert await store.save(asking) == asking
    assert await store.get(task.task_id, None) == asking
    assert await store.save(record(clock)) is None  # unknown


@every_store
@pytest.mark.parametrize("final", ["completed", "failed", "cancelled"])
async def test_a_terminal_status_is_final(opener: Open, clock: Clock, final: str) -> None:
    store = opener()
    task = record(clock)
    await store.create(task)
    done = dataclasses.replace(task, status=final, status_message=final)
    assert await store.save(done) == done
    for later in (
        dataclasses.replace(task, status="working", status_message="again"),
        completed(task, "another result"),
    ):
        assert await opener().save(later) == done
    assert await store.get(task.task_id, None) == done
    assert not await store.renew(task.task_id, "instance-1", clock() + 30)


@every_store
async def test_a_change_made_elsewhere_is_seen(opener: Open, clock: Clock) -> None:
    """A store that last saw a task `working` (and a Redis store remembers that) still keeps the
    rules when another store object changed it meanwhile."""
    one, two = opener(), opener()
    task = record(clock)
    await one.create(task)
    assert await two.renew(task.task_id, "instance-2", clock() + 5)
    assert not await one.renew(task.task_id, "instance-1", clock() + 5)
    held = await one.get(task.task_id, None)
    assert held is not None and held.lease_holder == "instance-2"
    done = completed(held)
    assert await two.save(done) == done
    assert await one.save(dataclasses.replace(held, status_message="late")) == done
    assert not await one.renew(task.task_id, "instance-2", clock() + 5)


# --- owners


@every_store
async def test_only_the_owner_sees_a_task(store: TaskStore, clock: Clock) -> None:
    alices = record(clock, owner="alice")
    nobodys = record(clock, owner=None)
    await store.create(alices)
    await store.create(nobodys)
    assert await store.get(alices.task_id, "alice") == alices
    assert await store.get(alices.task_id, "bob") is None
    assert await store.get(alices.task_id, None) is None
    assert await store.get(nobodys.task_id, "") is None  # no owner is not the empty owner
    assert await store.list("bob", None, 10) == ([], None)
    assert await store.list("", None, 10) == ([], None)
    assert await store.list("alice", None, 10) == ([alices], None)
    assert await store.list(None, None, 10) == ([nobodys], None)


# --- TTL


@every_store
async def test_a_task_past_its_ttl_is_gone(opener: Open, clock: Clock) -> None:
    store = opener()
    task = record(clock, ttl_ms=10_000)
    forever = record(clock, ttl_ms=None)
    await store.create(task)
    await store.create(forever)
    clock.advance(9.999)
    assert await store.get(task.task_id, None) == task
    clock.advance(0.001)  # created_at + ttl: expired
    assert await opener().get(task.task_id, None) is None
    assert await store.save(completed(task)) is None
    assert not await store.renew(task.task_id, "instance-1", clock() + 30)
    assert await store.list(None, None, 10) == ([forever], None)
    clock.advance(365 * 86400)
    assert await store.get(forever.task_id, None) == forever


@every_store
async def test_an_expired_terminal_task_is_gone_too(store: TaskStore, clock: Clock) -> None:
    task = record(clock, ttl_ms=1000)
    await store.create(task)
    await store.save(completed(task))
    clock.advance(1)
    assert await store.get(task.task_id, None) is None


# --- leases


async def leased(opener: Open, clock: Clock, status: str) -> tuple[TaskStore, TaskRecord]:
    """A task held by instance-1 until 5 s from now, the clock moved to the lease's end."""
    store = opener()
    task = record(clock, status=status, lease_holder="instance-1", lease_until=clock() + 5)
    await store.create(task)
    clock.advance(5)  # lease_until == now: still held
    return store, task


async def lost(opener: Open, clock: Clock, status: str) -> tuple[TaskStore, TaskRecord, Any]:
    """`leased`, then a moment past its lease: the store, the task, and the task as another
    store object reads it then."""
    store, task = await leased(opener, clock, status)
    clock.advance(0.001)
    return store, task, await opener().get(task.task_id, None)


LEASE_STATUSES = pytest.mark.parametrize("status", ["working", "input_required"])


@every_store
@LEASE_STATUSES
async def test_a_lease_holds_up_to_its_end(opener: Open, clock: Clock, status: str) -> None:
    store, task = await leased(opener, clock, status)
    assert await store.get(task.task_id, None) == task


@every_store
@LEASE_STATUSES
async def test_a_lost_lease_reads_failed(opener: Open, clock: Clock, status: str) -> None:
    _, _, failed = await lost(opener, clock, status)
    assert failed is not None
    assert (failed.status, failed.status_message) == ("failed", LEASE_LOST)
    assert failed.error == {"code": -32603, "message": LEASE_LOST}
    assert (failed.lease_holder, failed.lease_until, failed.input_requests) == (None, None, None)
    assert failed.updated_at == clock()


@every_store
@LEASE_STATUSES
async def test_a_late_save_of_the_dead_instance_changes_nothing(
    opener: Open, clock: Clock, status: str
) -> None:
    store, task, failed = await lost(opener, clock, status)
    assert await store.save(completed(task)) == failed


@every_store
@LEASE_STATUSES
async def test_a_lost_lease_is_not_renewed(opener: Open, clock: Clock, status: str) -> None:
    store, task, _ = await lost(opener, clock, status)
    assert not await store.renew(task.task_id, "instance-1", clock() + 30)


@every_store
@LEASE_STATUSES
async def test_a_lost_lease_is_stored_failed(opener: Open, clock: Clock, status: str) -> None:
    """Stored so: a later read, and the list, give the same failed task (after a late save and
    a refused renewal of the dead instance)."""
    store, task, failed = await lost(opener, clock, status)
    await store.save(completed(task))
    await store.renew(task.task_id, "instance-1", clock() + 30)
    clock.advance(1)
    assert await opener().get(task.task_id, None) == failed
    assert await store.list(None, None, 10) == ([failed], None)


@every_store
async def test_lease_lost_is_seen_by_list_first(store: TaskStore, clock: Clock) -> None:
    task = record(clock, owner="alice", lease_holder="instance-1", lease_until=clock() + 1)
    await store.create(task)
    clock.advance(2)
    (listed,), _ = await store.list("alice", None, 10)
    assert listed.status == "failed" and listed.status_message == LEASE_LOST
    assert await store.get(task.task_id, "alice") == listed


@every_store
async def test_a_terminal_task_keeps_its_status_past_the_lease(
    store: TaskStore, clock: Clock
) -> None:
    task = record(clock, lease_holder="instance-1", lease_until=clock() + 1)
    await store.create(task)
    done = completed(task)
    await store.save(done)
    clock.advance(10)
    assert await store.get(task.task_id, None) == done


@every_store
async def test_renew(opener: Open, clock: Clock) -> None:
    store = opener()
    task = record(clock)
    await store.create(task)
    assert await store.renew(task.task_id, "instance-1", clock() + 10)  # held by no one yet
    assert not await opener().renew(task.task_id, "instance-2", clock() + 10)
    clock.advance(9)
    assert await opener().renew(task.task_id, "instance-1", clock() + 10)
    clock.advance(9)  # past the first lease, within the second
    held = await store.get(task.task_id, None)
    assert held is not None and held.status == "working"
    assert (held.lease_holder, held.lease_until) == ("instance-1", clock() + 1)
    assert not await store.renew("no-such-task", "instance-1", clock() + 10)


# --- orders


@every_store
async def test_orders_are_taken_once_oldest_first(opener: Open, clock: Clock) -> None:
    store = opener()
    task = record(clock, lease_holder="instance-1", lease_until=clock() + 30)
    await store.create(task)
    orders: list[dict[str, Any]] = [
        {"op": "update", "taskId": task.task_id, "responses": {"q": {"action": "accept"}}},
        {"op": "cancel", "taskId": task.task_id},
        {"op": "update", "taskId": task.task_id, "responses": {"ä": [1, None, 2.5]}},
    ]
    for order in orders[:2]:
        assert await store.post_order(task.task_id, order)
    assert await opener().take_orders(task.task_id) == orders[:2]
    assert await opener().post_order(task.task_id, orders[2])
    clock.advance(1)
    assert await store.take_orders(task.task_id) == orders[2:]
    assert await store.take_orders(task.task_id) == []
    assert not await store.post_order("no-such-task", orders[1])
    assert await store.take_orders("no-such-task") == []


@every_store
@pytest.mark.parametrize("end", ["completed", "expired", "lease lost"])
async def test_orders_go_with_their_task(opener: Open, clock: Clock, end: str) -> None:
    store = opener()
    task = record(clock, ttl_ms=10_000, lease_holder="instance-1", lease_until=clock() + 5)
    await store.create(task)
    cancel = {"op": "cancel", "taskId": task.task_id}
    assert await store.post_order(task.task_id, cancel)
    if end == "completed":
        await opener().save(completed(task))
    else:
        clock.advance(10 if end == "expired" else 6)
    assert await opener().take_orders(task.task_id) == []
    assert not await store.post_order(task.task_id, cancel)  # gone or terminal
    assert await store.take_orders(task.task_id) == []


# --- list


@every_store
async def test_list_pages_oldest_first(opener: Open, clock: Clock) -> None:
    store = opener()
    made: list[TaskRecord] = []
    for _ in range(7):
        made.append(record(clock, owner="alice"))
        clock.advance(0.5)
    same_time = [record(clock, owner="alice", task_id=f"tie-{i}") for i in (2, 0, 1)]
    for task in reversed([*made, *same_time]):
        await store.create(task)
    await store.create(record(clock, owner="bob"))
    expected = [*made, *sorted(same_time, key=lambda t: t.task_id)]
    seen: list[TaskRecord] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = await opener().list("alice", cursor, 3)
        assert len(page) <= 3
        seen += page
        pages += 1
        if cursor is None:
            break
    assert seen == expected and pages == 4
    assert await store.list("alice", None, 100) == (expected, None)


@every_store
async def test_list_reads_past_many_ties_and_expired_tasks(opener: Open, clock: Clock) -> None:
    """More tasks than a Redis batch (100), 150 of them created at the same instant, every third
    one expired by the time of the listing: the live ones, in order, whatever the page size."""
    store = opener()
    made: list[TaskRecord] = []
    for i in range(260):
        ttl = 1000 if i % 3 == 0 else None
        made.append(record(clock, owner="alice", task_id=f"t{i:03}", ttl_ms=ttl))
        if i < 50 or i >= 200:
            clock.advance(0.001)
    for task in made:
        await store.create(task)
    clock.advance(2)
    live = sorted((t for t in made if t.ttl_ms is None), key=lambda t: (t.created_at, t.task_id))
    for size in (1000, 1000, 7, 100):  # the second pass drops the ids of deleted keys
        seen: list[TaskRecord] = []
        cursor: str | None = None
        while True:
            page, cursor = await opener().list("alice", cursor, size)
            seen += page
            if cursor is None:
                break
        assert seen == live


@every_store
async def test_a_cursor_outlives_the_task_it_points_at(store: TaskStore, clock: Clock) -> None:
    first = record(clock, ttl_ms=None)
    clock.advance(1)
    short = record(clock, ttl_ms=1000)
    clock.advance(0.5)
    last = record(clock, ttl_ms=None)
    for task in (first, short, last):
        await store.create(task)
    page, cursor = await store.list(None, None, 1)
    assert page == [first] and cursor is not None
    clock.advance(1)  # `short`, where the cursor resumes, expires meanwhile
    assert await store.list(None, cursor, 1) == ([last], None)


@every_store
@pytest.mark.parametrize(
    "cursor", ["bogus", "", "bm90IGpzb24=", "WzEsMiwzXQ==", "W251bGwsIngiXQ=="]
)
async def test_an_unknown_cursor_is_a_value_error(
    store: TaskStore, clock: Clock, cursor: str
) -> None:
    await store.create(record(clock))
    with pytest.raises(ValueError, match="unknown cursor"):
        await store.list(None, cursor, 10)


@every_store
async def test_a_page_holds_at_least_one_task(store: TaskStore, clock: Clock) -> None:
    await store.create(record(clock))
    for limit in (0, -1):
        with pytest.raises(ValueError, match="at least one"):
            await store.list(None, None, limit)


# --- concurrency


async def all_at_once(stores: list[TaskStore], task_id: str) -> None:
    """100 reads at once first, so that a store with a connection pool (Redis) has its
    connections open and the race that follows is one (not a queue for new connections)."""
    async with anyio.create_task_group() as group:
        for i in range(100):
            group.start_soon(stores[i % len(stores)].get, task_id, None)


@every_store
async def test_concurrent_saves_keep_compare_and_set(opener: Open, clock: Clock) -> None:
    """100 saves at once through two store objects, half of them completing the task: exactly one
    completion wins, every later save returns the winner, nothing overwrites it."""
    stores = [opener(), opener()]
    task = record(clock)
    await stores[0].create(task)
    answers: dict[int, TaskRecord | None] = {}

    async def save(i: int) -> None:
        if i % 2:
            mine = completed(task, f"result {i}")
        else:
            mine = dataclasses.replace(task, status_message=f"step {i}")
        answers[i] = await stores[i % len(stores)].save(mine)

    await all_at_once(stores, task.task_id)
    async with anyio.create_task_group() as group:
        for i in range(100):
            group.start_soon(save, i)
    final = await stores[0].get(task.task_id, None)
    assert final is not None and final.status == "completed" and final.result is not None
    winner = int(final.result["content"][0]["text"].removeprefix("result "))
    for i, answer in answers.items():
        assert answer is not None
        if i % 2 and i != winner:
            assert answer == final  # a losing completion returns the stored winner
        elif answer.status == "working":
            assert answer.status_message == f"step {i}"
        else:
            assert answer == final


@every_store
async def test_concurrent_renews_one_holder_wins(opener: Open, clock: Clock) -> None:
    stores = [opener(), opener()]
    task = record(clock)
    await stores[0].create(task)
    won: list[str] = []

    async def renew(i: int) -> None:
        if await stores[i % 2].renew(task.task_id, f"instance-{i}", clock() + 30):
            won.append(f"instance-{i}")

    await all_at_once(stores, task.task_id)
    async with anyio.create_task_group() as group:
        for i in range(100):
            group.start_soon(renew, i)
    assert len(won) == 1, won
    held = await stores[1].get(task.task_id, None)
    assert held is not None and held.lease_holder == won[0]


# --- through the task engine


def example_server() -> Any:
    spec = importlib.util.spec_from_file_location(
        "everything_server", ROOT / "examples" / "everything_server.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


@durable_stores
async def test_200_concurrent_tasks_on_a_durable_store(opener: Open) -> None:
    """200 tasks at once through the example server's engine on the store: each its own result,
    as the store keeps it, read through another store object."""
    server = example_server()
    server.tasks.store = opener()
    async with Client(server, mode="2026-07-28", tasks=True) as client:
        handles: dict[int, TaskHandle] = {}

        async def run(i: int) -> None:
            answer = await client.start_tool("slow_compute", {"seconds": 0.05, "label": f"n{i}"})
            assert isinstance(answer, TaskHandle)
            handles[i] = answer
            result = await answer.result()
            assert result.content[0].text == f"computed n{i} after 0.05 s"  # type: ignore

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for i in range(200):
                    group.start_soon(run, i)
    assert len({h.task_id for h in handles.values()}) == 200
    other = opener()
    for i, handle in handles.items():
        stored = await other.get(handle.task_id, None)
        assert stored is not None and stored.status == "completed", stored
        assert stored.result is not None
        assert stored.result["content"][0]["text"] == f"computed n{i} after 0.05 s"
        assert (stored.lease_holder, stored.lease_until) == (None, None)
    await server.tasks.aclose()


LEASE = 0.5  # seconds: the task below outlives it six times over


def outliving_server(store: TaskStore) -> Server:
    server = Server("lease", "1.0", tasks=TaskEngine(store, lease_seconds=LEASE))

    @server.tool(task="required")
    async def long(ctx: Context) -> str:
        for i in range(3):
            await ctx.progress(i, 4, f"step {i}")
            await anyio.sleep(LEASE)
        answer = await ctx.elicit(
            "Go on?", {"type": "object", "properties": {"v": {"type": "string"}}}
        )
        await ctx.progress(3, 4, "answered")
        await anyio.sleep(LEASE)
        return f"done: {(answer.content or {}).get('v')}"

    return server


@every_store
@pytest.mark.parametrize("mode", ["2026-07-28", "2025-11-25"])
async def test_a_task_outlives_its_lease(opener: Open, clock: Clock, mode: str) -> None:
    """A task six times as long as its lease, its changes after the first lease ran out
    (progress, `input_required`, an answer two leases late): it stays alive and completes,
    in both eras."""
    clock.real = True
    server = outliving_server(opener())
    seen: list[tuple[str, str | None]] = []

    async def watch(task: TaskRecord) -> None:
        seen.append((task.status, task.status_message))

    async def late_answer(params: Any) -> dict[str, Any]:
        await anyio.sleep(2 * LEASE)
        return {"action": "accept", "content": {"v": "yes"}}

    server.tasks.watchers.append(watch)
    started = time.monotonic()
    async with Client(server, mode=mode, tasks=True, elicitation=late_answer) as client:
        with anyio.fail_after(30):
            handle = await client.start_tool("long", {})
            assert isinstance(handle, TaskHandle)
            result = await handle.result()
    took = time.monotonic() - started
    assert result.content[0].text == "done: yes"  # type: ignore[union-attr]
    assert took >= 6 * LEASE, took
    assert seen == [
        ("working", "step 0"),
        ("working", "step 1"),
        ("working", "step 2"),
        ("input_required", "step 2"),
        ("working", "step 2"),
        ("working", "answered"),
        ("completed", "answered"),
    ]
    stored = await opener().get(handle.task_id, None)
    assert stored is not None and stored.status == "completed"
    await server.tasks.aclose()


class DownBus(Bus):
    """A notification bus down for good: nothing published reaches another instance."""

    available = False

    async def publish(self, event: Event) -> None:
        raise BusUnavailable("down for the test")


def instance(store: TaskStore) -> Server:
    server = Server("orders", "1.0", tasks=TaskEngine(store, lease_seconds=LEASE), bus=DownBus())

    @server.tool(task="required")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Go on?", {"type": "object", "properties": {"v": {"type": "string"}}}
        )
        return f"answered {(answer.content or {}).get('v')}"

    @server.tool(task="required")
    async def sleepy() -> str:
        await anyio.sleep(3600)
        return "woke up"

    return server


@every_store
async def test_update_and_cancel_reach_another_instance_while_the_bus_is_down(
    opener: Open, clock: Clock
) -> None:
    """Two instances on one store, their bus down: `tasks/update` and `tasks/cancel` received
    by the one not running the task reach the one running it through the store, at its next
    renewal (a third of the lease)."""
    clock.real = True
    one, two = instance(opener()), instance(opener())

    async def yes(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"v": "yes"}}

    async def no(params: Any) -> dict[str, Any]:  # never asked: the answer comes from `two`
        return {"action": "accept", "content": {"v": "no"}}

    async with (
        Client(one, mode="2026-07-28", tasks=True, elicitation=no) as on_one,
        Client(two, mode="2026-07-28", tasks=True, elicitation=yes) as on_two,
    ):
        with anyio.fail_after(10):
            asking = await on_one.start_tool("ask", {})
            assert isinstance(asking, TaskHandle)
            result = await on_two.task(asking.task_id).result()
            assert result.content[0].text == "answered yes"  # type: ignore[union-attr]
            slow = await on_one.start_tool("sleepy", {})
            assert isinstance(slow, TaskHandle)
            await on_two.task(slow.task_id).cancel()
            with pytest.raises(TaskCancelled):
                await slow.result()
    for server in (one, two):
        await server.tasks.aclose()


# --- durability and bad rows


CHILD = """
import asyncio, sys, time
from mcpio.tasks._sqlite import SqliteTaskStore
from mcpio.tasks._store import TaskRecord

async def main(path):
    store = SqliteTaskStore(path)
    now = time.time()
    done = TaskRecord("done", "alice", "tools/call", "working", now, now, None)
    await store.create(done)
    await store.save(TaskRecord("done", "alice", "tools/call", "completed", now, now, None,
                                result={"content": [{"type": "text", "text": "42"}]}))
    running = TaskRecord("running", "alice", "tools/call", "working", now, now, None,
                         lease_holder="child", lease_until=now + 5)
    await store.create(running)
    print("ready", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main(sys.argv[1]))
"""


async def test_sqlite_tasks_survive_a_killed_process(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        with anyio.fail_after(30):
            line = await anyio.to_thread.run_sync(child.stdout.readline)
        assert line == b"ready\n"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    clock = Clock()
    store = SqliteTaskStore(path, clock)
    try:
        done = await store.get("done", "alice")
        assert done is not None and done.status == "completed"
        assert done.result == {"content": [{"type": "text", "text": "42"}]}
        running = await store.get("running", "alice")
        assert running is not None and running.status == "working"
        clock.advance(6)  # no one renews: the lease runs out
        lost = await store.get("running", "alice")
        assert lost is not None and (lost.status, lost.status_message) == ("failed", LEASE_LOST)
    finally:
        await store.close()
    with sqlite3.connect(path) as db:  # stored so
        (text,) = db.execute("SELECT record FROM mcpio_tasks WHERE task_id = 'running'").fetchone()
    assert record_from_json(text, "running", "row").status == "failed"


RACER = """
import anyio, dataclasses, json, sys
from mcpio.tasks._sqlite import SqliteTaskStore

async def main(path, name, ids):
    store = SqliteTaskStore(path)
    tasks = {i: await store.get(i, None) for i in ids}
    won = []

    async def complete(task_id, attempt):
        by = {"by": f"{name}-{attempt}"}
        mine = dataclasses.replace(tasks[task_id], status="completed", result=by)
        if await store.save(mine) == mine:
            won.append(f"{task_id} {name}-{attempt}")

    print("ready", flush=True)
    sys.stdin.readline()
    async with anyio.create_task_group() as group:
        for task_id in ids:
            for attempt in range(3):
                group.start_soon(complete, task_id, attempt)
    await store.close()
    print(json.dumps(won), flush=True)

anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3].split(","))
"""


async def test_two_sqlite_processes_race_on_one_file(tmp_path: Path, clock: Clock) -> None:
    """Two processes complete the same 40 tasks at once, 3 tries each: one completion per task
    wins, across processes, and it is the one stored."""
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path, clock)
    made = [record(clock) for _ in range(40)]
    for task in made:
        await store.create(task)
    ids = ",".join(t.task_id for t in made)
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(path), name, ids],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    try:
        for racer in racers:
            assert racer.stdout is not None
            with anyio.fail_after(30):
                assert await anyio.to_thread.run_sync(racer.stdout.readline) == "ready\n"
        for racer in racers:  # both go at once
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        outputs = [
            await anyio.to_thread.run_sync(lambda r=racer: r.communicate(timeout=60))
            for racer in racers
        ]
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
                racer.wait()
    assert [r.returncode for r in racers] == [0, 0], outputs
    won = [line for out, _ in outputs for line in json.loads(out.splitlines()[-1])]
    winners = dict(line.split() for line in won)
    assert len(won) == len(winners) == len(made)  # one winner per task, none twice
    for task in made:
        stored = await store.get(task.task_id, None)
        assert stored is not None and stored.result == {"by": winners[task.task_id]}
    await store.close()


@pytest.mark.parametrize(
    "row",
    [
        "not json",
        "[]",
        '{"task_id": "x"}',
        record_json(TaskRecord("other", None, "m", "working", 1, 1, None)),
    ],
)
async def test_a_corrupt_sqlite_row_is_a_clear_error(
    tmp_path: Path, clock: Clock, row: str
) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db", clock)
    try:
        bad, good = record(clock), record(clock)
        await store.create(bad)
        await store.create(good)
        with sqlite3.connect(tmp_path / "tasks.db") as db:
            db.execute("UPDATE mcpio_tasks SET record = ? WHERE task_id = ?", (row, bad.task_id))
        for call in (
            store.get(bad.task_id, None),
            store.save(completed(bad)),
            store.renew(bad.task_id, "instance-1", clock() + 1),
            store.list(None, None, 10),
        ):
            with pytest.raises(TaskStoreError, match=f"task '{bad.task_id}' in .*tasks.db"):
                await call
        assert await store.get(good.task_id, None) == good  # the store still serves the rest
    finally:
        await store.close()


async def test_a_sqlite_lock_timeout_is_a_task_store_error(tmp_path: Path, clock: Clock) -> None:
    """Another connection holds the file's write lock past the busy timeout: each change is a
    `TaskStoreError` naming the file; the lock released, the store works again."""
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path, clock, busy_timeout=0.1)
    task = record(clock)
    try:
        await store.create(task)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            for call in (
                store.create(record(clock)),
                store.save(completed(task)),
                store.renew(task.task_id, "instance-1", clock() + 1),
            ):
                with pytest.raises(TaskStoreError, match=f"{path}: locked by another connection"):
                    await call
            assert await store.get(task.task_id, None) == task  # reading takes no lock (WAL)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert await store.save(completed(task)) == completed(task)
    finally:
        await store.close()


@pytest.mark.parametrize("body", ["not json", "[]", "7"])
async def test_a_corrupt_sqlite_order_is_a_clear_error(
    tmp_path: Path, clock: Clock, body: str
) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db", clock)
    try:
        task = record(clock)
        await store.create(task)
        with sqlite3.connect(tmp_path / "tasks.db") as db:
            db.execute(
                "INSERT INTO mcpio_task_orders (task_id, body) VALUES (?, ?)", (task.task_id, body)
            )
        with pytest.raises(
            TaskStoreError, match=f"an order of task '{task.task_id}' in .*tasks.db"
        ):
            await store.take_orders(task.task_id)
        assert await store.take_orders(task.task_id) == []  # taken all the same
    finally:
        await store.close()


async def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    path.write_text("not a database " * 100, encoding="utf-8")
    with pytest.raises(TaskStoreError, match="not a usable task store"):
        SqliteTaskStore(path)
    with pytest.raises(TaskStoreError, match="cannot open"):
        SqliteTaskStore(tmp_path / "missing" / "tasks.db")


@pytest.mark.services
@pytest.mark.parametrize("value", [b"not json", b"{}", b"\xff\xfe"])
async def test_bad_json_in_redis_is_a_clear_error(
    redis_url: str, clock: Clock, value: bytes
) -> None:
    prefix = f"test:{uuid.uuid4().hex}"
    store = RedisTaskStore(redis_url, prefix=prefix, clock=clock)
    try:
        bad, good = record(clock), record(clock)
        await store.create(bad)
        await store.create(good)
        from redis.asyncio import Redis

        raw = Redis.from_url(redis_url)
        await raw.set(f"{prefix}:task:{bad.task_id}", value)
        await raw.aclose()
        for call in (
            store.get(bad.task_id, None),
            store.save(completed(bad)),
            store.renew(bad.task_id, "instance-1", clock() + 1),
            store.list(None, None, 10),
        ):
            with pytest.raises(TaskStoreError, match=f"task '{bad.task_id}' in Redis key"):
                await call
        assert await store.get(good.task_id, None) == good
    finally:
        await store.close()


@pytest.mark.services
async def test_redis_keys_expire_with_the_ttl(redis_url: str) -> None:
    prefix = f"test:{uuid.uuid4().hex}"
    store = RedisTaskStore(redis_url, prefix=prefix)
    try:
        task = TaskRecord("t", None, "tools/call", "working", time.time(), time.time(), 5000)
        await store.create(task)
        from redis.asyncio import Redis

        raw = Redis.from_url(redis_url)
        ttl = await raw.pttl(f"{prefix}:task:t")
        await raw.aclose()
        assert 4000 < ttl <= 5000
    finally:
        await store.close()


@pytest.mark.services
async def test_redis_owner_sets_expire_with_the_owner_s_tasks(redis_url: str) -> None:
    """An owner's index sets go when its last task expires; an owner with a task without TTL
    keeps them, and its next task trims the expired ids out of them."""
    prefix = f"test:{uuid.uuid4().hex}"
    store = RedisTaskStore(redis_url, prefix=prefix)
    from redis.asyncio import Redis

    raw = Redis.from_url(redis_url)

    def task(task_id: str, owner: str, ttl_ms: int | None) -> TaskRecord:
        now = time.time()
        return TaskRecord(task_id, owner, "tools/call", "working", now, now, ttl_ms)

    carols = [f"{prefix}:owner:=carol", f"{prefix}:expiry:=carol"]
    daves = [f"{prefix}:owner:=dave", f"{prefix}:expiry:=dave"]
    try:
        await store.create(task("longer", "carol", 400))
        await store.create(task("short", "carol", 200))
        for key in carols:
            assert 200 < await raw.pttl(key) <= 400
        await store.create(task("kept", "dave", None))
        await store.create(task("brief", "dave", 200))
        assert [await raw.pttl(key) for key in daves] == [-1, -1]
        await anyio.sleep(0.5)
        assert await raw.exists(*carols) == 0
        assert await raw.zrange(daves[0], 0, -1) == [b"kept", b"brief"]
        await store.create(task("next", "dave", 60_000))
        assert await raw.zrange(daves[0], 0, -1) == [b"kept", b"next"]
        assert await raw.zrange(daves[1], 0, -1) == [b"next"]
        assert [await raw.pttl(key) for key in daves] == [-1, -1]
    finally:
        await raw.aclose()
        await store.close()


# --- records, cursors, open_task_store


def test_a_record_round_trips_through_json(clock: Clock) -> None:
    task = record(clock, owner="ä", result={"x": [1, None]}, lease_until=clock() + 1.25)
    assert record_from_json(record_json(task), task.task_id, "here") == task
    assert record_from_json(record_json(task).encode(), task.task_id, "here") == task
    bad = record_json(task).replace('"working"', '"sleeping"')
    with pytest.raises(TaskStoreError, match="here: not a task record .bad status"):
        record_from_json(bad, task.task_id, "here")
    with pytest.raises(TaskStoreError, match="here: not a task record .it is"):
        record_from_json(record_json(task), "another", "here")
    with pytest.raises(TaskStoreError, match="here: not a task record .not text"):
        record_from_json(7, task.task_id, "here")


def test_a_cursor_is_a_place(clock: Clock) -> None:
    task = record(clock)
    assert place_of(cursor_of(task)) == (task.created_at, task.task_id)


def test_open_task_store(tmp_path: Path) -> None:
    assert type(open_task_store("memory")) is MemoryTaskStore
    sqlite = open_task_store(f"sqlite:{tmp_path / 'tasks.db'}")
    assert isinstance(sqlite, SqliteTaskStore) and sqlite.path == str(tmp_path / "tasks.db")
    redis = open_task_store("redis://user:secret@127.0.0.1:6390/2")  # connects on first use
    assert isinstance(redis, RedisTaskStore) and redis.url == "redis://127.0.0.1:6390/2"  # shown
    assert redis.where() == "redis://127.0.0.1:6390/2"  # no credentials in messages
    for spec in ["", "Memory", "sqlite:", "postgres://db", "/tmp/tasks.db", "redis://h:port/0"]:
        with pytest.raises(ValueError, match="task store") as raised:
            open_task_store(spec)
        assert "\n" not in str(raised.value)


def test_the_example_server_takes_tasks(tmp_path: Path) -> None:
    example = str(ROOT / "examples" / "everything_server.py")
    bad = subprocess.run(
        [sys.executable, example, "stdio", "--tasks", "postgres://db"],
        capture_output=True,
        text=True,
        input="",
        timeout=60,
    )
    assert bad.returncode == 2 and "task store 'postgres://db': expected" in bad.stderr
    assert "Traceback" not in bad.stderr
    path = tmp_path / "tasks.db"
    good = subprocess.run(
        [sys.executable, example, "stdio", "--tasks", f"sqlite:{path}"],
        capture_output=True,
        text=True,
        input="",
        timeout=60,
    )
    assert good.returncode == 0, good.stderr
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM mcpio_tasks").fetchone() == (0,)


# --- claims and re-runs (queued tasks, issue 30)


ASKED = {"go": {"method": "elicitation/create", "params": {"message": "Go?"}}}


async def queued(opener: Open, clock: Clock) -> tuple[TaskStore, TaskRecord]:
    """A queued task of two runs: held by no one, no run yet."""
    store = opener()
    task = record(clock, attempts=0, max_attempts=2)
    await store.create(task)
    return store, task


async def first_run_dies(opener: Open, clock: Clock) -> tuple[TaskStore, TaskRecord, bool]:
    """`queued`, claimed by worker-1 for 5 s, which asks a question (an answer given before) and
    has an order posted for it, then dies: the clock past its lease. Whether the order was
    taken is returned too."""
    store, task = await queued(opener, clock)
    first = await store.claim(task.task_id, "worker-1", clock() + 5)
    assert first is not None
    waiting = dataclasses.replace(first, status="input_required", input_requests=ASKED)
    await store.save(dataclasses.replace(waiting, answers={"before": {"action": "cancel"}}))
    posted = await store.post_order(task.task_id, {"op": "update", "taskId": task.task_id})
    clock.advance(5.001)
    return store, task, posted


@every_store
async def test_a_queued_task_is_claimed_by_one_worker(opener: Open, clock: Clock) -> None:
    store, task = await queued(opener, clock)
    first = await store.claim(task.task_id, "worker-1", clock() + 5)
    assert first is not None
    assert (first.lease_holder, first.lease_until, first.attempts) == ("worker-1", clock() + 5, 1)
    assert await opener().claim(task.task_id, "worker-2", clock() + 5) is None  # held


@every_store
async def test_a_dead_worker_s_task_with_a_run_left_is_handed_back_as_it_was(
    opener: Open, clock: Clock
) -> None:
    """A run left: the task is handed back, not failed; what it asked, the answers it had and
    the orders for it stay."""
    _, task, posted = await first_run_dies(opener, clock)
    assert posted
    back = await opener().get(task.task_id, None)
    assert back is not None and back.status == "input_required", back
    assert (back.lease_holder, back.lease_until, back.status_message) == (None, None, RUN_AGAIN)
    assert back.input_requests == ASKED and back.answers == {"before": {"action": "cancel"}}


@every_store
async def test_a_handed_back_task_is_claimed_for_its_next_run_with_its_orders(
    opener: Open, clock: Clock
) -> None:
    store, task, _ = await first_run_dies(opener, clock)
    second = await opener().claim(task.task_id, "worker-2", clock() + 5)
    assert second is not None and (second.lease_holder, second.attempts) == ("worker-2", 2)
    assert await store.take_orders(task.task_id) == [{"op": "update", "taskId": task.task_id}]


@every_store
async def test_a_task_whose_last_run_dies_fails_for_good(opener: Open, clock: Clock) -> None:
    """worker-2 dies too: no run left, failed for good, saying how many runs it had."""
    store, task, _ = await first_run_dies(opener, clock)
    await opener().claim(task.task_id, "worker-2", clock() + 5)
    await store.take_orders(task.task_id)
    clock.advance(5.001)
    failed = await opener().get(task.task_id, None)
    assert failed is not None and failed.status == "failed"
    assert failed.status_message == f"{LEASE_LOST} (2 attempts, its limit)"
    assert await store.claim(task.task_id, "worker-3", clock() + 5) is None


@every_store
async def test_a_task_that_runs_once_is_claimed_once(store: TaskStore, clock: Clock) -> None:
    task = record(clock, attempts=0, max_attempts=1)
    await store.create(task)
    claimed = await store.claim(task.task_id, "worker-1", clock() + 5)
    assert claimed is not None and claimed.attempts == 1
    clock.advance(6)
    lost = await store.get(task.task_id, None)
    assert lost is not None and (lost.status, lost.status_message) == ("failed", LEASE_LOST)
    assert await store.claim(task.task_id, "worker-2", clock() + 5) is None
    assert await store.claim("no-such-task", "worker-2", clock() + 5) is None


def test_a_record_written_before_attempts_reads_with_one_run(clock: Clock) -> None:
    task = record(clock)
    older = json.loads(record_json(task))
    for name in ("attempts", "max_attempts", "answers"):
        del older[name]
    read = record_from_json(json.dumps(older), task.task_id, "here")
    assert read == task and (read.attempts, read.max_attempts, read.answers) == (1, 1, None)
