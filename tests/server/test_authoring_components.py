"""Writing a server, second part: resource templates matched as RFC 6570 (level 4) with their
values coerced to the handler's annotations, components removed with their list-changed
notification, parameter descriptions from docstrings, typed prompt arguments, paged listings,
icons and `websiteUrl`, per-component cache hints.

Each runs through our `Client` in memory, in both eras unless it is about one.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from mcpio import CacheHint, Client, McpError, Server
from mcpio._core.docstrings import parse
from mcpio._core.uritemplate import UriTemplate
from tests.support import MODERN

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]


# --- resource templates ----------------------------------------------------------------------


def template_server() -> Server:
    server = Server("s")

    @server.resource_template("item://{id}")
    def item(id: int) -> str:
        return f"{type(id).__name__} {id!r}"

    @server.resource_template("file:///{+path}")
    def file(path: str) -> str:
        return path

    @server.resource_template("tags://{tags*}")
    def tags(tags: list[str]) -> str:
        return "|".join(tags)

    @server.resource_template("search://items{?q,limit}")
    def search(q: str = "", limit: int = 10) -> str:
        return f"{q!r} {limit!r}"

    @server.resource_template("tree://root{/segments*}")
    def tree(segments: list[int]) -> str:
        return repr(segments)

    return server


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


async def read_text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    return result.contents[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ERAS)
async def test_templates_match_every_rfc6570_operator_and_coerce_values(mode: str) -> None:
    async with Client(template_server(), mode=mode) as client:
        assert await read_text(client, "item://7") == "int 7"
        assert await read_text(client, "file:///etc/hosts.d/a%20b") == "etc/hosts.d/a b"
        assert await read_text(client, "tags://red,green") == "red|green"
        assert await read_text(client, "search://items?limit=5&q=x%26y") == "'x&y' 5"
        assert await read_text(client, "search://items?q=hi") == "'hi' 10"
        assert await read_text(client, "search://items") == "'' 10"
        assert await read_text(client, "tree://root/1/22/333") == "[1, 22, 333]"
        with pytest.raises(McpError) as caught:
            await client.read_resource("search://items?page=2")  # a name it does not give
        assert caught.value.message == "resource not found: search://items?page=2"


@pytest.mark.parametrize("mode", ERAS)
async def test_a_value_that_does_not_fit_its_annotation_is_invalid_params_naming_it(
    mode: str,
) -> None:
    async with Client(template_server(), mode=mode) as client:
        with pytest.raises(McpError) as caught:
            await client.read_resource("item://seven")
        assert caught.value.code == -32602
        assert caught.value.message.startswith("invalid value for 'id' in item://seven:")
        assert caught.value.data == {"uri": "item://seven", "parameter": "id"}
        with pytest.raises(McpError) as caught:
            await client.read_resource("tree://root/1/x")
        assert caught.value.data == {"uri": "tree://root/1/x", "parameter": "segments"}


async def test_a_misfit_falls_through_to_a_template_it_fits() -> None:
    server = Server("s")

    @server.resource_template("user://{id}")
    def by_id(id: int) -> str:
        return f"id {id}"

    @server.resource_template("user://{name}")
    def by_name(name: str) -> str:
        return f"name {name}"

    async with Client(server, mode=MODERN) as client:
        assert await read_text(client, "user://7") == "id 7"
        assert await read_text(client, "user://ann") == "name ann"


def test_template_variables_and_parameters_must_agree() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match="no parameter for other"):

        @server.resource_template("x://{id}/{other}")
        def one(id: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return id

    with pytest.raises(TypeError, match="no variable for size"):

        @server.resource_template("x://{id}")
        def two(id: str, size: int) -> str:  # pyright: ignore[reportUnusedFunction]
            return id

    with pytest.raises(ValueError, match="bad variable"):
        UriTemplate("x://{a-b}")


@pytest.mark.parametrize(
    ("template", "uri", "values"),
    [
        ("x://{a,b}", "x://1,2", {"a": "1", "b": "2"}),
        ("x://m{;a,b}", "x://m;a=1;b", {"a": "1", "b": ""}),  # empty: no "="
        ("x://f{.ext*}", "x://f.tar.gz", {"ext": ["tar", "gz"]}),
        ("x://{+path}{?q}", "x://a/b?q=1", {"path": "a/b", "q": "1"}),
        ("x://{+path}{#frag}", "x://a/b#top", {"path": "a/b", "frag": "top"}),
        ("x://{id:3}", "x://abc", {"id": "abc"}),
        ("x://{id:3}", "x://abcd", None),
        ("x://s{?tags*}", "x://s?tags=a&tags=b", {"tags": ["a", "b"]}),
        ("x://s{?a}{&b}", "x://s?b=2&a=1", {"a": "1", "b": "2"}),
        ("x://s{?a}", "x://s?a=1&a=2", None),  # not exploded: once
        ("x://{id}", "x://", None),  # required
        ("x://{id}", "x://a/b", None),  # a simple value takes no "/"
        ("x://{id}", "x://a%2Fb", {"id": "a/b"}),
    ],
)
def test_uri_template_matching(template: str, uri: str, values: Any) -> None:
    assert UriTemplate(template).match(uri) == values


def test_optional_and_list_variables() -> None:
    assert UriTemplate("x://a{/opt}", optional={"opt"}).match("x://a") == {}
    assert UriTemplate("x://a{/opt}").match("x://a") is None
    assert UriTemplate("x://{ids}", lists={"ids"}).match("x://1,2") == {"ids": ["1", "2"]}


# --- removing components ---------------------------------------------------------------------


def removable_server() -> Server:
    server = Server("s")

    @server.tool
    def keep() -> str:
        return "kept"

    @server.tool
    def drop_prompt() -> bool:  # a sync tool: removes from a worker thread
        return server.remove_prompt("hello")

    @server.tool
    def temporary() -> str:
        return "soon gone"

    @server.resource("doc://a")
    def a() -> str:
        return "a"

    @server.resource_template("item://{id}")
    def item(id: str) -> str:
        return id

    @server.prompt
    def hello() -> str:
        return "hi"

    return server


@dataclass
class Removals:
    """`removable_server` serving our client, after a tool, a resource, a template and (from a
    sync tool) a prompt were removed while it listened: what each removal answered, and the
    list changes it heard."""

    server: Server
    client: Client
    answers: dict[str, Any]
    heard: list[str]


@asynccontextmanager
async def removals(mode: str) -> AsyncIterator[Removals]:
    server = removable_server()
    async with Client(server, mode=mode) as client:
        async with client.listen(tools=True, prompts=True, resources=True) as changes:
            answers = {
                "tool": server.remove_tool("temporary"),
                "resource": server.remove_resource("doc://a"),
                "template": server.remove_resource_template("item://{id}"),
                "prompt": text_of(await client.call_tool("drop_prompt", {})),
            }
            with anyio.fail_after(5):
                heard = [(await changes.__anext__()).method for _ in range(4)]
        yield Removals(server, client, answers, heard)


@pytest.mark.parametrize("mode", ERAS)
async def test_removing_a_component_answers_true(mode: str) -> None:
    async with removals(mode) as done:
        assert done.answers["tool"] is True
        assert done.answers["resource"] is True
        assert done.answers["template"] is True
        assert done.answers["prompt"] == "true"


@pytest.mark.parametrize("mode", ERAS)
async def test_each_removal_announces_its_list_change(mode: str) -> None:
    async with removals(mode) as done:
        assert sorted(done.heard) == [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
        ]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_removed_component_is_unlisted(mode: str) -> None:
    async with removals(mode) as done:
        client = done.client
        assert [t.name for t in (await client.list_tools()).tools] == ["keep", "drop_prompt"]
        assert (await client.list_resources()).resources == []
        assert (await client.list_resource_templates()).resourceTemplates == []


@pytest.mark.parametrize("mode", ERAS)
async def test_a_removed_component_is_unknown(mode: str) -> None:
    async with removals(mode) as done:
        with pytest.raises(McpError, match="unknown tool 'temporary'"):
            await done.client.call_tool("temporary", {})
        with pytest.raises(McpError, match="resource not found: item://7"):
            await done.client.read_resource("item://7")
        with pytest.raises(McpError, match="unknown prompt 'hello'"):
            await done.client.get_prompt("hello")


@pytest.mark.parametrize("mode", ERAS)
async def test_removing_what_is_not_there_answers_false(mode: str) -> None:
    async with removals(mode) as done:
        pass
    assert done.server.remove_tool("temporary") is False  # gone already: nothing to announce
    assert done.server.remove_prompt("nope") is False


def test_removing_before_the_server_runs_announces_nothing() -> None:
    server = removable_server()
    assert server.remove_tool("temporary") and server.remove_resource("doc://a")
    assert "temporary" not in server.tools


async def test_notify_false_leaves_the_announcement_to_the_caller() -> None:
    server = removable_server()
    async with Client(server, mode=MODERN) as client:
        async with client.listen(tools=True, prompts=True) as changes:
            server.remove_tool("temporary", notify=False)
            await anyio.sleep(0.05)  # time for an announcement to go out (there is none)
            await server.notify_prompts_changed()  # the fence: a tool change would come first
            with anyio.fail_after(5):
                heard = await changes.__anext__()
        assert heard.method == "notifications/prompts/list_changed"


# --- descriptions from docstrings; typed prompt arguments --------------------------------------


def documented_server() -> Server:
    server = Server("s")

    @server.tool
    def google(a: int, b: int = 1) -> int:
        """Adds two numbers.

        Args:
            a (int): The first
                number.
            b: The second.

        Returns:
            The sum.
        """
        return a + b

    @server.tool
    def numpy(a: int, b: int) -> int:
        """Multiplies.

        Parameters
        ----------
        a : int
            The first factor.
        b
            The second factor.
        """
        return a * b

    @server.tool
    def sphinx(a: int) -> int:
        """Negates.

        :param int a: The number.
        :type a: int
        """
        return -a

    @server.prompt
    def plan(topic: str, days: int, strict: bool = False, tags: list[str] | None = None) -> str:
        """Plans a trip.

        Args:
            topic: What the trip is about.
            days: How long it lasts.
        """
        return f"{topic!r} {days!r} {strict!r} {tags!r}"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_docstring_parameter_sections_describe_tool_parameters(mode: str) -> None:
    async with Client(documented_server(), mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    described = {
        name: {p: s.get("description") for p, s in tool.inputSchema.properties.items()}  # type: ignore[union-attr]
        for name, tool in tools.items()
    }
    assert described == {
        "google": {"a": "The first number.", "b": "The second."},
        "numpy": {"a": "The first factor.", "b": "The second factor."},
        "sphinx": {"a": "The number."},
    }
    assert tools["google"].description == "Adds two numbers.\n\nReturns:\n    The sum."
    assert (tools["numpy"].description, tools["sphinx"].description) == ("Multiplies.", "Negates.")


@pytest.mark.parametrize("mode", ERAS)
async def test_prompt_arguments_are_described_and_typed(mode: str) -> None:
    async with Client(documented_server(), mode=mode) as client:
        (prompt,) = (await client.list_prompts()).prompts
        assert prompt.description == "Plans a trip."
        assert [(a.name, a.description, a.required) for a in prompt.arguments or []] == [
            ("topic", "What the trip is about.", True),
            ("days", "How long it lasts. (an integer)", True),
            ("strict", "(true or false)", False),
            ("tags", "(a JSON array)", False),
        ]
        got = await client.get_prompt(
            "plan", {"topic": "sea", "days": "3", "strict": "true", "tags": '["a", "b"]'}
        )
        assert got.messages[0].content.text == "'sea' 3 True ['a', 'b']"  # type: ignore[union-attr]
        with pytest.raises(McpError) as caught:
            await client.get_prompt("plan", {"topic": "sea", "days": "three"})
        assert caught.value.code == -32602
        assert caught.value.message.startswith("invalid value for argument 'days' of prompt 'plan'")
        assert caught.value.data == {"name": "plan", "argument": "days"}


@pytest.mark.parametrize(
    ("doc", "description", "params"),
    [
        (None, None, {}),
        ("Just text.", "Just text.", {}),
        ("Does.\n\nArgs:\n    x: An x.\n    *args: More.\n\nRaises:\n    KeyError: never.",
         "Does.\n\nRaises:\n    KeyError: never.", {"x": "An x.", "args": "More."}),
        ("Does.\n\nParameters\n----------\nx : int\n    An x.\n\nReturns\n-------\nint",
         "Does.\n\nReturns\n-------\nint", {"x": "An x."}),
        ("Does.\n\n:param x: An x,\n    over two lines.\n:returns: y", "Does.\n\n:returns: y",
         {"x": "An x, over two lines."}),
    ],
)  # fmt: skip
def test_docstring_styles(doc: str | None, description: str | None, params: Any) -> None:
    assert parse(doc) == (description, params)


# --- pagination ------------------------------------------------------------------------------

KEY = b"k" * 32


def paged_server(key: bytes = KEY, size: int | None = 2) -> Server:
    server = Server("s", state_key=key, list_page_size=size)
    for n in range(5):
        server.tool(f"t{n}")(lambda: "x")
    for n in range(3):
        server.resource(f"doc://{n}", name=f"r{n}")(lambda: "x")
        server.resource_template(f"item{n}://{{id}}", name=f"i{n}")(lambda id: id)
        server.prompt(f"p{n}")(lambda: "x")
    return server


async def every_page(client: Client, method: str, member: str) -> list[list[str]]:
    """The server's pages one by one (`client.list_tools()` and co. would follow them all)."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        listed = await client.request(method, {} if cursor is None else {"cursor": cursor})
        pages.append([x.name for x in getattr(listed, member)])
        cursor = listed.nextCursor
        if cursor is None:
            return pages


