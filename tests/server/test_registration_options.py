"""What a FastMCP user's decorators expect (issue 51, items 1, 2 and 7): `@server.resource` with
`{variables}` registers a template, FastMCP's `{path*}`; the keywords `tags`, `timeout`,
`version`, `enabled`, resource `annotations` and `meta`; `Server.enable`/`disable` by name, tag,
kind or version with list-changed notifications, and a legacy session's own
`ctx.enable_components`; template values screened for traversal, absolute paths and NUL; the
duplicate policy. Every misuse is a `TypeError` naming the fix, at registration.

Each runs through our `Client` in memory, in both eras unless it is about one.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, McpError, Server
from tests.support import MODERN

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]


async def read_text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    return result.contents[0].text  # type: ignore[union-attr]


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


async def tool_names(client: Client) -> list[str]:
    return sorted(t.name for t in (await client.list_tools()).tools)


# --- templates through @resource, {path*} --------------------------------------------------------


def templated_server() -> Server:
    server = Server("s")

    @server.resource("stock://{sku}/level", mime_type="text/plain")
    def level(sku: str) -> str:
        return f"{sku}: 12 on the shelf"

    @server.resource("docs://{path*}")
    def doc(path: str) -> str:
        return f"doc {path}"

    @server.resource("tags://{tags*}")
    def tags(tags: list[str]) -> str:
        return "|".join(tags)

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_a_resource_uri_with_variables_registers_a_template(mode: str) -> None:
    async with Client(templated_server(), mode=mode) as client:
        assert (await client.list_resources()).resources == []
        listed = (await client.list_resource_templates()).resourceTemplates
        assert [t.uriTemplate for t in listed][0] == "stock://{sku}/level"
        assert await read_text(client, "stock://A-113/level") == "A-113: 12 on the shelf"


@pytest.mark.parametrize("mode", ERAS)
async def test_fastmcp_s_wildcard_takes_several_segments_and_a_list_stays_rfc6570(
    mode: str,
) -> None:
    async with Client(templated_server(), mode=mode) as client:
        assert await read_text(client, "docs://guide/intro%20one.md") == "doc guide/intro one.md"
        assert await read_text(client, "docs://a/b/c") == "doc a/b/c"
        assert await read_text(client, "tags://red,green") == "red|green"


def test_a_static_resource_whose_function_needs_arguments_is_refused() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"has no \{variables\} for sku: add them \(\{sku\}\)"):

        @server.resource("stock://level")
        def level(sku: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return sku


# --- template values screened ------------------------------------------------------------------


def screened_server() -> Server:
    server = Server("s")

    @server.resource_template("docs://{+path}")
    def doc(path: str) -> str:
        return f"read {path}"

    @server.resource("git://diff/{ref}", unscreened={"ref"})
    def diff(ref: str) -> str:
        return f"diff {ref}"

    return server


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("docs://../secret", "it climbs above its directory (..)"),
        ("docs://a/../../secret", "it climbs above its directory (..)"),
        ("docs:///etc/passwd", "it is an absolute path"),
        ("docs://C:%5Cwindows", "it is an absolute path"),
        ("docs://a%00b", "it holds a NUL character"),
    ],
)
async def test_a_template_value_unsafe_as_a_path_never_reaches_the_handler(
    uri: str, why: str
) -> None:
    async with Client(screened_server()) as client:
        with pytest.raises(McpError) as caught:
            await client.read_resource(uri)
    assert caught.value.code == -32602
    assert caught.value.message == f"invalid value for 'path' in {uri}: {why}"


async def test_safe_dots_pass_and_an_unscreened_parameter_takes_anything() -> None:
    async with Client(screened_server()) as client:
        assert await read_text(client, "docs://a/../b") == "read a/../b"
        assert await read_text(client, "docs://v1..v2/notes") == "read v1..v2/notes"
        assert await read_text(client, "git://diff/HEAD~3..HEAD") == "diff HEAD~3..HEAD"
        assert await read_text(client, "git://diff/..") == "diff .."


def test_unscreened_must_name_a_template_variable() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match="unscreened names no variable: ref"):

        @server.resource_template("git://{rev}", unscreened={"ref"})
        def one(rev: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return rev

    with pytest.raises(TypeError, match="unscreened names template variables only"):

        @server.resource("git://head", unscreened={"ref"})
        def two() -> str:  # pyright: ignore[reportUnusedFunction]
            return ""


# --- the duplicate policy ----------------------------------------------------------------------


def register_twice(server: Server) -> None:
    @server.tool(name="twice")
    def first() -> str:  # pyright: ignore[reportUnusedFunction]
        return "first"

    @server.tool(name="twice")
    def second() -> str:  # pyright: ignore[reportUnusedFunction]
        return "second"


async def answer_of(server: Server) -> str:
    async with Client(server) as client:
        return text_of(await client.call_tool("twice", {}))


async def test_a_duplicate_warns_and_replaces_by_default() -> None:
    server = Server("s")
    with pytest.warns(UserWarning, match="tool 'twice' is registered again"):
        register_twice(server)
    assert await answer_of(server) == "second"


async def test_a_duplicate_is_replaced_kept_or_refused_as_the_policy_says() -> None:
    replaced, ignored = Server("s", on_duplicate="replace"), Server("s", on_duplicate="ignore")
    register_twice(replaced)
    register_twice(ignored)
    assert await answer_of(replaced) == "second"
    assert await answer_of(ignored) == "first"
    with pytest.raises(TypeError, match="Server\\(on_duplicate='replace'\\)"):
        register_twice(Server("s", on_duplicate="error"))
    with pytest.raises(TypeError, match="on_duplicate is one of"):
        Server("s", on_duplicate="keep")  # type: ignore[arg-type]


def test_duplicate_resources_templates_and_prompts_follow_the_policy() -> None:
    server = Server("s", on_duplicate="error")
    server.resource("a://x")(lambda: "x")
    server.resource("a://{id}")(lambda id: id)  # pyright: ignore[reportUnknownLambdaType]
    server.prompt("p")(lambda: "p")
    with pytest.raises(TypeError, match="resource 'a://x' is registered already"):
        server.resource("a://x")(lambda: "y")
    with pytest.raises(TypeError, match="template 'a://{id}' is registered already"):
        server.resource_template("a://{id}")(lambda id: id)  # pyright: ignore
    with pytest.raises(TypeError, match="prompt 'p' is registered already"):
        server.prompt("p")(lambda: "q")


# --- tags, enable and disable ------------------------------------------------------------------


def tagged_server() -> Server:
    server = Server("s")

    @server.tool(tags={"public", "read"})
    def get_data() -> str:
        return "data"

    @server.tool(tags={"admin", "write"})
    def set_data(value: str) -> str:
        return f"set {value}"

    @server.tool(tags={"admin"}, enabled=False)
    def delete_data() -> str:
        return "deleted"

    @server.resource("data://settings", tags={"admin"})
    def config() -> str:
        return "{}"

    @server.resource("data://{key}", tags={"admin"})
    def value(key: str) -> str:
        return key

    @server.prompt(tags={"admin"})
    def audit() -> str:
        return "audit"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_disabled_tags_hide_every_kind_and_answer_as_unknown(mode: str) -> None:
    server = tagged_server()
    server.disable(tags={"admin"})
    async with Client(server, mode=mode) as client:
        assert await tool_names(client) == ["get_data"]
        assert (await client.list_resources()).resources == []
        assert (await client.list_resource_templates()).resourceTemplates == []
        assert (await client.list_prompts()).prompts == []
        with pytest.raises(McpError, match="unknown tool 'set_data'"):
            await client.call_tool("set_data", {"value": "x"})
        with pytest.raises(McpError, match="resource not found: data://7"):
            await client.read_resource("data://7")
        with pytest.raises(McpError, match="unknown prompt 'audit'"):
            await client.get_prompt("audit")


async def test_enabled_false_hides_until_enabled_by_name_and_the_last_rule_decides() -> None:
    server = tagged_server()
    async with Client(server) as client:
        assert await tool_names(client) == ["get_data", "set_data"]
        server.enable(names={"delete_data"})
        assert await tool_names(client) == ["delete_data", "get_data", "set_data"]
        server.disable(tags={"admin"})
        server.enable(names={"data://settings"})  # a resource by its URI, after the tag's rule
        assert await tool_names(client) == ["get_data"]
        assert [str(r.uri) for r in (await client.list_resources()).resources] == [
            "data://settings"
        ]


async def test_only_is_an_allowlist_and_criteria_narrow_each_other() -> None:
    server = tagged_server()
    server.enable(tags={"public"}, only=True)
    async with Client(server) as client:
        assert await tool_names(client) == ["get_data"]
        assert (await client.list_prompts()).prompts == []
        server.enable(tags={"admin"}, components={"prompt"})  # the prompt alone of the admins
        assert [p.name for p in (await client.list_prompts()).prompts] == ["audit"]
        assert await tool_names(client) == ["get_data"]
        server.disable(names={"get_data"}, tags={"admin"})  # both: matches nothing
        assert await tool_names(client) == ["get_data"]


@pytest.mark.parametrize("mode", ERAS)
async def test_enable_and_disable_announce_the_lists_they_touch(mode: str) -> None:
    server = tagged_server()
    async with Client(server, mode=mode) as client:
        async with client.listen(tools=True, prompts=True, resources=True) as changes:
            server.disable(tags={"admin"}, components={"tool"})
            server.enable(names={"audit"})
            with anyio.fail_after(5):
                heard = [(await changes.__anext__()).method for _ in range(4)]
    assert heard == [
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
    ]


def test_visibility_and_tag_misuse_is_a_type_error_naming_the_fix() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"names is a set of strings: names=\{'x'\}"):
        server.disable(names="x")
    with pytest.raises(TypeError, match="components are among"):
        server.disable(components={"tools"})
    with pytest.raises(TypeError, match="disable: no option 'tag': did you mean tags=?"):
        server.disable(tag={"admin"})  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="enable: no option 'name': did you mean names=?"):
        server.enable(name={"x"}, only=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"tags is a set of strings: tags=\{'admin'\}"):
        server.tool(tags="admin")(lambda: "")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="version is a string or an int"):
        server.prompt(version=1.5)(lambda: "")  # type: ignore[arg-type]


def test_a_misspelled_option_is_a_type_error_suggesting_the_right_one() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match="tool 'f': no option 'titel': did you mean title=?"):
        server.tool("f", titel="F")(lambda: "")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no option 'mimetype': did you mean mime_type=?"):
        server.resource("a://x", mimetype="text/plain")(lambda: "")  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match="prompt 'p': no option 'secure': it takes auth, description, enabled"
    ):
        server.prompt("p", secure=True)(lambda: "")  # type: ignore[call-arg]


# --- a legacy session's own visibility ---------------------------------------------------------


def session_server() -> Server:
    server = Server("s", mask_error_details=False)

    @server.tool(tags={"premium"})
    def premium() -> str:
        return "premium"

    @server.tool
    async def unlock(ctx: Context) -> str:
        await ctx.enable_components(tags={"premium"}, components={"tool"})
        return "unlocked"

    @server.tool
    async def relock(ctx: Context) -> str:
        await ctx.reset_visibility()
        return "reset"

    server.disable(tags={"premium"})
    return server


async def test_a_legacy_session_enables_components_for_itself_alone() -> None:
    server = session_server()
    async with (
        Client(server, mode="2025-11-25") as mine,
        Client(server, mode="2025-11-25") as other,
    ):
        async with mine.listen(tools=True) as changes:
            assert text_of(await mine.call_tool("unlock", {})) == "unlocked"
            with anyio.fail_after(5):
                heard = await changes.__anext__()
        assert heard.method == "notifications/tools/list_changed"
        assert "premium" in await tool_names(mine)
        assert text_of(await mine.call_tool("premium", {})) == "premium"
        assert "premium" not in await tool_names(other)
        await mine.call_tool("relock", {})
        assert "premium" not in await tool_names(mine)


async def test_2026_07_28_has_no_session_to_enable_for() -> None:
    async with Client(session_server(), mode=MODERN) as client:
        result = await client.call_tool("unlock", {})
    assert result.isError
    assert "2026-07-28 has no sessions to enable components for: use server." in text_of(result)


# --- timeout -----------------------------------------------------------------------------------


def slow_server() -> Server:
    server = Server("s")

    @server.tool(timeout=0.2)
    async def slow_async() -> str:
        await anyio.sleep(10)
        return "late"

    @server.tool(timeout=0.2)
    def slow_sync() -> str:
        time.sleep(1)
        return "late"

    @server.tool(timeout=5)
    async def quick() -> str:
        return "on time"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_past_its_timeout_is_a_clean_failed_result(mode: str) -> None:
    async with Client(slow_server(), mode=mode) as client:
        started = time.monotonic()
        late = await client.call_tool("slow_async", {})
        late_sync = await client.call_tool("slow_sync", {})
        took = time.monotonic() - started
        assert text_of(await client.call_tool("quick", {})) == "on time"
    assert late.isError and text_of(late) == "Tool 'slow_async' timed out after 0.2s"
    assert late_sync.isError and text_of(late_sync) == "Tool 'slow_sync' timed out after 0.2s"
    assert took < 0.9  # the sync tool's thread was not waited for


def test_a_timeout_that_cannot_work_is_refused() -> None:
    server = Server("s")
    with pytest.raises(TypeError, match=r"timeout is seconds above 0 \(timeout=2.0\)"):
        server.tool(timeout=0)(lambda: "")
    with pytest.raises(TypeError, match="drop run_in_thread=False, or make it async"):
        server.tool(timeout=1, run_in_thread=False)(lambda: "")


# --- annotations, meta, versions ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_resource_and_template_annotations_and_meta_are_listed(mode: str) -> None:
    server = Server("s")
    notes = {"audience": ["user"], "priority": 0.5}
    server.resource("a://x", annotations=notes, meta={"k": 1})(lambda: "x")
    server.resource("a://{id}", annotations=notes, meta={"k": 2})(lambda id: id)  # pyright: ignore
    server.prompt("p", meta={"k": 3})(lambda: "p")
    async with Client(server, mode=mode) as client:
        resource = (await client.list_resources()).resources[0]
        template = (await client.list_resource_templates()).resourceTemplates[0]
        prompt = (await client.list_prompts()).prompts[0]
    assert resource.annotations is not None and resource.annotations.priority == 0.5
    assert template.annotations is not None and template.annotations.audience == ["user"]
    metas = [item.meta.model_dump() for item in (resource, template, prompt) if item.meta]
    assert metas == [{"k": 1}, {"k": 2}, {"k": 3}]


def versioned_server() -> Server:
    server = Server("s")

    @server.tool(name="calc", version="1.9")
    def calc_old(x: int) -> int:  # pyright: ignore[reportUnusedFunction]
        return x

    @server.tool(name="calc", version="1.10")
    def calc_new(x: int) -> int:  # pyright: ignore[reportUnusedFunction]
        return x * 10

    server.resource("config://app", version=1)(lambda: "one")
    server.resource("config://app", version=2)(lambda: "two")
    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_the_highest_visible_version_is_served(mode: str) -> None:
    server = versioned_server()
    async with Client(server, mode=mode) as client:
        assert text_of(await client.call_tool("calc", {"x": 2})) == "20"  # 1.10 above 1.9
        server.disable(version="1.10")
        assert text_of(await client.call_tool("calc", {"x": 2})) == "2"
        assert await tool_names(client) == ["calc"]


@pytest.mark.parametrize("mode", ERAS)
async def test_versions_are_listed_and_one_is_asked_for_as_fastmcp_s_client_does(
    mode: str,
) -> None:
    async with Client(versioned_server(), mode=mode) as client:
        listed = (await client.list_tools()).tools[0]
        asked = {"name": "calc", "arguments": {"x": 2}, "_meta": {"fastmcp": {"version": "1.9"}}}
        old = await client.request("tools/call", asked)
        asked["_meta"] = {"fastmcp": {"version": "3"}}
        with pytest.raises(McpError, match="unknown tool 'calc'"):
            await client.request("tools/call", asked)
    assert listed.meta is not None
    assert listed.meta.model_dump()["fastmcp"] == {"version": "1.10", "versions": ["1.10", "1.9"]}
    assert text_of(old) == "2"


async def test_a_resource_version_is_read_as_asked() -> None:
    async with Client(versioned_server()) as client:
        newest = await read_text(client, "config://app")
        asked = {"uri": "config://app", "_meta": {"fastmcp": {"version": "1"}}}
        first = await client.request("resources/read", asked)
    assert (newest, first.contents[0].text) == ("two", "one")


def test_versioned_and_unversioned_cannot_share_a_name() -> None:
    server = versioned_server()
    with pytest.raises(TypeError, match="give each a version=, or none"):
        server.tool(name="calc")(lambda: "")
