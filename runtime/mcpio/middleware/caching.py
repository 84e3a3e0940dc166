"""`ResponseCachingMiddleware`: list and read results kept for as long as their cache hints say
(`ttlMs`; `cacheScope` "private": per principal, "public": for everyone), answered again from
memory meanwhile."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from mcpio.jsonrpc import plain
from mcpio.middleware.base import Call, CallNext, Middleware

CACHED_METHODS = frozenset(
    {"tools/list", "resources/list", "resources/templates/list", "prompts/list", "resources/read"}
)


class ResponseCachingMiddleware(Middleware):
    """Caches the results of `CACHED_METHODS` that carry `ttlMs` > 0, at most `max_entries`
    (the oldest dropped first). A result without cache hints (or `ttlMs` 0) is not kept."""

    def __init__(
        self, max_entries: int = 1024, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_entries, self.clock = max_entries, clock
        self._entries: OrderedDict[tuple[str, str, str], tuple[float, Any]] = OrderedDict()

    def clear(self) -> None:
        """Forget every cached result (after changing what the server lists, say)."""
        self._entries.clear()

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Answer a list or read from the cache while its `ttlMs` lasts, else ask and keep the
        answer."""
        if call.method not in CACHED_METHODS:
            return await call_next(call)
        params = plain(call.params) if call.params is not None else {}
        if isinstance(params, dict):
            params.pop("_meta", None)  # per-request envelope, not what is asked
        asked = json.dumps(params, sort_keys=True)
        principal = call.ctx.principal
        private = (call.method, asked, principal.subject if principal is not None else "")
        public = (call.method, asked, "*")
        now = self.clock()
        for key in (private, public):
            entry = self._entries.get(key)
            if entry is not None and entry[0] > now:
                return entry[1].model_copy(deep=True)
            if entry is not None:
                del self._entries[key]
        result = await call_next(call)
        ttl = getattr(result, "ttlMs", None)
        if isinstance(ttl, int) and ttl > 0:
            key = public if getattr(result, "cacheScope", None) == "public" else private
            self._entries[key] = (now + ttl / 1000, result.model_copy(deep=True))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return result
