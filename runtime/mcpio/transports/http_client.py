"""Streamable HTTP, the client's side: `HttpTransport`, and the `Auth` it runs.

`HttpTransport` moves JSON-RPC frames over HTTP POSTs (and server-sent event streams) so that a
`Session`, and the `Client` on it, work unchanged over HTTP. It reads each outgoing frame to
choose how to carry it: on 2026-07-28 one POST per request with the routing headers
(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); on 2025-03-26 .. 2025-11-25
every frame POSTed in the session (`Mcp-Session-Id`), a GET stream for what the server says on
its own, the session DELETEd on close; 2024-11-05 HTTP+SSE when the `initialize` POST fails with
400, 404 or 405.

Every request is settled: any failure to get its response (an HTTP error status, a JSON-RPC
error body, a body that is not JSON or too large, no HTTP exchange at all) puts a JSON-RPC error
response with the request's id into the incoming frames, `data` carrying `{"status": <HTTP
status>}` where there was one. An `Auth` (`HttpTransport(url, auth=...)`) gives the headers of
every HTTP request and is handed a 401 or 403.

The Connecting page of the docs (clients/connecting.md, "Over HTTP") spells out how each
revision is carried, which error settles which failure, and the authorization retries.

`HttpTransport` is the public face: it tells each outgoing frame's era and hands it to that
era's part, and hands what comes back to the session. The parts are private modules over one
base: `_http_base` (the HTTP client, headers and credentials, tasks, one exchange with its
authorization retries), `_http_answers` (a POST's answer, a refusal, the error that settles a
request), and one per era: `_http_modern` (2026-07-28), `_http_streamable` (2025-03-26 ..
2025-11-25: the session, its GET stream, resumption) and `_http_sse_legacy` (2024-11-05).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any, cast

import anyio
import httpx
import pydantic_core

from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES
from mcp_wire_runtime.errors import INTERNAL_ERROR, INVALID_REQUEST, ProtocolError
from mcpio._core.errors import AuthError
from mcpio._core.jsonrpc import RequestId
from mcpio._core.negotiate import envelope_version, peek_any
from mcpio.transports._http1 import MAX_CONNECTIONS
from mcpio.transports._http_answers import Failure
from mcpio.transports._http_base import CONNECTION_FAILED, Auth, TooLarge, describe
from mcpio.transports._http_base import lean_fits as _lean_fits  # noqa: F401  (tests read it)
from mcpio.transports._http_inbox import Post, Scope, TaskScope
from mcpio.transports._http_modern import ModernPost
from mcpio.transports._http_sse_legacy import SseSession
from mcpio.transports._http_streamable import StreamableSession

log = logging.getLogger("mcpio")


class HttpTransport(ModernPost, StreamableSession, SseSession):
    """A `Transport` over Streamable HTTP (and 2024-11-05 HTTP+SSE) to the MCP endpoint `url`.

    Use it as an async context manager (it runs a task per POST); `Client("http://...")` does.
    By default the transport sends over its own lean HTTP/1.1 client
    (`mcpio.transports._http1`), or over an httpx client of its own where the environment names
    a proxy for the URL (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, less `NO_PROXY`: what httpx
    honours) or the event loop is not asyncio's; with `auth`, an httpx client also runs the
    authorization flow's own requests. The transport's own clients send `User-Agent:
    mcpio/<version>` (unless `headers` name one). Credentials in `url` (`user:password@`) go
    as HTTP Basic on every request and are taken out of `url` (never shown).

    Args:
        url: The MCP endpoint's http(s) URL.
        headers: Headers sent on every HTTP request (for example a fixed `Authorization`).
        connect_timeout: Seconds to connect (default 10).
        timeout: The HTTP timeout in seconds, but for reads (default 30): it bounds a POST
            that answers a notification and the session's DELETE; streams are read without a
            deadline (keep-alives and the request's own timeout bound them).
        endpoint_timeout: Seconds to wait for a 2024-11-05 server's `endpoint` event
            (default 10).
        max_bytes: The largest message accepted from the server (default
            `MAX_MESSAGE_BYTES`).
        auth: Runs an authorization flow when the server asks for one
            (`mcpio.auth._client.OAuth`).
        http: The `httpx.AsyncClient` to use (its TLS, proxies, transport: a mock in tests),
            left open when the transport closes; it should not follow redirects (a redirect
            is reported, not followed).
        max_connections: At most this many connections to the server at once, on the
            transport's own clients (100 by default; on the lean client per origin, a request
            beyond them waits for one to free up).

    Raises:
        ValueError: `url` is not an http(s) URL, `max_connections` is below 1, or `url` has
            credentials as well as `auth` or an `Authorization` header.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        timeout: float = 30.0,
        endpoint_timeout: float = 10.0,
        max_bytes: int = MAX_MESSAGE_BYTES,
        auth: Auth | None = None,
        http: httpx.AsyncClient | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        super().__init__(
            url,
            headers=headers,
            connect_timeout=connect_timeout,
            timeout=timeout,
            max_bytes=max_bytes,
            auth=auth,
            http=http,
            max_connections=max_connections,
        )
        self._init_modern()
        self._init_streamable()
        self._init_sse(endpoint_timeout)

    # ---------------------------------------------------------------- lifetime

    @property
    def entered(self) -> bool:
        """Whether it is open (entered as an async context manager)."""
        return self._tasks is not None

    async def __aenter__(self) -> HttpTransport:
        await self._open_clients()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
        await self._stack.aclose()

    async def receive(self) -> bytes:
        """Return the next frame from the server (answers and its own messages).

        Raises `anyio.EndOfStream` once closed.
        """
        try:
            return await self._incoming.get()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        """Stop every stream and end a legacy session (DELETE; a 405 is fine).

        `receive` then raises `EndOfStream`. Safe to call twice.
        """
        if self._closed:
            return
        self._stop()
        await self._end_session()

    # ---------------------------------------------------------------- outgoing frames

    async def send(self, data: bytes) -> None:
        """POST a frame; its answer arrives through `receive`."""
        if self._closed or self._tasks is None:
            raise anyio.ClosedResourceError
        try:
            env = peek_any(data)
        except ProtocolError:
            env = None
        if env is not None and env.kind == "request" and env.method is not None:
            # A request is carried by its envelope alone (the hot path: no parse of its params).
            self._request(env, data)
            return
        try:
            obj = pydantic_core.from_json(data)
        except ValueError:
            obj = None
        if type(obj) is not dict:  # a batch (2025-03-26) or something unreadable: as it is
            await self._post(data, "", self._era_headers(None))
            return
        frame = cast(dict[str, Any], obj)
        method = frame.get("method")
        if type(method) is str and "id" in frame:  # not a valid request: sent as it is
            id = frame["id"]
            self._request(Peek("request", id, method, None, envelope_version(frame)), data)
        elif type(method) is str:
            await self._notification(frame, method, data)
        elif self.era == "modern":
            log.warning("a response to the server has no place on 2026-07-28 HTTP: dropped")
        else:
            await self._post(data, "", self._era_headers(None))

    async def send_request(self, data: bytes) -> None:
        """`send`, but a request's exchange runs in the caller's task, to its end.

        Its response (or the error standing for it) is delivered before this returns; no task
        per request (`mcpio._core.transport.Exchanging`: a session's requests). On the lean
        client only; anything else goes by `send`.
        """
        if self._lean is None or self._closed or self._tasks is None:
            await self.send(data)
            return
        try:
            env = peek_any(data)
        except ProtocolError:
            env = None
        if env is None or env.kind != "request" or env.method is None:
            await self.send(data)
            return
        if self._unstarted:  # a task spawned before it has yet to send: not ahead of it
            self._request(env, data)
            return
        id, headers, post = self._prepare(env, data)
        self._scopes.add(post.scope)  # closing the transport ends it
        try:
            await self._run_request(id, data, headers, post)
        finally:
            self._scopes.discard(post.scope)

    def abandon(self, id: RequestId) -> None:
        """Its caller stopped waiting (a timeout): end the request's exchange."""
        self._abort(self._post_of(id))

    def _request(self, env: Peek, data: bytes) -> None:
        id, headers, post = self._prepare(env, data)
        self._spawn(self._run_request, id, data, headers, post, scope=post.scope)

    def _prepare(self, env: Peek, data: bytes) -> tuple[Any, dict[str, str], Post]:
        """A request's era, its headers and its `Post`, counted in flight: a request with a
        protocol version in its envelope is modern; one without goes in the legacy session."""
        assert self._tasks is not None and env.method is not None
        id, method, version = env.id, env.method, env.protocol_version
        # on the lean client's loop each request has a task of its own: a cheaper scope
        scope: Scope = anyio.CancelScope() if self._lean is None else TaskScope()
        if version is not None:
            self.era, self.modern_version = "modern", version
            post = Post(method, True, scope)
            headers = self._modern_headers(env, data, method, version)
        else:
            if method == "initialize":
                self._new_handshake()
            post = Post(method, False, scope)
            headers = self._era_headers(method)
        if type(id) is int or type(id) is str:
            self._inflight[id] = post
        return id, headers, post

    async def _notification(self, frame: dict[str, Any], method: str, data: bytes) -> None:
        params = frame.get("params")
        if method == "notifications/cancelled":
            target = params.get("requestId") if type(params) is dict else None
            post = self._post_of(target)
            if (post is not None and post.modern) or (post is None and self.era == "modern"):
                self._abort(post)  # 2026-07-28: closing the POST is the cancellation
                return
            await self._post(data, method, self._era_headers(method))
            self._abort(post)  # legacy: told; its stream is of no more use
            return
        if self.era == "modern":
            await self._post(data, method, self._notice_headers(frame, method))
            return
        accepted = await self._post(data, method, self._era_headers(method))
        if method == "notifications/initialized" and accepted and self.era == "legacy":
            self._start_get_stream()

    def _era_headers(self, method: str | None) -> dict[str, str]:
        """The headers of a legacy or 2024-11-05 frame."""
        if self.era == "sse":
            return self._sse_headers()
        if method == "initialize":
            return self._base_headers()
        return self._legacy_headers()

    async def _post(self, data: bytes, method: str, headers: dict[str, str]) -> bool:
        """`_post_message` to where the era takes messages (2024-11-05: its endpoint)."""
        url = self._endpoint if self.era == "sse" and self._endpoint is not None else self.url
        return await self._post_message(url, data, method, headers)

    async def _run_request(
        self, id: RequestId, data: bytes, headers: dict[str, str], post: Post
    ) -> None:
        """A request's exchange in its era, settled whatever happens."""
        try:
            with post.scope:
                if post.modern:
                    await self._post_modern(id, data, headers, post)
                elif self.era == "sse":
                    await self._post_to_endpoint(id, data, headers, post)
                else:
                    refused = await self._post_legacy(id, data, headers, post)
                    if refused is not None:
                        await self._old_server(id, data, post, refused)
        except TooLarge:
            self._settle(id, post, INVALID_REQUEST, self._too_large())
        except AuthError as exc:
            self._settle(id, post, INVALID_REQUEST, f"authorization failed: {exc}")
        except (httpx.HTTPError, OSError) as exc:
            self._settle(id, post, CONNECTION_FAILED, f"HTTP request failed: {describe(exc)}")
        except Exception as exc:  # no failure may leave a request unsettled or a traceback out
            log.debug("HTTP request %r failed", id, exc_info=True)
            self._settle(id, post, INTERNAL_ERROR, f"HTTP request failed: {describe(exc)}")
        finally:
            if self._inflight.get(id) is post:
                del self._inflight[id]
        if self.era != "sse" or post.modern:
            self._settle(
                id, post, CONNECTION_FAILED, "the server ended the exchange without a response"
            )

    async def _old_server(self, id: RequestId, data: bytes, post: Post, refused: Failure) -> None:
        """An `initialize` refused as by a 2024-11-05 server: sent again over HTTP+SSE if the
        URL serves that, else settled by the refusal."""
        if await self._open_sse_era():
            await self._post_to_endpoint(id, data, self._era_headers(None), post)
        else:
            self._settle(id, post, refused.code, refused.message, refused.data)

    # ---------------------------------------------------------------- incoming frames

    def _deliver(self, raw: bytes, env: Peek | None = None) -> None:
        """Hand a frame to the session, learning on the way what the transport needs from it
        (the negotiated legacy version, the tools' x-mcp-header annotations). A response is
        read by its envelope (`env`, peeked when not given); only the results the transport
        learns from, and frames peek refuses, are parsed whole."""
        if env is None:
            try:
                env = peek_any(raw)
            except ProtocolError:
                pass
        if env is not None and env.kind in ("result", "error"):
            post = self._post_of(env.id)
            if post is not None:
                if post.settled:
                    return  # an error already stood for it
                if env.kind == "result" and (
                    post.method == "tools/list" or (post.method == "initialize" and not post.modern)
                ):
                    self._deliver_parsed(raw)
                    return
                post.settled = True
                settle = self.on_frame
                if settle is not None and self._idle() and settle(raw, env.id):
                    return  # settled by its envelope: the session reads it no more
        elif env is None:
            self._deliver_parsed(raw)
            return
        self._incoming.put(raw)

    def _idle(self) -> bool:
        """Whether the session's read loop waits with nothing queued: a response settled now
        keeps its place after the frames read before it."""
        return self._incoming.idle()

    def _deliver_parsed(self, raw: bytes) -> None:
        """`_deliver`, the frame parsed whole."""
        try:
            obj = pydantic_core.from_json(raw)
        except ValueError:
            obj = None
        if type(obj) is dict and "method" not in obj:
            frame = cast(dict[str, Any], obj)
            id = frame.get("id")
            post = self._post_of(id)
            if post is not None:
                if post.settled:
                    return  # an error already stood for it
                post.settled = True
                result = frame.get("result")
                if type(result) is dict:
                    result = cast(dict[str, Any], result)
                    if post.method == "initialize" and not post.modern:
                        version = result.get("protocolVersion")
                        self.legacy_version = version if type(version) is str else None
                    elif post.method == "tools/list":
                        raw = self._learn_tools(frame, result, raw, post.modern)
        self._incoming.put(raw)


__all__ = ["CONNECTION_FAILED", "Auth", "HttpTransport"]
