"""What a client sees when a handler or a middleware raises (issue 51, item 3): FastMCP's default,
the exception's message unless the server asks for masking; `ToolError`'s and `ResourceError`'s
message always; a resource's, a prompt's and a middleware's exception treated like a tool's; one
log line per failure, naming the exception."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_wire_runtime.errors import ProtocolError
from mcpio import Client, McpError, ResourceError, Server, ToolError
from mcpio.middleware import Call, CallNext, ErrorMappingMiddleware, Middleware
from tests.support import MODERN, text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", MODERN]


class Buggy(Middleware):
    """Raises on the tool `mw` and the resource `mw://read`."""

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.name in ("mw", "mw://read"):
            raise RuntimeError("a middleware's bug")
        return await call_next(call)


def raising_server(**options: Any) -> Server:
    server = Server("errors", middleware=[Buggy()], **options)

    @server.tool
    def mw() -> str:
        return "not reached"

    @server.resource("data://broken")
    def broken() -> str:
        raise RuntimeError("disk full at /var/data")

    @server.resource("mw://read")
    def unread() -> str:
        return "not reached"

    @server.resource_template("data://item/{id}")
    def item(id: str) -> str:
        raise ResourceError(f"no item {id}")

    @server.resource("data://tool-error")
    def tool_error() -> str:
        raise ToolError("said as it is")

    @server.prompt
    def draft() -> str:
        raise ValueError("template missing")

    return server


async def failure(client: Client, op: str, target: str) -> tuple[int, str]:
    with pytest.raises(McpError) as caught:
        if op == "read":
            await client.read_resource(target)
        else:
            await client.get_prompt(target, {})
    return caught.value.code, caught.value.message


# What each failure is reported as, and the exception's message the unmasked report adds.
REPORTS = {
    ("read", "data://broken"): ("Error reading resource 'data://broken'", "disk full at /var/data"),
    ("prompt", "draft"): ("Error rendering prompt 'draft'", "template missing"),
    ("call", "mw"): ("Error calling tool 'mw'", "a middleware's bug"),  # a middleware's
    ("read", "mw://read"): ("Error reading resource 'mw://read'", "a middleware's bug"),
}


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("options", [{}, {"mask_error_details": True}])
async def test_the_client_is_told_what_failed_and_unless_masked_why(
    mode: str, options: dict[str, Any]
) -> None:
    """By default (FastMCP's too) the exception's message reaches the client; masked, only what
    failed. A middleware's exception is reported as the request's failure, a -32603 error."""
    seen: dict[tuple[str, str], tuple[int, str]] = {}
    async with Client(raising_server(**options), mode=mode) as client:
        for op, target in REPORTS:
            if op == "call":
                with pytest.raises(McpError) as caught:
                    await client.call_tool(target, {})
                seen[op, target] = (caught.value.code, caught.value.message)
            else:
                seen[op, target] = await failure(client, op, target)
    masked = options.get("mask_error_details", False)
    assert seen == {
        key: (-32603, failed if masked else f"{failed}: {why}")
        for key, (failed, why) in REPORTS.items()
    }


@pytest.mark.parametrize("mask", [False, True])
async def test_resource_error_and_tool_error_are_shown_as_they_are(mask: bool) -> None:
    async with Client(raising_server(mask_error_details=mask), mode=MODERN) as client:
        assert await failure(client, "read", "data://item/7") == (-32603, "no item 7")
        assert await failure(client, "read", "data://tool-error") == (-32603, "said as it is")


async def test_each_failure_is_logged_once_naming_the_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "mcpio")
    async with Client(raising_server(mask_error_details=True), mode=MODERN) as client:
        await failure(client, "read", "data://broken")
        await failure(client, "prompt", "draft")
        await failure(client, "read", "data://item/7")  # a ResourceError: an answer, not logged
    assert [(r.getMessage(), r.exc_info is not None) for r in caplog.records] == [
        ("Error reading resource 'data://broken': RuntimeError('disk full at /var/data')", True),
        ("Error rendering prompt 'draft': ValueError('template missing')", True),
    ]


async def test_an_error_mapping_middleware_still_sees_the_handler_s_exception() -> None:
    server = raising_server()
    server.add_middleware(
        ErrorMappingMiddleware({RuntimeError: lambda e: ProtocolError(-32001, f"mapped: {e}")})
    )
    async with Client(server, mode=MODERN) as client:
        assert await failure(client, "read", "data://broken") == (
            -32001,
            "mapped: disk full at /var/data",
        )


@pytest.mark.parametrize("parent_masks", [False, True])
async def test_a_mounted_server_masks_when_its_parent_does(parent_masks: bool) -> None:
    parent = Server("parent", mask_error_details=parent_masks)
    child = raising_server()
    parent.mount(child, "kid")
    async with Client(parent, mode=MODERN) as client:
        code, message = await failure(client, "prompt", "kid_draft")
    assert code == -32603
    expected = "Error rendering prompt 'draft'"
    assert message == (expected if parent_masks else f"{expected}: template missing")


async def test_an_exception_without_a_message_is_named_by_its_type() -> None:
    server = Server("s")

    @server.tool
    def bare() -> str:
        raise RuntimeError()

    async with Client(server, mode=MODERN) as client:
        assert (
            text_of(await client.call_tool("bare", {})) == "Error calling tool 'bare': RuntimeError"
        )
