"""A revision's codec: build, encode, decode, peek, and a response typed by its method."""

import mcp_wire
from mcp_wire.v2026_07_28 import CallToolResult
from mcp_wire.v2026_07_28.codec import ErrorFrame

codec = mcp_wire.codec("2026-07-28")  # LookupError for an unknown revision
# a validated frame; modern: stamps the _meta envelope
args = {"name": "add", "arguments": {"a": 1, "b": 2}}
req = codec.request("tools/call", args, id=1, client_capabilities={})
raw = codec.encode(req)  # bytes, wire names, unset members omitted
msg = codec.decode(raw)  # typed request / notification / response / error
env = codec.peek(raw)  # the envelope alone: kind, id, method, name, protocol_version
meta = mcp_wire.envelope(msg)  # modern: .protocol_version, .client_capabilities, ...
assert meta is not None  # None where the revision has no envelope (the legacy era)

answer = b'{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",'
answer += b' "content": [{"type": "text", "text": "3"}]}}'
resp = codec.decode_response(answer, "tools/call")  # typed by the method, or an ErrorFrame
assert not isinstance(resp, ErrorFrame)
assert isinstance(resp.result, CallToolResult)  # or InputRequiredResult
print(type(msg).__name__, env.method, meta.protocol_version, type(resp.result).__name__)

# Output:
#   CallToolRequest tools/call 2026-07-28 CallToolResult
