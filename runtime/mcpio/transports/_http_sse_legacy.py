"""The client's HTTP transport on 2024-11-05 HTTP+SSE (`SseSession`, an era of `HttpTransport`),
met when an `initialize` POST is refused with 400, 404 or 405: a GET of the URL opens an event
stream whose first event, `endpoint`, names where to POST (on the same origin); every answer
then comes on that stream, and the connection ends with it."""

from __future__ import annotations

import logging

import anyio
import httpx

from mcpio._core.errors import AuthError
from mcpio._core.jsonrpc import RequestId
from mcpio.transports._http_answers import HttpAnswers
from mcpio.transports._http_base import Answer, describe
from mcpio.transports._http_inbox import Post
from mcpio.transports._http_rules import EVENT_STREAM, JSON, media_type
from mcpio.transports._sse import SseParser

log = logging.getLogger("mcpio")


class SseSession(HttpAnswers):
    """A 2024-11-05 HTTP+SSE connection."""

    def _init_sse(self, endpoint_timeout: float) -> None:
        self._endpoint_timeout = endpoint_timeout
        self._endpoint: httpx.URL | None = None  # where to POST, once the stream said
        self._sse_scope: anyio.CancelScope | None = None

    def _sse_headers(self) -> dict[str, str]:
        return {**self._extra, "Content-Type": JSON}

    async def _open_sse_era(self) -> bool:
        """GET the URL as an old SSE endpoint; True once its `endpoint` event arrived."""
        if self._tasks is None or self._closed:
            return False
        if self._sse_scope is not None:
            return self._endpoint is not None
        ready = anyio.Event()
        scope = self._sse_scope = anyio.CancelScope()
        self._spawn(self._sse_stream, scope, ready)
        with anyio.move_on_after(self._endpoint_timeout):
            await ready.wait()
        if self._endpoint is None:
            scope.cancel()
            self._sse_scope = None
            return False
        self.era = "sse"
        return True

    async def _sse_stream(self, scope: anyio.CancelScope, ready: anyio.Event) -> None:
        headers = {**self._extra, "Accept": EVENT_STREAM}
        try:
            with scope:
                async with self._open("GET", self.url, headers) as response:
                    if (
                        not response.is_success
                        or media_type(response.headers.get("content-type", "")) != EVENT_STREAM
                    ):
                        return
                    await self._read_sse_events(response, ready)
        except (httpx.HTTPError, OSError, AuthError) as exc:
            log.debug("the SSE stream failed: %s", describe(exc))
        finally:
            ready.set()
            if self._endpoint is not None and not self._closed:
                log.debug("the SSE stream ended: the connection is closed")
                self._incoming.close_sending()  # every answer came this way: none will come now

    async def _read_sse_events(self, response: Answer, ready: anyio.Event) -> None:
        """Learn the endpoint from the first event (`ready` then), deliver the frames after."""
        parser = SseParser(self.max_bytes)
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                if self._endpoint is None:
                    if event.event != "endpoint" or event.too_large:
                        return
                    target = self.url.join(event.data.strip())
                    if self._origin(target) != self._origin(self.url):
                        log.warning("ignored an SSE endpoint on another origin")
                        return
                    self._endpoint = target
                    ready.set()
                elif event.too_large:
                    log.warning("dropped an event from the server: %s", self._too_large())
                elif event.event == "message" and event.data.strip():
                    self._deliver(event.data.encode())

    async def _post_to_endpoint(
        self, id: RequestId, data: bytes, headers: dict[str, str], post: Post
    ) -> None:
        assert self._endpoint is not None
        async with self._open("POST", self._endpoint, headers, data) as response:
            if response.is_success:
                return  # the answer comes on the SSE stream
            failure = self._failure(response, await self._read_body(response), headers)
            self._settle(id, post, failure.code, failure.message, failure.data)
