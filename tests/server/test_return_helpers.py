"""The return helpers FastMCP code uses (issue 51, item 5): `ToolResult`, prompt `Message`, a
hand-built result without `resultType`, `text/plain` on text resources, a derived tool title."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from mcpio import Client, Image, Message, Server, ToolResult
from mcpio._core.jsonrpc import plain
from mcpio.latest import public as pub
from tests.support import MODERN

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]
PNG = b"\x89PNG\r\n\x1a\n"


def helpers_server() -> Server:
    server = Server("helpers")

    @server.tool
    def whole() -> ToolResult:
        return ToolResult("2 found", structured_content={"count": 2}, meta={"source": "db"})

    @server.tool
    def structured_only() -> ToolResult:
        return ToolResult(structured_content={"count": 2})

    @server.tool
    def failed() -> ToolResult:
        return ToolResult(["not found", Image(data=PNG)], is_error=True)

    @server.tool
    def by_hand() -> pub.CallToolResult:  # no resultType: "complete"
        return pub.CallToolResult(content=[pub.TextContent(type="text", text="built")])

    @server.prompt
    def chat(topic: str) -> list[Message]:
        return [
            Message(f"Summarise what is known of {topic}"),
            Message("Gladly.", role="assistant"),
            Message({"topic": topic}),
        ]

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_result_is_the_whole_result(mode: str) -> None:
    async with Client(helpers_server(), mode=mode) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["whole"].outputSchema is None  # a whole result: no schema derived
        whole = await client.call_tool("whole", {})
        assert [plain(b) for b in whole.content] == [{"type": "text", "text": "2 found"}]
        assert (whole.structuredContent, whole.isError) == ({"count": 2}, None)
        assert whole.meta is not None and plain(whole.meta)["source"] == "db"
        only = await client.call_tool("structured_only", {})
        assert [plain(b) for b in only.content] == [{"type": "text", "text": '{"count": 2}'}]
        failed = await client.call_tool("failed", {})
        assert failed.isError is True
        assert [block.type for block in failed.content] == ["text", "image"]


def test_a_tool_result_needs_content_and_an_object_for_structured_content() -> None:
    with pytest.raises(ValueError, match="content or structured_content"):
        ToolResult()
    with pytest.raises(ValueError, match="must be an object"):
        ToolResult("x", structured_content=[1, 2])


@pytest.mark.parametrize("mode", ERAS)
async def test_prompt_messages_have_a_role_and_any_content(mode: str) -> None:
    async with Client(helpers_server(), mode=mode) as client:
        got = await client.get_prompt("chat", {"topic": "owls"})
    assert [(m.role, plain(m.content)) for m in got.messages] == [
        ("user", {"type": "text", "text": "Summarise what is known of owls"}),
        ("assistant", {"type": "text", "text": "Gladly."}),
        ("user", {"type": "text", "text": '{"topic": "owls"}'}),
    ]


async def test_a_hand_built_result_is_complete_unless_it_says_otherwise() -> None:
    assert pub.CallToolResult(content=[]).resultType == "complete"
    assert pub.GetPromptResult(messages=[]).resultType == "complete"
    asked = pub.InputRequiredResult(requestState="s", resultType="input_required")
    assert asked.resultType == "input_required"
    with pytest.raises(pydantic.ValidationError):  # decoding still requires it
        pub.CallToolResult.model_validate({"content": []})
    async with Client(helpers_server(), mode=MODERN) as client:
        built = await client.call_tool("by_hand", {})
    assert ([plain(b) for b in built.content], built.resultType) == (
        [{"type": "text", "text": "built"}],
        "complete",
    )


def resources_server() -> Server:
    server = Server("resources")

    @server.resource("docs://readme")
    def readme() -> str:
        return "# Read me"

    @server.resource("docs://untyped")
    def untyped():  # type: ignore[no-untyped-def]  # noqa: ANN202
        return "plain words"

    @server.resource("config://app")
    def config() -> dict[str, Any]:
        return {"theme": "dark"}

    @server.resource("docs://page", mime_type="text/markdown")
    def page() -> str:
        return "# Page"

    @server.resource("data://raw")
    def raw() -> bytes:
        return b"\x00\x01"

    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_text_resources_are_text_plain_json_ones_application_json(mode: str) -> None:
    async with Client(resources_server(), mode=mode) as client:
        listed = {r.uri: r.mimeType for r in (await client.list_resources()).resources}
        read = {
            uri: (await client.read_resource(uri)).contents[0].mimeType
            for uri in (
                "docs://readme",
                "docs://untyped",
                "config://app",
                "docs://page",
                "data://raw",
            )
        }
    assert listed == {
        "docs://readme": "text/plain",  # from the return annotation
        "docs://untyped": None,
        "config://app": None,
        "docs://page": "text/markdown",
        "data://raw": None,
    }
    assert read == {
        "docs://readme": "text/plain",
        "docs://untyped": "text/plain",
        "config://app": "application/json",
        "docs://page": "text/markdown",
        "data://raw": None,
    }


async def test_a_tool_without_a_title_gets_one_from_its_name() -> None:
    server = Server("titles")

    @server.tool
    def list_open_orders() -> str:
        return ""

    @server.tool(name="send-mail")
    def send() -> str:
        return ""

    @server.tool(title="Look it up")
    def lookup() -> str:
        return ""

    @server.tool(annotations={"title": "Annotated", "readOnlyHint": True})
    def annotated() -> str:
        return ""

    async with Client(server, mode=MODERN) as client:
        titles = {t.name: t.title for t in (await client.list_tools()).tools}
    assert titles == {
        "list_open_orders": "List Open Orders",
        "send-mail": "Send Mail",
        "lookup": "Look it up",
        "annotated": "Annotated",
    }


async def test_a_resource_s_docstring_is_its_description_as_a_tool_s_is() -> None:
    """FastMCP's Resources page: "Resource Description: taken from the function's docstring"
    (found porting it, issue 51 item 10); `description=` still wins."""
    server = Server("described")

    @server.resource("shop://opening-hours")
    def opening_hours() -> str:
        """When the shop is open, day by day."""
        return "hi"

    @server.resource("stock://{sku}/level", description="Given.")
    def stock_level(sku: str) -> str:
        """Ignored: description= is given."""
        return sku

    async with Client(server) as client:
        listed = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resourceTemplates
    assert listed[0].description == "When the shop is open, day by day."
    assert templates[0].description == "Given."


async def test_a_middleware_may_answer_a_tool_call_with_a_tool_result() -> None:
    """A middleware answering without the tool returns `ToolResult(...)` as FastMCP's do (found
    porting the Middleware page, issue 51 item 10): the client gets that result."""
    from mcpio import Call, Middleware
    from mcpio.middleware import CallNext

    class Maintenance(Middleware):
        async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
            if call.name == "deploy":
                return ToolResult("down for maintenance", is_error=True)
            return await call_next(call)

    server = Server("answering", middleware=[Maintenance()])

    @server.tool
    def deploy() -> str:
        return "deployed"

    async with Client(server) as client:
        answered = await client.call_tool("deploy", {})
    assert answered.isError is True
    assert [plain(block) for block in answered.content] == [
        {"type": "text", "text": "down for maintenance"}
    ]


async def test_structured_output_false_sends_text_alone() -> None:
    """`structured_output=False`: "no output schema nor structured content" (ToolOptions), a
    mapping's answer included (found writing the Structured output page, issue 51 item 9)."""
    server = Server("text-only")

    @server.tool(structured_output=False)
    def note() -> dict[str, Any]:
        return {"text": "plain"}

    async with Client(server) as client:
        listed = (await client.list_tools()).tools[0]
        answered = await client.call_tool("note", {})
    assert listed.outputSchema is None
    assert answered.structuredContent is None
    assert [plain(block) for block in answered.content] == [
        {"type": "text", "text": '{"text": "plain"}'}
    ]
