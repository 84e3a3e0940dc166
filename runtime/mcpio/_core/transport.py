"""The transport contract: a transport moves whole JSON-RPC frames (bytes) between two peers and
knows nothing of MCP. The pipes that fulfil it are in `mcpio.transports`."""

from __future__ import annotations

from typing import Protocol


class FrameTooLarge(Exception):
    """A frame exceeded the transport's size limit; it was discarded, the stream goes on."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"message exceeds the {limit}-byte limit")
        self.limit = limit


class FrameHook(Protocol):
    """A hook that takes a frame as it arrives, instead of queueing it for `receive`.

    It settles a response to a pending request, or starts the handler of a request (True);
    False leaves the frame (any other, or one it cannot take now) to the read loop. `id`: the
    response's id, when the transport has read its envelope already (the hook then trusts it
    is a response).
    """

    def __call__(self, raw: bytes, id: str | int | None = None) -> bool: ...


class Transport(Protocol):
    """One connection. `receive` raises `anyio.EndOfStream` once the peer is gone.

    `on_frame` is set by the session that reads the transport. A transport may call it with
    a frame while that session's read loop waits with nothing queued (so the order of frames
    holds), saving a task switch per call; one that never calls it keeps it None."""

    on_frame: FrameHook | None

    async def receive(self) -> bytes:
        """The next frame from the peer; `anyio.EndOfStream` when there is none."""
        ...

    async def send(self, data: bytes) -> None:
        """Send one frame to the peer."""
        ...

    async def aclose(self) -> None:
        """Close the transport."""
        ...


class Exchanging(Protocol):
    """What a transport may offer besides `Transport` (the session looks for it): `send_request`
    sends a request and carries its whole exchange in the caller's task, its response (or an
    error standing for it) delivered before it returns, instead of a task of its own per
    request (for a caller that waits for the response anyway: the session's `request`);
    `abandon` ends the exchange of a request whose caller stopped waiting (a timeout)."""

    async def send_request(self, data: bytes) -> None:
        """Sends the request `data` and returns once its response (or an error) is delivered."""
        ...

    def abandon(self, id: str | int) -> None:
        """Ends the exchange of request `id`, whose caller stopped waiting."""
        ...


class Responding(Protocol):
    """What a transport may offer besides `Transport` (the session looks for it):
    `send_response` sends the response to a request, named by its id, so that a transport that
    routes frames by the request they answer (a legacy HTTP session) need not read it."""

    async def send_response(self, id: str | int, data: bytes) -> None:
        """Sends `data`, the response to the request `id`."""
        ...


__all__ = ["Exchanging", "FrameTooLarge", "FrameHook", "Responding", "Transport"]