@pytest.mark.parametrize("mode", ERAS)
async def test_lists_come_in_pages_of_list_page_size(mode: str) -> None:
    async with Client(paged_server(), mode=mode) as client:
        assert await every_page(client, "tools/list", "tools") == [
            ["t0", "t1"],
            ["t2", "t3"],
            ["t4"],
        ]
        assert await every_page(client, "resources/list", "resources") == [["r0", "r1"], ["r2"]]
        templates = await every_page(client, "resources/templates/list", "resourceTemplates")
        assert templates == [["i0", "i1"], ["i2"]]
        assert await every_page(client, "prompts/list", "prompts") == [["p0", "p1"], ["p2"]]


@pytest.mark.parametrize("mode", ERAS)
async def test_another_instance_with_the_state_key_continues_a_listing(mode: str) -> None:
    async with Client(paged_server(), mode=mode) as one:
        cursor = (await one.request("tools/list")).nextCursor
    async with Client(paged_server(), mode=mode) as other:  # the same key: continues
        assert [t.name for t in (await other.list_tools(cursor)).tools] == ["t2", "t3"]
    async with Client(paged_server(key=b"x" * 32), mode=mode) as stranger:
        with pytest.raises(McpError) as caught:
            await stranger.list_tools(cursor)
    assert caught.value.code == -32602
    assert caught.value.message == (
        "invalid cursor: it was not issued by this server or was altered"
    )


