"""The notification bus (`mcpio._core.bus`): in process first (the default `LocalBus`, and a bus that
an outage can be switched on), then a real Redis with three instances of
examples/everything_server.py behind nginx (round-robin, one worker), all sharing one
`MCPIO_STATE_KEY` and `--redis` URL:

- a tools/call that nginx routes to one instance reaches a listen stream held by another;
- 200 listeners spread over the instances each get every matching notification exactly once,
  tagged with their own subscription id, and nothing they did not ask for;
- a legacy session's GET stream hears a change made on another instance;
- Redis killed: requests still succeed, every listen stream ends with the documented error
  (-32603 "notification bus unavailable; listen again"), a new listen gets it at once, each
  instance logs the outage once; Redis restarted on its port: the instances reconnect and
  clients that listen again hear the next change.

nginx and redis-server must be installed (`scripts/ensure-services.sh`, run by `make test`);
without them this fails. The process helpers are in tests/support/cluster.py.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpio import Client, McpError, Server
from mcpio._core.bus import UNAVAILABLE, Bus, BusUnavailable, Event, LocalBus, RedisBus
from tests.support import ACCEPT, ENVELOPE, MODERN, free_port, until
from tests.support.cluster import Process, start_instances, start_nginx, start_redis

pytestmark = [pytest.mark.anyio, pytest.mark.services]

LEGACY = "2025-11-25"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
INSTANCES = 3
LISTENERS = 200
RECONNECT_SECONDS = 15.0
STEP_SECONDS = 20.0


# ---------------------------------------------------------------------- in process


class SwitchBus(Bus):
    """An in-process bus that an outage can be switched on and off."""

    async def publish(self, event: Event) -> None:
        if not self.available:
            raise BusUnavailable("switched off")
        await self._deliver(event)

    async def switch(self, up: bool) -> None:
        self.available = up
        await self._changed(up)


def make_server(bus: Bus | None = None) -> Server:
    server = Server("bus-test", bus=bus)

    @server.tool()
    async def change() -> str:
        """Changes the tool list."""
        await server.notify_tools_changed()
        return "changed"

    @server.prompt()
    def greet() -> str:
        return "hello"

    @server.resource("test://doc")
    def doc() -> str:
        return "doc"

    return server


async def notices(subscription: Any, count: int) -> list[Any]:
    with anyio.fail_after(5):
        return [await subscription.__anext__() for _ in range(count)]


async def silent(subscription: Any) -> None:
    with anyio.move_on_after(0.2):
        notice = await subscription.__anext__()
        pytest.fail(f"unexpected {notice.method}")


def test_event_encoding() -> None:
    event = Event("notifications/resources/updated", {"uri": "test://doc"}, None, "test://doc")
    assert Event.decode(event.encode()) == event
    assert Event.decode(Event(TOOLS_CHANGED, {}, "toolsListChanged").encode()).flag == (
        "toolsListChanged"
    )
    assert Event.decode(b'{"method": "m", "params": {}}') == Event("m", {})
    for bad in (
        b"[]",
        b"{",
        b'{"method": "m", "params": {}, "uri": 1}',
        b'{"method": 1, "params": {}}',
        b'{"method": "m", "params": []}',
    ):
        with pytest.raises(ValueError):
            Event.decode(bad)


def test_redis_bus_configuration() -> None:
    bus = RedisBus("redis://user:secret@127.0.0.1:6390/2")
    assert bus.where() == "redis://127.0.0.1:6390/2"  # no credentials in logs
    assert not bus.available  # until it has subscribed
    server = Server("named", bus=bus)
    assert server.bus is bus and bus.channel == "mcpio:named"
    assert RedisBus("redis://127.0.0.1", channel="mine").channel == "mine"
    assert isinstance(Server("plain").bus, LocalBus)


async def test_local_bus_delivers_by_filter_with_subscription_ids() -> None:
    server = make_server()
    async with Client(server) as client:
        async with (
            client.listen(tools=True) as tools,
            client.listen(prompts=True) as prompts,
            client.listen(resource_uris=["test://doc"]) as doc,
        ):
            await client.call_tool("change", {})
            await server.notify_prompts_changed()
            await server.notify_resource_updated("test://other")
            await server.notify_resource_updated("test://doc")
            [tool] = await notices(tools, 1)
            [prompt] = await notices(prompts, 1)
            [updated] = await notices(doc, 1)
            for subscription in (tools, prompts, doc):
                await silent(subscription)
    assert (tool.method, prompt.method) == (TOOLS_CHANGED, PROMPTS_CHANGED)
    assert (
        updated.method == "notifications/resources/updated" and updated.params.uri == "test://doc"
    )
    for notice, subscription in ((tool, tools), (prompt, prompts), (updated, doc)):
        assert notice.params.meta.io_modelcontextprotocol_subscriptionId == subscription.id


async def test_an_outage_ends_listen_streams_with_an_error() -> None:
    bus = SwitchBus()
    server = make_server(bus)
    async with Client(server) as client:
        async with client.listen(tools=True) as tools:
            await bus.switch(False)
            with anyio.fail_after(5), pytest.raises(McpError) as ended:
                await tools.__anext__()
            assert (ended.value.code, ended.value.message) == (-32603, UNAVAILABLE)
            assert tools.error is ended.value
        assert not server.hub.listeners
        # While it is down: requests are served, a new listen is refused at once.
        assert (await client.call_tool("change", {})).content[0].text == "changed"  # type: ignore[union-attr]
        with anyio.fail_after(5), pytest.raises(McpError) as refused:
            async with client.listen(tools=True):
                pass
        assert (refused.value.code, refused.value.message) == (-32603, UNAVAILABLE)
        await bus.switch(True)
        async with client.listen(tools=True) as tools:
            await client.call_tool("change", {})
            [notice] = await notices(tools, 1)
            assert notice.method == TOOLS_CHANGED


async def test_legacy_sessions_through_an_outage() -> None:
    """A legacy session cannot listen again: during an outage it still hears its own instance's
    changes, and when the bus is back it is told that whatever it follows may have changed."""
    bus = SwitchBus()
    server = make_server(bus)
    async with Client(server, mode="legacy") as client:
        async with client.listen(tools=True, resource_uris=["test://doc"]) as sub:
            await bus.switch(False)
            await client.call_tool("change", {})
            [local] = await notices(sub, 1)
            await bus.switch(True)
            resync = await notices(sub, 2)
            await silent(sub)
    assert local.method == TOOLS_CHANGED
    assert [n.method for n in resync] == [TOOLS_CHANGED, "notifications/resources/updated"]


async def test_redis_unreachable_at_start(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing listens on the port: requests are served, listens are refused at once, and the
    outage is logged once however often the bus retries."""
    bus = RedisBus(f"redis://127.0.0.1:{free_port()}/0", backoff=0.01, max_backoff=0.02)
    server = make_server(bus)
    caplog.set_level(logging.DEBUG, logger="mcpio")

    def retried() -> bool:
        return sum("still unavailable" in r.getMessage() for r in caplog.records) >= 3

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(bus.run)
        async with Client(server) as client:
            await until(retried, 5)  # some reconnection attempts
            assert (await client.call_tool("change", {})).content[0].text == "changed"  # type: ignore[union-attr]
            with anyio.fail_after(5), pytest.raises(McpError) as refused:
                async with client.listen(tools=True):
                    pass
            assert refused.value.message == UNAVAILABLE
        tasks.cancel_scope.cancel()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    retries = [r for r in caplog.records if "still unavailable" in r.getMessage()]
    assert len(errors) == 1 and "unavailable" in errors[0].getMessage(), errors
    assert len(retries) >= 3


