"""The HTTP relay's checks, run after the frames they judge were passed on (issue 37): each is
queued when its frame is forwarded, in forwarding order, and the queue runs as soon as the
event loop is free (asyncio's `call_soon`), or when the relay asks (`run`: before it reads the
state the checks leave, and on a loop that is not asyncio's, right after forwarding). Checks
run one at a time, first queued first: a frame is judged after every frame forwarded before it,
whoever forwarded it."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

log = logging.getLogger("mcpio")


class Deferred:
    """Checks waiting for the event loop, in the order they were queued."""

    def __init__(self) -> None:
        self._queue: deque[Callable[[], None]] = deque()
        self._scheduled = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, check: Callable[[], None]) -> None:
        """Queue `check`; it runs after the caller's next wait (asyncio), or at the next `run`."""
        self._queue.append(check)
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another event loop (trio): the relay runs the queue itself
            return
        self._scheduled = True
        loop.call_soon(self.run)

    def unscheduled(self) -> bool:
        """Whether checks wait that no event loop will run (not on asyncio's)."""
        return bool(self._queue) and not self._scheduled

    def run(self) -> None:
        """Every queued check, first queued first (one that fails is logged: the rest run)."""
        self._scheduled = False
        queue = self._queue
        while queue:
            check = queue.popleft()
            try:
                check()
            except Exception:  # a checker bug must not stop the relay or the checks after it
                log.exception("mcpio inspect: a check failed")
