"""Tasks bounded (issue 31): tasks running at once per requestor and in all, the TTL a client
may ask for, the size of a stored result, and expired tasks swept from the store without
anyone reading them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_wire_runtime.errors import SERVER_BUSY, ProtocolError
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._sqlite import SqliteTaskStore
from mcpio.tasks._store import MemoryTaskStore, TaskStore, TaskStoreError
from tests.support import until

pytestmark = pytest.mark.anyio


def waiting(release: anyio.Event) -> Any:
    async def work(inputs: Any, status: Any) -> dict[str, Any]:
        await release.wait()
        return {"content": [], "isError": False}

    return work


async def done(inputs: Any, status: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}], "isError": False}


async def test_tasks_running_at_once_are_bounded_per_requestor_and_in_all() -> None:
    now = [1_000.0]
    engine = TaskEngine(
        MemoryTaskStore(lambda: now[0]), max_tasks_per_requestor=2, max_tasks=4, ttl_ms=60_000,
        clock=lambda: now[0],
    )  # fmt: skip
    release = anyio.Event()
    for owner in ("ann", "ann", "bob"):
        await engine.start(owner=owner, method="tools/call", work=waiting(release))
    with pytest.raises(ProtocolError) as caught:
        await engine.start(owner="ann", method="tools/call", work=waiting(release))
    assert caught.value.code == SERVER_BUSY and "for this requestor (2)" in caught.value.message
    await engine.start(owner="bob", method="tools/call", work=waiting(release))  # bob has room
    with pytest.raises(ProtocolError) as caught:  # carol too, but the instance has none
        await engine.start(owner="carol", method="tools/call", work=waiting(release))
    assert caught.value.code == SERVER_BUSY and "too many tasks running (4)" in caught.value.message
    release.set()
    await until(lambda: not engine._runs)  # pyright: ignore[reportPrivateUsage]
    # Ended, ann's two tasks are kept (their results readable) until they expire: they count.
    with pytest.raises(ProtocolError) as caught:
        await engine.start(owner="ann", method="tools/call", work=done)
    assert caught.value.code == SERVER_BUSY and caught.value.data == {"retryAfterSeconds": 60}
    now[0] += 60
    record = await engine.start(owner="ann", method="tools/call", work=done)  # room again
    assert record.status == "working"
    await engine.aclose()


async def test_a_client_s_ttl_is_clamped_to_the_server_s_range() -> None:
    engine = TaskEngine(ttl_ms=60_000, min_ttl_ms=1_000)
    asked = {0: 1_000, -5: 1_000, 10: 1_000, 5_000: 5_000, 10**9: 60_000, None: 60_000}
    for ttl, kept in asked.items():
        record = await engine.start(owner=None, method="tools/call", work=done, ttl_ms=ttl)
        assert record.ttl_ms == kept, ttl
    await engine.aclose()


async def test_a_result_too_large_to_keep_fails_its_task() -> None:
    engine = TaskEngine(max_result_bytes=200)

    async def big(inputs: Any, status: Any) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "x" * 500}], "isError": False}

    record = await engine.start(owner=None, method="tools/call", work=big)
    ended = await engine.wait(record.task_id, None)
    assert ended is not None and ended.status == "failed" and ended.result is None
    assert ended.status_message is not None
    assert ended.status_message.startswith("the task's result is too large to keep (5")
    small = await engine.start(owner=None, method="tools/call", work=done)
    kept = await engine.wait(small.task_id, None)
    assert kept is not None and kept.status == "completed"
    await engine.aclose()


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TaskStore:
    if request.param == "memory":
        return MemoryTaskStore()
    return SqliteTaskStore(tmp_path / "tasks.db")


async def test_expired_tasks_are_swept_without_anyone_reading_them(store: TaskStore) -> None:
    """Short-lived tasks end and expire while a long one runs: the sweeper drops them from the
    store, though nobody reads or lists them (2026-07-28 clients have no tasks/list)."""
    engine = TaskEngine(store, min_ttl_ms=1, sweep_seconds=0.05)
    release = anyio.Event()
    await engine.start(owner=None, method="tools/call", work=waiting(release), ttl_ms=60_000)
    short = [
        (await engine.start(owner=None, method="tools/call", work=done, ttl_ms=1_500)).task_id
        for _ in range(20)
    ]

    def stored() -> int:
        if isinstance(store, MemoryTaskStore):
            return len(store._tasks)  # pyright: ignore[reportPrivateUsage]
        db = store._db  # pyright: ignore[reportAttributeAccessIssue]
        return int(db.execute("SELECT count(*) FROM mcpio_tasks").fetchone()[0])

    assert stored() == 21
    await until(lambda: stored() == 1, timeout=15)
    assert short  # each of them gone without a read
    release.set()
    await engine.aclose()


async def test_the_sqlite_task_file_is_private_and_no_link_is_followed(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path)
    engine = TaskEngine(store)
    record = await engine.start(owner=None, method="tools/call", work=done)
    await engine.wait(record.task_id, None)
    files = [p for p in tmp_path.iterdir() if p.name.startswith("tasks.db")]
    assert {p.name for p in files} >= {"tasks.db", "tasks.db-wal", "tasks.db-shm"}
    assert {p.name: p.stat().st_mode & 0o777 for p in files} == {p.name: 0o600 for p in files}
    await engine.aclose()

    target = tmp_path / "elsewhere.db"
    link = tmp_path / "link.db"
    link.symlink_to(target)
    with pytest.raises(TaskStoreError, match="a symbolic link"):
        SqliteTaskStore(link)
    assert not target.exists()


async def test_the_last_tasks_are_swept_after_every_task_has_ended(store: TaskStore) -> None:
    """No task left running: the sweeper goes on until the last task started here expired."""
    engine = TaskEngine(store, min_ttl_ms=1, sweep_seconds=0.05)
    for _ in range(5):
        record = await engine.start(owner=None, method="tools/call", work=done, ttl_ms=1_000)
        await engine.wait(record.task_id, None)
    await until(lambda: not engine._runs)  # pyright: ignore[reportPrivateUsage]

    def stored() -> int:
        if isinstance(store, MemoryTaskStore):
            return len(store._tasks)  # pyright: ignore[reportPrivateUsage]
        db = store._db  # pyright: ignore[reportAttributeAccessIssue]
        return int(db.execute("SELECT count(*) FROM mcpio_tasks").fetchone()[0])

    assert stored() == 5
    await until(lambda: stored() == 0, timeout=15)
    await engine.aclose()


class _SlowSweepStore(MemoryTaskStore):
    """A sweep that reads the time before the last expiry and ends after it (a slow store)."""

    def __init__(self, now: list[float]) -> None:
        super().__init__(lambda: now[0])
        self.now = now

    async def sweep(self) -> int:
        dropped = await super().sweep()
        self.now[0] += 0.6
        return dropped


async def test_a_sweep_that_straddles_the_last_expiry_is_followed_by_one_more() -> None:
    now = [1_000.0]
    store = _SlowSweepStore(now)
    engine = TaskEngine(store, clock=lambda: now[0], min_ttl_ms=1, sweep_seconds=0.01)
    record = await engine.start(owner=None, method="tools/call", work=done, ttl_ms=1_000)
    await engine.wait(record.task_id, None)
    await until(lambda: not store._tasks)  # pyright: ignore[reportPrivateUsage]
    await engine.aclose()
