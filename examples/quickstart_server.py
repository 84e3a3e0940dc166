"""The quick start's server: one tool and one resource, over stdio or Streamable HTTP.

python examples/quickstart_server.py          # stdio (a host starts it)
python examples/quickstart_server.py --http   # http://127.0.0.1:8000/mcp (PORT to change)
"""

import os
import sys

from mcpio import Server

server = Server("demo", "1.0")


@server.tool()
async def add(a: int, b: int) -> str:  # the input schema comes from the type hints
    """Adds two integers."""  # the docstring is the tool's description
    return str(a + b)


@server.resource("demo://readme", mime_type="text/plain")
def readme() -> str:
    return "Hello from the demo server."


if __name__ == "__main__":
    if "--http" in sys.argv:  # Streamable HTTP at http://127.0.0.1:8000/mcp
        server.run_http("127.0.0.1", int(os.environ.get("PORT", "8000")))
    else:  # stdio: the host starts this process
        server.run_stdio()
