"""Tasks end to end in one process: our client against our server (in-memory transport and raw
frames), in both eras (2026-07-28's Tasks extension, 2025-11-25's native tasks), and the
engine's lease, TTL and cross-instance rules."""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from mcp_wire_runtime.errors import SERVER_BUSY
from mcpio import Client, Context, McpError, ProtocolError, Server, ToolError
from mcpio._core.bus import Bus, Event
from mcpio.tasks._client import TaskCancelled, TaskHandle
from mcpio.tasks._engine import HANDED_BACK, SHUT_DOWN, TASKS_EXTENSION, TaskEngine
from mcpio.tasks._serve import RELATED_TASK
from mcpio.tasks._store import LEASE_LOST, MemoryTaskStore, TaskRecord, TaskStoreError
from mcpio.transports.memory import MemoryTransport, memory_pair
from tests.support import MODERN, ROOT, serve_app, until

pytestmark = pytest.mark.anyio

LEGACY_TASKS = "2025-11-25"
EXT = {"extensions": {TASKS_EXTENSION: {}}, "elicitation": {}}
FORM = {"type": "object", "properties": {"v": {"type": "string"}}}
EXAMPLE = ROOT / "examples" / "everything_server.py"


def make_server(engine: TaskEngine | None = None, bus: Bus | None = None) -> Server:
    server = Server("tasks", "1.0", tasks=engine, bus=bus)

    @server.tool()
    def plain(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def work(ctx: Context, n: int, seconds: float = 0.0) -> str:
        await ctx.progress(0, 1, f"working on {n}")
        await anyio.sleep(seconds)
        return f"done {n}"

    @server.tool(task="required")
    async def only_task() -> str:
        return "ran as a task"

    @server.tool(task="optional")
    async def ask(ctx: Context) -> str:
        first = await ctx.elicit("First?", FORM)
        second = await ctx.elicit("Second?", FORM)
        return f"{(first.content or {}).get('v')}/{(second.content or {}).get('v')}"

    @server.tool(task="optional")
    async def tool_error() -> str:
        raise ToolError("bad input")

    @server.tool(task="optional")
    async def protocol_error() -> str:
        raise ProtocolError(-32602, "no such thing", {"thing": 1})

    @server.tool(task="optional")
    async def crash() -> str:
        raise RuntimeError("secret detail")

    return server


async def answer(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"v": params.message[:-1].lower()}}


# ---------------------------------------------------------------------- 2026-07-28 extension


@pytest.fixture
async def modern_client() -> AsyncIterator[Client]:
    """Our client, declaring the Tasks extension and answering questions, on `make_server()`."""
    async with Client(make_server(), mode=MODERN, tasks=True, elicitation=answer) as client:
        yield client


async def test_modern_discovery_advertises_the_tasks_extension(modern_client: Client) -> None:
    discovered = await modern_client.discover()
    assert TASKS_EXTENSION in (discovered.capabilities.extensions or {})


async def test_a_tool_that_is_never_a_task_answers_as_usual(modern_client: Client) -> None:
    plain = await modern_client.start_tool("plain", {"name": "Ann"})
    assert not isinstance(plain, TaskHandle)
    assert plain.content[0].text == "Hello, Ann!"  # type: ignore[union-attr]


async def test_a_task_tool_answers_with_an_unguessable_handle_that_completes(
    modern_client: Client,
) -> None:
    handle = await modern_client.start_tool("work", {"n": 1, "seconds": 0.05})
    assert isinstance(handle, TaskHandle) and handle.status == "working"
    assert len(handle.task_id) >= 32  # unguessable
    result = await handle.result()
    assert result.content[0].text == "done 1"  # type: ignore[union-attr]
    assert handle.status == "completed"


async def test_call_tool_follows_a_task_and_answers_its_questions(modern_client: Client) -> None:
    asked = await modern_client.call_tool("ask", {})
    assert asked.content[0].text == "first/second"  # type: ignore[union-attr]


async def test_a_tool_error_is_a_completed_task_with_is_error(modern_client: Client) -> None:
    failed_tool = await modern_client.call_tool("tool_error", {})
    assert failed_tool.isError and failed_tool.content[0].text == "bad input"  # type: ignore[union-attr]


async def test_a_json_rpc_error_is_a_failed_task_raised_with_its_code_and_data(
    modern_client: Client,
) -> None:
    with pytest.raises(McpError) as caught:
        await modern_client.call_tool("protocol_error", {})
    assert (caught.value.code, caught.value.data) == (-32602, {"thing": 1})


async def test_a_crashed_task_is_a_failed_call_with_its_detail_masked(
    modern_client: Client,
) -> None:
    crashed = await modern_client.call_tool("crash", {})
    assert crashed.isError and crashed.content[0].text == "Error calling tool 'crash'"  # type: ignore[union-attr]


