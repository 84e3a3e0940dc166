"""The client's cache of list results, as the server's cache hints allow (SEP-2549).

A result is kept for its `ttlMs` (0, what legacy revisions always mean: not kept) under the key
(`cacheScope`, principal, revision) plus the server, the method and the cursor of the page: a
`"public"` result serves every principal, a `"private"` one only the principal that got it. A
`notifications/*/list_changed` from the server drops its lists, whatever their scope.

One `ResultCache` may serve several clients (`Client(cache=shared)`): they share public
results, and private ones when their credentials are the same (see `Client`'s principal).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
CHANGED: dict[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class CacheKey(NamedTuple):
    scope: str  # "public" | "private"
    principal: str | None  # None for a public result
    revision: str
    server: str
    method: str
    cursor: str | None


class ResultCache:
    """List results by `CacheKey`, each until its `ttlMs` runs out (on `clock`, in seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[CacheKey, tuple[float, Any]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self, server: str, principal: str, revision: str, method: str, cursor: str | None
    ) -> Any | None:
        """A fresh result for this request (a copy: the caller may change it), else None."""
        now = self._clock()
        for scope, who in (("public", None), ("private", principal)):
            key = CacheKey(scope, who, revision, server, method, cursor)
            entry = self._entries.get(key)
            if entry is None:
                continue
            expires, result = entry
            if now < expires:
                return result.model_copy(deep=True)
            del self._entries[key]
        return None

    def put(
        self,
        server: str,
        principal: str,
        revision: str,
        method: str,
        cursor: str | None,
        result: Any,
    ) -> None:
        """Keep `result` as its `ttlMs` and `cacheScope` say (not at all without a ttl)."""
        ttl_ms = getattr(result, "ttlMs", None) or 0
        if ttl_ms <= 0:
            return
        public = getattr(result, "cacheScope", "private") == "public"
        key = CacheKey(
            "public" if public else "private",
            None if public else principal,
            revision,
            server,
            method,
            cursor,
        )
        self._entries[key] = (self._clock() + ttl_ms / 1000, result.model_copy(deep=True))

    def drop(self, server: str, methods: Iterable[str]) -> None:
        """Forget the server's results of `methods` (its list changed)."""
        gone = set(methods)
        for key in [k for k in self._entries if k.server == server and k.method in gone]:
            del self._entries[key]

    def clear(self) -> None:
        """Forget every kept result."""
        self._entries.clear()
