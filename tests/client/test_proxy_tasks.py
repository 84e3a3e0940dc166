"""`proxy_server` in front of a 2025-11-25 target with tasks: each tool runs as a task exactly when
the target would run it as one (its `execution.taskSupport`), the target's own task followed and
its questions (asked inside the task, or before it, by a deferred task tool) answered by the
client (issue 36)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpio import Client, Context, McpError, Server
from mcpio._core.context import Elicit
from mcpio.client._proxy import proxy_server
from mcpio.tasks._client import TaskHandle

pytestmark = pytest.mark.anyio

NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


def common_target() -> Server:
    """What both targets serve: a plain tool, a task-required one that counts its runs, and a
    task-optional one that asks two questions."""
    server = Server("target")
    server.task_runs = 0  # type: ignore[attr-defined]

    @server.tool()
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(task="required")
    async def job() -> str:
        server.task_runs += 1  # type: ignore[attr-defined]
        return "done"

    @server.tool(task="optional")
    async def two_questions(ctx: Context) -> str:
        answers = await ctx.ask({"a": Elicit("A?", NAME), "b": Elicit("B?", NAME)})
        return "+".join(str((answers[k].content or {}).get("name")) for k in ("a", "b"))

    return server


def target_server() -> Server:
    server = common_target()

    @server.tool(task="required", defer_task=True)
    async def asks_first(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME)
        await ctx.become_task()
        return f"Hi {(answer.content or {}).get('name')}"

    return server


async def elicit(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": params.message.rstrip("?")}}


@pytest.mark.parametrize("client_mode", ["2026-07-28", "2025-11-25"])
async def test_tasks_as_the_target_runs_them(client_mode: str) -> None:
    target = target_server()
    proxy = proxy_server(target, mode="2025-11-25")
    async with Client(proxy, mode=client_mode, tasks=True, elicitation=elicit) as client:
        with anyio.fail_after(30):
            await client.list_tools()
            greeted = await client.start_tool("greet", {"name": "Bo"})
            assert not isinstance(greeted, TaskHandle)  # the target's sync tool: no task
            assert greeted.content[0].text == "Hello, Bo!"  # type: ignore[union-attr]
            for name, text in [
                ("job", "done"),
                ("two_questions", "A+B"),
                ("asks_first", "Hi Name"),
            ]:
                handle = await client.start_tool(name, {})
                assert isinstance(handle, TaskHandle), name
                assert (await handle.result()).content[0].text == text  # type: ignore[union-attr]
    assert target.task_runs == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(("client_mode", "code"), [("2026-07-28", -32021), ("2025-11-25", -32601)])
async def test_a_task_only_tool_called_without_tasks(client_mode: str, code: int) -> None:
    target = target_server()
    proxy = proxy_server(target, mode="2025-11-25")
    async with Client(proxy, mode=client_mode) as client:
        with anyio.fail_after(30), pytest.raises(McpError) as caught:
            await client.call_tool("job", {})
    assert caught.value.code == code
    assert target.task_runs == 0  # type: ignore[attr-defined]


async def test_a_legacy_listing_marks_the_targets_task_support() -> None:
    proxy = proxy_server(target_server(), mode="2025-11-25")
    async with Client(proxy, mode="2025-11-25", tasks=True) as client:
        listed = await client.task_request("tools/list", {})
    support = {t["name"]: (t.get("execution") or {}).get("taskSupport") for t in listed["tools"]}
    assert support == {
        "greet": None, "job": "required", "two_questions": "optional", "asks_first": "required",
    }  # fmt: skip
    # `greet` is unmarked, as its target lists it: unmarked means "forbidden"


async def test_the_targets_param_headers_are_checked_at_the_proxy() -> None:
    """SEP-2243: a 2026-07-28 HTTP client's `Mcp-Param-*` headers are checked against the
    target's schemas as listed through the proxy (a legacy target checks none itself)."""
    target = Server("target")
    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }

    @target.tool(input_schema=schema)
    def where(region: str) -> str:
        return region

    proxy = proxy_server(target, mode="2025-11-25")
    assert proxy.param_headers("where") == ()  # nothing listed yet
    async with Client(proxy, mode="2026-07-28") as client:
        await client.list_tools()
    assert proxy.param_headers("where") == (("Mcp-Param-Region", ("region",)),)


