"""Newline-delimited framing (the stdio transport's): one JSON message per line."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

import anyio

from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES
from mcpio._core.transport import FrameHook, FrameTooLarge


class LineStream:
    """Frames over a byte stream: `read` returns the next chunk (b"" at the end), `write` sends
    bytes. A line longer than `max_bytes` is dropped up to its newline (never held in memory)
    and reported once, in its place, as `FrameTooLarge`; blank lines are skipped. `read` None:
    a subclass feeds the chunks itself (`ProcessTransport`). `atomic`: `write` puts the whole
    line before its first await (a pipe transport's buffer), so lines cannot interleave and
    `send` takes no lock."""

    on_frame: FrameHook | None = None  # (called by `ProcessTransport` only)

    def __init__(
        self,
        read: Callable[[], Awaitable[bytes]] | None,
        write: Callable[[bytes], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
        max_bytes: int = MAX_MESSAGE_BYTES,
        *,
        atomic: bool = False,
    ) -> None:
        self._read = read
        self._write = write
        self._close = close
        self._max = max_bytes
        self._lines: deque[bytes | None] = deque()  # None: a line that was too large
        self._pending: list[bytes] = []  # pieces of the current, unfinished line
        self._pending_size = 0
        self._discarding = False
        self._ended = False
        # One frame written at a time (`write` may take several steps); asyncio's lock, taken
        # without a checkpoint when free: this is every answer's path.
        self._lock = asyncio.Lock()
        self._atomic = atomic

    async def receive(self) -> bytes:
        """The next line (a frame); `FrameTooLarge` in the place of one over the limit."""
        read = self._read
        assert read is not None, "a stream fed by its subclass reads through it"
        while (line := self._take()) is None:
            self._feed(await read())
        return line

    def _take(self) -> bytes | None:
        """The next complete line (None: none yet); `EndOfStream` once all are taken."""
        while self._lines:
            line = self._lines.popleft()
            if line is None or len(line) > self._max:
                raise FrameTooLarge(self._max)
            if line and not line.isspace():
                return line
        if self._ended:
            raise anyio.EndOfStream
        return None

    def _feed(self, chunk: bytes) -> None:
        """Take in a chunk read (b"": the end)."""
        if chunk:
            self._split(chunk)
        else:
            self._ended = True
            self._end_line(b"")

    def _split(self, chunk: bytes) -> None:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._end_line(chunk[start:end])
            start = end + 1
        rest = chunk[start:]
        if rest and not self._discarding:
            self._pending.append(rest)
            self._pending_size += len(rest)
            if self._pending_size > self._max:
                self._pending, self._pending_size, self._discarding = [], 0, True

    def _end_line(self, tail: bytes) -> None:
        if self._discarding:
            self._lines.append(None)
            self._discarding = False
        elif self._pending:
            self._lines.append(b"".join(self._pending) + tail)
            self._pending, self._pending_size = [], 0
        elif tail:
            self._lines.append(tail)

    async def send(self, data: bytes) -> None:
        """Write a frame and its newline."""
        if self._atomic:
            await self._write(data + b"\n")
            return
        async with self._lock:
            await self._write(data + b"\n")

    async def aclose(self) -> None:
        """Close the stream."""
        await self._close()
