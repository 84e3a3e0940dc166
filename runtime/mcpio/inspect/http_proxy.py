"""The Streamable HTTP relay: a plain ASGI app that forwards every request (POST, GET streams,
DELETE; both eras) to the upstream MCP endpoint and streams its answer back unchanged, status,
headers and body bytes as they arrive (JSON or SSE). The client's POSTed frames are checked with
the request's headers; the answers' frames are read from the JSON body or, through the runtime's
`SseParser`, from the event stream. Every frame is checked before it is passed on (a JSON body
once it is whole, an event with the chunk that completes it), and a new legacy session's checker
is known from its answer's headers: a client acting on a frame at once is still judged after the
frame. Each legacy session (`Mcp-Session-Id`) has its own checker;
each modern POST is an exchange of its own (2026-07-28 is stateless: two clients may use the same
ids at once), checked with the server capabilities the last `server/discover` answered."""

from __future__ import annotations

import json
from typing import Any

import anyio

from mcpio.extras import needs
from mcpio.inspect.checks import CLIENT, SERVER, Checker
from mcpio.inspect.rules import Finding
from mcpio.inspect.stateful import Shared
from mcpio.inspect.transcript import Recorder

with needs("http", "mcpio inspect --upstream"):
    import httpx
    import sniffio

    from mcpio.http.asgi import Receive, Scope, Send
    from mcpio.transports.http1 import Http1Client
    from mcpio.transports.http1 import Response as LeanResponse
    from mcpio.transports.http_rules import EVENT_STREAM, JSON, media_type
    from mcpio.transports.sse import SseParser

# Not forwarded: they describe one hop, not the message.
HOP_BY_HOP = frozenset(
    {"host", "connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}
    | {"proxy-connection", "proxy-authenticate", "proxy-authorization"}
)
SESSION = "mcp-session-id"
SHUTDOWN_GRACE = 0.5  # seconds open streams get after SIGINT or SIGTERM


class ProxyApp:
    """The relay to `upstream` (an MCP endpoint URL), recording into `recorder`."""

    def __init__(
        self, upstream: str, recorder: Recorder, client: httpx.AsyncClient | None = None
    ) -> None:
        self.upstream = upstream
        self.recorder = recorder
        # a caller's httpx client (tests), else the lean HTTP/1.1 client of the MCP client
        # (httpx on a loop that is not asyncio's)
        self.client = client
        self.lean = Http1Client() if client is None else None
        self.discovered: dict[str, Any] | None = None  # the last server/discover's capabilities
        self.sessions: dict[str, Checker] = {}
        self.shared = Shared()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        body = await _body(receive)
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        lowered = {k.lower(): v for k, v in headers}
        session = lowered.get(SESSION)
        checker = self._checker(session, body)
        method = scope["method"]
        exchange: dict[str, Any] = {"method": method}
        if method == "POST" and body:
            mcp = {k: v for k, v in lowered.items() if k.startswith("mcp-")}
            exchange["headers"] = mcp  # replay sends them again
            findings = checker.check(CLIENT, body, lowered, len(self.recorder.entries))
            self.recorder.record(CLIENT, body, findings, session=session, http=exchange)
        url = self.upstream + (
            f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        )
        forwarded = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
        try:
            response = await self._forward(method, url, forwarded, body)
        except (httpx.HTTPError, OSError) as exc:
            await _answer(send, 502, f"mcpio inspect: upstream unreachable: {exc}".encode())
            return
        new_session = response.headers.get(SESSION)
        if new_session is not None and session is None:
            self.sessions[new_session] = checker  # before the client can read the session id
        gone = False
        try:
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    nonlocal gone
                    await _disconnected(receive)
                    gone = True
                    group.cancel_scope.cancel()  # the client left: stop reading upstream

                group.start_soon(watch)
                asked = _request_ids(body) if method == "POST" else set()
                await self._relay(response, send, checker, session, method, asked)
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()  # closes the upstream stream, whoever ended it
        if method == "DELETE" and session is not None and response.status_code < 300:
            self.sessions.pop(session, None)
        if session is None and new_session is None:
            self.discovered = checker.state.server_capabilities
            if not gone:  # a modern exchange is over; a client that left cancelled it
                self.recorder.finish(checker.finish())

    def finish(self) -> None:
        """At shutdown: what the open legacy sessions leave unanswered."""
        for checker in self.sessions.values():
            self.recorder.finish(checker.finish())

    async def _forward(
        self, method: str, url: str, headers: list[tuple[str, str]], body: bytes
    ) -> httpx.Response | LeanResponse:
        """The request upstream, its answer's body left to stream."""
        if self.lean is not None and sniffio.current_async_library() == "asyncio":
            sent = [(k, v) for k, v in headers if k.lower() != "content-length"]  # it sets its own
            content = body if body or method == "POST" else None
            return await self.lean.send(method, httpx.URL(url), sent, content)
        if self.client is None:
            self.client = httpx.AsyncClient(timeout=None)
        request = self.client.build_request(method, url, headers=headers, content=body)
        return await self.client.send(request, stream=True)

    def _checker(self, session: str | None, body: bytes) -> Checker:
        if session is not None:
            return self.sessions.setdefault(session, Checker(self.shared))
        checker = Checker(self.shared)
        if not _initialize(body):  # a modern exchange (else: a new legacy session)
            checker.state.server_capabilities = self.discovered
        return checker

    async def _relay(
        self,
        response: httpx.Response | LeanResponse,
        send: Send,
        checker: Checker,
        session: str | None,
        method: str,
        asked: set[Any],
    ) -> None:
        """The upstream's answer to the client, each frame checked (and recorded) before the
        client sees it; `asked`: the ids of the requests the POST carried (its stream should
        end once each is answered)."""
        if isinstance(response, httpx.Response):
            received = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.multi_items()
            ]
            chunks = response.aiter_raw()
        else:
            received, chunks = response.raw_headers, response.aiter_bytes()
        headers = [(k, v) for k, v in received if k.lower().decode("latin-1") not in HOP_BY_HOP]
        await send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        kind = media_type(response.headers.get("content-type", ""))
        session = session or response.headers.get(SESSION)
        exchange = {"method": method, "status": response.status_code, "content_type": kind}
        parser = SseParser() if kind == EVENT_STREAM else None
        held: list[bytes] = []
        pending = set(asked)  # requests of the POST not answered yet
        async for chunk in chunks:
            if parser is not None:
                for event in parser.feed(chunk):
                    frame = event.data.encode()
                    if event.too_large:
                        findings = [checker.too_large(SERVER, parser.max_bytes + 1)]
                    else:
                        index = len(self.recorder.entries)
                        findings = checker.check(SERVER, frame, index=index)
                        if asked and not pending:
                            findings.append(after_response(index))
                        pending.discard(_answered_id(frame))
                    self.recorder.record(SERVER, frame, findings, session=session, http=exchange)
            elif kind == JSON:
                held.append(chunk)  # passed on once whole and checked
                continue
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if held:
            frame = b"".join(held)
            index = len(self.recorder.entries)
            findings = checker.check(SERVER, frame, index=index)
            self.recorder.record(SERVER, frame, findings, session=session, http=exchange)
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _request_ids(body: bytes) -> set[Any]:
    """The ids of the requests a POST body carries (one message or a batch); none if unreadable."""
    try:
        data = json.loads(body)
    except ValueError:
        return set()
    items = data if isinstance(data, list) else [data]
    return {
        _hashable(item["id"])
        for item in items
        if isinstance(item, dict) and "method" in item and item.get("id") is not None
    }


