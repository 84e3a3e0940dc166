"""The client's HTTP transport on 2025-03-26 .. 2025-11-25 (`StreamableSession`, an era of
`HttpTransport`): a session opened by `initialize` (its `Mcp-Session-Id`, and the negotiated
`MCP-Protocol-Version` where the revision asks for it), every frame POSTed in it, a POST's event
stream resumed with `Last-Event-ID` when it ends early, the GET stream for what the server says
on its own, and the session DELETEd on close."""

from __future__ import annotations

import logging
import re

import anyio
import httpx

from mcpio._core.errors import AuthError
from mcpio._core.jsonrpc import RequestId
from mcpio._core.protocol_rules import version_header_required
from mcpio.transports._http_answers import Failure, HttpAnswers
from mcpio.transports._http_base import Answer, describe
from mcpio.transports._http_inbox import Post
from mcpio.transports._http_rules import ACCEPT_BOTH, EVENT_STREAM, media_type, plain_header_value

log = logging.getLogger("mcpio")

OLD = (400, 404, 405)  # an `initialize` POST refused so may have met a 2024-11-05 server
MAX_RESUMPTIONS = 3  # reconnections in a row that bring no event
DEFAULT_RETRY = 1.0  # seconds before reconnecting when the server sent no `retry`
_SESSION_ID = re.compile(r"[\x21-\x7e]+")


class StreamableSession(HttpAnswers):
    """A legacy Streamable HTTP session."""

    def _init_streamable(self) -> None:
        self.session_id: str | None = None
        self.legacy_version: str | None = None
        self._get_scope: anyio.CancelScope | None = None
        self._legacy_key: tuple[str | None, str | None, str] | None = None
        self._legacy: dict[str, str] = {}  # the last legacy headers built, for `_legacy_key`

    def _new_handshake(self) -> None:
        """`initialize`: a new legacy session; what the probe left in flight is abandoned."""
        for post in self._inflight.values():
            if post.modern:
                post.aborted = True
                post.scope.cancel()
        if self._get_scope is not None:
            self._get_scope.cancel()
        self.session_id = self.legacy_version = None
        if self.era != "sse":
            self.era = "legacy"

    async def _post_legacy(
        self, id: RequestId, data: bytes, headers: dict[str, str], post: Post
    ) -> Failure | None:
        """POST a request in the session and settle it by its answer (resuming its event
        stream); the refusal of an `initialize` that may have met a 2024-11-05 server."""
        async with self._open("POST", self.url, headers, data) as response:
            status = response.status_code
            if post.method == "initialize":
                if status in OLD:
                    return self._failure(response, await self._read_body(response), headers)
                if response.is_success and status != 202:
                    self._learn_session(response)
            last_id, retry = await self._answered(id, post, response, headers)
            if last_id is not None:
                await self._resume(id, post, last_id, retry)
        return None

    def _learn_session(self, response: Answer) -> None:
        session = response.headers.get("mcp-session-id")
        if session is None:
            return
        if _SESSION_ID.fullmatch(session):
            self.session_id = session
        else:
            log.warning("ignored a session id with characters outside 0x21-0x7E")

    def _legacy_headers(self, accept: str = ACCEPT_BOTH) -> dict[str, str]:
        key = (self.session_id, self.legacy_version, accept)
        if self._legacy_key != key:  # the same until the session or its version changes
            self._legacy_key, self._legacy = key, self._new_legacy_headers(accept)
        return {**self._legacy}

    def _new_legacy_headers(self, accept: str) -> dict[str, str]:
        headers = self._base_headers(accept)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        version = self.legacy_version
        if version is not None and version_header_required(version) and plain_header_value(version):
            headers["MCP-Protocol-Version"] = version
        return headers

    def _stream_headers(self, last_id: str | None) -> dict[str, str]:
        """The headers of a GET for the session's events (after `last_id`)."""
        headers = self._legacy_headers(EVENT_STREAM)
        headers.pop("Content-Type", None)
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        return headers

    async def _resume(self, id: RequestId, post: Post, last_id: str, retry: float | None) -> None:
        """A legacy POST stream ended after an event id: GET it back with Last-Event-ID."""
        idle = 0
        while not post.settled and idle < MAX_RESUMPTIONS:
            await anyio.sleep(DEFAULT_RETRY if retry is None else retry)
            async with self._open("GET", self.url, self._stream_headers(last_id)) as response:
                if (
                    not response.is_success
                    or media_type(response.headers.get("content-type", "")) != EVENT_STREAM
                ):
                    return
                new_id, new_retry = await self._read_events(response, id, post)
            idle = 0 if new_id not in (None, last_id) else idle + 1
            last_id, retry = new_id or last_id, new_retry if new_retry is not None else retry

    # ---------------------------------------------------------------- the GET stream

    def _start_get_stream(self) -> None:
        if self._tasks is None or self._closed:
            return
        if self._get_scope is not None:
            self._get_scope.cancel()
        scope = self._get_scope = anyio.CancelScope()
        self._spawn(self._get_stream, scope)

    async def _get_stream(self, scope: anyio.CancelScope) -> None:
        """What the server says outside any request; reconnected when it ends (after `retry`)
        until it stops bringing events."""
        last_id: str | None = None
        retry: float | None = None
        idle = 0
        with scope:
            while idle < MAX_RESUMPTIONS:
                new_id: str | None = None
                try:
                    async with self._open(
                        "GET", self.url, self._stream_headers(last_id)
                    ) as response:
                        if response.status_code == 405:
                            log.debug("the server offers no GET stream (405)")
                            return
                        if (
                            not response.is_success
                            or media_type(response.headers.get("content-type", "")) != EVENT_STREAM
                        ):
                            log.debug("no GET stream: HTTP %s", response.status_code)
                            return
                        new_id, new_retry = await self._read_events(response, None, None)
                        retry = new_retry if new_retry is not None else retry
                except (httpx.HTTPError, OSError, AuthError) as exc:
                    log.debug("the GET stream failed: %s", describe(exc))
                idle = 0 if new_id not in (None, last_id) else idle + 1
                last_id = new_id or last_id
                await anyio.sleep(DEFAULT_RETRY if retry is None else retry)

    async def _end_session(self) -> None:
        """DELETE the session (a 405 is fine): on close, within the transport's timeout."""
        if self.session_id is None or self.era != "legacy" or not self._can_send():
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(self._timeout):
            try:
                headers = self._legacy_headers()
                if self.auth is not None and self._http is not None:
                    headers.update(await self.auth.headers(self.url, self._http, "DELETE"))
                response = await self._send_once("DELETE", self.url, headers)
                await response.aclose()
                if response.status_code not in (200, 202, 204, 404, 405):
                    log.debug("DELETE of the session: HTTP %s", response.status_code)
            except (httpx.HTTPError, OSError) as exc:
                log.debug("DELETE of the session failed: %s", exc)
