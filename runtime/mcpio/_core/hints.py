"""Cache hints: how long a cacheable result (lists, `resources/read`, `server/discover`) may be
kept (`ttlMs`) and by whom (`cacheScope`), per server, per method or per resource."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple


class CacheHint(NamedTuple):
    """How long a cacheable result may be kept (`ttlMs`) and by whom (`cacheScope`).

    Args:
        ttl_ms: Milliseconds it may be kept (0: not to be kept).
        scope: `"private"`, or `"public"`: the same for every caller.
    """

    ttl_ms: int = 0  # 0: not to be kept
    scope: Literal["private", "public"] = "private"  # public: the same for every caller

    def fields(self) -> dict[str, Any]:
        """The result members it sets."""
        if self.ttl_ms < 0:
            raise ValueError("a cache hint's ttl_ms is at least 0")
        return {"ttlMs": self.ttl_ms, "cacheScope": self.scope}
