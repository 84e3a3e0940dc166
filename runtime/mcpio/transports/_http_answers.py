"""What comes back to the client's HTTP transport, whatever the era (`HttpAnswers`, under the
eras of `HttpTransport`): a POST's answer (JSON, or an event stream of frames), a refusal read as
the JSON-RPC error it means, and the error response that settles a request whose answer never
came (see `HttpTransport`'s module for which failure settles how)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import anyio
import httpx
import pydantic_core

from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError
from mcpio._core.jsonrpc import RequestId
from mcpio._core.negotiate import peek_any
from mcpio.transports._http_base import Answer, HttpBase, TooLarge, describe
from mcpio.transports._http_inbox import Post
from mcpio.transports._http_rules import EVENT_STREAM, JSON, code_of_status, media_type
from mcpio.transports._sse import SseParser

log = logging.getLogger("mcpio")


@dataclass
class Failure:
    """The JSON-RPC error a failed HTTP exchange stands for."""

    code: int
    message: str
    data: Any = None


class HttpAnswers(HttpBase):
    """Reading the server's answers and settling the requests they answer."""

    def _deliver(self, raw: bytes, env: Peek | None = None) -> None:
        """Hand a frame to the session (`HttpTransport._deliver`)."""
        raise NotImplementedError

    async def _post_message(
        self, url: httpx.URL, data: bytes, method: str, headers: dict[str, str]
    ) -> bool:
        """POST a notification or a response (202 expected); failures are logged, not raised:
        nothing waits for them. True if the server accepted it."""
        try:
            with anyio.fail_after(self._timeout):
                async with self._open("POST", url, headers, data) as response:
                    if response.is_success:
                        return True
                    body = b""
                    try:
                        body = await self._read_body(response)
                    except TooLarge:
                        pass
                    failure = self._failure(response, body, headers)
                    log.warning("the server refused %s: %s", method or "a message", failure.message)
        except Exception as exc:  # nothing waits for it: say so and go on
            log.warning("could not deliver %s: %s", method or "a message", describe(exc))
        return False

    async def _answered(
        self, id: RequestId, post: Post, response: Answer, headers: dict[str, str]
    ) -> tuple[str | None, float | None]:
        """Settle a request by the answer to its POST. An event stream that ended without its
        response: its last event id and retry interval (to resume a legacy one by)."""
        status = response.status_code
        if status == 202:
            message = "the server answered a request with 202 Accepted: no response will come"
            self._settle(id, post, INVALID_REQUEST, message, {"status": status})
            return None, None
        if not response.is_success:
            failure = self._failure(response, await self._read_body(response), headers)
            self._settle(id, post, failure.code, failure.message, failure.data)
            return None, None
        kind = media_type(response.headers.get("content-type", ""))
        if kind == JSON:
            self._deliver_body(id, post, await self._read_body(response))
        elif kind == EVENT_STREAM:
            last_id, retry = await self._read_events(response, id, post)
            if not post.settled:
                return last_id, retry
        else:
            message = f"HTTP {status}: unexpected content type {kind or 'none'!r}"
            self._settle(id, post, INTERNAL_ERROR, message, {"status": status})
        return None, None

    async def _read_events(
        self, response: Answer, id: RequestId | None, post: Post | None
    ) -> tuple[str | None, float | None]:
        """Deliver the frames of an event stream until it ends or brings `post`'s response;
        the last event id and retry interval it gave."""
        parser = SseParser(self.max_bytes)
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                if event.too_large:
                    if id is not None and post is not None:
                        self._settle(id, post, INVALID_REQUEST, self._too_large())
                        return None, None
                    log.warning("dropped an event from the server: %s", self._too_large())
                elif event.event == "message" and event.data.strip():  # not a priming event
                    self._deliver(event.data.encode())
                if post is not None and post.settled:
                    return parser.last_event_id, parser.retry
        return parser.last_event_id, parser.retry

    def _deliver_body(self, id: RequestId, post: Post, body: bytes) -> None:
        try:
            env = peek_any(body)
        except ProtocolError:
            env = None
        if env is not None and env.kind in ("result", "error") and env.id == id:
            self._deliver(body, env)  # the answer to this request: its envelope says enough
            return
        try:
            obj = pydantic_core.from_json(body)
        except ValueError:
            self._settle(id, post, INTERNAL_ERROR, "the server's answer is not JSON")
            return
        if type(obj) is dict and ("result" in obj or "error" in obj):
            frame = cast(dict[str, Any], obj)
            if frame.get("id") == id:
                self._deliver(body)
                return
            if frame.get("id") is None and type(frame.get("error")) is dict:
                self._deliver(pydantic_core.to_json({**frame, "id": id}))
                return
            self._deliver(body)
        message = "the server's answer is not a JSON-RPC response to this request"
        self._settle(id, post, INTERNAL_ERROR, message)

    def _settle(self, id: RequestId, post: Post, code: int, message: str, data: Any = None) -> None:
        """Put an error response standing for `post`'s missing response into the incoming
        frames (unless it was answered, or we abandoned it)."""
        if post.settled or post.aborted or self._closed:
            return
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._deliver(pydantic_core.to_json({"jsonrpc": "2.0", "id": id, "error": error}))

    def _post_of(self, id: Any) -> Post | None:
        return self._inflight.get(id) if type(id) is int or type(id) is str else None

    def _abort(self, post: Post | None) -> None:
        if post is not None and not post.settled:
            post.aborted = True
            post.scope.cancel()

    def _failure(self, response: Answer, body: bytes, headers: Mapping[str, str]) -> Failure:
        """What a failed HTTP exchange means for its request (see `HttpTransport`'s module)."""
        status = response.status_code
        reason = f"HTTP {status}: {response.reason_phrase or 'error'}"
        if status == 404 and "Mcp-Session-Id" in headers:
            return Failure(
                INVALID_REQUEST,
                f"the session expired ({reason}); a new connection starts a new one",
                {"status": status, "sessionExpired": True},
            )
        try:
            obj = pydantic_core.from_json(body) if body else None
        except ValueError:
            obj = None
        error = obj.get("error") if type(obj) is dict else None
        if type(error) is dict:
            error = cast(dict[str, Any], error)
            code, message = error.get("code"), error.get("message")
            if type(code) is int and type(message) is str:
                return Failure(code, message, error.get("data"))
        if 300 <= status < 400:
            location = response.headers.get("location")
            if location:
                reason += f"; the redirect to {location} was not followed"
            return Failure(INVALID_REQUEST, reason, {"status": status})
        return Failure(code_of_status(status), reason, {"status": status})

    def _too_large(self) -> str:
        return f"the server's message exceeds the {self.max_bytes}-byte limit"
