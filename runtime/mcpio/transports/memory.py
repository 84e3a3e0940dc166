"""An in-process pair of connected transports: a server and a client in one event loop."""

from __future__ import annotations

import math

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpio._core.transport import FrameHook


class MemoryTransport:
    """A transport over a pair of in-memory streams (`Client(server)` in one process)."""

    on_frame: FrameHook | None = None  # (never called: the read loop takes every frame)

    def __init__(
        self, send: MemoryObjectSendStream[bytes], receive: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._send = send
        self._receive = receive

    async def receive(self) -> bytes:
        """The next frame from the other side; `anyio.EndOfStream` once it closed."""
        try:
            return await self._receive.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def send(self, data: bytes) -> None:
        """Send a frame to the other side."""
        await self._send.send(data)

    async def aclose(self) -> None:
        """Close both streams."""
        await self._send.aclose()
        await self._receive.aclose()


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """(client side, server side)."""
    to_server, server_in = anyio.create_memory_object_stream[bytes](math.inf)
    to_client, client_in = anyio.create_memory_object_stream[bytes](math.inf)
    return MemoryTransport(to_server, client_in), MemoryTransport(to_client, server_in)