async def test_a_stalled_redis_is_an_outage(tmp_path: Path) -> None:
    """A Redis that stops answering (SIGSTOP) without closing the connection: the PING of a
    quiet subscription goes unanswered, listen streams end; it answers again: listens work."""
    processes: list[Process] = []
    try:
        redis = start_redis(tmp_path, processes)
        url = f"redis://127.0.0.1:{redis.port}/0"
        bus = RedisBus(url, backoff=0.05, max_backoff=0.2, timeout=0.3, health=0.2)
        server = make_server(bus)
        async with anyio.create_task_group() as tasks, Client(server) as client:
            tasks.start_soon(bus.run)
            with anyio.fail_after(5):
                await until(lambda: bus.available, interval=0.02)
                async with client.listen(tools=True) as tools:
                    os.kill(redis.popen.pid, signal.SIGSTOP)
                    with pytest.raises(McpError) as ended:
                        await tools.__anext__()
                    assert ended.value.message == UNAVAILABLE
                os.kill(redis.popen.pid, signal.SIGCONT)
                await until(lambda: bus.available, interval=0.02)
                async with client.listen(tools=True) as tools:
                    await client.call_tool("change", {})
                    [notice] = await notices(tools, 1)
                    assert notice.method == TOOLS_CHANGED
            tasks.cancel_scope.cancel()
    finally:
        for process in processes:
            if process.popen.poll() is None:
                os.kill(process.popen.pid, signal.SIGCONT)
            process.stop()


# ---------------------------------------------------------------------- Redis and nginx

NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;

    upstream mcp {{
{servers}
        keepalive 32;
    }}

    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_read_timeout 1h;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


@dataclass
class Cluster:
    tmp: Path
    base: str  # nginx
    instances: list[Process]
    redis: Process
    processes: list[Process] = field(default_factory=list)

    @property
    def upstreams(self) -> set[str]:
        return {upstream(p) for p in self.instances}


def upstream(process: Process) -> str:
    return f"127.0.0.1:{process.port}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("bus")
    processes: list[Process] = []
    try:
        redis = start_redis(tmp, processes)
        key = secrets.token_hex(32)
        names = [(f"instance-{n}", key) for n in range(INSTANCES)]
        url = f"redis://127.0.0.1:{redis.port}/0"
        instances = start_instances(tmp, names, processes, ["--redis", url])
        servers = "\n".join(f"        server {upstream(p)};" for p in instances)
        nginx = start_nginx(
            tmp, lambda port: NGINX_CONF.format(tmp=tmp, port=port, servers=servers), processes
        )
        yield Cluster(tmp, f"http://127.0.0.1:{nginx.port}", instances, redis, processes)
    finally:
        for process in sorted(reversed(processes), key=lambda p: p.name == "redis"):
            process.stop()  # Redis last: the instances' logs end without an outage


