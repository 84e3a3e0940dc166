"""Structured tool output (issue 20 item 1): the outputSchema derived from a tool's return
annotation (the same as the official Python SDK derives), `structuredContent` checked against it
plus the same data as text, a mismatch answered -32603 and logged, older revisions given the
text only; the client reading it typed and refusing what breaks the declared output. End to end
in-process, over stdio and over HTTP, in both eras, and with the official SDK's client."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import anyio
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from pydantic import BaseModel

from mcpio import Client, InvalidOutput, McpError, Server, ToolError
from mcpio._core.structured import output_of
from mcpio.latest import public as pub
from tests.peers.structured_server import Box, Point, Weather, server
from tests.support import PEERS, serve_app

FIXTURE = [sys.executable, str(PEERS / "structured_server.py")]
MODERN, LEGACY, OLD = "2026-07-28", "2025-11-25", "2025-03-26"
DEADLINE = 30


# ---------------------------------------------------------------------- the derived schemas


class Model(BaseModel):
    a: int
    b: str = "x"


class Dict(TypedDict):
    a: int


@dataclass
class Data:
    a: int


class Tree(BaseModel):
    kids: list[Tree] = []


DATA_KINDS: list[Any] = [Model, Dict, Data, Tree, dict[str, int]]
WRAPPED_KINDS: list[Any] = [
    int, str, float, bool, None, list[int], tuple[int, str], int | None, dict[int, str]
]  # fmt: skip


def returning(annotation: Any) -> Callable[..., Any]:
    def tool() -> Any: ...

    tool.__annotations__["return"] = annotation
    return tool


@pytest.mark.parametrize("annotation", DATA_KINDS + WRAPPED_KINDS, ids=repr)
def test_the_schema_is_the_official_sdks(annotation: Any) -> None:
    ours = output_of(annotation, "tool")
    theirs = func_metadata(returning(annotation)).output_schema
    assert ours is not None and theirs is not None
    wrapped = annotation in WRAPPED_KINDS
    # the same but for FastMCP's marker on a wrapped one (its client unwraps the value then)
    assert {k: v for k, v in ours.schema.items() if k != "x-fastmcp-wrap-result"} == theirs
    assert ours.schema.get("x-fastmcp-wrap-result") is (True if wrapped else None)
    assert ours.schema["type"] == "object"
    assert ours.wrapped is wrapped


@pytest.mark.parametrize("annotation", WRAPPED_KINDS, ids=repr)
def test_values_that_are_not_objects_are_wrapped_in_result(annotation: Any) -> None:
    output = output_of(annotation, "tool")
    assert output is not None
    assert output.schema["required"] == ["result"]
    assert output.schema["title"] == "toolOutput"
    assert list(output.schema["properties"]) == ["result"]


@pytest.mark.parametrize(
    "annotation",
    [Any, dict, list, pub.CallToolResult, pub.TextContent, list[pub.ImageContent],
     pub.TextContent | pub.AudioContent, object],
    ids=repr,
)  # fmt: skip
def test_no_schema_for_content_or_what_is_not_data(annotation: Any) -> None:
    assert output_of(annotation, "tool") is None


def test_a_recursive_model_keeps_an_object_at_its_root() -> None:
    output = output_of(Tree, "tool")
    assert output is not None
    assert output.schema["type"] == "object" and "$ref" not in output.schema
    assert output.schema["$defs"]["Tree"]["properties"]["kids"]["items"] == {"$ref": "#/$defs/Tree"}
    assert output.structure(Tree(kids=[Tree()])) == {"kids": [{"kids": []}]}


def test_registration_options() -> None:
    s = Server("t")

    @s.tool()
    def on() -> int:
        return 1

    @s.tool(structured_output=False)
    def off() -> int:
        return 1

    @s.tool()
    def untyped():  # type: ignore[no-untyped-def]  # no annotation: no schema
        return 1

    assert s.tools["on"].definition.outputSchema is not None
    assert s.tools["off"].definition.outputSchema is None
    assert s.tools["untyped"].definition.outputSchema is None
    with pytest.raises(TypeError, match="no structured output"):

        @s.tool(structured_output=True)
        def forced():  # type: ignore[no-untyped-def]
            return 1


# ---------------------------------------------------------------------- end to end

EXPECTED: dict[str, tuple[Any, list[str]]] = {
    # tool: (structuredContent, the text blocks: as without structured output, one per item)
    "weather": ({"city": "Oslo", "celsius": 21.5}, ['{"city": "Oslo", "celsius": 21.5}']),
    "point": ({"x": 1, "y": 2}, ['{"x": 1, "y": 2}']),
    "box": ({"width": 3, "height": 4}, ['{"width": 3, "height": 4}']),
    "count": ({"result": 7}, ["7"]),
    "word": ({"result": "hello"}, ["hello"]),
    "numbers": ({"result": [1, 2, 3]}, ["1", "2", "3"]),
    "scores": ({"alice": 1.5}, ['{"alice": 1.5}']),
}
ARGS = {"weather": {"city": "Oslo"}}


@asynccontextmanager
async def connected(transport: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    if transport == "memory":
        async with Client(server, mode=mode, **options) as client:
            yield client
    elif transport == "stdio":
        async with Client(FIXTURE, mode=mode, **options) as client:
            yield client
    else:
        async with serve_app(server.http_app()) as served:
            async with Client(f"{served.url}/mcp", mode=mode, **options) as client:
                yield client


def texts(result: pub.CallToolResult) -> list[str]:
    assert all(isinstance(block, pub.TextContent) for block in result.content)
    return [block.text for block in result.content]  # type: ignore[union-attr]


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("mode", [MODERN, LEGACY, "2025-06-18"])
async def test_structured_results_end_to_end(transport: str, mode: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with connected(transport, mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name, (structured, shown) in EXPECTED.items():
                schema = tools[name].outputSchema
                assert schema is not None
                assert sent(schema) == sent(server.tools[name].definition.outputSchema)
                result = await client.call_tool(name, ARGS.get(name, {}))
                assert result.structuredContent == structured, name
                assert texts(result) == shown
            assert tools["plain_count"].outputSchema is None
            unstructured = await client.call_tool("plain_count", {})
            assert unstructured.structuredContent is None and texts(unstructured) == ["7"]


def sent(schema: Any) -> dict[str, Any]:
    """The schema as sent: whole, in every revision (title and $defs included)."""
    return schema.model_dump(mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_older_revisions_get_the_text_only(transport: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with connected(transport, OLD) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert all(t.outputSchema is None for t in tools.values())
            for name, (_, shown) in EXPECTED.items():
                result = await client.call_tool(name, ARGS.get(name, {}))
                assert result.structuredContent is None
                assert texts(result) == shown
            with pytest.raises(InvalidOutput):  # no structured content to read it from
                await client.call_tool("weather", {"city": "Oslo"}, result_type=Weather)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_typed_results(transport: str, mode: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with connected(transport, mode) as client:
            await client.list_tools()
            assert await client.call_tool("weather", {"city": "Oslo"}, result_type=Weather) == (
                Weather(city="Oslo", celsius=21.5)
            )
            assert await client.call_tool("point", result_type=Point) == {"x": 1, "y": 2}
            assert await client.call_tool("box", result_type=Box) == Box(3, 4)
            assert await client.call_tool("count", result_type=int) == 7
            assert await client.call_tool("word", result_type=str) == "hello"
            assert await client.call_tool("numbers", result_type=list[int]) == [1, 2, 3]
            assert await client.call_tool("scores", result_type=dict[str, float]) == {"alice": 1.5}
            with pytest.raises(InvalidOutput, match="city"):  # a type the data does not fit
                await client.call_tool("count", result_type=Weather)
            with pytest.raises(ToolError, match="invalid arguments"):  # a failed call
                await client.call_tool("weather", {}, result_type=Weather)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_a_mismatching_result_is_an_internal_error_and_a_log_line(
    transport: str, mode: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    stderr = (tmp_path / "stderr").open("w+")
    options = {"stderr": stderr} if transport == "stdio" else {}
    with anyio.fail_after(DEADLINE), caplog.at_level(logging.ERROR, "mcpio"):
        async with connected(transport, mode, **options) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool("broken", {})
            assert caught.value.code == -32603
            assert caught.value.message == (
                "tool 'broken' returned a result that does not match its outputSchema"
            )
            assert "Traceback" not in repr(caught.value.data)
            assert (await client.call_tool("count", {})).structuredContent == {"result": 7}
    logged = (
        (tmp_path / "stderr").read_text()
        if transport == "stdio"
        else "\n".join(r.getMessage() for r in caplog.records)
    )
    line = "tool broken: its result does not match its outputSchema: result: Input should be a valid integer"
    assert line in logged
    assert "Traceback" not in logged


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_the_client_refuses_a_tampered_output(transport: str, mode: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with connected(transport, mode) as client:
            # before tools/list the client knows no schema: what comes is returned as it is
            assert (await client.call_tool("silent", {})).structuredContent is None
            await client.list_tools()
            assert "silent" in client.output_schemas
            with pytest.raises(InvalidOutput, match="structured content its outputSchema promises"):
                await client.call_tool("silent", {})
            with pytest.raises(InvalidOutput, match="city"):
                await client.call_tool("forged", {}, result_type=Weather)
            forged = await client.call_tool("forged", {})  # untyped: the required member is there
            assert forged.structuredContent == {"city": 3, "celsius": 1.0}


@pytest.mark.anyio
async def test_a_tool_returning_its_own_result_is_checked_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = Server("t")

    @s.tool()
    def own() -> Weather:  # type: ignore[return-value]  # the mismatch under test
        return pub.CallToolResult(content=[], structuredContent={"city": "x"}, resultType="complete")  # type: ignore[return-value]

    @s.tool()
    def failing() -> Weather:  # type: ignore[return-value]
        return pub.CallToolResult(content=[], isError=True, resultType="complete")  # type: ignore[return-value]

    with anyio.fail_after(DEADLINE), caplog.at_level(logging.ERROR, "mcpio"):
        async with Client(s, mode=MODERN) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool("own", {})
            assert caught.value.code == -32603
            assert (await client.call_tool("failing", {})).isError  # an error result is not data
    assert any("celsius: Field required" in r.getMessage() for r in caplog.records)


@pytest.mark.anyio
@pytest.mark.peers
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_the_official_sdk_client_reads_and_validates_it(mode: str) -> None:
    params = StdioServerParameters(command=FIXTURE[0], args=FIXTURE[1:])
    with anyio.fail_after(DEADLINE):
        async with SdkClient(params, mode=mode, read_timeout_seconds=10) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            declared = server.tools["count"].definition.outputSchema
            assert tools["count"].output_schema == sent(declared)
            for name, (structured, shown) in EXPECTED.items():
                result = await client.call_tool(name, ARGS.get(name, {}))
                assert result.structured_content == structured
                assert [block.text for block in result.content] == shown  # type: ignore[union-attr]
            with pytest.raises(Exception) as caught:
                await client.call_tool("broken", {})
            assert "does not match its outputSchema" in str(caught.value)
            # the SDK client validates structuredContent itself: the forged tool fails there
            with pytest.raises(Exception, match="(?i)valid"):
                await client.call_tool("forged", {})


@pytest.mark.anyio
async def test_content_blocks_stay_blocks() -> None:
    s = Server("t")
    image = pub.ImageContent(type="image", data="AAAA", mimeType="image/png")

    @s.tool()
    def blocks() -> list[pub.ContentBlock]:  # content: no schema
        return [image]

    @s.tool()
    def anything() -> list[Any]:  # data (the SDK's rule): wrapped, its blocks still blocks
        return [image, "two"]

    assert s.tools["blocks"].definition.outputSchema is None
    async with Client(s, mode=MODERN) as client:
        plain_blocks = await client.call_tool("blocks", {})
        assert plain_blocks.content == [image] and plain_blocks.structuredContent is None
        mixed = await client.call_tool("anything", {})
        assert mixed.content == [image, pub.TextContent(type="text", text="two")]
        assert mixed.structuredContent == {
            "result": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}, "two"]
        }
