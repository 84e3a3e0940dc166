"""Secrets kept out of attributes, reprs, logs and error messages: a URL's credentials shown as
`***`, and a value held for connecting that never prints."""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?<=://)[^/?#@\s]*@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&][^=&#\s]*(?:pass|pwd|token|secret|key|auth)[^=&#\s]*=)[^&#\s]*"
)


def redacted(text: str) -> str:
    """`text` with the user info of every URL in it (`scheme://user:password@`) and the values
    of query parameters named like secrets (`?password=`, `&token=`) replaced by `***`."""
    return _SECRET_QUERY.sub(r"\1***", _USERINFO.sub("***@", text))


class Secret:
    """A string to use but never show: its repr and str are `***`; `reveal()` gives it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret value itself (never logged, never in a repr)."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__