async def test_modern_cancel_and_resume_by_id() -> None:
    server = make_server()
    async with Client(server, mode=MODERN, tasks=True) as client:
        handle = await client.start_tool("work", {"n": 2, "seconds": 30})
        assert isinstance(handle, TaskHandle)
        await handle.cancel()
        with pytest.raises(TaskCancelled):
            await handle.result()
        await handle.cancel()  # a terminal task: the same empty acknowledgement
        finished = await client.start_tool("work", {"n": 3})
        assert isinstance(finished, TaskHandle)
    # Another client (a restarted process) resumes the task by its id alone.
    async with Client(server, mode=MODERN, tasks=True) as other:
        result = await other.task(finished.task_id).result()
        assert result.content[0].text == "done 3"  # type: ignore[union-attr]


async def test_modern_clients_without_the_extension_get_plain_results() -> None:
    server = make_server()
    async with Client(server, mode=MODERN) as client:
        result = await client.call_tool("work", {"n": 4})
        assert result.content[0].text == "done 4"  # type: ignore[union-attr]
        with pytest.raises(McpError) as caught:
            await client.call_tool("only_task", {})
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}


@asynccontextmanager
async def raw_server(server: Server) -> AsyncIterator[RawPeer]:
    mine, theirs = memory_pair()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.serve, theirs)
        yield RawPeer(mine)
        await mine.aclose()


class RawPeer:
    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.ids = iter(range(1, 10_000))

    async def call(self, method: str, caps: dict[str, Any] | None = None, **params: Any) -> Any:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": EXT if caps is None else caps,
        }
        frame = {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": method,
            "params": {**params, "_meta": meta},
        }
        await self.transport.send(json.dumps(frame).encode())
        with anyio.fail_after(5):
            while True:
                answer = json.loads(await self.transport.receive())
                if "id" in answer:
                    return answer


async def created_task(peer: RawPeer, tool: str = "ask") -> dict[str, Any]:
    return (await peer.call("tools/call", name=tool, arguments={}))["result"]


async def first_question(peer: RawPeer, task_id: str) -> dict[str, Any]:
    """tasks/get once the task waits for its first answer."""

    async def waiting() -> dict[str, Any] | None:
        got = (await peer.call("tasks/get", taskId=task_id))["result"]
        return got if got["status"] == "input_required" else None

    return await until(waiting)


async def answered_to_the_end(peer: RawPeer, task_id: str) -> dict[str, Any]:
    """The `ask` task answered "a" and "b" through tasks/update: its final tasks/get."""
    [key] = (await first_question(peer, task_id))["inputRequests"]
    first = {"action": "accept", "content": {"v": "a"}}
    await peer.call("tasks/update", taskId=task_id, inputResponses={key: first})

    async def second_question() -> dict[str, Any] | None:
        got = (await peer.call("tasks/get", taskId=task_id))["result"]
        asked = got.get("inputRequests") or {}
        return got if got["status"] == "input_required" and key not in asked else None

    [key2] = (await until(second_question))["inputRequests"]
    second = {"action": "accept", "content": {"v": "b"}}
    await peer.call("tasks/update", taskId=task_id, inputResponses={key2: second})

    async def completed() -> dict[str, Any] | None:
        got = (await peer.call("tasks/get", taskId=task_id))["result"]
        return got if got["status"] == "completed" else None

    return await until(completed)


@pytest.fixture
async def raw_peer() -> AsyncIterator[RawPeer]:
    async with raw_server(make_server()) as peer:
        yield peer


async def test_a_created_task_answers_the_task_shape_only(raw_peer: RawPeer) -> None:
    created = await created_task(raw_peer)
    assert created["resultType"] == "task" and created["status"] == "working"
    assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
    assert not {"result", "error", "inputRequests", "requestState", "task"} & set(created)


async def test_a_task_s_question_reads_in_tasks_get_as_an_input_request(
    raw_peer: RawPeer,
) -> None:
    got = await first_question(raw_peer, (await created_task(raw_peer))["taskId"])
    assert got["resultType"] == "complete"
    [key] = got["inputRequests"]
    assert got["inputRequests"][key]["method"] == "elicitation/create"


async def test_tasks_update_ignores_unknown_keys_and_acknowledges_empty(
    raw_peer: RawPeer,
) -> None:
    task_id = (await created_task(raw_peer))["taskId"]
    await first_question(raw_peer, task_id)
    ack = await raw_peer.call("tasks/update", taskId=task_id, inputResponses={"nope": {}})
    assert set(ack["result"]) == {"resultType", "_meta"}


async def test_answers_through_tasks_update_complete_the_task(raw_peer: RawPeer) -> None:
    got = await answered_to_the_end(raw_peer, (await created_task(raw_peer))["taskId"])
    assert got["result"]["content"][0]["text"] == "a/b"


