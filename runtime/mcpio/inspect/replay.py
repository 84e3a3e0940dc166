"""`mcpio replay TRANSCRIPT --server CMD|URL`: re-send the client side of a recorded session to
a server and report where its answers differ from the recorded ones.

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

from mcpio.inspect.transcript import Entry
from mcpio.negotiate import PROTOCOL_VERSION_KEY
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

    async def send(self, frame: bytes) -> None:
        await self.stream.send(frame)

    async def receive(self) -> bytes:
        return await self.stream.receive()


async def replay_transcript(
    entries: list[Entry], target: str | list[str], timeout: float, out: IO[str]
) -> list[Difference]:
    """Replay and print each difference (and a last line counting them) to `out`."""
    if isinstance(target, str):
        raise NotImplementedError("replay against an HTTP URL is not built yet")
    recorded = _recorded_answers(entries)
    requests: list[tuple[int, str, str]] = []  # (frame index, method, id key) in order
    async with Peer(target) as peer:
        session = _Session(peer, timeout)
        for entry in entries:
            if entry.direction != "client->server":
                continue
            obj = _json(entry.frame)
            if type(obj) is dict and "method" in obj and "id" in obj:
                requests.append((entry.index, str(obj["method"]), json.dumps(obj["id"])))
            await session.send(entry.frame, obj)
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

    def __init__(self, peer: Peer, timeout: float) -> None:
        self.peer = peer
        self.timeout = timeout
        self.outstanding: dict[str, str] = {}  # id key -> method, of our requests in flight
        self.answers: dict[str, Any] = {}  # id key -> the new server's answer
        self.server_requests: list[Any] = []  # ids of the new server's unanswered requests
        self.state: dict[str, str] = {}  # method -> the requestState the new server issued

    async def send(self, frame: bytes, obj: Any) -> None:
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
        await self.peer.send(frame)
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


__all__ = ["PROTOCOL_VERSION_KEY", "Difference", "differences", "replay_transcript"]
