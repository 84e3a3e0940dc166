"""Exercises the features of FastMCP's Proxy page (docs/servers/providers/proxy.mdx) under
FastMCP: a proxy of a whole `mcpServers` configuration, two servers (this suite's Tools and
Prompts originals) under their names."""

import sys
from pathlib import Path

from fastmcp.server import create_proxy

RUNNER = str(Path(__file__).parents[2] / "fastmcp_docs_server.py")
backends = {
    "mcpServers": {
        "desk": {"command": sys.executable, "args": [RUNNER, "original", "tools", "stdio"]},
        "phrases": {"command": sys.executable, "args": [RUNNER, "original", "prompts", "stdio"]},
    }
}
mcp = create_proxy(backends, name="Gateway")