async def test_tasks_get_of_an_unknown_id_is_invalid_params(raw_peer: RawPeer) -> None:
    unknown = await raw_peer.call("tasks/get", taskId="nope")
    assert unknown["error"]["code"] == -32602


async def test_task_methods_refuse_a_client_without_the_extension(raw_peer: RawPeer) -> None:
    task_id = (await created_task(raw_peer))["taskId"]
    await answered_to_the_end(raw_peer, task_id)
    for method in ("tasks/get", "tasks/cancel"):
        refused = await raw_peer.call(method, caps={}, taskId=task_id)
        assert refused["error"]["code"] == -32021


async def test_tasks_result_and_tasks_list_are_removed_methods(raw_peer: RawPeer) -> None:
    task_id = (await created_task(raw_peer))["taskId"]
    await answered_to_the_end(raw_peer, task_id)
    for method in ("tasks/result", "tasks/list"):
        assert (await raw_peer.call(method, taskId=task_id))["error"]["code"] == -32601


async def test_a_task_id_that_is_no_string_is_invalid_params(raw_peer: RawPeer) -> None:
    bad = await raw_peer.call("tasks/get", taskId=7)
    assert bad["error"]["code"] == -32602


# ---------------------------------------------------------------------- 2025-11-25 native tasks


@dataclass
class LegacySession:
    client: Client
    statuses: list[str]  # of notifications/tasks/status, in order


@pytest.fixture
async def legacy() -> AsyncIterator[LegacySession]:
    """Our client on 2025-11-25 with tasks, answering questions, noting the status notices."""
    statuses: list[str] = []

    async def on_notice(notice: Any) -> None:
        if notice.method == "notifications/tasks/status":
            statuses.append(notice.params.status)

    async with Client(
        make_server(), mode=LEGACY_TASKS, tasks=True, elicitation=answer, on_notice=on_notice
    ) as client:
        yield LegacySession(client, statuses)


async def test_legacy_a_required_task_tool_runs_as_a_task_without_a_list_first(
    legacy: LegacySession,
) -> None:
    """Without a list_tools first, the client lists them once to learn each taskSupport."""
    required = await legacy.client.start_tool("only_task", {})
    assert isinstance(required, TaskHandle)
    assert (await required.result()).content[0].text == "ran as a task"  # type: ignore[union-attr]


async def test_legacy_list_tools_lists_the_task_tools(legacy: LegacySession) -> None:
    listed = await legacy.client.list_tools()
    assert "work" in [t.name for t in listed.tools]


async def test_legacy_a_task_keeps_its_ttl_ends_with_its_result_and_notifies(
    legacy: LegacySession,
) -> None:
    await legacy.client.list_tools()
    handle = await legacy.client.start_tool("work", {"n": 5}, ttl_ms=60_000)
    assert isinstance(handle, TaskHandle)
    assert handle.task["ttl"] == 60_000
    result = await handle.result()
    assert result.content[0].text == "done 5"  # type: ignore[union-attr]
    await until(lambda: "completed" in legacy.statuses)


async def test_legacy_questions_are_session_requests_tagged_with_their_task(
    legacy: LegacySession,
) -> None:
    """Questions inside a task are real requests on the session, answered by the callbacks,
    tagged with the task they serve."""
    related: list[Any] = []

    async def tagged(params: Any) -> dict[str, Any]:
        related.append(params.model_dump(by_alias=True)["_meta"][RELATED_TASK])
        return await answer(params)

    legacy.client._callbacks.elicitation = tagged  # pyright: ignore[reportPrivateUsage]
    asking = await legacy.client.start_tool("ask", {})
    assert isinstance(asking, TaskHandle)
    asked = await asking.result()
    assert asked.content[0].text == "first/second"  # type: ignore[union-attr]
    assert related == [{"taskId": asking.task_id}] * 2


async def test_legacy_a_tool_error_is_a_failed_task_whose_result_is_the_tool_s(
    legacy: LegacySession,
) -> None:
    """2025-11-25 calls a tool error `failed`; tasks/result gives the tool's result."""
    erring = await legacy.client.start_tool("tool_error", {})
    assert isinstance(erring, TaskHandle)
    failed_tool = await erring.result()
    assert erring.status == "failed"
    assert failed_tool.isError and failed_tool.content[0].text == "bad input"  # type: ignore[union-attr]


async def test_legacy_a_tool_that_is_never_a_task_is_called_plainly(
    legacy: LegacySession,
) -> None:
    plain = await legacy.client.start_tool("plain", {"name": "Bo"})
    assert not isinstance(plain, TaskHandle)


async def test_legacy_tasks_list_holds_the_session_s_tasks(legacy: LegacySession) -> None:
    handle = await legacy.client.start_tool("work", {"n": 5}, ttl_ms=60_000)
    assert isinstance(handle, TaskHandle)
    await handle.result()
    listing = await legacy.client.list_tasks()
    assert handle.task_id in [t["taskId"] for t in listing["tasks"]]
    assert listing == await legacy.client.task_request("tasks/list", {})


