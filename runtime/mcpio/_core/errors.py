"""The runtime's exceptions. Wire errors are `mcp_wire.ProtocolError` (a JSON-RPC error to send
or that was received); the rest are local conditions, which have no JSON-RPC code."""

from __future__ import annotations

from typing import Any

from mcpio.wire.errors import ProtocolError


class McpError(ProtocolError):
    """The peer answered a request with a JSON-RPC error (`code`, `message`, `data`)."""

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r})"


class ConnectionClosed(Exception):
    """The transport ended (the peer exited or closed the stream) while a request was pending."""


class RequestTimeout(TimeoutError):
    """No response within the request's timeout; the request was cancelled on the wire."""


class NegotiationError(Exception):
    """Client and server share no protocol revision, or the handshake failed."""


class ToolError(Exception):
    """Raise in a tool handler to answer with a tool result marked `isError` (a tool failure the
    model can read and correct), not with a JSON-RPC error."""

    def __init__(self, message: str, *, structured: Any = None) -> None:
        super().__init__(message)
        self.structured = structured


class InvalidOutput(ValueError):
    """A tool's result breaks its declared output: `structuredContent` missing where the tool's
    `outputSchema` promises it, or not of the type the caller asked for (`result_type`)."""


class AuthError(Exception):
    """The authorization flow could not complete (refused, misconfigured, or the server's
    answers break the rules): `mcpio.auth._client` raises it, the HTTP client transport
    passes it on."""


class LifespanError(Exception):
    """The server's lifespan (`Server(lifespan=...)`) failed to start: the server does not
    serve."""
