"""CORS for browser clients of the MCP endpoint (`http_app(cors_origins=[...])`): a preflight
(OPTIONS) from a listed origin is answered with the methods and request headers MCP uses, and
every answer to that origin names it and exposes the headers a browser client must read
(`Mcp-Session-Id`, `Mcp-Protocol-Version`, `WWW-Authenticate`, and RFC 9449's `DPoP-Nonce`, which a
DPoP client needs to retry after `use_dpop_nonce`). An origin is matched exactly as
the browser sends it (`https://app.example:8443`); "*" allows any. No credentials (cookies):
MCP clients send their token in `Authorization` (and a DPoP proof in `DPoP`), which a preflight
allows."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcpio.http._asgi import Message, Send

METHODS = "GET, POST, DELETE"
# What MCP clients send besides the CORS-safelisted headers (`Mcp-Param-*` by its prefix).
REQUEST_HEADERS = frozenset(
    {"content-type", "accept", "authorization", "dpop", "last-event-id"}
    | {"mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"}
)
EXPOSED = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, DPoP-Nonce"
MAX_AGE = "600"  # seconds a browser may keep a preflight's answer
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9a-z]+")


class Cors:
    """The origins whose pages may call the endpoint from a browser (`*` for any)."""

    def __init__(self, origins: Iterable[str]) -> None:
        self.origins = frozenset(origin.rstrip("/").lower() for origin in origins)

    def __bool__(self) -> bool:
        return bool(self.origins)

    def allows(self, origin: str) -> bool:
        """Whether the page at `origin` may call the endpoint."""
        return "*" in self.origins or origin.lower() in self.origins

    def preflight(self, requested: str) -> list[tuple[bytes, bytes]] | None:
        """The headers answering a preflight for the request headers it names
        (`Access-Control-Request-Headers`), besides `headers(origin)`; None when one is no MCP
        header."""
        names = [name.strip().lower() for name in requested.split(",") if name.strip()]
        for name in names:
            if not _TOKEN.fullmatch(name) or not (
                name in REQUEST_HEADERS or name.startswith("mcp-param-")
            ):
                return None
        return [
            (b"access-control-allow-methods", METHODS.encode()),
            (b"access-control-allow-headers", ", ".join(names).encode("latin-1")),
            (b"access-control-max-age", MAX_AGE.encode()),
        ]

    def headers(self, origin: str) -> list[tuple[bytes, bytes]]:
        """What every answer to an allowed `origin` carries."""
        return [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-expose-headers", EXPOSED.encode()),
            (b"vary", b"Origin"),
        ]

    def sending(self, send: Send, origin: str) -> Send:
        """`send` adding the CORS headers of `origin` to the response's head."""
        extra = self.headers(origin)

        async def cors_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return cors_send