async def test_legacy_a_cancelled_task_refuses_a_second_cancel(legacy: LegacySession) -> None:
    """tasks/cancel of a terminal task is refused (the handle tolerates it)."""
    slow = await legacy.client.start_tool("work", {"n": 6, "seconds": 30})
    assert isinstance(slow, TaskHandle)
    await slow.cancel()
    assert (await slow.refresh())["status"] == "cancelled"
    with pytest.raises(McpError) as caught:
        await legacy.client.task_request("tasks/cancel", {"taskId": slow.task_id})
    assert caught.value.code == -32602


async def test_legacy_tasks_get_of_an_unknown_id_is_refused(legacy: LegacySession) -> None:
    with pytest.raises(McpError) as caught:
        await legacy.client.task_request("tasks/get", {"taskId": "unknown"})
    assert caught.value.code == -32602


async def test_legacy_a_json_rpc_error_in_a_task_is_raised(legacy: LegacySession) -> None:
    with pytest.raises(McpError) as caught:
        await legacy.client.call_tool("protocol_error", {})
    assert caught.value.code == -32602


async def test_legacy_wire_rules() -> None:
    server = make_server()
    async with Client(server, mode=LEGACY_TASKS) as client:  # declares no tasks
        result = await client.call_tool("work", {"n": 7})  # no params.task: a plain call
        assert result.content[0].text == "done 7"  # type: ignore[union-attr]
        with pytest.raises(McpError) as caught:
            await client.call_tool("only_task", {})
        assert caught.value.code == -32601
        with pytest.raises(McpError) as caught:
            await client.request("tools/call", {"name": "plain", "arguments": {}}, task={})
        assert caught.value.code == -32601  # a tool that is never a task
        listed = await client.task_request("tools/list", {})
        support = {
            t["name"]: (t.get("execution") or {}).get("taskSupport") for t in listed["tools"]
        }
        assert support["work"] == "optional" and support["only_task"] == "required"
        assert support["plain"] is None


@pytest.mark.parametrize("mode", ["2025-06-18", "2025-03-26"])
async def test_older_legacy_revisions_call_plainly(mode: str) -> None:
    async with Client(make_server(), mode=mode, tasks=True) as client:
        result = await client.call_tool("work", {"n": 8})
        assert result.content[0].text == "done 8"  # type: ignore[union-attr]


# ---------------------------------------------------------------------- engine rules


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_ttl_expiry_reads_not_found() -> None:
    clock = Clock()
    engine = TaskEngine(MemoryTaskStore(clock), ttl_ms=1_000, clock=clock)
    server = make_server(engine)
    async with Client(server, mode=MODERN, tasks=True) as client:
        handle = await client.start_tool("work", {"n": 9})
        assert isinstance(handle, TaskHandle) and handle.task["ttlMs"] == 1_000
        await handle.result()
        clock.now += 0.999
        assert (await handle.refresh())["status"] == "completed"
        clock.now += 0.002
        with pytest.raises(McpError) as caught:
            await handle.refresh()
        assert caught.value.code == -32602


async def test_another_owner_reads_not_found() -> None:
    engine = TaskEngine()

    async def work(inputs: Any, status: Any) -> dict[str, Any]:
        return {"content": []}

    record = await engine.start(owner="alice", method="tools/call", work=work)
    assert await engine.get(record.task_id, "alice") is not None
    assert await engine.get(record.task_id, "mallory") is None
    assert await engine.get(record.task_id, None) is None
    assert await engine.cancel(record.task_id, "mallory") is None
    assert await engine.update(record.task_id, "mallory", {}) is None
    assert (await engine.wait(record.task_id, "alice")).status == "completed"  # type: ignore[union-attr]


async def test_a_dead_instance_s_task_turns_failed_after_its_lease() -> None:
    clock = Clock()
    store = MemoryTaskStore(clock)
    dying = TaskEngine(store, lease_seconds=5, clock=clock)
    started = anyio.Event()

    async def forever(inputs: Any, status: Any) -> dict[str, Any]:
        started.set()
        await anyio.sleep_forever()
        return {}

    record = await dying.start(owner=None, method="tools/call", work=forever)
    await started.wait()
    await dying.aclose()  # the instance stops without finishing (no renewal any more)
    other = TaskEngine(store, clock=clock)
    assert (await other.get(record.task_id, None)).status == "working"  # type: ignore[union-attr]
    clock.now += 6
    lost = await other.get(record.task_id, None)
    assert lost is not None and lost.status == "failed" and lost.status_message == LEASE_LOST


