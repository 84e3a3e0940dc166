"""mcpio: the hand-written MCP runtime, a server and a client stitched to `mcp_wire`.

They serve and speak every pinned revision, both eras, over stdio (and Streamable HTTP), on the
generated `mcp_wire` layers.

Names load on first use: `mcp_wire` imports `mcp_wire_runtime`, and neither may pay for the runtime;
the authorization names (`ResourceServerAuth`, `JwtVerifier`, `OAuth`, ...) bring httpx, and
PyJWT when a `JwtVerifier` is made, only when they are used.

Examples:
    >>> from mcpio import Client, Context, Server
    >>> Server.__module__, Client.__module__, Context.__module__
    ('mcpio.server._server', 'mcpio.client._client', 'mcpio._core.context')
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpio._core.extras import needs

if TYPE_CHECKING:
    from mcp_wire_runtime.errors import ProtocolError
    from mcpio._core.content import Audio, File, Image
    from mcpio._core.context import (
        Context,
        Elicit,
        ElicitUrl,
        ListRoots,
        Sample,
        UrlElicitationRequired,
    )
    from mcpio._core.dependencies import (
        CurrentContext,
        CurrentHeaders,
        Depends,
        get_context,
        get_http_headers,
    )
    from mcpio._core.errors import (
        AuthError,
        ConnectionClosed,
        InvalidOutput,
        LifespanError,
        McpError,
        NegotiationError,
        RequestTimeout,
        ResourceError,
        ToolError,
    )
    from mcpio._core.extras import MissingExtra
    from mcpio._core.hints import CacheHint
    from mcpio._core.principal import Principal
    from mcpio._core.results import Message, ToolResult
    from mcpio._version import __version__ as __version__
    from mcpio.auth._client import (
        ClientInfo,
        FileTokenStore,
        MemoryTokenStore,
        OAuth,
        Redirect,
        RedirectHandler,
        Tokens,
        TokenStore,
    )
    from mcpio.auth._resource import (
        IntrospectionVerifier,
        InvalidToken,
        JwtVerifier,
        ResourceServerAuth,
        TokenVerifier,
        VerifierUnavailable,
    )
    from mcpio.client._client import Client, Notice, Subscription
    from mcpio.middleware._base import Call, Middleware
    from mcpio.server._server import Server

_EXPORTS = {
    "IntrospectionVerifier": "mcpio.auth._resource",
    "InvalidToken": "mcpio.auth._resource",
    "JwtVerifier": "mcpio.auth._resource",
    "Principal": "mcpio._core.principal",
    "Message": "mcpio._core.results",
    "ToolResult": "mcpio._core.results",
    "ResourceServerAuth": "mcpio.auth._resource",
    "TokenVerifier": "mcpio.auth._resource",
    "VerifierUnavailable": "mcpio.auth._resource",
    "AuthError": "mcpio._core.errors",
    "ClientInfo": "mcpio.auth._client",
    "FileTokenStore": "mcpio.auth._client",
    "MemoryTokenStore": "mcpio.auth._client",
    "OAuth": "mcpio.auth._client",
    "Redirect": "mcpio.auth._client",
    "RedirectHandler": "mcpio.auth._client",
    "Tokens": "mcpio.auth._client",
    "TokenStore": "mcpio.auth._client",
    "Client": "mcpio.client._client",
    "Notice": "mcpio.client._client",
    "Subscription": "mcpio.client._client",
    "Audio": "mcpio._core.content",
    "File": "mcpio._core.content",
    "Image": "mcpio._core.content",
    "Call": "mcpio.middleware._base",
    "CacheHint": "mcpio._core.hints",
    "MissingExtra": "mcpio._core.extras",
    "Middleware": "mcpio.middleware._base",
    "LifespanError": "mcpio._core.errors",
    "Context": "mcpio._core.context",
    "CurrentContext": "mcpio._core.dependencies",
    "CurrentHeaders": "mcpio._core.dependencies",
    "Depends": "mcpio._core.dependencies",
    "get_context": "mcpio._core.dependencies",
    "get_http_headers": "mcpio._core.dependencies",
    "Elicit": "mcpio._core.context",
    "ElicitUrl": "mcpio._core.context",
    "UrlElicitationRequired": "mcpio._core.context",
    "InvalidOutput": "mcpio._core.errors",
    "ListRoots": "mcpio._core.context",
    "Sample": "mcpio._core.context",
    "ConnectionClosed": "mcpio._core.errors",
    "McpError": "mcpio._core.errors",
    "NegotiationError": "mcpio._core.errors",
    "RequestTimeout": "mcpio._core.errors",
    "ResourceError": "mcpio._core.errors",
    "ToolError": "mcpio._core.errors",
    "Server": "mcpio.server._server",
    "ProtocolError": "mcp_wire_runtime.errors",
    "__version__": "mcpio._version",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpio' has no attribute {name!r}")
    if module != "mcpio.auth._client":
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
    "CurrentContext",
    "CurrentHeaders",
    "Depends",
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
    "Message",
    "Middleware",
    "MissingExtra",
    "NegotiationError",
    "Notice",
    "OAuth",
    "Principal",
    "ProtocolError",
    "Redirect",
    "RedirectHandler",
    "RequestTimeout",
    "ResourceError",
    "ResourceServerAuth",
    "Sample",
    "Server",
    "Subscription",
    "TokenStore",
    "TokenVerifier",
    "Tokens",
    "ToolError",
    "ToolResult",
    "UrlElicitationRequired",
    "VerifierUnavailable",
    "get_context",
    "get_http_headers",
]
