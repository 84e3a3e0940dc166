"""schema/revisions.toml: the pinned revisions, read and written."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from codegen.errors import CodegenError

REVISION_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ERAS = ("legacy", "modern")


@dataclass(frozen=True)
class Pin:
    revision: str
    sha256: str
    source: str
    era: str | None = None


def read_pins(path: Path) -> dict[str, Pin]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CodegenError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"{path}: not valid TOML: {exc}") from None
    pins: dict[str, Pin] = {}
    for rev, table in data.items():
        if not REVISION_NAME.match(rev) or not isinstance(table, dict):
            raise CodegenError(f"{path}: [{rev}] is not a revision table (YYYY-MM-DD)")
        sha, source, era = table.get("sha256"), table.get("source"), table.get("era")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise CodegenError(f"{path}: [{rev}] sha256 must be 64 lowercase hex digits")
        if not isinstance(source, str) or not source:
            raise CodegenError(f"{path}: [{rev}] needs a source")
        if era is not None and era not in ERAS:
            raise CodegenError(f"{path}: [{rev}] era must be one of {', '.join(ERAS)}")
        pins[rev] = Pin(rev, sha, source, era)
    return dict(sorted(pins.items()))


def render_pins(pins: dict[str, Pin]) -> str:
    lines = [
        "# Pinned MCP protocol revisions: the inputs of `make generate`.",
        "# Each table: the revision's schema.json sha256, where upstream publishes it, and an optional",
        '# `era = "legacy" | "modern"` override (normally the era is derived from the schema itself).',
        "# Add a revision with `mcp-codegen add REV --from PATH_OR_URL`.",
    ]
    for pin in sorted(pins.values(), key=lambda p: p.revision):
        lines += ["", f'["{pin.revision}"]', f'sha256 = "{pin.sha256}"', f'source = "{pin.source}"']
        if pin.era:
            lines.append(f'era = "{pin.era}"')
    return "\n".join(lines) + "\n"