async def test_the_lease_is_renewed_while_the_task_works() -> None:
    engine = TaskEngine(lease_seconds=0.06)
    release = anyio.Event()

    async def slow(inputs: Any, status: Any) -> dict[str, Any]:
        await release.wait()
        return {"content": []}

    record = await engine.start(owner=None, method="tools/call", work=slow)
    first = record.lease_until
    assert first is not None

    async def renewed() -> bool:
        now = await engine.get(record.task_id, None)
        return now is not None and (now.lease_until or 0) > first

    await until(renewed)
    assert (await engine.get(record.task_id, None)).status == "working"  # type: ignore[union-attr]
    release.set()
    assert (await engine.wait(record.task_id, None)).status == "completed"  # type: ignore[union-attr]


async def test_orders_that_cannot_be_read_stop_no_renewal() -> None:
    """A store failing to hand over the orders queued for a task: the task is renewed all the
    same and lives on past its lease."""

    class Failing(MemoryTaskStore):
        async def take_orders(self, task_id: str) -> list[dict[str, Any]]:
            raise TaskStoreError("unreadable")

    engine = TaskEngine(Failing(), lease_seconds=0.06)
    release = anyio.Event()

    async def slow(inputs: Any, status: Any) -> dict[str, Any]:
        await release.wait()
        return {"content": []}

    record = await engine.start(owner=None, method="tools/call", work=slow)
    await anyio.sleep(0.3)  # five leases
    assert (await engine.get(record.task_id, None)).status == "working"  # type: ignore[union-attr]
    release.set()
    assert (await engine.wait(record.task_id, None)).status == "completed"  # type: ignore[union-attr]


async def test_a_change_after_the_first_lease_renews_it() -> None:
    """A clock the renewer never sees move (its next round is seconds away): each change of the
    task alone keeps it alive, far past the lease it was created with."""
    clock = Clock()
    engine = TaskEngine(MemoryTaskStore(clock), lease_seconds=5, clock=clock)
    go = [anyio.Event() for _ in range(5)]  # the fifth lets it finish
    reported = [anyio.Event() for _ in range(4)]

    async def chatty(inputs: Any, status: Any) -> dict[str, Any]:
        for i in range(4):
            await go[i].wait()
            await status(f"step {i}")
            reported[i].set()
        await go[4].wait()
        return {"content": []}

    record = await engine.start(owner=None, method="tools/call", work=chatty)
    for i in range(4):
        clock.now += 4  # past the creation's lease from the second step on
        go[i].set()
        await reported[i].wait()
        now = await engine.get(record.task_id, None)
        assert now is not None and (now.status, now.status_message) == ("working", f"step {i}")
        assert now.lease_until == clock.now + 5
    go[4].set()
    assert (await engine.wait(record.task_id, None)).status == "completed"  # type: ignore[union-attr]


class SharedBus(Bus):
    """An in-process stand-in for Redis: every instance attached hears every event."""

    def __init__(self, hubs: list[SharedBus]) -> None:
        self.hubs = hubs
        hubs.append(self)

    async def publish(self, event: Event) -> None:
        for bus in self.hubs:
            await bus._deliver(Event.decode(event.encode()))


async def test_update_and_cancel_reach_the_instance_running_the_task() -> None:
    store = MemoryTaskStore()
    buses: list[SharedBus] = []
    one = make_server(TaskEngine(store), SharedBus(buses))
    two = make_server(TaskEngine(store), SharedBus(buses))
    async with (
        Client(one, mode=MODERN, tasks=True, elicitation=answer) as on_one,
        Client(two, mode=MODERN, tasks=True, elicitation=answer) as on_two,
    ):
        handle = await on_one.start_tool("ask", {})
        assert isinstance(handle, TaskHandle)
        # Polled, answered and finished through the other instance.
        result = await on_two.task(handle.task_id).result()
        assert result.content[0].text == "first/second"  # type: ignore[union-attr]
        slow = await on_one.start_tool("work", {"n": 10, "seconds": 30})
        assert isinstance(slow, TaskHandle)
        await on_two.task(slow.task_id).cancel()
        with pytest.raises(TaskCancelled):
            await slow.result()


async def test_listen_follows_task_ids() -> None:
    server = make_server()
    async with Client(server, mode=MODERN, tasks=True) as client:
        handle = await client.start_tool("work", {"n": 11, "seconds": 0.2})
        assert isinstance(handle, TaskHandle)
        seen: list[str] = []
        async with client.listen(task_ids=[handle.task_id]) as changes:
            async for notice in changes:
                params = notice.params
                assert params["taskId"] == handle.task_id
                seen.append(params["status"])
                if params["status"] == "completed":
                    assert params["result"]["content"][0]["text"] == "done 11"
                    break
        assert seen[-1] == "completed"
    async with Client(server, mode=MODERN) as plain_client:  # no extension: refused
        with pytest.raises(McpError) as caught:
            async with plain_client.listen(task_ids=[handle.task_id]):
                pass
        assert caught.value.code == -32021


