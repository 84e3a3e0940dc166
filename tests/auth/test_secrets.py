"""Secrets out of attributes, reprs, logs and error messages (issue 31): a Redis URL's password
is used to connect but never shown by the bus, the task store or the queue built on it, nor
echoed by `open_task_store`'s errors."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from mcpio._core.bus import Event, RedisBus
from mcpio._core.redact import Secret, redacted
from mcpio.tasks._queue import RedisTaskQueue
from mcpio.tasks._redis import RedisTaskStore
from mcpio.tasks._stores import open_task_store
from tests.support import until
from tests.support.cluster import Process, start_redis

PASSWORD = "s3cret-pa55"


def shown(thing: object) -> str:
    """Everything a dump of the object prints: its repr and every attribute's."""
    return repr(thing) + "".join(f"{k}={v!r}" for k, v in vars(thing).items())


def test_urls_are_redacted_in_text() -> None:
    assert redacted(f"redis://user:{PASSWORD}@h:6379/0") == "redis://***@h:6379/0"
    assert redacted(f"x: rediss://h/0?password={PASSWORD}&db=1") == (
        "x: rediss://h/0?password=***&db=1"
    )
    assert redacted("memory") == "memory"
    assert PASSWORD not in repr(Secret(PASSWORD)) and Secret(PASSWORD).reveal() == PASSWORD


def test_redis_objects_show_no_password() -> None:
    url = f"redis://user:{PASSWORD}@127.0.0.1:1/0?password={PASSWORD}"
    for thing in (RedisBus(url), RedisTaskStore(url), RedisTaskQueue(url)):
        assert PASSWORD not in shown(thing), type(thing).__name__
        assert thing.url == "redis://127.0.0.1:1/0"


def test_an_unknown_task_store_is_refused_without_its_password() -> None:
    with pytest.raises(ValueError) as caught:
        open_task_store(f"postgres://admin:{PASSWORD}@db.example/tasks")
    assert PASSWORD not in str(caught.value)
    assert "postgres://***@db.example/tasks" in str(caught.value)


@pytest.mark.services
@pytest.mark.anyio
async def test_a_password_protected_redis_is_reached(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The redacted URL still connects: the bus delivers, the store stores; a wrong password's
    outage is logged without the password."""
    from redis.asyncio import Redis

    processes: list[Process] = []
    redis = start_redis(tmp_path, processes)
    try:
        admin = Redis.from_url(f"redis://127.0.0.1:{redis.port}/0")
        await admin.config_set("requirepass", PASSWORD)
        await admin.aclose()
        url = f"redis://:{PASSWORD}@127.0.0.1:{redis.port}/0"
        got: list[Event] = []
        bus = RedisBus(url, channel="secrets-test")

        async def deliver(event: Event) -> None:
            got.append(event)

        async def changed(up: bool) -> None:
            return None

        bus.attach(deliver, changed, "secrets")
        wrong = RedisBus(f"redis://:wrong-{PASSWORD}@127.0.0.1:{redis.port}/0")
        wrong.attach(deliver, changed, "secrets")
        caplog.set_level(logging.DEBUG, logger="mcpio")
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(bus.run)
            tasks.start_soon(wrong.run)
            await until(lambda: bus.available)
            await bus.publish(Event("notifications/x", {"a": 1}))
            await until(lambda: len(got) == 1)
            await until(lambda: "unavailable" in caplog.text)
            tasks.cancel_scope.cancel()
        assert not wrong.available
        assert PASSWORD not in caplog.text
        store = RedisTaskStore(url)
        assert await store.get("none", None) is None  # authenticated: no error
        await store.close()
    finally:
        redis.stop()
