"""The HTTP relay's own Host and Origin check: the relay speaks for whatever upstream it is
given, which may not check Origin itself, so a page a browser loads from elsewhere (or from a
DNS name rebound to this machine) must not reach it through the relay.

A request passes when its Host names the relay (a loopback name, or the host it was told to
listen on) and its Origin, if any, names one of those too. Bound to a wildcard address (only
with `--allow-remote`), any Host passes, and an Origin must name the Host's own host."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
_EXACT = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?")


def is_loopback(host: str) -> bool:
    """Whether a host to listen on (a name or an address) is this machine's loopback."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_of(value: str, scheme: bool) -> str | None:
    """The lowercase host a Host header (`scheme` False) or an Origin names: exactly a host and
    an optional port (after `http://` or `https://` for an Origin); None for anything else."""
    try:
        parts = urlsplit(value.strip() if scheme else f"//{value.strip()}")
        parts.port  # a port that is no number is malformed  # noqa: B018
    except ValueError:
        return None
    if scheme and parts.scheme not in ("http", "https"):
        return None
    extra = parts.path or parts.query or parts.fragment or "@" in parts.netloc
    if extra or not _EXACT.fullmatch(parts.netloc):
        return None
    return parts.hostname or None


class RelayGuard:
    """Decides whether a request's Host and Origin may reach the relay (see the module)."""

    def __init__(self, listen_host: str = "127.0.0.1") -> None:
        host = listen_host.strip("[]").lower()
        self.any_host = host in WILDCARDS
        self.hosts = LOOPBACK_NAMES | {host}

    def refusal(self, host: str | None, origin: str | None) -> tuple[int, str] | None:
        """None when allowed, else the status and reason refusing it (421 Host, 403 Origin)."""
        named = None if host is None else _host_of(host, scheme=False)
        if host is not None and (named is None or not (self.any_host or named in self.hosts)):
            return 421, "mcpio inspect: Host not allowed (the relay answers to its own address)"
        if origin is None:
            return None
        from_host = _host_of(origin, scheme=True)
        allowed = {named} if self.any_host and named is not None else self.hosts
        if from_host is None or from_host not in allowed:
            return 403, "mcpio inspect: Origin not allowed"
        return None
