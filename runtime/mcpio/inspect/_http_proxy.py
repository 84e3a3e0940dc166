"""The Streamable HTTP relay: a plain ASGI app that forwards every request (POST, GET streams,
DELETE; both eras) to the upstream MCP endpoint and streams its answer back unchanged, status,
headers and body bytes as they arrive (JSON or SSE). The client's POSTed frames are checked with
the request's headers; the answers' frames are read from the JSON body or, through the runtime's
`SseParser`, from the event stream. Every frame is checked after it is passed on (issue 37:
the checker is off the forwarding path): its check is queued as it is forwarded (a client's
body before it goes upstream, a JSON answer once it is whole, an event with the chunk that
completes it) and the queue runs when the event loop is free, first queued first
(`mcpio.inspect._deferred`); a new legacy session's checker is known from its answer's headers,
and a request's checker runs what is queued before it reads the session's state: a client
acting on a frame at once is still judged after the frame. Only `message` events with data
are frames (a priming event, an id with empty data, is none). Each legacy session
(`Mcp-Session-Id`) has its own checker; a legacy server that assigns no session id has each
later request judged on its own, from what its initialize negotiated (no lifecycle rule ties
it to a handshake); each modern POST is an exchange of its own (2026-07-28 is stateless: two clients may use the same
ids at once), checked with the server capabilities the last `server/discover` answered."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio

from mcpio._core.extras import needs
from mcpio._core.negotiate import MODERN, PROTOCOL_VERSION_KEY
from mcpio.inspect._checks import CLIENT, SERVER, Checker, SessionState
from mcpio.inspect._deferred import Deferred
from mcpio.inspect._guard import RelayGuard
from mcpio.inspect._rules import Finding
from mcpio.inspect._stateful import Shared
from mcpio.inspect._transcript import KEEP_BYTES, Recorder

with needs("http", "mcpio inspect --upstream"):
    import httpx
    import sniffio

    from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES
    from mcpio.http._asgi import Receive, Scope, Send
    from mcpio.transports._http1 import Http1Client
    from mcpio.transports._http1 import Response as LeanResponse
    from mcpio.transports._http_rules import EVENT_STREAM, JSON, media_type
    from mcpio.transports._sse import SseEvent, SseParser

# Not forwarded: they describe one hop, not the message.
HOP_BY_HOP = frozenset(
    {"host", "connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}
    | {"proxy-connection", "proxy-authenticate", "proxy-authorization"}
)
SESSION = "mcp-session-id"
SHUTDOWN_GRACE = 0.5  # seconds open streams get after SIGINT or SIGTERM


class ProxyApp:
    """The relay to `upstream` (an MCP endpoint URL), recording into `recorder`; `guard`
    checks each request's Host and Origin (by default: loopback only)."""

    def __init__(
        self,
        upstream: str,
        recorder: Recorder,
        client: httpx.AsyncClient | None = None,
        guard: RelayGuard | None = None,
    ) -> None:
        self.upstream = upstream
        self._upstream = httpx.URL(upstream)  # parsed once (the lean client keys on it)
        self.recorder = recorder
        self.guard = guard or RelayGuard()
        self.max_frame_bytes = MAX_MESSAGE_BYTES  # a larger answer passes unchecked, as it comes
        # a caller's httpx client (tests), else the lean HTTP/1.1 client of the MCP client
        # (httpx on a loop that is not asyncio's, and for a body too large to hold)
        self.client = client
        self.lean = Http1Client() if client is None else None
        self.discovered: dict[str, Any] | None = None  # the last server/discover's capabilities
        self.sessions: dict[str, Checker] = {}
        # the checker of a legacy initialize answered without a session id (the server MAY
        # assign none): its later session-less requests are judged each on its own, from it
        self.sessionless: Checker | None = None
        self.shared = Shared()
        self.checks = Deferred()  # frames' checks, run after the frames were passed on

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        lowered = {k.lower(): v for k, v in headers}
        refused = self.guard.refusal(lowered.get("host"), lowered.get("origin"))
        if refused is not None:
            await _answer(send, refused[0], refused[1].encode())
            return
        upload = await Upload(receive, self.max_frame_bytes).read()
        body = upload.whole or b""
        session = lowered.get(SESSION)
        checker = self._checker(session, body)
        method = scope["method"]
        exchange: dict[str, Any] = {"method": method}
        if method == "POST":
            mcp = {k: v for k, v in lowered.items() if k.startswith("mcp-")}
            exchange["headers"] = mcp  # replay sends them again
        if method == "POST" and body:

            def check_request() -> None:
                findings = checker.check(CLIENT, body, lowered, self.recorder.count)
                self.recorder.record(CLIENT, body, findings, session=session, http=exchange)

            self.checks.add(check_request)  # runs while the upstream works on it
        response = await self._forward(scope, headers, upload, send)
        self._forwarded()
        if upload.whole is None:  # too large to check: passed on as it came
            findings = [checker.too_large(CLIENT, upload.size)]
            self.recorder.record(
                CLIENT, upload.head, findings, session=session, http=exchange, size=upload.size
            )
        if response is None:
            return
        new_session = response.headers.get(SESSION)
        if new_session is not None and session is None:
            self.sessions[new_session] = checker  # before the client can read the session id
        elif session is None and response.status_code < 300 and _initialize(body):
            self.sessionless = checker
        asked = _request_ids(body) if method == "POST" else set()
        gone = await self._pass_on(response, receive, send, checker, session, method, asked)
        if method == "DELETE" and session is not None and response.status_code < 300:
            self.sessions.pop(session, None)
        if session is None and new_session is None:
            self.checks.add(lambda: self._exchange_over(checker, gone))
        self._forwarded()

    async def _pass_on(
        self,
        response: httpx.Response | LeanResponse,
        receive: Receive,
        send: Send,
        checker: Checker,
        session: str | None,
        method: str,
        asked: set[Any],
    ) -> bool:
        """Relays the upstream's answer to the client; True if the client left before its end."""
        gone = False
        try:
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    nonlocal gone
                    await _disconnected(receive)
                    gone = True
                    group.cancel_scope.cancel()  # the client left: stop reading upstream

                group.start_soon(watch)
                await self._relay(response, send, checker, session, method, asked)
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()  # closes the upstream stream, whoever ended it
        return gone

    def _exchange_over(self, checker: Checker, gone: bool) -> None:
        """A modern exchange's end, once its frames were checked."""
        self.discovered = checker.state.server_capabilities
        if not gone:  # a client that left cancelled it
            self.recorder.finish(checker.finish())

    def _forwarded(self) -> None:
        """After forwarding, on a loop that is not asyncio's: the checks queued (asyncio's
        runs them as soon as it is free)."""
        if self.checks.unscheduled():
            self.checks.run()

    async def _forward(
        self, scope: Scope, headers: list[tuple[str, str]], upload: Upload, send: Send
    ) -> httpx.Response | LeanResponse | None:
        """The request sent upstream (its body as it comes when too large to hold) and the
        answer's head; None when the upstream is unreachable (the client is told 502)."""
        url = self.upstream + (
            f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        )
        forwarded = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
        try:
            return await self._send(scope["method"], url, forwarded, upload)
        except (httpx.HTTPError, OSError) as exc:
            await _answer(send, 502, f"mcpio inspect: upstream unreachable: {exc}".encode())
            return None

    def finish(self) -> None:
        """At shutdown: what the open legacy sessions leave unanswered."""
        self.checks.run()
        for checker in self.sessions.values():
            self.recorder.finish(checker.finish())

    async def _send(
        self, method: str, url: str, headers: list[tuple[str, str]], upload: Upload
    ) -> httpx.Response | LeanResponse:
        """The request upstream, its answer's body left to stream."""
        body = upload.whole  # None: too large to hold, streamed (by httpx)
        asyncio_loop = sniffio.current_async_library() == "asyncio"
        if self.lean is not None and asyncio_loop and body is not None:
            sent = [(k, v) for k, v in headers if k.lower() != "content-length"]  # it sets its own
            content = body if body or method == "POST" else None
            target = self._upstream if url == self.upstream else httpx.URL(url)
            return await self.lean.send(method, target, sent, content)
        if self.client is None:
            self.client = httpx.AsyncClient(timeout=None)
        content = body if body is not None else upload.stream()
        request = self.client.build_request(method, url, headers=headers, content=content)
        return await self.client.send(request, stream=True)

    def _checker(self, session: str | None, body: bytes) -> Checker:
        self.checks.run()  # what was forwarded before this request is judged before it
        if session is not None:
            return self.sessions.setdefault(session, Checker(self.shared))
        checker = Checker(self.shared)
        if _initialize(body):  # a new legacy session
            return checker
        if self.sessionless is not None and not _modern(body):
            checker.state = _per_request(self.sessionless.state)
        else:  # a modern exchange
            checker.state.server_capabilities = self.discovered
        return checker

    def _check_events(
        self,
        parser: SseParser,
        chunk: bytes,
        checker: Checker,
        asked: bool,
        pending: set[Any],
        session: str | None,
        exchange: dict[str, Any],
    ) -> None:
        """Queue the checks of the events of a POST's stream that `chunk` completes (`pending`:
        the POST's requests not answered yet; a message after the last answer is a finding)."""
        for event in parser.feed(chunk):
            if not (event.too_large or _carries_message(event)):
                continue  # a priming event (an id, empty data) or another event of no message
            frame = event.data.encode()
            too_large = event.too_large

            def check_event(frame: bytes = frame, too_large: bool = too_large) -> None:
                if too_large:
                    findings = [checker.too_large(SERVER, parser.max_bytes + 1)]
                else:
                    index = self.recorder.count
                    findings = checker.check(SERVER, frame, index=index)
                    if asked and not pending:
                        findings.append(after_response(index))
                    pending.discard(_answered_id(frame))
                self.recorder.record(SERVER, frame, findings, session=session, http=exchange)

            self.checks.add(check_event)

    async def _relay(
        self,
        response: httpx.Response | LeanResponse,
        send: Send,
        checker: Checker,
        session: str | None,
        method: str,
        asked: set[Any],
    ) -> None:
        """The upstream's answer to the client, each frame's check (and record) queued as it is
        passed on; `asked`: the ids of the requests the POST carried (its stream should
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
        parser = SseParser(self.max_frame_bytes) if kind == EVENT_STREAM else None
        held = HeldBody(self.max_frame_bytes) if kind == JSON else None
        pending = set(asked)  # requests of the POST not answered yet
        async for chunk in chunks:
            if parser is not None:
                self._check_events(parser, chunk, checker, bool(asked), pending, session, exchange)
            elif held is not None:  # passed on once whole and checked, unless too large
                for piece in held.add(chunk):
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
                continue
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            self._forwarded()
        if held is not None and held.size:
            frame = held.whole()
            size = held.size

            def check_answer() -> None:
                if frame is None:
                    findings = [checker.too_large(SERVER, size)]
                else:
                    findings = checker.check(SERVER, frame, index=self.recorder.count)
                record = held.head if frame is None else frame
                self.recorder.record(
                    SERVER, record, findings, session=session, http=exchange, size=size
                )

            self.checks.add(check_answer)
            if frame is not None:
                await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class HeldBody:
    """A JSON answer, held until whole (then checked before it is passed on) up to `limit`
    bytes; past that, what was held and every later chunk pass on at once, and only the first
    `KEEP_BYTES` are kept, for the record."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.head = b""  # once too large: the beginning kept
        self._pieces: list[bytes] = []
        self._over = False

    def add(self, chunk: bytes) -> list[bytes]:
        """What to pass on now (nothing while the body is held)."""
        self.size += len(chunk)
        if not self._over:
            self._pieces.append(chunk)
            if self.size <= self.limit:
                return []
            self._over = True
            pieces, self._pieces = self._pieces, []
            for piece in pieces:
                self._keep(piece)
            return pieces
        self._keep(chunk)
        return [chunk]

    def _keep(self, piece: bytes) -> None:
        room = KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += piece[:room]

    def whole(self) -> bytes | None:
        """The body, held whole; None when it was too large to hold."""
        return None if self._over else b"".join(self._pieces)


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
    """The finding for a message sent on a POST's stream after every request on it was answered."""
    return Finding(
        "stream.after-response",
        SERVER,
        "$",
        "a message after every request of this POST was answered: the stream should have ended",
        index,
    )


