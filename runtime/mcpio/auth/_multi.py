"""`MultiAuth`: several ways to present a token on one server, tried in order (the OAuth proxy
for people, a JWT verifier for machines, an introspection endpoint for another issuer).

It is a `TokenVerifier` itself: the first verifier that accepts the token gives the principal;
one that refuses it (None, `InvalidToken`) passes it on to the next. When none accepts it and one
of them could not decide (`VerifierUnavailable`, its issuer's keys unreachable), the answer is
503, not 401: the token may be valid.

Examples:
    >>> from mcpio.auth import JwtVerifier, MultiAuth
    >>> machines = JwtVerifier(issuer="https://ci.example", audience="https://mcp.example/mcp")
    >>> auth = MultiAuth([machines])
    >>> len(auth.verifiers)
    1
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from mcpio._core.principal import Principal
from mcpio.auth._resource import InvalidToken, TokenVerifier, VerifierUnavailable

log = logging.getLogger("mcpio.auth")


class MultiAuth:
    """Token verifiers tried in order: the first principal wins.

    Args:
        verifiers: The verifiers (`OAuthProxy`, `JwtVerifier`, `IntrospectionVerifier`, any
            `async (token) -> Principal | None`), the first to try first.
    """

    def __init__(self, verifiers: Sequence[TokenVerifier]) -> None:
        if not verifiers:
            raise ValueError("MultiAuth needs at least one verifier")
        self.verifiers = list(verifiers)

    async def __call__(self, token: str) -> Principal | None:
        undecided: VerifierUnavailable | None = None
        for verifier in self.verifiers:
            try:
                principal = await verifier(token)
            except InvalidToken:
                continue
            except VerifierUnavailable as exc:
                undecided = exc
                continue
            if principal is not None:
                return principal
        if undecided is not None:
            raise undecided
        return None