@pytest.mark.parametrize("mode", ERAS)
async def test_a_forged_foreign_stale_or_expired_cursor_is_invalid_params(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = paged_server()
    async with Client(server, mode=mode) as client:
        cursor = (await client.request("tools/list")).nextCursor
        assert cursor is not None

        async def refused(method: str, cursor: str) -> str:
            with pytest.raises(McpError) as caught:
                await getattr(client, method)(cursor)
            assert caught.value.code == -32602 and caught.value.data == {"field": "cursor"}
            return caught.value.message

        body, _, mac = cursor.rpartition(".")
        forged = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + mac
        assert "altered" in await refused("list_tools", forged)
        assert "altered" in await refused("list_tools", "nonsense")
        assert "another list" in await refused("list_prompts", cursor)
        now = time.time()
        monkeypatch.setattr("mcpio._core.paging.time.time", lambda: now + server.sealer.ttl + 1)
        assert "expired" in await refused("list_tools", cursor)
        monkeypatch.undo()
        server.remove_tool("t4")
        assert "the list changed" in await refused("list_tools", cursor)


async def test_without_a_page_size_a_cursor_is_refused() -> None:
    async with Client(paged_server(size=None), mode=MODERN) as client:
        assert len((await client.list_tools()).tools) == 5
        with pytest.raises(McpError) as caught:
            await client.list_tools("anything")
    assert caught.value.message == "invalid cursor: this server lists everything at once"
    with pytest.raises(ValueError):
        Server("s", list_page_size=0)


# --- icons, websiteUrl, cache hints ----------------------------------------------------------

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}


