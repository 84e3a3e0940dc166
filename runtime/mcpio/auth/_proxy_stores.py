"""`open_oauth_store`: an OAuth proxy store from its one-string description (a command-line
option, an environment variable)."""

from __future__ import annotations

import time

from mcpio._core.redact import redacted
from mcpio.auth._proxy_store import Clock, MemoryOAuthStore, OAuthStore

SPECS = "memory, sqlite:PATH or redis://HOST:PORT/DB"


def open_oauth_store(spec: str, clock: Clock = time.time) -> OAuthStore:
    """Open an OAuth proxy store from its one-string description (`SPECS`).

    Raises:
        ValueError: For anything else (one line, the URL's credentials left out).
    """
    if spec == "memory":
        return MemoryOAuthStore(clock)
    if spec.startswith("sqlite:") and spec != "sqlite:":
        from mcpio.auth._proxy_sqlite import SqliteOAuthStore

        return SqliteOAuthStore(spec.removeprefix("sqlite:"), clock)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        from mcpio.auth._proxy_redis import RedisOAuthStore

        return RedisOAuthStore(spec)
    raise ValueError(f"OAuth store {redacted(spec)!r}: expected {SPECS}")
