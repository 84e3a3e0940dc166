"""The mcpio port of originals/proxy.py (FastMCP's Proxy page), written after reading
docs/servers/composition.md: `create_proxy(config)` is `proxy_server(config)`."""

import sys
from pathlib import Path

from mcpio.client import proxy_server

RUNNER = str(Path(__file__).parents[2] / "fastmcp_docs_server.py")
backends = {
    "mcpServers": {
        "desk": {"command": sys.executable, "args": [RUNNER, "port", "tools", "stdio"]},
        "phrases": {"command": sys.executable, "args": [RUNNER, "port", "prompts", "stdio"]},
    }
}
server = proxy_server(backends)
