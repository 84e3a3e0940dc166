"""A FastMCP 4.1.6 server with the tools, resources, prompts and completion the conformance
suite's 2025-11-25 server scenarios call (the same fixtures as examples/everything_server.py,
written with FastMCP), for `make conformance-proxy` (tests/conformance/run.py --fastmcp): scored
directly and through `mcpio proxy`.

`python fastmcp_conformance_server.py stdio` or `... http --port N` (127.0.0.1, path /mcp).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

import mcp.types as mt
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.prompts import Message

IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

mcp = FastMCP("fastmcp-conformance-test-server", version="1.0.0")


def image() -> mt.ImageContent:
    return mt.ImageContent(type="image", data=IMAGE, mimeType="image/png")


def embedded(uri: str, mime_type: str, body: str) -> mt.EmbeddedResource:
    contents = mt.TextResourceContents(uri=uri, mimeType=mime_type, text=body)  # type: ignore[arg-type]
    return mt.EmbeddedResource(type="resource", resource=contents)


@mcp.tool
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@mcp.tool
def test_image_content() -> list[Any]:
    """Returns an image (a 1x1 PNG)."""
    return [image()]


@mcp.tool
def test_audio_content() -> list[Any]:
    """Returns audio (a minimal WAV)."""
    return [mt.AudioContent(type="audio", data=AUDIO, mimeType="audio/wav")]


@mcp.tool
def test_embedded_resource() -> list[Any]:
    """Returns an embedded text resource."""
    return [
        embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")
    ]


@mcp.tool
def test_multiple_content_types() -> list[Any]:
    """Returns text, an image and an embedded resource."""
    data = json.dumps({"test": "data", "value": 123}, separators=(",", ":"))
    return [
        mt.TextContent(type="text", text="Multiple content types test:"),
        image(),
        embedded("test://mixed-content-resource", "application/json", data),
    ]


@mcp.tool
def test_error_handling() -> str:
    """Always fails, as a tool result marked isError."""
    raise ToolError("This tool intentionally returns an error for testing")


@mcp.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages while it runs."""
    for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(step)
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@mcp.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100."""
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100, f"Completed step {done} of 100")
        await asyncio.sleep(0.05)
    meta = ctx.request_context.meta if ctx.request_context else None
    return str(getattr(meta, "progressToken", 0) or 0)


@mcp.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model to answer the prompt."""
    message = mt.SamplingMessage(role="user", content=mt.TextContent(type="text", text=prompt))
    result = await ctx.session.create_message(
        [message], max_tokens=100, related_request_id=ctx.request_id
    )
    return f"LLM response: {getattr(result.content, 'text', '')}"


async def _elicit(ctx: Context, message: str, schema: dict[str, Any]) -> mt.ElicitResult:
    return await ctx.session.elicit(message, schema, related_request_id=ctx.request_id)


@mcp.tool
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email address."""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await _elicit(ctx, message, schema)
    return f"User response: action={result.action}, content={json.dumps(result.content or {})}"


@mcp.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks for a form whose fields carry defaults (SEP-1034)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    result = await _elicit(ctx, "Please review and update the form fields with defaults", schema)
    content = json.dumps(result.content or {})
    return f"Elicitation completed: action={result.action}, content={content}"


def _titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


@mcp.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks for every kind of enum field (SEP-1330)."""
    options = ["option1", "option2", "option3"]
    single = _titled(
        ("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")
    )
    multi = _titled(
        ("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")
    )
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option", "enum": options},
            "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": single},
            "legacyEnum": {
                "type": "string", "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": options},
            },
            "titledMulti": {
                "type": "array", "description": "Select multiple options with titles", "minItems": 1,
                "maxItems": 3, "items": {"anyOf": multi},
            },
        },
        "required": [],
    }  # fmt: skip
    result = await _elicit(ctx, "Please select options from the enum fields", schema)
    content = json.dumps(result.content or {})
    return f"Elicitation completed: action={result.action}, content={content}"


@mcp.resource(
    "test://static-text", name="static-text", title="Static Text Resource",
    description="A static text resource for testing", mime_type="text/plain",
)  # fmt: skip
def static_text() -> str:
    return "This is the content of the static text resource."


@mcp.resource(
    "test://static-binary", name="static-binary",
    description="A static binary resource (image) for testing", mime_type="image/png",
)  # fmt: skip
def static_binary() -> bytes:
    import base64

    return base64.b64decode(IMAGE)


@mcp.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    return "Watched resource content"


@mcp.resource(
    "test://template/{id}/data", name="template",
    description="A resource template with parameter substitution", mime_type="application/json",
)  # fmt: skip
def template(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@mcp.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@mcp.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@mcp.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:  # noqa: N803
    """A prompt that embeds a resource"""
    resource = embedded(resourceUri, "text/plain", "Embedded resource content for testing.")
    return [Message(resource), Message("Please process the embedded resource above.")]


@mcp.prompt
def test_prompt_with_image() -> list[Message]:
    """A prompt with an image"""
    return [Message(image()), Message("Please analyze the image above.")]


@mcp.completion
def complete(ref: Any, argument: Any, context: Any = None) -> list[str]:
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run("stdio", show_banner=False)
    else:
        mcp.run("http", host="127.0.0.1", port=args.port, path="/mcp", show_banner=False)


if __name__ == "__main__":
    main()
