"""One program exercising a FastMCP documentation page's features, as FastMCP runs it
(fastmcp_docs/originals/PAGE.py, its `mcp`) or as ported to mcpio (fastmcp_docs/ports/PAGE.py,
its `server`), for
tests/interop/test_fastmcp_user.py: `python fastmcp_docs_server.py original|port PAGE stdio`,
or `... http --port N` (127.0.0.1; prints N on stdout first).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "fastmcp_docs"


def load(flavour: str, page: str) -> Any:
    """The page's module, imported under a name of its own (dataclasses and type hints resolve
    through `sys.modules`)."""
    folder = "originals" if flavour == "original" else "ports"
    name = f"fastmcp_docs_{folder}_{page}"
    spec = importlib.util.spec_from_file_location(name, HERE / folder / f"{page}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("flavour", choices=["original", "port"])
    parser.add_argument("page")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    found = load(args.flavour, args.page)
    if args.transport == "http":
        print(args.port, flush=True)
    if args.flavour == "original":
        mcp = found.mcp
        if args.transport == "stdio":
            mcp.run(transport="stdio", show_banner=False)
        else:
            mcp.run(transport="http", host="127.0.0.1", port=args.port, show_banner=False)
    elif args.transport == "stdio":
        found.server.run_stdio()
    else:
        found.server.run_http("127.0.0.1", args.port)


if __name__ == "__main__":
    main()
