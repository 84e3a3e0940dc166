"""Build hook: the generator's `mcp-codegen` script, for editable installs only.

The wheel ships `mcp_wire` and `mcpio` and no script: the generator (`codegen`) is a tool of the
checkout, so only an editable install of the checkout (`pip install -e .`, as `make` does) gets
`mcp-codegen`, which imports `codegen` from the checkout that install puts on sys.path.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SCRIPT = "codegen/mcp-codegen"


class CheckoutScripts(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "editable":
            build_data["shared_scripts"][SCRIPT] = "mcp-codegen"
