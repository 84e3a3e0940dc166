"""Whether a URL a server asks the user to open (URL-mode elicitation) is one a client may show:
the server is not trusted, so its URL could run script (`javascript:`), read local files
(`file:`), carry a document (`data:`), hide its real target (control or bidi characters, a
user-info part), or be megabytes long. The callback that shows it still gets an untrusted URL:
show the host, and open it in a browser only with the user's consent."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def url_problem(url: object) -> str | None:
    """Why `url` is refused, or None: https (http only to a loopback host), a host, no user
    info, at most `MAX_URL_LENGTH` characters, no control, format (bidi) or space characters."""
    if not isinstance(url, str):
        return "not a string"
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp") for ch in url):
        return "it holds control, bidi or space characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "not a URL"
    if parts.scheme not in ("https", "http"):
        return f"scheme {parts.scheme or '(none)'!r} is not https"
    if not host:
        return "no host"
    if parts.scheme == "http" and host not in LOOPBACK:
        return "plain http to a host that is not loopback"
    if parts.username is not None or parts.password is not None:
        return "it names a user (user@host hides the real host)"
    return None