def iconic_server() -> Server:
    server = Server(
        "s",
        icons=[ICON],
        website_url="https://example.com",
        cache_ttl_ms=1000,
        method_cache_hints={"tools/list": CacheHint(60_000, "public")},
    )

    @server.tool(icons=[ICON])
    def t() -> str:
        return "t"

    @server.resource("doc://a", icons=[ICON], cache=CacheHint(5_000, "public"))
    def a() -> str:
        return "a"

    @server.resource("doc://b")
    def b() -> str:
        return "b"

    @server.resource_template("item://{id}", icons=[ICON], cache=CacheHint(7))
    def item(id: str) -> str:
        return id

    @server.prompt(icons=[ICON])
    def p() -> str:
        return "p"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_icons_and_website_url_on_the_server_and_each_component(mode: str) -> None:
    async with Client(iconic_server(), mode=mode) as client:
        if mode != MODERN:  # modern: the server's info comes with each result
            info = client.server_info
            assert info is not None and info.websiteUrl == "https://example.com"
            assert [i.src for i in info.icons or []] == [ICON["src"]]
        listed = [
            (await client.list_tools()).tools[0],
            (await client.list_resources()).resources[0],
            (await client.list_resource_templates()).resourceTemplates[0],
            (await client.list_prompts()).prompts[0],
        ]
        for component in listed:
            assert [i.model_dump(exclude_none=True) for i in component.icons or []] == [ICON]


