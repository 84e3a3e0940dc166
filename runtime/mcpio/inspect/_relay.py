"""The stdio relay: the host launches `mcpio inspect -- <server command...>` instead of the
server; the relay starts the server and copies bytes both ways unchanged, chunk by chunk, as
they arrive (garbage and oversized lines included: the peer sees exactly what it would see
without the proxy). A copy of each direction is split into lines for the checker; the server's
stderr is the relay's own."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import anyio

from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES
from mcpio.inspect._checks import CLIENT, SERVER, Checker
from mcpio.inspect._rules import Direction
from mcpio.inspect._transcript import Recorder
from mcpio.transports.stdio import (  # pyright: ignore[reportPrivateUsage]
    CHUNK,
    _pipe_reader,
    _pipe_writer,
)


@dataclass
class Line:
    data: bytes  # at most `keep` bytes of it
    size: int


class LineSplitter:
    """Newline-delimited frames of a byte stream, for observation: each line's first `keep`
    bytes and its full size (a huge line is never held whole); blank lines are skipped."""

    def __init__(self, keep: int = MAX_MESSAGE_BYTES) -> None:
        self._keep = keep
        self._pieces: list[bytes] = []
        self._kept = 0
        self._size = 0

    def feed(self, chunk: bytes) -> list[Line]:
        """The lines a chunk completes (a line past the limit: its size alone)."""
        lines: list[Line] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            line = self._take()
            if line is not None:
                lines.append(line)
            start = end + 1
        self._add(chunk[start:])
        return lines

    def end(self) -> Line | None:
        """The last line, when the stream ended without its newline."""
        return self._take()

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        room = self._keep - self._kept
        if room > 0 and piece:
            self._pieces.append(piece[:room])
            self._kept += min(room, len(piece))

    def _take(self) -> Line | None:
        data, size = b"".join(self._pieces), self._size
        self._pieces, self._kept, self._size = [], 0, 0
        if not data.strip(b" \t\r"):
            return None
        return Line(data, size)


class Observer:
    """Checks and records the lines of both directions of one session."""

    def __init__(self, recorder: Recorder, checker: Checker | None = None) -> None:
        self.recorder = recorder
        self.checker = checker or Checker()

    def line(self, direction: Direction, line: Line) -> None:
        """Check and record one line (a frame) sent in `direction`."""
        if line.size > len(line.data):  # past the limit: judged by its size alone
            findings = [self.checker.too_large(direction, line.size)]
        else:
            index = self.recorder.count
            findings = self.checker.check(direction, line.data, index=index)
        self.recorder.record(direction, line.data, findings, size=line.size)

    def finish(self) -> None:
        """Record what the session's end shows (requests never answered)."""
        self.recorder.finish(self.checker.finish())


async def _pump(
    read: Callable[[], Awaitable[bytes]],
    write: Callable[[bytes], Awaitable[None]],
    direction: Direction,
    observer: Observer,
) -> None:
    """Copy until the end of `read`, then check the last unterminated line, if any."""
    splitter = LineSplitter()
    while chunk := await read():
        try:
            await write(chunk)
        except (ConnectionError, OSError, RuntimeError):
            break  # the reader is gone: what is still read is checked, not delivered
        finally:
            for line in splitter.feed(chunk):
                observer.line(direction, line)
    last = splitter.end()
    if last is not None:
        observer.line(direction, last)


async def relay_stdio(command: Sequence[str], observer: Observer, grace: float = 2.0) -> int:
    """Run `command` with the host's stdin and stdout relayed through `observer`; the server's
    exit status (when the host closes stdin, the server's stdin is closed; SIGTERM after
    `grace` seconds, then SIGKILL)."""
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=CHUNK
    )
    assert process.stdin is not None and process.stdout is not None
    child_in, child_out = process.stdin, process.stdout
    host_read = await _pipe_reader(sys.stdin.fileno())  # (a regular file: a worker thread's)
    host_write, _ = await _pipe_writer(sys.stdout.fileno())

    async def to_server(data: bytes) -> None:
        child_in.write(data)
        await child_in.drain()

    async def from_server() -> bytes:
        try:
            return await child_out.read(CHUNK)
        except (ConnectionError, OSError):
            return b""

    async def client_side() -> None:
        await _pump(host_read, to_server, CLIENT, observer)
        if not child_in.is_closing():
            child_in.close()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(client_side)
            await _pump(from_server, host_write, SERVER, observer)
            await process.wait()
            group.cancel_scope.cancel()  # the server is gone: stop reading the host
    finally:
        await _stop(process, grace)
    return process.returncode if process.returncode is not None else 1


async def _stop(process: asyncio.subprocess.Process, grace: float) -> None:
    with anyio.CancelScope(shield=True):
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        for step in (None, process.terminate, process.kill):
            if process.returncode is not None:
                return
            if step is not None:
                step()
            with anyio.move_on_after(grace):
                await process.wait()
