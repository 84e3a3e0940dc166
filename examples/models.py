"""A frame read into the 2026-07-28 models and written back."""

import json

from mcp_wire.v2026_07_28 import CallToolRequest

raw = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"text": "hi"},
            "_meta": {  # 2026-07-28: each request names its revision and the client's capabilities
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
)
req = CallToolRequest.model_validate_json(raw)  # ValidationError for anything the schema rejects
print(req.params.name, req.params.arguments)  # echo {'text': 'hi'}
print(req.model_dump_json())  # valid JSON for the schema: wire names, unset members left out

# Output:
#   echo {'text': 'hi'}
#   {"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"text":"hi"},"name":"echo"}}
