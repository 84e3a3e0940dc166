"""Screening a resource template's values before its handler sees them: a value that, used as a
path, would leave the directory it is joined to (`..` above its start), replace it (an absolute
path: `/etc/passwd`, `C:\\x`, `\\\\host\\share`) or cut it short (NUL) is refused, as FastMCP
and the official SDK refuse them. `..` counts only as a whole segment (`v1..v2` passes), and `/`
and `\\` both separate segments."""

from __future__ import annotations

import string


def unsafe_path(value: str) -> str | None:
    """Why `value` is unsafe as a path (None: it is not)."""
    if "\0" in value:
        return "it holds a NUL character"
    if _absolute(value):
        return "it is an absolute path"
    if _climbs(value):
        return "it climbs above its directory (..)"
    return None


def _absolute(value: str) -> bool:
    if value[:1] in ("/", "\\"):
        return True
    return len(value) >= 2 and value[1] == ":" and value[0] in string.ascii_letters


def _climbs(value: str) -> bool:
    depth = 0
    for segment in value.replace("\\", "/").split("/"):
        if segment == "..":
            depth -= 1
            if depth < 0:
                return True
        elif segment not in ("", "."):
            depth += 1
    return False
