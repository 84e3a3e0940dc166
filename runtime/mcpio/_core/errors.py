"""The runtime's exceptions. Wire errors are `mcp_wire.ProtocolError` (a JSON-RPC error to send
or that was received); the rest are local conditions, which have no JSON-RPC code."""

from __future__ import annotations

from typing import Any

from mcp_wire_runtime.errors import ProtocolError


class McpError(ProtocolError):
    """The peer answered a request with a JSON-RPC error (`code`, `message`, `data`).

    Args:
        code: The JSON-RPC error code the peer answered with.
        message: The error's message, one line.
        data: The error's `data` member, naming what failed (None when absent).
    """

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r})"


class ConnectionClosed(Exception):
    """The transport ended (the peer exited or closed the stream) while a request was pending."""


class RequestTimeout(TimeoutError):
    """No response within the request's timeout; the request was cancelled on the wire."""


class NegotiationError(Exception):
    """Client and server share no protocol revision, or the handshake failed."""


class ToolError(Exception):
    """Raise in a tool handler to answer with a tool result marked `isError`.

    The result is a tool failure the model can read and correct, not a JSON-RPC error.
    `structured`, if given, is the result's structured content.
    """

    def __init__(self, message: str, *, structured: Any = None) -> None:
        super().__init__(message)
        self.structured = structured


class InvalidOutput(ValueError):
    """A tool's result breaks its declared output.

    Its `structuredContent` is missing where the tool's `outputSchema` promises it, or is not of
    the type the caller asked for (`result_type`).
    """


class AuthError(Exception):
    """The authorization flow could not complete.

    It was refused, misconfigured, or the server's answers break the rules:
    `mcpio.auth._client` raises it, the HTTP client transport passes it on.
    """


class LifespanError(Exception):
    """The server's lifespan (`Server(lifespan=...)`) failed to start.

    The server does not serve then.
    """
