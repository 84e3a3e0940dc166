"""Writing a server, second part: resource templates matched as RFC 6570 (level 4) with their
values coerced to the handler's annotations, components removed with their list-changed
notification, parameter descriptions from docstrings, typed prompt arguments, paged listings,
icons and `websiteUrl`, per-component cache hints.

Each runs through our `Client` in memory, in both eras unless it is about one.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpio import Client, McpError, Server
from mcpio.uritemplate import UriTemplate
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


@pytest.mark.parametrize("mode", ERAS)
async def test_removing_a_component_unlists_it_and_announces_the_change(mode: str) -> None:
    server = removable_server()
    async with Client(server, mode=mode) as client:
        async with client.listen(tools=True, prompts=True, resources=True) as changes:
            assert server.remove_tool("temporary") is True
            assert server.remove_resource("doc://a") is True
            assert server.remove_resource_template("item://{id}") is True
            assert text_of(await client.call_tool("drop_prompt", {})) == "true"
            with anyio.fail_after(5):
                heard = [(await changes.__anext__()).method for _ in range(4)]
        assert sorted(heard) == [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
        ]
        assert [t.name for t in (await client.list_tools()).tools] == ["keep", "drop_prompt"]
        assert (await client.list_resources()).resources == []
        assert (await client.list_resource_templates()).resourceTemplates == []
        with pytest.raises(McpError, match="unknown tool 'temporary'"):
            await client.call_tool("temporary", {})
        with pytest.raises(McpError, match="resource not found: item://7"):
            await client.read_resource("item://7")
        with pytest.raises(McpError, match="unknown prompt 'hello'"):
            await client.get_prompt("hello")
    assert server.remove_tool("temporary") is False  # gone already: nothing to announce
    assert server.remove_prompt("nope") is False


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
