"""A peer's text made safe to show: what the inspector writes to a terminal (the findings log,
the summary) or into its report quotes frames, method names and ids a hostile peer chose.
Control characters (C0, DEL, C1: terminal escape sequences start with ESC or CSI) and the
invisible format characters (bidi overrides and isolates, zero-width marks) are written as
visible `\\xNN` / `\\uNNNN` escapes, so a frame can neither drive the terminal nor reorder
what the reader sees."""

from __future__ import annotations

import re
import unicodedata

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control and invisible format character escaped (see the module)."""
    text = _UNSAFE.sub(_escape, text)
    if text.isascii():
        return text
    return "".join(
        f"\\U{ord(c):08x}" if unicodedata.category(c) in ("Cc", "Cf") and ord(c) > 0xFFFF else c
        for c in text
    )  # the rare format characters past the BMP (tags, U+E0001..)
