"""mcpio: the hand-written MCP runtime: a server and a client for every pinned revision, both
eras, over stdio (and Streamable HTTP), stitched to the generated `mcp_wire` layers.

Names load on first use: `mcp_wire` imports `mcpio.wire`, and neither may pay for the runtime;
the authorization names (`ResourceServerAuth`, `JwtVerifier`, `OAuth`, ...) bring httpx, and
PyJWT when a `JwtVerifier` is made, only when they are used.

Examples:
    >>> from mcpio import Client, Context, Server
    >>> Server.__module__, Client.__module__, Context.__module__
    ('mcpio.server', 'mcpio.client', 'mcpio.context')
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpio.extras import needs

if TYPE_CHECKING:
    from mcpio._version import __version__ as __version__
    from mcpio.auth import (
        IntrospectionVerifier,
        InvalidToken,
        JwtVerifier,
        Principal,
        ResourceServerAuth,
        TokenVerifier,
        VerifierUnavailable,
    )
    from mcpio.auth_client import (
        ClientInfo,
        FileTokenStore,
        MemoryTokenStore,
        OAuth,
        Redirect,
        RedirectHandler,
        Tokens,
        TokenStore,
    )
    from mcpio.client import Client, Notice, Subscription
    from mcpio.content import Audio, File, Image
    from mcpio.context import Context, Elicit, ElicitUrl, ListRoots, Sample, UrlElicitationRequired
    from mcpio.errors import (
        AuthError,
        ConnectionClosed,
        InvalidOutput,
        LifespanError,
        McpError,
        NegotiationError,
        RequestTimeout,
        ToolError,
    )
    from mcpio.hints import CacheHint
    from mcpio.middleware.base import Call, Middleware
    from mcpio.server import Server
    from mcpio.wire.errors import ProtocolError

_EXPORTS = {
    "IntrospectionVerifier": "mcpio.auth",
    "InvalidToken": "mcpio.auth",
    "JwtVerifier": "mcpio.auth",
    "Principal": "mcpio.auth",
    "ResourceServerAuth": "mcpio.auth",
    "TokenVerifier": "mcpio.auth",
    "VerifierUnavailable": "mcpio.auth",
    "AuthError": "mcpio.errors",
    "ClientInfo": "mcpio.auth_client",
    "FileTokenStore": "mcpio.auth_client",
    "MemoryTokenStore": "mcpio.auth_client",
    "OAuth": "mcpio.auth_client",
    "Redirect": "mcpio.auth_client",
    "RedirectHandler": "mcpio.auth_client",
    "Tokens": "mcpio.auth_client",
    "TokenStore": "mcpio.auth_client",
    "Client": "mcpio.client",
    "Notice": "mcpio.client",
    "Subscription": "mcpio.client",
    "Audio": "mcpio.content",
    "File": "mcpio.content",
    "Image": "mcpio.content",
    "Call": "mcpio.middleware.base",
    "CacheHint": "mcpio.hints",
    "Middleware": "mcpio.middleware.base",
    "LifespanError": "mcpio.errors",
    "Context": "mcpio.context",
    "Elicit": "mcpio.context",
    "ElicitUrl": "mcpio.context",
    "UrlElicitationRequired": "mcpio.context",
    "InvalidOutput": "mcpio.errors",
    "ListRoots": "mcpio.context",
    "Sample": "mcpio.context",
    "ConnectionClosed": "mcpio.errors",
    "McpError": "mcpio.errors",
    "NegotiationError": "mcpio.errors",
    "RequestTimeout": "mcpio.errors",
    "ToolError": "mcpio.errors",
    "Server": "mcpio.server",
    "ProtocolError": "mcpio.wire.errors",
    "__version__": "mcpio._version",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpio' has no attribute {name!r}")
    if module != "mcpio.auth_client":
        return getattr(importlib.import_module(module), name)
    with needs("http", "mcpio's OAuth client"):  # httpx at its top
        return getattr(importlib.import_module(module), name)


__all__ = [
    "Audio",
    "AuthError",
    "CacheHint",
    "Call",
    "Client",
    "ClientInfo",
    "ConnectionClosed",
    "Context",
    "Elicit",
    "ElicitUrl",
    "File",
    "FileTokenStore",
    "Image",
    "IntrospectionVerifier",
    "InvalidOutput",
    "InvalidToken",
    "JwtVerifier",
    "LifespanError",
    "ListRoots",
    "McpError",
    "MemoryTokenStore",
    "Middleware",
    "NegotiationError",
    "Notice",
    "OAuth",
    "Principal",
    "ProtocolError",
    "Redirect",
    "RedirectHandler",
    "RequestTimeout",
    "ResourceServerAuth",
    "Sample",
    "Server",
    "Subscription",
    "TokenStore",
    "TokenVerifier",
    "Tokens",
    "ToolError",
    "UrlElicitationRequired",
    "VerifierUnavailable",
]
