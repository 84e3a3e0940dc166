"""The revision registry behind the generated package `mcp_wire`: hand-written, shared.

`mcp_wire/__init__.py` holds the tables of the pinned revisions (names, eras, sha256) and the
`codec` overloads that type each revision's codec; a `Registry` over those tables does the rest.
A revision's subpackage (`v2025_11_25` for 2025-11-25) is imported when first used: this module
imports neither pydantic nor any revision, so `import mcp_wire` stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp_wire_runtime.codec import Codec, Envelope

Era = Literal["legacy", "modern"]


def module_name(revision: str) -> str:
    """The subpackage name of a revision: "2025-11-25" -> "v2025_11_25"."""
    return "v" + revision.replace("-", "_")


class Registry:
    """The pinned revisions of the generated package `package`, oldest first, with their eras."""

    def __init__(self, package: str, eras: Mapping[str, Era]) -> None:
        self.package = package
        self.eras = eras
        self.modules = {module_name(name): name for name in eras}

    def revision(self, name: str) -> ModuleType:
        """The generated package of one revision; ``LookupError`` for a revision that is not pinned."""
        if name not in self.eras:
            raise LookupError(f"unknown MCP revision {name!r}; known: {', '.join(self.eras)}")
        return importlib.import_module(f"{self.package}.{module_name(name)}")

    def codec(self, name: str) -> Codec:
        """The wire codec of one revision; ``LookupError`` for a revision that is not pinned.

        Typed by revision: ``codec("2026-07-28").decode(raw)`` is that revision's message union,
        ``decode_response(raw, "tools/call")`` that method's response, the builders their frames.
        """
        self.revision(name)
        return importlib.import_module(f"{self.package}.{module_name(name)}.codec").CODEC

    def envelope(self, message: object) -> Envelope[Any, Any] | None:
        """Return the per-request ``_meta`` envelope of a modern-era request, by plain names.

        `message` is the request, its params, or the ``_meta`` object itself; the names are
        ``protocol_version``, ``client_capabilities``, ``client_info``, ``log_level``. None when
        it carries none (a legacy revision's request, a notification). The wire form is
        unchanged; ``codec(rev).envelope(...)`` is the typed form.
        """
        parts = type(message).__module__.split(".")
        if len(parts) < 2 or parts[0] != self.package or parts[1] not in self.modules:
            raise TypeError(
                f"{type(message).__qualname__} is not a message of a pinned MCP revision"
            )
        name = self.modules[parts[1]]
        if self.eras[name] != "modern":
            return None
        try:
            return self.codec(name).envelope(message)
        except ValueError:
            return None

    def attribute(self, attr: str) -> ModuleType | str:
        """Serve as the package's module `__getattr__`, reading each attribute on first use.

        The attributes are a revision's subpackage by its module name, and ``__version__`` (the
        distribution's).
        """
        if attr in self.modules:
            return self.revision(self.modules[attr])
        if attr == "__version__":
            from mcp_wire_runtime._version import __version__

            return __version__
        raise AttributeError(f"module {self.package!r} has no attribute {attr!r}")
