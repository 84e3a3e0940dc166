"""Rules of the protocol that more than one side of the runtime goes by (the server, the client,
the inspector), written once here."""

from __future__ import annotations

from mcp_wire_runtime.errors import ProtocolError
from mcpio._core.negotiate import MODERN
from mcpio.latest import UNSUPPORTED_VERSION

# The Tasks extension's id (2026-07-28 capabilities `extensions`).
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
# The most `input_required` rounds of one request, on either side (then -32603).
MAX_INPUT_ROUNDS = 10
# The first legacy revision whose HTTP requests after `initialize` carry MCP-Protocol-Version.
VERSION_HEADER_SINCE = "2025-06-18"


def version_header_required(revision: str) -> bool:
    """Whether a legacy session of `revision` sends the negotiated MCP-Protocol-Version on every
    HTTP request after `initialize`."""
    return revision >= VERSION_HEADER_SINCE


def unsupported_version(version: object) -> ProtocolError:
    """The error answering a modern request of a revision this runtime does not speak."""
    supported = list(reversed(MODERN))
    return ProtocolError(
        UNSUPPORTED_VERSION,
        f"unsupported protocol version {version!r}; supported: {', '.join(supported)}",
        {"supported": supported, "requested": version},
    )
