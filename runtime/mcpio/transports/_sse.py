"""Server-sent events, as Streamable HTTP uses them, both ways: `SseWriter` writes an ASGI
response of events (each one JSON-RPC message) and keep-alive comments; `SseParser` reads an
event stream fed in chunks of bytes."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # nginx: pass each event on at once
]
_LINE_END = re.compile(rb"\r\n|\r|\n")


class SseWriter:
    """An SSE response being written through an ASGI `send`: events, keep-alive comments, its
    end."""

    def __init__(self, send: Send) -> None:
        self._send = send

    async def open(self) -> SseWriter:
        """Start the event-stream response (status 200, its headers)."""
        await self._send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        return self

    async def event(self, frame: bytes, last: bool = False) -> None:
        """Write a frame as a `message` event (`last`: and end the response)."""
        chunk = b"event: message\ndata: " + frame + b"\n\n"
        await self._send({"type": "http.response.body", "body": chunk, "more_body": not last})

    async def ping(self) -> None:
        """Write a keep-alive comment."""
        await self._send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})

    async def close(self) -> None:
        """End the response."""
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})


@dataclass
class SseEvent:
    """One dispatched event.

    Args:
        event: The event's type (`message` when the stream names none).
        data: Its data, its `data` lines joined with newlines.
        id: The stream's last event id as of this event (None before any).
        too_large: Its data passed the size limit and was dropped.
    """

    event: str = "message"
    data: str = ""
    id: str | None = None
    too_large: bool = False


class SseParser:
    """A parser of the event-stream format, fed in chunks of bytes.

    Lines end in CRLF, LF or CR; `:` starts a comment (keep-alives); `data` lines join with
    newlines; a blank line dispatches; an event without data is not dispatched (it may still set
    the last event id, as a priming event does). An event whose data, or a line, passes
    `max_bytes` is dispatched as `too_large`, its data discarded as it arrives (never held).
    """

    def __init__(self, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.last_event_id: str | None = None
        self.retry: float | None = None  # seconds
        self._line: list[bytes] = []
        self._line_size = 0
        self._skipping_line = False
        self._skip_lf = False
        self._first = True
        self._type = ""
        self._data: list[str] = []
        self._data_size = 0
        self._too_large = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events a chunk completes (the rest is kept for the next chunk)."""
        events: list[SseEvent] = []
        start = 0
        if self._skip_lf and chunk[:1] == b"\n":
            start = 1
        self._skip_lf = False
        for match in _LINE_END.finditer(chunk, start):
            self._add(chunk[start : match.start()])
            if match.group() == b"\r" and match.end() == len(chunk):
                self._skip_lf = True  # a CRLF split across two chunks
            event = self._end_line()
            if event is not None:
                events.append(event)
            start = match.end()
        self._add(chunk[start:])
        return events

    def _add(self, piece: bytes) -> None:
        if not piece or self._skipping_line:
            return
        self._line.append(piece)
        self._line_size += len(piece)
        if self._line_size > self.max_bytes:
            self._line, self._line_size = [], 0
            self._skipping_line = True
            self._too_large = True

    def _end_line(self) -> SseEvent | None:
        if self._skipping_line:
            self._skipping_line = False
            return None
        line = b"".join(self._line).decode("utf-8", "replace")
        self._line, self._line_size = [], 0
        if self._first:
            self._first = False
            line = line.removeprefix("\ufeff")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_size += len(value) + 1
            if self._data_size > self.max_bytes:
                self._too_large = True
                self._data = []
            elif not self._too_large:
                self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry = int(value) / 1000
        return None

    def _dispatch(self) -> SseEvent | None:
        kind, data, too_large = self._type or "message", self._data, self._too_large
        had_data = self._data_size > 0
        self._type, self._data, self._data_size, self._too_large = "", [], 0, False
        if too_large:
            return SseEvent(kind, "", self.last_event_id, too_large=True)
        if not had_data:
            return None
        return SseEvent(kind, "\n".join(data), self.last_event_id)
