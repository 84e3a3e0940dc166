"""Tool transformation (issue 52, item 4): `Server.add_transformed_tool` makes a new tool of one
the server offers (its own, a mounted server's, a proxied one's), its arguments renamed, hidden
with a fixed value or given a default, its description and metadata changed, with an optional
async function around the call (`forward`, `forward_raw`); the schemas follow.

Each runs through our `Client` in memory, in both eras unless it is about one.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpio import Client, McpError, Server, ToolError
from mcpio.client import proxy_server
from mcpio.latest import public as pub
from mcpio.server import ArgTransform, forward, forward_raw
from tests.support import MODERN

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]


def catalogue() -> Server:
    server = Server("catalogue")

    @server.tool(tags={"search"}, annotations={"readOnlyHint": True})
    def search(q: str, category: str = "all", limit: int = 10, api_key: str = "") -> list[str]:
        """Search the catalogue.

        Args:
            q: The query.
        """
        if api_key != "k1":
            raise ToolError("bad key")
        return [f"{category}:{q}:{n}" for n in range(limit)]

    @server.tool
    def double(a: int) -> int:
        return 2 * a

    return server


BOOKS = {
    "q": ArgTransform(name="query", description="What to look for", examples=["dune"]),
    "category": ArgTransform(hide=True, default="books"),
    "api_key": ArgTransform(hide=True, default_factory=lambda: "k1"),
    "limit": ArgTransform(default=2),
}


def books(server: Server, source: str = "search") -> Server:
    server.add_transformed_tool(
        source, name="find_books", description="Find books.", transform_args=BOOKS
    )
    return server


async def listed(client: Client) -> dict[str, Any]:
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in (await client.list_tools()).tools}  # fmt: skip


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_input_schema_follows_renames_hidden_arguments_and_defaults(mode: str) -> None:
    async with Client(books(catalogue()), mode=mode) as client:
        tools = await listed(client)
        found = await client.call_tool("find_books", {"query": "dune"})
        more = await client.call_tool("find_books", {"query": "dune", "limit": 3})
    tool = tools["find_books"]
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for",
                      "examples": ["dune"]},
            "limit": {"type": "integer", "default": 2},
        },
        "required": ["query"],
    }  # fmt: skip
    assert tool["outputSchema"] == tools["search"]["outputSchema"]
    assert (tool["title"], tool["description"]) == ("Find Books", "Find books.")
    assert tool["annotations"] == {"readOnlyHint": True}
    assert found.structuredContent == {"result": ["books:dune:0", "books:dune:1"]}
    assert more.structuredContent == {"result": ["books:dune:0", "books:dune:1", "books:dune:2"]}


async def test_a_client_cannot_send_a_hidden_argument() -> None:
    async with Client(books(catalogue()), mode=MODERN) as client:
        result = await client.call_tool("find_books", {"query": "x", "category": "games"})
    assert result.isError
    assert text_of(result) == "invalid arguments for find_books: no argument category"


async def test_title_description_tags_annotations_and_meta_change() -> None:
    server = catalogue()
    server.add_transformed_tool(
        "search",
        name="lookup",
        title="Look it up",
        description=None,
        tags={"beta"},
        annotations={"idempotentHint": True},
        meta={"team": "books"},
        transform_args={"api_key": ArgTransform(hide=True, default="k1")},
    )
    server.disable(tags={"search"})  # the source hidden: the new tool still reaches it
    async with Client(server, mode=MODERN) as client:
        tools = await listed(client)
        result = await client.call_tool("lookup", {"q": "x", "limit": 1})
        server.disable(tags={"beta"})
        hidden = await listed(client)
    assert sorted(tools) == ["double", "lookup"]
    lookup = tools["lookup"]
    assert (lookup["title"], lookup.get("description")) == ("Look it up", None)
    assert (lookup["annotations"], lookup["_meta"]) == ({"idempotentHint": True}, {"team": "books"})
    assert result.structuredContent == {"result": ["all:x:0"]}
    assert sorted(hidden) == ["double"]


async def check_positive(x: int) -> int:
    """Doubles a positive number."""
    if x < 0:
        raise ToolError("x must be positive")
    result = await forward(x=x)
    return int(result.structuredContent["result"]) + 1  # type: ignore[index]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_function_around_the_call_checks_and_changes_arguments_and_result(
    mode: str,
) -> None:
    server = catalogue()
    server.add_transformed_tool(
        "double",
        name="double_positive",
        transform_args={"a": ArgTransform(name="x")},
        transform_fn=check_positive,
    )
    async with Client(server, mode=mode) as client:
        tool = (await listed(client))["double_positive"]
        good = await client.call_tool("double_positive", {"x": 4})
        bad = await client.call_tool("double_positive", {"x": -1})
    assert tool["inputSchema"]["properties"] == {"x": {"type": "integer"}}
    assert tool["outputSchema"]["properties"] == {"result": {"title": "Result", "type": "integer"}}
    assert good.structuredContent == {"result": 9}
    assert (bad.isError, text_of(bad)) == (True, "x must be positive")


async def test_forward_raw_takes_the_source_s_names_and_a_source_failure_is_the_tool_s() -> None:
    seen: list[str] = []

    async def raw(query: str, **kwargs: Any) -> pub.CallToolResult:
        try:
            await forward(query=query, limit=1, api_key="nope")
        except TypeError as exc:  # a hidden argument is not the new tool's
            seen.append(str(exc))
        return await forward_raw(q=query.upper(), limit=1, api_key="k1")

    server = books(catalogue())
    server.add_transformed_tool("search", name="shout", transform_args=BOOKS, transform_fn=raw)
    server.add_transformed_tool("search", name="keyless")  # api_key left to the client
    async with Client(server, mode=MODERN) as client:
        shouted = await client.call_tool("shout", {"query": "dune"})
        failed = await client.call_tool("keyless", {"q": "dune"})
    assert shouted.structuredContent == {"result": ["all:DUNE:0"]}
    assert seen == ["transformed tool 'shout' has no argument api_key"]
    assert (failed.isError, text_of(failed)) == (True, "bad key")


async def test_forward_outside_a_transformed_tool_is_a_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="from a transformed tool's transform_fn only"):
        await forward(x=1)


@pytest.mark.parametrize("namespace", ["shop", None])
async def test_a_mounted_server_s_tool_is_transformed_at_registration(
    namespace: str | None,
) -> None:
    parent = Server("parent")
    parent.mount(catalogue(), namespace)
    source = "search" if namespace is None else "shop_search"
    books(parent, source)
    assert "find_books" in parent.tools  # seen now: made now
    async with Client(parent, mode=MODERN) as client:
        found = await client.call_tool("find_books", {"query": "dune", "limit": 1})
    assert found.structuredContent == {"result": ["books:dune:0"]}


@pytest.mark.parametrize("mode", ERAS)
async def test_a_proxied_tool_is_transformed_from_what_its_listing_says(mode: str) -> None:
    parent = Server("parent")
    parent.mount(proxy_server(Client(catalogue())), "remote")
    books(parent, "remote_search")
    assert "find_books" not in parent.tools  # known when the proxy is asked
    async with parent.running(), Client(parent, mode=mode) as client:
        found = await client.call_tool("find_books", {"query": "dune", "limit": 1})
        tools = await listed(client)
    assert found.structuredContent == {"result": ["books:dune:0"]}
    assert list(tools["find_books"]["inputSchema"]["properties"]) == ["query", "limit"]


async def test_a_source_nobody_offers_leaves_it_unlisted_and_its_call_an_error_naming_it() -> None:
    server = catalogue()
    server.add_transformed_tool("nothing", name="something")
    async with Client(server, mode=MODERN) as client:
        assert sorted(await listed(client)) == ["double", "search"]  # the others listed
        with pytest.raises(McpError, match="transformed tool 'something': no tool 'nothing' here"):
            await client.call_tool("something", {})


@pytest.mark.parametrize("mode", ERAS)
async def test_a_source_its_proxied_server_hides_leaves_the_listing_clean(mode: str) -> None:
    target = catalogue()
    target.disable(names={"search"})  # unlisted by the target: nothing to make it of
    parent = Server("parent")
    parent.mount(proxy_server(Client(target)), "remote")
    books(parent, "remote_search")
    async with parent.running(), Client(parent, mode=mode) as client:
        assert list(await listed(client)) == ["remote_double"]
        with pytest.raises(McpError, match="no tool 'remote_search' here"):
            await client.call_tool("find_books", {"query": "dune"})


@pytest.mark.parametrize("mode", ERAS)
async def test_a_source_the_parent_hides_stays_hidden_and_the_new_tool_listed(mode: str) -> None:
    parent = Server("parent")
    parent.mount(proxy_server(Client(catalogue())), "remote")
    books(parent, "remote_search")
    parent.disable(names={"remote_search"})
    async with parent.running(), Client(parent, mode=mode) as client:
        assert sorted(await listed(client)) == ["find_books", "remote_double"]
        found = await client.call_tool("find_books", {"query": "dune", "limit": 1})
    assert found.structuredContent == {"result": ["books:dune:0"]}


def test_a_misuse_is_a_type_error_naming_the_fix() -> None:
    server = catalogue()
    with pytest.raises(TypeError, match="the source has no argument qq"):
        server.add_transformed_tool("search", name="a", transform_args={"qq": ArgTransform()})
    with pytest.raises(TypeError, match="hidden argument 'q' is required by the source"):
        server.add_transformed_tool(
            "search", name="b", transform_args={"q": ArgTransform(hide=True)}
        )
    with pytest.raises(TypeError, match="two arguments named 'q'"):
        server.add_transformed_tool(
            "search", name="c", transform_args={"category": ArgTransform(name="q")}
        )
    with pytest.raises(TypeError, match="give it a name of its own"):
        server.add_transformed_tool("search", name="search")
    with pytest.raises(TypeError, match="transform_fn takes no a"):
        server.add_transformed_tool("double", name="d", transform_fn=check_positive)
    with pytest.raises(TypeError, match="transform_fn is an async function"):
        server.add_transformed_tool("double", name="e", transform_fn=lambda a: a)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="default_factory is for hidden arguments"):
        ArgTransform(default_factory=list)
    with pytest.raises(TypeError, match="a required argument has no default"):
        ArgTransform(required=True, default=1)
