"""The version of the `mcpgen` distribution: the one source of `mcpio.__version__`
and `mcp-codegen --version` (read where asked for: `import mcpio` does not pay for
importlib.metadata; `mcp_wire.__version__` is the `mcp-wire` distribution's)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "mcpgen"

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
