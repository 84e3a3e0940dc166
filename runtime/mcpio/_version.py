"""The version of the `mcpgen` distribution: the one source of `mcpio.__version__`,
`mcp_wire.__version__` and `mcp-codegen --version` (read where asked for: `import mcpio` and
`import mcp_wire` do not pay for importlib.metadata)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "mcpgen"

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