async def test_the_server_s_icons_in_each_modern_result() -> None:
    server = iconic_server()
    assert server.result_meta.io_modelcontextprotocol_serverInfo.websiteUrl == "https://example.com"
    async with Client(server, mode=MODERN) as client:
        meta = (await client.list_tools()).meta
    assert meta is not None and meta.io_modelcontextprotocol_serverInfo is not None
    assert [i.src for i in meta.io_modelcontextprotocol_serverInfo.icons or []] == [ICON["src"]]


async def test_an_older_revision_without_icons_lists_the_components_without_them() -> None:
    async with Client(iconic_server(), mode="2025-06-18") as client:
        assert (await client.list_tools()).tools[0].icons is None
        assert (await client.list_prompts()).prompts[0].name == "p"


async def test_cache_hints_per_component_and_per_method() -> None:
    async with Client(iconic_server(), mode=MODERN) as client:
        tools = await client.list_tools()
        assert (tools.ttlMs, tools.cacheScope) == (60_000, "public")  # the method's
        prompts = await client.list_prompts()
        assert (prompts.ttlMs, prompts.cacheScope) == (1000, "private")  # the server's
        a = await client.read_resource("doc://a")
        assert (a.ttlMs, a.cacheScope) == (5_000, "public")  # the resource's
        b = await client.read_resource("doc://b")
        assert (b.ttlMs, b.cacheScope) == (1000, "private")
        item = await client.read_resource("item://1")
        assert (item.ttlMs, item.cacheScope) == (7, "private")  # the template's
