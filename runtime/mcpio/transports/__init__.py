"""Transports move whole JSON-RPC frames (bytes) between two peers; they know nothing of MCP."""

from __future__ import annotations

from typing import Protocol


class FrameTooLarge(Exception):
    """A frame exceeded the transport's size limit; it was discarded, the stream goes on."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"message exceeds the {limit}-byte limit")
        self.limit = limit


class Transport(Protocol):
    """One connection. `receive` raises `anyio.EndOfStream` once the peer is gone."""

    async def receive(self) -> bytes: ...

    async def send(self, data: bytes) -> None: ...

    async def aclose(self) -> None: ...


__all__ = ["FrameTooLarge", "Transport"]
