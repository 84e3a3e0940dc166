"""`Principal`: whom a request speaks for once its access token is verified (`mcpio.auth`
verifies; everything that serves a request reads it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Principal:
    """Who a valid access token speaks for.

    Long-lived streams opened with the token (a legacy GET stream, a `subscriptions/listen`)
    end when `expires_at` passes.

    Args:
        subject: The token's subject.
        scopes: The scopes the token grants.
        claims: All the token's claims.
        expires_at: When the verifier stops accepting the token (seconds since the epoch;
            None: unknown).
    """

    subject: str
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict[str, Any])
    expires_at: float | None = None
