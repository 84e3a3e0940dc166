"""Secrets kept out of attributes, reprs, logs and error messages: a URL's credentials shown as
`***`, and a value held for connecting that never prints."""

from __future__ import annotations

import base64
import re
import urllib.parse

_USERINFO = re.compile(r"(?<=://)[^/?#@\s]*@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&][^=&#\s]*(?:pass|pwd|token|secret|key|auth)[^=&#\s]*=)[^&#\s]*"
)


def redacted(text: str) -> str:
    """`text` with the user info of every URL in it (`scheme://user:password@`) and the values
    of query parameters named like secrets (`?password=`, `&token=`) replaced by `***`."""
    return _SECRET_QUERY.sub(r"\1***", _USERINFO.sub("***@", text))


def split_credentials(url: str) -> tuple[str, Secret | None]:
    """`url` without its user info (`user:password@`), and that user info (percent-decoded,
    as HTTP Basic sends it: RFC 7617, UTF-8) as an `Authorization` value; `(url, None)` when it
    has none."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}".encode()
    basic = Secret("Basic " + base64.b64encode(pair).decode("ascii"))
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), basic


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
