"""The API client `Server.from_openapi` and `Server.from_fastapi` make when none is given: the
server's own, closed when its lifespan ends. An `httpx.AsyncClient` cannot be opened again, so a
server started again makes a new one at its first call (a client given by the caller is the
caller's to close)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcpio._core.extension import Extension

if TYPE_CHECKING:
    import httpx


class OwnedClient(Extension):
    """The server's API client (call it for the one to use now), closed as the server stops."""

    id = "io.github.mcpio/openapi-client"  # (declares nothing: it has no settings)

    def __init__(self, make: Callable[[], httpx.AsyncClient]) -> None:
        self._make = make
        self._client = make()

    def __call__(self) -> httpx.AsyncClient:
        if self._client.is_closed:
            self._client = self._make()
        return self._client

    def lifespan(self, server: Any) -> Any:
        return self._closing()

    @asynccontextmanager
    async def _closing(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self._client.aclose()
