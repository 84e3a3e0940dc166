"""A fixed bearer token as an HTTP client `Auth` (`Client(url, auth="token")`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx


class BearerToken:
    """Sends `Authorization: Bearer <token>` on every request.

    A 401 or 403 is not retried: it fails the request, and a client's negotiation, with that
    status.
    """

    def __init__(self, token: str) -> None:
        if not token or any(c in token for c in "\r\n"):
            raise ValueError("a bearer token is a non-empty single line")
        self._header = {"Authorization": f"Bearer {token}"}

    async def headers(
        self, url: httpx.URL, http: httpx.AsyncClient, method: str = "POST"
    ) -> dict[str, str]:
        """The `Authorization: Bearer` header, for every request.

        Args:
            url: The request's URL (unused: the header is the same for every URL).
            http: The HTTP client sending it (unused).
            method: The request's HTTP method (unused).
        """
        return dict(self._header)

    async def challenge(
        self,
        url: httpx.URL,
        response: httpx.Response,
        sent: Mapping[str, str],
        http: httpx.AsyncClient,
    ) -> bool:
        """A fixed token cannot answer a 401 or 403: False (the request fails at once).

        Args:
            url: The URL of the refused request.
            response: The 401 or 403 response.
            sent: The headers the request was sent with.
            http: The HTTP client that sent it.
        """
        return False

    def succeeded(self) -> None:
        """Nothing to remember: the token is fixed."""
        pass
