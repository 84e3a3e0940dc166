"""`mcpio replay TRANSCRIPT --server CMD|URL`: re-send the client side of a recorded session to
a server (a command line: stdio; a URL: Streamable HTTP) and report where its answers differ
from the recorded ones.

Each recorded client request is sent in order and its answer awaited; the answer is compared
with the recorded answer to the same request, member by member, ids, timestamps and other
volatile members left out. The client's answers to server requests (legacy) go out with the new
server's request ids; a modern retry's `requestState` is the one the new server issued.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import anyio

from mcpio._core.extras import needs
from mcpio._core.negotiate import PROTOCOL_VERSION_KEY
from mcpio._core.redact import redacted, split_credentials
from mcpio.inspect._transcript import Entry
from mcpio.transports._http_rules import (
    ACCEPT_BOTH,
    EVENT_STREAM,
    JSON,
    NAMED_BY,
    encode_header_value,
    media_type,
)
from mcpio.transports._sse import SseParser
from mcpio.transports.stdio import spawn

# Members whose value differs from run to run by design.
VOLATILE = frozenset(
    {"id", "requestState", "timestamp", "createdAt", "lastUpdatedAt", "progressToken"}
    | {"io.modelcontextprotocol/serverInfo", "sessionId", "elicitationId"}
)


@dataclass(frozen=True)
class Difference:
    index: int  # the recorded request's frame
    method: str
    path: str
    recorded: Any
    now: Any

    def line(self) -> str:
        """The difference as one line of the report."""
        return (
            f"#{self.index} {self.method} {self.path}: recorded {json.dumps(self.recorded)}, "
            f"now {json.dumps(self.now)}"
        )


_ABSENT = "<absent>"


def differences(recorded: Any, now: Any, path: str = "$") -> Iterator[tuple[str, Any, Any]]:
    """Where two JSON values differ, volatile members left out."""
    if type(recorded) is dict and type(now) is dict:
        for key in sorted(set(recorded) | set(now)):
            if key in VOLATILE:
                continue
            yield from differences(
                recorded.get(key, _ABSENT), now.get(key, _ABSENT), f"{path}.{key}"
            )
    elif type(recorded) is list and type(now) is list and len(recorded) == len(now):
        for index, (a, b) in enumerate(zip(recorded, now, strict=True)):
            yield from differences(a, b, f"{path}.{index}")
    elif recorded != now or type(recorded) is not type(now):
        yield path, recorded, now


def _json(frame: bytes) -> Any:
    try:
        return json.loads(frame)
    except ValueError:
        return None


class Peer:
    """The server being replayed against, over stdio."""

    def __init__(self, command: list[str]) -> None:
        self.command = command

    async def __aenter__(self) -> Peer:
        self.stream = await spawn(self.command)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stream.aclose()

    async def send(self, frame: bytes, headers: dict[str, str] | None = None) -> None:
        """Send a frame to the server (`headers` are for HTTP peers)."""
        await self.stream.send(frame)

    async def receive(self) -> bytes:
        """The next frame from the server."""
        return await self.stream.receive()


class HttpPeer:
    """The server being replayed against, over Streamable HTTP: each client frame is its own
    POST (with the `Mcp-*` headers it was recorded with, or those its body implies), answered
    by JSON or an event stream whose frames are read as they come; a legacy session's id and
    version are the new server's. The URL's credentials go as HTTP Basic, never shown; a server
    that cannot be reached is a `ReplayError`."""

    def __init__(self, url: str) -> None:
        self.url, self._basic = split_credentials(url)
        self.session: str | None = None
        self.version: str | None = None
        self.failure: str | None = None  # why a POST got no answer

    async def __aenter__(self) -> HttpPeer:
        with needs("http", "mcpio replay against a URL"):
            import httpx
        basic = {} if self._basic is None else {"authorization": self._basic.reveal()}
        self.http = httpx.AsyncClient(timeout=None, headers=basic)
        self._errors = httpx.HTTPError
        self.frames: tuple[Any, Any] = anyio.create_memory_object_stream[bytes](1000)
        self.group = await anyio.create_task_group().__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.group.cancel_scope.cancel()
        await self.group.__aexit__(None, None, None)
        if self.session is not None:
            with anyio.move_on_after(5):
                await self.http.delete(self.url, headers=self._session_headers())
        await self.http.aclose()

    def _session_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.session is not None:
            headers["mcp-session-id"] = self.session
        if self.version is not None:
            headers["mcp-protocol-version"] = self.version
        return headers

    def _headers(self, obj: Any, recorded: dict[str, str] | None) -> dict[str, str]:
        headers = {"content-type": JSON, "accept": ACCEPT_BOTH}
        if recorded:
            headers.update(recorded)
        elif type(obj) is dict and type(obj.get("params")) is dict:
            version = obj["params"].get("_meta", {}).get(PROTOCOL_VERSION_KEY)
            if type(version) is str:
                headers["mcp-protocol-version"] = version
                headers["mcp-method"] = str(obj.get("method"))
                name = obj["params"].get(NAMED_BY.get(str(obj.get("method")), ""))
                if type(name) is str:
                    headers["mcp-name"] = encode_header_value(name)
        if "mcp-method" not in headers:  # a legacy session's frame
            headers.pop("mcp-session-id", None)
            headers.update(self._session_headers())
        return headers

    async def send(self, frame: bytes, headers: dict[str, str] | None = None) -> None:
        """POST a frame to the server; its answers arrive through `receive`."""
        obj = _json(frame)
        self.group.start_soon(self._post, frame, self._headers(obj, headers), obj)
        await anyio.lowlevel.checkpoint()

    async def _post(self, frame: bytes, headers: dict[str, str], obj: Any) -> None:
        try:
            await self._exchange(frame, headers, obj)
        except self._errors as exc:
            self.failure = redacted(f"no answer from {self.url}: {exc or type(exc).__name__}")
            await self.frames[0].send(b"")  # wakes `receive`, which raises

    async def _exchange(self, frame: bytes, headers: dict[str, str], obj: Any) -> None:
        async with self.http.stream("POST", self.url, content=frame, headers=headers) as answer:
            if type(obj) is dict and obj.get("method") == "initialize":
                self.session = answer.headers.get("mcp-session-id")
            kind = media_type(answer.headers.get("content-type", ""))
            if kind == EVENT_STREAM:
                parser = SseParser()
                async for chunk in answer.aiter_bytes():
                    for event in parser.feed(chunk):
                        await self._got(event.data.encode())
            elif kind == JSON:
                await self._got(await answer.aread())

    async def _got(self, frame: bytes) -> None:
        obj = _json(frame)
        if type(obj) is dict and type(obj.get("result")) is dict:
            version = obj["result"].get("protocolVersion")
            if type(version) is str and "serverInfo" in obj["result"]:
                self.version = version  # the initialize answer
        await self.frames[0].send(frame)

    async def receive(self) -> bytes:
        """The next frame the server answered, from any POST or stream."""
        frame = await self.frames[1].receive()
        if self.failure is not None:
            raise ReplayError(self.failure)
        return frame


class ReplayError(Exception):
    """The server replayed against could not be reached (one line, no credentials)."""


async def replay_transcript(
    entries: list[Entry], target: str | list[str], timeout: float, out: IO[str]
) -> list[Difference]:
    """Replay and print each difference (and a last line counting them) to `out`."""
    recorded = _recorded_answers(entries)
    requests: list[tuple[int, str, str]] = []  # (frame index, method, id key) in order
    peer: Peer | HttpPeer = HttpPeer(target) if isinstance(target, str) else Peer(target)
    async with peer:
        session = _Session(peer, timeout)
        for entry in entries:
            if entry.direction != "client->server":
                continue
            obj = _json(entry.frame)
            if type(obj) is dict and "method" in obj and "id" in obj:
                requests.append((entry.index, str(obj["method"]), json.dumps(obj["id"])))
            await session.send(entry.frame, obj, (entry.http or {}).get("headers"))
        await session.settle()
    found: list[Difference] = []
    for index, method, key in requests:
        before, now = recorded.get(key), session.answers.get(key)
        if before is None and now is None:
            continue
        if before is None or now is None:
            what = "none" if now is None else "an answer"
            found.append(
                Difference(index, method, "$", "an answer" if now is None else "none", what)
            )
            continue
        found.extend(Difference(index, method, p, a, b) for p, a, b in differences(before, now))
    for difference in found:
        out.write(difference.line() + "\n")
    out.write(f"mcpio replay: {len(found)} differences\n")
    return found


def _recorded_answers(entries: list[Entry]) -> dict[str, Any]:
    """The recorded server answers, by the id of the request they answer."""
    answers: dict[str, Any] = {}
    for entry in entries:
        obj = _json(entry.frame)
        if entry.direction == "server->client" and type(obj) is dict and "method" not in obj:
            answers.setdefault(json.dumps(obj.get("id")), obj)
    return answers


class _Session:
    """The replayed session: what is in flight, what the new server asked and issued."""

    def __init__(self, peer: Peer | HttpPeer, timeout: float) -> None:
        self.peer = peer
        self.timeout = timeout
        self.outstanding: dict[str, str] = {}  # id key -> method, of our requests in flight
        self.answers: dict[str, Any] = {}  # id key -> the new server's answer
        self.server_requests: list[Any] = []  # ids of the new server's unanswered requests
        self.state: dict[str, str] = {}  # method -> the requestState the new server issued

    async def send(self, frame: bytes, obj: Any, headers: dict[str, str] | None = None) -> None:
        """Send one client frame (adapted to the new session), then read until our requests
        are answered or the server asks something (the transcript's next frame answers it)."""
        if type(obj) is dict and "method" not in obj and self.server_requests:
            obj = {**obj, "id": self.server_requests.pop(0)}  # our answer to its request
            frame = json.dumps(obj).encode()
        elif type(obj) is dict and type(obj.get("params")) is dict:
            params = obj["params"]
            if "requestState" in params and obj.get("method") in self.state:
                obj = {**obj, "params": {**params, "requestState": self.state[obj["method"]]}}
                frame = json.dumps(obj).encode()
        await self.peer.send(frame, headers)
        if type(obj) is dict and "method" in obj and "id" in obj:
            self.outstanding[json.dumps(obj["id"])] = str(obj["method"])
        await self.settle()

    async def settle(self) -> None:
        with anyio.move_on_after(self.timeout):
            while self.outstanding and not self.server_requests:
                self._read(_json(await self.peer.receive()))

    def _read(self, obj: Any) -> None:
        if type(obj) is not dict:
            return
        if "method" in obj and "id" in obj:
            self.server_requests.append(obj["id"])
        elif "method" not in obj:
            key = json.dumps(obj.get("id"))
            method = self.outstanding.pop(key, None)
            if method is None:
                return
            self.answers[key] = obj
            result = obj.get("result")
            if type(result) is dict and type(result.get("requestState")) is str:
                self.state[method] = result["requestState"]


__all__ = ["Difference", "HttpPeer", "Peer", "differences", "replay_transcript"]
