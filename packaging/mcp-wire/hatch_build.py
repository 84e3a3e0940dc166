"""Build hook: the wheel's packages come from the checkout's source roots.

A built wheel takes `mcp_wire` from generated/ and `mcp_wire_runtime` from runtime/. An editable
install takes nothing: it puts those two roots on sys.path (`dev-mode-dirs`), so the checkout's
files are what is imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

CHECKOUT = Path(__file__).resolve().parents[2]
PACKAGES = {"generated/mcp_wire": "mcp_wire", "runtime/mcp_wire_runtime": "mcp_wire_runtime"}


class SourceRoots(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version != "editable":
            for source, package in PACKAGES.items():
                build_data["force_include"][str(CHECKOUT / source)] = package
