"""Authorization, both sides: the resource server's token checks and the client's OAuth flow.

The server side: `ResourceServerAuth`, the verifiers, DPoP, `MultiAuth`, `OAuthProxy` with its
upstream providers and stores (the server as its clients' authorization server), and the checks
of a component's `auth=` (`require_scopes`, `restrict_tag`, your own of an `AuthContext`). The
client side: `OAuth` and the token stores, which need the `http` extra and load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpio._core.authorization import AuthCheck, AuthContext, require_scopes, restrict_tag
from mcpio._core.extras import needs
from mcpio._core.principal import Principal
from mcpio.auth._bearer import BearerToken
from mcpio.auth._dpop import DpopKey
from mcpio.auth._dpop_server import (
    DpopPolicy,
    MemoryReplayCache,
    Nonces,
    RedisReplayCache,
    ReplayCache,
    ReplayCacheFull,
    ReplayUnavailable,
)
from mcpio.auth._multi import MultiAuth
from mcpio.auth._providers import (
    GitHubProvider,
    GoogleProvider,
    Identity,
    OIDCProvider,
    UpstreamProvider,
)
from mcpio.auth._proxy import OAuthProxy
from mcpio.auth._proxy_store import MemoryOAuthStore, OAuthStore
from mcpio.auth._proxy_stores import open_oauth_store
from mcpio.auth._resource import (
    DEFAULT_TOKEN_TYPES,
    STRICT_TOKEN_TYPES,
    AuthRefused,
    IntrospectionVerifier,
    InvalidToken,
    JwtVerifier,
    ResourceServerAuth,
    TokenVerifier,
    VerifierUnavailable,
)

if TYPE_CHECKING:
    from mcpio.auth._client import (
        Assertion,
        ClientInfo,
        FileTokenStore,
        MemoryTokenStore,
        OAuth,
        Redirect,
        RedirectHandler,
        Tokens,
        TokenStore,
    )
    from mcpio.auth._proxy_redis import RedisOAuthStore
    from mcpio.auth._proxy_sqlite import SqliteOAuthStore

_CLIENT = frozenset(
    {
        "Assertion",
        "ClientInfo",
        "FileTokenStore",
        "MemoryTokenStore",
        "OAuth",
        "Redirect",
        "RedirectHandler",
        "TokenStore",
        "Tokens",
    }
)


_STORES = {
    "RedisOAuthStore": "mcpio.auth._proxy_redis",
    "SqliteOAuthStore": "mcpio.auth._proxy_sqlite",
}


def __getattr__(name: str) -> Any:
    if name in _STORES:
        return getattr(importlib.import_module(_STORES[name]), name)
    if name not in _CLIENT:
        raise AttributeError(f"module 'mcpio.auth' has no attribute {name!r}")
    with needs("http", "mcpio's OAuth client"):  # httpx at its top
        return getattr(importlib.import_module("mcpio.auth._client"), name)


__all__ = [
    "DEFAULT_TOKEN_TYPES",
    "STRICT_TOKEN_TYPES",
    "Assertion",
    "AuthCheck",
    "AuthContext",
    "AuthRefused",
    "BearerToken",
    "ClientInfo",
    "DpopKey",
    "DpopPolicy",
    "FileTokenStore",
    "GitHubProvider",
    "GoogleProvider",
    "Identity",
    "IntrospectionVerifier",
    "InvalidToken",
    "JwtVerifier",
    "MemoryOAuthStore",
    "MemoryReplayCache",
    "MemoryTokenStore",
    "MultiAuth",
    "Nonces",
    "OAuth",
    "OAuthProxy",
    "OAuthStore",
    "OIDCProvider",
    "Principal",
    "Redirect",
    "RedirectHandler",
    "RedisOAuthStore",
    "RedisReplayCache",
    "ReplayCache",
    "ReplayCacheFull",
    "ReplayUnavailable",
    "ResourceServerAuth",
    "SqliteOAuthStore",
    "TokenStore",
    "TokenVerifier",
    "Tokens",
    "UpstreamProvider",
    "VerifierUnavailable",
    "open_oauth_store",
    "require_scopes",
    "restrict_tag",
]