def example_server() -> Server:
    spec = importlib.util.spec_from_file_location("everything_server", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


async def test_many_concurrent_tasks_each_complete_once() -> None:
    """200 tasks at once through the example server's `slow_compute`: each its own result,
    each completed exactly once."""
    server = example_server()
    completions: list[str] = []

    async def count(record: Any) -> None:
        if record.status == "completed":
            completions.append(record.task_id)

    server.tasks.watchers.append(count)
    async with Client(server, mode=MODERN, tasks=True) as client:
        handles: dict[int, TaskHandle] = {}

        async def start(i: int) -> None:
            answer = await client.start_tool("slow_compute", {"seconds": 0.05, "label": f"n{i}"})
            assert isinstance(answer, TaskHandle)
            handles[i] = answer

        async with anyio.create_task_group() as group:
            for i in range(200):
                group.start_soon(start, i)
        assert len({h.task_id for h in handles.values()}) == 200
        texts: dict[int, str] = {}

        async def finish(i: int) -> None:
            result = await handles[i].result()
            texts[i] = result.content[0].text  # type: ignore[union-attr]

        async with anyio.create_task_group() as group:
            for i in handles:
                group.start_soon(finish, i)
        assert texts == {i: f"computed n{i} after 0.05 s" for i in range(200)}
        assert sorted(completions) == sorted(h.task_id for h in handles.values())


async def test_another_principal_s_task_reads_not_found_on_the_wire() -> None:
    from mcpio.auth import Principal

    server = make_server()

    @asynccontextmanager
    async def as_principal(subject: str) -> AsyncIterator[RawPeer]:
        mine, theirs = memory_pair()
        async with anyio.create_task_group() as tasks:
            connection = server.connect(theirs, principal=Principal(subject=subject))
            tasks.start_soon(connection.run)
            yield RawPeer(mine)
            await mine.aclose()

    async with as_principal("alice") as alice, as_principal("mallory") as mallory:
        created = await alice.call("tools/call", name="work", arguments={"n": 1, "seconds": 30})
        task_id = created["result"]["taskId"]
        assert (await alice.call("tasks/get", taskId=task_id))["result"]["status"] == "working"
        for method, extra in (
            ("tasks/get", {}),
            ("tasks/cancel", {}),
            ("tasks/update", {"inputResponses": {}}),
        ):
            refused = await mallory.call(method, taskId=task_id, **extra)
            assert refused["error"]["code"] == -32602, method
            assert refused["error"]["message"] == "Failed to retrieve task: Task not found"
        assert (await alice.call("tasks/get", taskId=task_id))["result"]["status"] == "working"
        assert "result" in await alice.call("tasks/cancel", taskId=task_id)


async def test_answers_and_questions_are_checked() -> None:
    server = make_server()

    @server.tool(task="optional")
    async def bad_question(ctx: Context) -> str:
        await ctx.elicit("No properties?", {"type": "object", "properties": 3})
        return "unreachable"

    async with raw_server(server) as peer:
        created = (await peer.call("tools/call", name="ask", arguments={}))["result"]
        task_id = created["taskId"]

        async def asked() -> str | None:
            got = (await peer.call("tasks/get", taskId=task_id))["result"]
            return next(iter(got.get("inputRequests") or {}), None)

        key = await until(asked)
        # An answer that is no elicitation result is refused; the task keeps waiting.
        refused = await peer.call("tasks/update", taskId=task_id, inputResponses={key: {"x": 1}})
        assert refused["error"]["code"] == -32602
        assert refused["error"]["data"]["field"] == f"inputResponses.{key}"
        got = (await peer.call("tasks/get", taskId=task_id))["result"]
        assert got["status"] == "input_required" and key in got["inputRequests"]
        # A question the schema would not let out fails the task (not tasks/get).
        bad = (await peer.call("tools/call", name="bad_question", arguments={}))["result"]

        async def failed() -> dict[str, Any] | None:
            got = (await peer.call("tasks/get", taskId=bad["taskId"]))["result"]
            return got if got["status"] == "failed" else None

        got = await until(failed)
        assert got["error"]["code"] == -32603 and "invalid question" in got["error"]["message"]


@pytest.mark.parametrize("mode", [MODERN, LEGACY_TASKS])
async def test_tasks_over_http(mode: str) -> None:
    """Over Streamable HTTP (a real uvicorn): a task's question reaches the client (2026-07-28:
    through tasks/get; 2025-11-25: as a request on the session's GET stream, the task running
    after its POST was answered) and the task ends with its result."""
    server = example_server()

    async def confirm(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    async with serve_app(server.http_app()) as served:
        url = f"{served.url}/mcp"
        async with Client(url, mode=mode, tasks=True, elicitation=confirm) as client:
            await client.list_tools()
            with anyio.fail_after(20):
                handle = await client.start_tool("confirm_delete", {"filename": "a.txt"})
                assert isinstance(handle, TaskHandle)
                result = await handle.result()
                assert result.content[0].text == "deleted a.txt"  # type: ignore[union-attr]
                other = await client.task(handle.task_id).refresh()
                assert other["status"] == "completed"


@pytest.mark.parametrize("mode", [MODERN, LEGACY_TASKS])
async def test_a_deferred_task_asks_first_then_runs_as_a_task(mode: str) -> None:
    """`defer_task=True`: the questions before `ctx.become_task()` are answered within the
    request (2026-07-28: an input_required round; 2025-11-25: a request on the session), then
    the call is answered with a task whose result holds the answer."""
    server = example_server()

    async def named(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Alice"}}

    async with Client(server, mode=mode, tasks=True, elicitation=named) as client:
        await client.list_tools()
        handle = await client.start_tool("test_tool_with_task", {})
        assert isinstance(handle, TaskHandle)
        result = await handle.result()
        assert result.content[0].text == "Hello, Alice!"  # type: ignore[union-attr]
    async with Client(server, mode=mode) as plain_client:  # takes no task: refused
        with pytest.raises(McpError) as caught:
            await plain_client.call_tool("test_tool_with_task", {})
        assert caught.value.code == (-32021 if mode == MODERN else -32601)


@pytest.mark.parametrize("mode", [MODERN, LEGACY_TASKS])
async def test_progress_inside_a_task_reaches_the_client(mode: str) -> None:
    """A task's progress reaches the callback of the call that started it, on that call's
    progress token (2025-11-25: on its session; 2026-07-28: on the listen stream the handle
    follows the task on), as well as its status message; the callback is dropped at the end."""
    server = make_server()
    go = anyio.Event()

    @server.tool(task="required")
    async def steps(ctx: Context) -> str:
        await go.wait()
        for i in (1, 2, 3):
            await ctx.progress(i, 3, f"step {i}")
        return "stepped"

    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async with Client(server, mode=mode, tasks=True) as client:
        with anyio.fail_after(10):
            handle = await client.start_tool("steps", {}, progress=on_progress)
            assert isinstance(handle, TaskHandle)
            async with anyio.create_task_group() as group:
                group.start_soon(handle.result)
                if mode == MODERN:  # heard by the streams listening at the time only
                    await until(lambda: server.hub.listeners)
                go.set()
        assert heard == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert handle.task["statusMessage"] == "step 3"
        assert client._progress == {}  # pyright: ignore[reportPrivateUsage]


async def test_the_modern_handle_follows_notifications_not_the_poll_interval() -> None:
    """With a 60 s poll interval, `result()` still returns at once: it follows the task's
    `notifications/tasks` on a listen stream (questions answered as they come)."""
    server = make_server(TaskEngine(poll_interval_ms=60_000))
    async with Client(server, mode=MODERN, tasks=True, elicitation=answer) as client:
        with anyio.fail_after(10):
            handle = await client.start_tool("work", {"n": 12, "seconds": 0.1})
            assert isinstance(handle, TaskHandle) and handle.poll_interval == 60
            result = await handle.result()
            assert result.content[0].text == "done 12"  # type: ignore[union-attr]
            asking = await client.start_tool("ask", {})
            assert isinstance(asking, TaskHandle)
            asked = await asking.result()
            assert asked.content[0].text == "first/second"  # type: ignore[union-attr]


# ---------------------------------------------------------------------- graceful shutdown


async def test_drain_lets_tasks_finish_then_fails_the_rest_with_the_reason() -> None:
    server = make_server(TaskEngine(grace_seconds=0.3))
    async with Client(server, mode=MODERN, tasks=True) as client:
        quick = await client.start_tool("work", {"n": 1, "seconds": 0.1})
        slow = await client.start_tool("work", {"n": 2, "seconds": 3600})
        assert isinstance(quick, TaskHandle) and isinstance(slow, TaskHandle)
        started = anyio.current_time()
        await server.drain_tasks()
        assert anyio.current_time() - started < 1.0  # the grace, not the slow task's hour
        done = await server.tasks.get(quick.task_id, None)
        assert done is not None and done.status == "completed"
        stopped = await server.tasks.get(slow.task_id, None)
        assert stopped is not None and stopped.status == "failed", stopped
        assert stopped.status_message == SHUT_DOWN and stopped.lease_holder is None
        assert stopped.error == {"code": -32603, "message": SHUT_DOWN}
        with pytest.raises(McpError) as caught:  # no new task once draining
            await client.start_tool("work", {"n": 3})
        assert caught.value.code == SERVER_BUSY


async def test_drain_hands_back_a_task_with_a_run_left() -> None:
    """A queued retry-safe task a worker runs (claimed: its first of three runs), stopped by the
    shutdown: back to no one, its open question and the answers so far kept, not failed."""
    store = MemoryTaskStore()
    engine = TaskEngine(store, grace_seconds=0.05)
    now = time.time()
    queued = TaskRecord(
        task_id="queued", owner=None, method="tools/call", status="input_required",
        created_at=now, updated_at=now, ttl_ms=None,
        input_requests={"b": {"method": "elicitation/create"}},
        answers={"a": {"action": "decline"}}, attempts=0, max_attempts=3,
    )  # fmt: skip
    await store.create(queued)
    claimed = await store.claim(queued.task_id, engine.instance, 1e12)
    assert claimed is not None and claimed.attempts == 1

    async def forever(inputs: Any, status: Any) -> dict[str, Any]:
        await anyio.sleep_forever()
        return {}

    async with anyio.create_task_group() as group:
        ended: list[Any] = []

        async def execute() -> None:
            ended.append(await engine.execute(claimed, forever))

        group.start_soon(execute)
        await anyio.sleep(0.05)
        await engine.drain()
    [back] = ended
    assert back.status == "input_required" and back.status_message == HANDED_BACK
    # the run the shutdown stopped is counted, and given back: still three runs left
    assert (back.lease_holder, back.lease_until, back.attempts, back.max_attempts) == (
        None,
        None,
        1,
        4,
    )
    assert back.input_requests == {"b": {"method": "elicitation/create"}}
    assert back.answers == {"a": {"action": "decline"}}
    assert await store.get(queued.task_id, None) == back
    again = await store.claim(queued.task_id, "another", 1e12)  # a second run for another
    assert again is not None and again.attempts == 2


async def test_a_retry_safe_task_stopped_by_every_shutdown_is_handed_back_each_time() -> None:
    """A rolling restart: the task's every run (more than its `max_attempts`) is on a worker
    that shuts down; each hands it back, none fails it (each run still counted)."""
    store = MemoryTaskStore()
    now = time.time()
    queued = TaskRecord(
        task_id="long", owner=None, method="tools/call", status="working",
        created_at=now, updated_at=now, ttl_ms=None, attempts=0, max_attempts=2,
    )  # fmt: skip
    await store.create(queued)

    async def forever(inputs: Any, status: Any) -> dict[str, Any]:
        await anyio.sleep_forever()
        return {}

    for run in range(1, 5):
        engine = TaskEngine(store, grace_seconds=0.01)  # a worker, stopped while it runs the task
        claimed = await store.claim(queued.task_id, engine.instance, 1e12)
        assert claimed is not None and claimed.attempts == run
        ended: list[Any] = []

        async def execute(claimed: TaskRecord, engine: TaskEngine, ended: list[Any]) -> None:
            ended.append(await engine.execute(claimed, forever))

        async with anyio.create_task_group() as group:
            group.start_soon(execute, claimed, engine, ended)
            await anyio.sleep(0.02)
            await engine.drain()
        [back] = ended
        assert back.status == "working" and back.status_message == HANDED_BACK, back
        assert (back.attempts, back.max_attempts) == (run, run + 2)

    again = await store.claim(queued.task_id, "another", 1e12)  # and it runs again
    assert again is not None and (again.attempts, again.max_attempts) == (5, 6)


async def test_without_auth_a_legacy_session_reaches_only_its_own_tasks() -> None:
    """No authorization: each legacy HTTP session owns the tasks it creates (another session
    cannot list, read, wait on or cancel them); a 2026-07-28 client's tasks are anonymous,
    reachable by their id alone and listed by no session."""
    server = make_server()
    async with serve_app(server.http_app()) as served:
        url = f"{served.url}/mcp"
        async with (
            Client(url, mode=LEGACY_TASKS, tasks=True) as alice,
            Client(url, mode=LEGACY_TASKS, tasks=True) as mallory,
            Client(url, mode=MODERN, tasks=True) as modern,
        ):
            await alice.list_tools()
            await modern.list_tools()
            mine = await alice.start_tool("work", {"n": 1, "seconds": 30})
            assert isinstance(mine, TaskHandle)
            anonymous = await modern.start_tool("work", {"n": 2, "seconds": 30})
            assert isinstance(anonymous, TaskHandle)
            listed = await alice.list_tasks()
            assert [t["taskId"] for t in listed["tasks"]] == [mine.task_id]
            assert (await mallory.list_tasks())["tasks"] == []
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                for task_id in (mine.task_id, anonymous.task_id):
                    with pytest.raises(McpError) as caught:
                        await mallory.task_request(method, {"taskId": task_id})
                    assert caught.value.code == -32602, method
                    assert caught.value.message == "Failed to retrieve task: Task not found"
            assert (await mine.refresh())["status"] == "working"
            # The id is the capability of an anonymous task: another modern client holding it
            # reaches it; a legacy session does not.
            async with Client(url, mode=MODERN, tasks=True) as other:
                assert (await other.task(anonymous.task_id).refresh())["status"] == "working"
            await mine.cancel()
            await anonymous.cancel()
