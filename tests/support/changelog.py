"""Reading `mcp-codegen diff`'s Markdown back: its sections and their bullet items."""

from __future__ import annotations

SECTIONS = (
    "Methods added",
    "Methods removed",
    "Methods changed (direction, kind, params, result)",
    "Definitions added",
    "Definitions removed",
    "Moves and renames (no wire change)",
    "Definitions changed",
    "Deprecations",
    "Error codes",
    "Wire breaks for an existing peer",
)


def sections(text: str) -> dict[str, list[str]]:
    """`## Heading` -> its bullet items (without `- `); `- none` is an empty list."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:]
            assert current not in out, f"section {current!r} twice"
            out[current] = []
        elif line.startswith("- ") and line != "- none":
            out[current].append(line[2:])
    assert set(out) - {"Extensions"} == {"", *SECTIONS}, set(out)  # Extensions: the CLI's
    return out
