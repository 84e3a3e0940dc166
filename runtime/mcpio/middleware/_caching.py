"""`ResponseCachingMiddleware`: list and read results answered again from memory.

Results are kept for as long as their cache hints say (`ttlMs`). A result is answered again only to a request that would get the same one: the same method and
params, protocol revision and declared client capabilities (extensions included: an apps
client's `tools/list` is not a plain client's). `cacheScope` "public" shares it between
callers; "private" keeps it for its principal (and its legacy session, when there is one), and
a caller without a principal (no authorization) gets no private result from the cache at all,
since nothing tells it apart from other callers."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from mcpio._core.jsonrpc import plain
from mcpio.middleware._base import Call, CallNext, Middleware

CACHED_METHODS = frozenset(
    {"tools/list", "resources/list", "resources/templates/list", "prompts/list", "resources/read"}
)

# (method, params, revision, client capabilities, scope: "*" public, else principal and session)
CacheKey = tuple[str, str, str, str, str]


class ResponseCachingMiddleware(Middleware):
    """A middleware that caches the results of `CACHED_METHODS` that carry `ttlMs` > 0.

    It keeps at most `max_entries` (the oldest dropped first). A result without cache hints (or
    `ttlMs` 0) is not kept, nor is a private one of a caller without a principal.
    """

    def __init__(
        self, max_entries: int = 1024, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_entries, self.clock = max_entries, clock
        self._entries: OrderedDict[CacheKey, tuple[float, Any]] = OrderedDict()

    def clear(self) -> None:
        """Forget every cached result (after changing what the server lists, say)."""
        self._entries.clear()

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Answer a list or read from the cache while its `ttlMs` lasts.

        Otherwise ask the next step and keep the answer (when its cache hints allow).
        """
        if call.method not in CACHED_METHODS:
            return await call_next(call)
        ctx = call.ctx
        params = plain(call.params) if call.params is not None else {}
        if isinstance(params, dict):
            params.pop("_meta", None)  # the envelope: its revision and capabilities come below
        asked = json.dumps(params, sort_keys=True)
        capabilities = json.dumps(plain(ctx.client_capabilities), sort_keys=True)
        public: CacheKey = (call.method, asked, ctx.revision, capabilities, "*")
        private: CacheKey | None = None
        if ctx.principal is not None:
            owner = json.dumps([ctx.principal.subject, ctx.session_id])
            private = (call.method, asked, ctx.revision, capabilities, owner)
        now = self.clock()
        for key in (public,) if private is None else (private, public):
            entry = self._entries.get(key)
            if entry is not None and entry[0] > now:
                return entry[1].model_copy(deep=True)
            if entry is not None:
                del self._entries[key]
        result = await call_next(call)
        ttl = getattr(result, "ttlMs", None)
        if not isinstance(ttl, int) or ttl <= 0:
            return result
        key = public if getattr(result, "cacheScope", None) == "public" else private
        if key is not None:
            self._entries[key] = (now + ttl / 1000, result.model_copy(deep=True))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return result
