"""The version of the `mcp-wire` distribution (the generated types and this runtime): the source
of `mcp_wire.__version__`, read when asked for, so `import mcp_wire` does not pay for
importlib.metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "mcp-wire"

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
