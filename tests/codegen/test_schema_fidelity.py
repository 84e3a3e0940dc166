"""What the schemas leave open stays open: a tool's input and output schemas (JSON Schema
2020-12: `$defs` with an `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`, ...) reach the client
verbatim in every revision, and every legacy request's and notification's params declare the
`_meta` of the schema's base `Request` / `Notification`, so a strict decode accepts it."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

import mcp_wire
from mcp_wire_runtime.errors import ProtocolError
from mcpio import Client, Server
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "examples"))
from everything_server import JSON_SCHEMA_2020_12  # noqa: E402
from everything_server import server as everything  # noqa: E402

OUTPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"total": {"type": "integer"}, "items": {"$ref": "#/$defs/item"}},
    "$defs": {"item": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["total"],
    "unevaluatedProperties": False,
}


def codec_of(revision: str) -> Any:
    module = importlib.import_module(f"mcp_wire.v{revision.replace('-', '_')}.codec")
    return getattr(module, "CODEC", module)


@pytest.mark.anyio
@pytest.mark.parametrize("revision", mcp_wire.REVISIONS)
async def test_tool_schemas_reach_the_client_verbatim(revision: str) -> None:
    async with Client(everything, mode=revision) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    schema = listed["json_schema_2020_12_tool"].inputSchema
    assert schema.model_dump(by_alias=True, exclude_unset=True) == JSON_SCHEMA_2020_12

    server = Server("output")

    @server.tool(output_schema=OUTPUT_SCHEMA)
    def count() -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        return {"total": 1, "items": ["a"]}

    async with Client(server, mode=revision) as client:
        (tool,) = (await client.list_tools()).tools
    if revision < "2025-06-18":  # no outputSchema in the revision: dropped
        assert tool.outputSchema is None
    else:
        assert tool.outputSchema is not None
        assert tool.outputSchema.model_dump(by_alias=True, exclude_unset=True) == OUTPUT_SCHEMA


FRAMES = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
    b'"params":{"name":"x","arguments":{},"_meta":{"progressToken":"t","other":1}}}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"progressToken":7}}}',
    b'{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"a:b","_meta":{}}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress",'
    b'"params":{"progressToken":7,"progress":1,"_meta":{"k":"v"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{}}}',
]


@pytest.mark.parametrize("revision", [r for r in mcp_wire.REVISIONS if r < "2026-07-28"])
def test_legacy_params_declare_meta(revision: str) -> None:
    codec = codec_of(revision)
    for frame in FRAMES:
        message = codec.decode(frame, strict=True)
        assert message.params.meta is not None, frame
    call = codec.decode(FRAMES[0], strict=True)
    assert call.params.meta.progressToken == "t"
    with pytest.raises(ProtocolError, match="progressToken"):  # typed, not any JSON
        codec.decode(FRAMES[1].replace(b"7}}", b"[7]}}"), strict=True)