def _answered_id(frame: bytes) -> Any:
    """The id a response frame answers (None for anything else)."""
    try:
        data = json.loads(frame)
    except ValueError:
        return None
    if isinstance(data, dict) and "method" not in data and ("result" in data or "error" in data):
        return _hashable(data.get("id"))
    return None


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def after_response(index: int) -> Finding:
    return Finding(
        "stream.after-response",
        SERVER,
        "$",
        "a message after every request of this POST was answered: the stream should have ended",
        index,
    )


def _initialize(body: bytes) -> bool:
    """Whether a POST body is a legacy `initialize` request."""
    try:
        frame = json.loads(body)
    except ValueError:
        return False
    return type(frame) is dict and frame.get("method") == "initialize"


async def _body(receive: Receive) -> bytes:
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(parts)


async def _disconnected(receive: Receive) -> None:
    """Until the client goes (the request's body was read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _answer(send: Send, status: int, text: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def serve_proxy(upstream: str, listen: tuple[str, int], recorder: Recorder) -> None:
    """Serve the relay on `listen` until interrupted (SIGINT or SIGTERM)."""
    with needs("http", "mcpio inspect --upstream"):
        import uvicorn
    host, port = listen
    app = ProxyApp(upstream, recorder)
    # Open streams (a GET or listen stream) must not hold the shutdown: they are cut after
    # SHUTDOWN_GRACE seconds, which closes their upstream streams.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        # uvicorn annotates an int, and waits with asyncio.wait_for: any number of seconds
        timeout_graceful_shutdown=SHUTDOWN_GRACE,  # pyright: ignore[reportArgumentType]
    )
    app.finish()
