# pyright: strict
"""What a project that installs only the `mcp-wire` distribution writes: the typed models and
codecs, with no server, client or CLI. tests/test_types_wheel.py type-checks it under
`pyright --strict` against a fresh venv holding that wheel alone, and runs it there."""

from __future__ import annotations

import json
from typing import reveal_type

import mcp_wire
from mcp_wire import ProtocolError
from mcp_wire import v2025_11_25 as legacy
from mcp_wire import v2026_07_28 as modern
from mcp_wire_runtime import Codec, JSONValue

modern_codec = mcp_wire.codec("2026-07-28")
reveal_type(modern_codec)  # expect: Codec2026_07_28
call = modern_codec.request("tools/call", {"name": "add"}, id=1, client_capabilities={})
reveal_type(call)  # expect: CallToolRequest
decoded = modern_codec.decode(modern_codec.encode(call))
if isinstance(decoded, modern.CallToolRequest):
    reveal_type(decoded.params.name)  # expect: str

legacy_codec = mcp_wire.codec("2025-11-25")
reveal_type(legacy_codec)  # expect: Codec2025_11_25
answer = legacy.CallToolResult(content=[legacy.TextContent(type="text", text="3")])
reveal_type(answer.content[0].type)

arguments: dict[str, JSONValue] = {"a": [1, 2.5, None]}
any_revision: Codec = mcp_wire.codec(mcp_wire.LATEST)
report: dict[str, JSONValue] = {"name": call.params.name, "revisions": list(mcp_wire.REVISIONS)}
try:
    any_revision.decode(b"{")
except ProtocolError as error:
    report["error"] = error.code
print(json.dumps(report))