def modern(id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": ENVELOPE, **params}}


def headers(frame: dict[str, Any]) -> dict[str, str]:
    values = {
        "content-type": "application/json",
        "accept": ACCEPT,
        "mcp-protocol-version": MODERN,
        "mcp-method": frame["method"],
    }
    if frame["method"] == "tools/call":
        values["mcp-name"] = frame["params"]["name"]
    return values


async def call(http: httpx.AsyncClient, id: int, tool: str, url: str = "/mcp") -> str:
    """Calls a tool; the instance that answered (X-Upstream, or the URL's)."""
    frame = modern(id, "tools/call", name=tool)
    response = await http.post(url, content=json.dumps(frame), headers=headers(frame))
    assert response.status_code == 200, response.text
    assert "error" not in response.json() and response.json()["id"] == id, response.text
    return response.headers.get("x-upstream", url)


class Stream:
    """A raw `subscriptions/listen` stream: its frames, one at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.upstream = response.headers.get("x-upstream", "")
        self._lines = response.aiter_lines()
        self.json = response.headers["content-type"].startswith("application/json")

    async def next(self) -> dict[str, Any] | None:
        """The next frame; None when the stream ended."""
        if self.json:
            self.json = False
            return json.loads(await self.response.aread())
        async for line in self._lines:
            if line.startswith("data: "):
                return json.loads(line[6:])
        return None


@asynccontextmanager
async def listen(
    http: httpx.AsyncClient, id: int, url: str = "/mcp", **notifications: Any
) -> AsyncIterator[Stream]:
    frame = modern(id, "subscriptions/listen", notifications=notifications)
    async with http.stream("POST", url, content=json.dumps(frame), headers=headers(frame)) as r:
        assert r.status_code == 200, await r.aread()
        yield Stream(r)


def acknowledged(frame: dict[str, Any] | None, id: int) -> bool:
    return (
        frame is not None
        and frame.get("method") == "notifications/subscriptions/acknowledged"
        and frame["params"]["_meta"][SUBSCRIPTION_ID] == id
    )


def http_client(base: str, connections: int = 32) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(base_url=base, timeout=10, limits=limits, trust_env=False)


async def wait_until_listening(http: httpx.AsyncClient, cluster: Cluster) -> None:
    """Until a listen succeeds on every instance (each has subscribed to Redis)."""
    with anyio.fail_after(RECONNECT_SECONDS):
        for n, process in enumerate(cluster.instances):
            url = f"http://{upstream(process)}/mcp"
            await until(partial(subscribed, http, 900 + n, url), RECONNECT_SECONDS, interval=0.05)


async def subscribed(http: httpx.AsyncClient, id: int, url: str) -> bool:
    """Whether a listen on `url` is acknowledged (its instance has subscribed to Redis)."""
    async with listen(http, id, url, toolsListChanged=True) as stream:
        return acknowledged(await stream.next(), id)


async def test_trigger_tool_change(cluster: Cluster) -> None:
    async with http_client(cluster.base) as http:
        await wait_until_listening(http, cluster)
        with anyio.fail_after(STEP_SECONDS):
            async with listen(http, 7, toolsListChanged=True) as stream:
                assert acknowledged(await stream.next(), 7)
                for n in range(INSTANCES):  # round-robin: the next request goes elsewhere
                    where = await call(http, 100 + n, "test_trigger_tool_change")
                    if where != stream.upstream:
                        break
                assert {where, stream.upstream} <= cluster.upstreams
                assert where != stream.upstream, "every call landed on the listener's instance"
                notice = await stream.next()
    assert notice is not None and notice["method"] == TOOLS_CHANGED
    assert notice["params"]["_meta"][SUBSCRIPTION_ID] == 7


async def test_many_listeners_each_get_every_matching_notification_once(cluster: Cluster) -> None:
    """Every listener asks for prompt changes, three in four for tool changes too. Three tool
    changes, then one prompt change (the fence: after it, nothing earlier can still come):
    3 + 1 notices for the former, the prompt change alone for the others."""
    triggers = 3
    wants_tools = {i: i % 4 != 3 for i in range(LISTENERS)}
    heard: dict[int, list[dict[str, Any]]] = {}
    homes: dict[int, str] = {}
    ready = anyio.Semaphore(0)

    async def listener(http: httpx.AsyncClient, i: int) -> None:
        flags = {"promptsListChanged": True}
        if wants_tools[i]:
            flags["toolsListChanged"] = True
        async with listen(http, i, **flags) as stream:
            homes[i] = stream.upstream
            assert acknowledged(await stream.next(), i)
            ready.release()
            frames: list[dict[str, Any]] = []
            while True:
                frame = await stream.next()
                assert frame is not None, f"listener {i}: the stream ended"
                frames.append(frame)
                if frame.get("method") == PROMPTS_CHANGED:
                    break
            heard[i] = frames

    async with http_client(cluster.base, LISTENERS + 16) as http:
        await wait_until_listening(http, cluster)
        with anyio.fail_after(STEP_SECONDS):
            async with anyio.create_task_group() as tasks:
                for i in range(LISTENERS):
                    tasks.start_soon(listener, http, i)
                for _ in range(LISTENERS):
                    await ready.acquire()
                callers = Counter(
                    [
                        await call(http, 1000 + n, "test_trigger_tool_change")
                        for n in range(triggers)
                    ]
                )
                await call(http, 2000, "test_trigger_prompt_change")
    assert len(heard) == LISTENERS
    assert set(homes.values()) == cluster.upstreams and len(callers) == triggers
    by_home = Counter((homes[i], wants_tools[i]) for i in range(LISTENERS))
    assert len(by_home) == 2 * INSTANCES, by_home  # both kinds on every instance
    for i, frames in heard.items():
        methods = [frame["method"] for frame in frames]
        expected = [TOOLS_CHANGED] * triggers if wants_tools[i] else []
        assert methods == expected + [PROMPTS_CHANGED], (i, homes[i], methods)
        assert {frame["params"]["_meta"][SUBSCRIPTION_ID] for frame in frames} == {i}


async def test_legacy_session_hears_another_instance(cluster: Cluster) -> None:
    home, other = (f"http://{upstream(p)}/mcp" for p in cluster.instances[:2])
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bus-test", "version": "0"},
        },
    }
    plain = {"content-type": "application/json", "accept": ACCEPT}
    async with http_client(cluster.base) as http:
        await wait_until_listening(http, cluster)
        with anyio.fail_after(STEP_SECONDS):
            opened = await http.post(home, content=json.dumps(initialize), headers=plain)
            assert opened.status_code == 200, opened.text
            session = {"mcp-session-id": opened.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = LEGACY
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            done = await http.post(
                home, content=json.dumps(initialized), headers={**plain, **session}
            )
            assert done.status_code == 202
            get = {"accept": "text/event-stream", **session}
            async with http.stream("GET", home, headers=get) as events:
                assert events.status_code == 200
                await call(http, 1, "test_trigger_tool_change", other)
                frame = await Stream(events).next()
    assert frame is not None and frame["method"] == TOOLS_CHANGED


@dataclass
class Outage:
    """What one Redis outage and recovery on the cluster showed (`outage`, run once a module:
    each instance must log exactly one outage)."""

    acks: dict[int, dict[str, Any] | None]  # each held raw listen's first frame
    homes: set[str]  # the instances that held them
    ours_ended: McpError  # how our client's listen ended
    ended: dict[int, dict[str, Any] | None]  # each held raw listen's last frame
    callers: set[str]  # the instances that answered calls during the outage
    refused: list[dict[str, Any] | None]  # a new raw listen's answer, once per instance
    ours_refused: McpError  # our client's new listen, refused
    ack_after: dict[str, Any] | None  # a raw listen's first frame after the restart
    raw: list[dict[str, Any] | None]  # what it heard of one change per instance
    heard: list[str]  # what our client's new listen heard of them
    logs: list[tuple[str, str]]  # each instance's log, and its tail


@pytest.fixture(scope="module")
async def outage(cluster: Cluster, anyio_backend: str) -> Outage:
    """Raw listens held on every instance and our client's listen, Redis killed, calls and new
    listens during the outage, Redis restarted on its port, listens again: what each showed."""
    async with http_client(cluster.base, 64) as http, Client(cluster.base + "/mcp") as client:
        await wait_until_listening(http, cluster)
        with anyio.fail_after(STEP_SECONDS):
            acks: dict[int, dict[str, Any] | None] = {}
            ended: dict[int, dict[str, Any] | None] = {}
            homes: set[str] = set()
            ready = anyio.Semaphore(0)

            async def held(i: int) -> None:
                async with listen(http, i, toolsListChanged=True) as stream:
                    homes.add(stream.upstream)
                    acks[i] = await stream.next()
                    ready.release()
                    ended[i] = await stream.next()

            async with client.listen(tools=True) as ours, anyio.create_task_group() as tasks:
                for i in range(2 * INSTANCES):
                    tasks.start_soon(held, i)
                for _ in range(2 * INSTANCES):
                    await ready.acquire()
                cluster.redis.kill()
                with pytest.raises(McpError) as ours_ended:
                    async for _notice in ours:
                        pass

            callers = {await call(http, 10 + n, "test_trigger_tool_change") for n in range(3)}
            callers |= {await call(http, 20 + n, "test_simple_text") for n in range(3)}
            refused: list[dict[str, Any] | None] = []
            for n in range(INSTANCES):
                async with listen(http, 30 + n, toolsListChanged=True) as stream:
                    refused.append(await stream.next())
            with pytest.raises(McpError) as ours_refused:
                async with client.listen(tools=True):
                    pass

        restarted = start_redis(cluster.tmp, cluster.processes, port=cluster.redis.port)
        cluster.redis = restarted
        await wait_until_listening(http, cluster)
        with anyio.fail_after(STEP_SECONDS):
            async with client.listen(tools=True) as ours:
                async with listen(http, 40, toolsListChanged=True) as stream:
                    ack_after = await stream.next()
                    for n in range(INSTANCES):
                        await call(http, 50 + n, "test_trigger_tool_change")
                    raw = [await stream.next() for _ in range(INSTANCES)]
                heard = [(await ours.__anext__()).method for _ in range(INSTANCES)]
    logs = [
        (process.log.read_text(encoding="utf-8", errors="replace"), process.tail())
        for process in cluster.instances
    ]
    return Outage(
        acks=acks,
        homes=homes,
        ours_ended=ours_ended.value,
        ended=ended,
        callers=callers,
        refused=refused,
        ours_refused=ours_refused.value,
        ack_after=ack_after,
        raw=raw,
        heard=heard,
        logs=logs,
    )


async def test_listens_held_before_an_outage_spread_over_every_instance(
    outage: Outage, cluster: Cluster
) -> None:
    assert all(acknowledged(frame, i) for i, frame in outage.acks.items()), outage.acks
    assert outage.homes == cluster.upstreams


async def test_an_outage_ends_our_client_s_listen_with_unavailable(outage: Outage) -> None:
    assert (outage.ours_ended.code, outage.ours_ended.message) == (-32603, UNAVAILABLE)


async def test_an_outage_ends_every_raw_listen_with_the_documented_error(outage: Outage) -> None:
    for i, frame in outage.ended.items():
        assert frame is not None and frame["id"] == i, (i, frame)
        assert frame["error"] == {"code": -32603, "message": UNAVAILABLE}, frame


async def test_requests_still_succeed_on_every_instance_during_an_outage(
    outage: Outage, cluster: Cluster
) -> None:
    # The publishing ones included.
    assert outage.callers == cluster.upstreams


async def test_a_new_listen_is_refused_at_once_during_an_outage(outage: Outage) -> None:
    for refused in outage.refused:
        assert refused is not None and refused["error"]["message"] == UNAVAILABLE
    assert outage.ours_refused.message == UNAVAILABLE


async def test_listens_after_redis_restarts_hear_every_change(outage: Outage) -> None:
    assert acknowledged(outage.ack_after, 40)
    assert all(frame is not None and frame["method"] == TOOLS_CHANGED for frame in outage.raw)
    assert outage.heard == [TOOLS_CHANGED] * INSTANCES


async def test_each_instance_logs_the_outage_and_the_reconnection_once(outage: Outage) -> None:
    for log, tail in outage.logs:
        assert log.count("unavailable (") == 1, tail
        assert log.count("connected again") == 1, tail