async def test_unknown_tools_do_not_list_the_target_again() -> None:
    target = target_server()
    listings: list[str] = []

    async def counting(call: Any, call_next: Any) -> Any:
        if call.method == "tools/list":
            listings.append(call.method)
        return await call_next(call)

    target.add_middleware(counting)
    proxy = proxy_server(target, mode="2025-11-25")
    async with Client(proxy, mode="2026-07-28") as client:
        for _ in range(3):
            with pytest.raises(McpError):
                await client.call_tool("nope", {})
        assert (await client.call_tool("greet", {"name": "Al"})).content[0].text == "Hello, Al!"  # type: ignore[union-attr]
    assert listings == ["tools/list"]


def modern_target() -> Server:
    """A 2026-07-28-only target whose task tools are task-required (one asks inside its task)."""
    server = common_target()

    @server.tool(task="required")
    async def asks_inside(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME)
        return f"Hi {(answer.content or {}).get('name')}"

    return server


@pytest.mark.parametrize("client_mode", ["2026-07-28", "2025-11-25"])
async def test_a_modern_targets_task_tools_through_the_proxy(client_mode: str) -> None:
    """In front of a 2026-07-28 target, a task call goes to the target as one (its Tasks
    extension declared on that call): a task-required tool runs there, its question answered."""
    target = modern_target()
    proxy = proxy_server(target, mode="2026-07-28")
    async with Client(proxy, mode=client_mode, tasks=True, elicitation=elicit) as client:
        with anyio.fail_after(30):
            await client.list_tools()
            for name, text in [
                ("job", "done"),
                ("asks_inside", "Hi Name"),
                ("two_questions", "A+B"),
            ]:
                handle = await client.start_tool(name, {})
                assert isinstance(handle, TaskHandle), name
                assert (await handle.result()).content[0].text == text  # type: ignore[union-attr]
            # a sync tool: the target answers at once (a legacy client asked for a task: one)
            greeted = await client.start_tool("greet", {"name": "Bo"})
            assert isinstance(greeted, TaskHandle) == (client_mode == "2025-11-25")
            if isinstance(greeted, TaskHandle):
                greeted = await greeted.result()
            assert greeted.content[0].text == "Hello, Bo!"  # type: ignore[union-attr]
    assert target.task_runs == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(("client_mode", "code"), [("2026-07-28", -32021), ("2025-11-25", -32601)])
async def test_a_modern_targets_task_only_tool_called_without_tasks(
    client_mode: str, code: int
) -> None:
    target = modern_target()
    proxy = proxy_server(target, mode="2026-07-28")
    async with Client(proxy, mode=client_mode) as client:
        with anyio.fail_after(30), pytest.raises(McpError) as caught:
            await client.call_tool("job", {})
    assert caught.value.code == code
    assert target.task_runs == 0  # type: ignore[attr-defined]


async def test_the_users_client_is_left_as_it_was() -> None:
    """A `Client` given as the target: the proxy connects a client made like it (its target and
    settings, the proxy's callbacks) and never enters nor changes the user's, through a task
    call to a 2025-11-25 target; the user's client still works on its own afterwards."""
    target = target_server()
    mine = Client(target, mode="2025-11-25", timeout=30, elicitation=elicit)
    before = dict(vars(mine))
    proxy = proxy_server(mine)
    async with Client(proxy, mode="2025-11-25", tasks=True, elicitation=elicit) as client:
        with anyio.fail_after(30):
            handle = await client.start_tool("job", {})
            assert isinstance(handle, TaskHandle)
            assert (await handle.result()).content[0].text == "done"  # type: ignore[union-attr]
            handle = await client.start_tool("two_questions", {})
            assert isinstance(handle, TaskHandle)
            assert (await handle.result()).content[0].text == "A+B"  # type: ignore[union-attr]
    assert target.task_runs == 1  # type: ignore[attr-defined]
    after = vars(mine)
    assert after.keys() == before.keys()
    assert all(after[key] is before[key] for key in before), [
        key for key in before if after[key] is not before[key]
    ]
    assert mine.tasks is False and mine.codec is None and mine.server_info is None
    async with mine:
        with anyio.fail_after(30):
            assert (await mine.call_tool("greet", {"name": "Al"})).content[0].text == "Hello, Al!"  # type: ignore[union-attr]