def _carries_message(event: SseEvent) -> bool:
    """Whether an SSE event is a JSON-RPC message: a `message` event with data, as the client
    reads them (priming events, an id and empty data, are not; comments and retry-only events
    the parser never dispatches)."""
    return event.event == "message" and bool(event.data.strip())


def _per_request(negotiated: SessionState) -> SessionState:
    """The state a session-less legacy request is judged from: what its server's initialize
    negotiated, the lifecycle taken as done (no session ties the request to a handshake)."""
    return SessionState(
        revision=negotiated.revision,
        initialized=True,
        client_ready=True,
        client_capabilities=negotiated.client_capabilities,
        server_capabilities=negotiated.server_capabilities,
    )


def _modern(body: bytes) -> bool:
    """Whether a POST body is a modern (2026-07-28) request: its `_meta` names a modern revision."""
    try:
        frame = json.loads(body)
    except ValueError:
        return False
    params = frame.get("params") if type(frame) is dict else None
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and meta.get(PROTOCOL_VERSION_KEY) in MODERN


def _initialize(body: bytes) -> bool:
    """Whether a POST body is a legacy `initialize` request."""
    try:
        frame = json.loads(body)
    except ValueError:
        return False
    return type(frame) is dict and frame.get("method") == "initialize"


class Upload:
    """A client's request body: held whole up to `limit` bytes (checked before it is passed
    on); a longer one is passed on as it arrives (`stream`), only its first `KEEP_BYTES` kept,
    for the record."""

    def __init__(self, receive: Receive, limit: int) -> None:
        self._receive = receive
        self.limit = limit
        self.whole: bytes | None = None  # None: too large to hold
        self._held = HeldBody(limit)
        self._first: list[bytes] = []  # read already, once past the limit
        self._more = True

    @property
    def size(self) -> int:
        """The body's size in bytes."""
        return self._held.size

    @property
    def head(self) -> bytes:
        """The body's first bytes, as the transcript keeps them."""
        return self._held.head

    async def read(self) -> Upload:
        """Read until the body is whole or past the limit."""
        while self._more:
            self._first = self._held.add(await self._next())
            if self._first:
                return self  # past the limit: `stream` passes it on
        self.whole = self._held.whole()
        return self

    async def _next(self) -> bytes:
        message = await self._receive()
        if message["type"] == "http.disconnect":
            self._more = False
            return b""
        self._more = bool(message.get("more_body"))
        return message.get("body", b"")

    async def stream(self) -> AsyncIterator[bytes]:
        """The body of one too large to hold: what was read, then the rest as it comes."""
        first, self._first = self._first, []
        for piece in first:
            yield piece
        del first
        while self._more:
            for piece in self._held.add(await self._next()):
                yield piece


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
    app = ProxyApp(upstream, recorder, guard=RelayGuard(host))
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
