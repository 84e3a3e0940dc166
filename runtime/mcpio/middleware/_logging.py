"""Middlewares that log each request and time each method.

- `LoggingMiddleware`: one log line per request (method, name, duration, outcome, principal);
- `TimingMiddleware`: per-method counts and durations, kept for reading (`stats`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from mcp_wire_runtime.errors import ProtocolError
from mcpio.middleware._base import Call, CallNext, Middleware


def outcome(result: Any) -> str:
    """ "ok", "tool error" (a result with `isError`) or "task" (answered with a task)."""
    if getattr(result, "isError", None) is True:
        return "tool error"
    if type(result).__name__ == "TaskCreated":
        return "task"
    return "ok"


def subject(call: Call) -> str:
    """The caller's subject for a log line (`-` without authorization)."""
    principal = call.ctx.principal
    return principal.subject if principal is not None else "-"


class LoggingMiddleware(Middleware):
    """A middleware that logs `method name duration outcome principal` for each request.

    It logs at `level` (errors at WARNING: `error <code>`, or the exception's type for anything
    else), to `logger` (default: the `mcpio.requests` logger).
    """

    def __init__(self, logger: logging.Logger | None = None, level: int = logging.INFO) -> None:
        self.logger = logger or logging.getLogger("mcpio.requests")
        self.level = level

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Log one line for the request: method, name, duration, outcome, principal."""
        start = time.perf_counter()
        try:
            result = await call_next(call)
        except ProtocolError as exc:
            self._line(logging.WARNING, call, start, f"error {exc.code}")
            raise
        except Exception as exc:
            self._line(logging.WARNING, call, start, f"failed {type(exc).__name__}")
            raise
        self._line(self.level, call, start, outcome(result))
        return result

    def _line(self, level: int, call: Call, start: float, what: str) -> None:
        took = (time.perf_counter() - start) * 1000
        name = call.name or "-"
        self.logger.log(level, "%s %s %.1fms %s %s", call.method, name, took, what, subject(call))


@dataclass
class MethodTiming:
    """One method's request count and durations, as `TimingMiddleware.stats` keeps them.

    Args:
        count: How many requests of the method were timed.
        total: Their total duration, in seconds.
        longest: The longest one's duration, in seconds.
    """

    count: int = 0
    total: float = 0.0  # seconds
    longest: float = 0.0

    @property
    def mean(self) -> float:
        """Mean seconds per request (0.0 before the first)."""
        return self.total / self.count if self.count else 0.0


class TimingMiddleware(Middleware):
    """Counts each method's requests and their durations (`stats[method]`), failures included."""

    def __init__(self) -> None:
        self.stats: dict[str, MethodTiming] = {}

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Time the request and add it to its method's counts."""
        start = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            took = time.perf_counter() - start
            timing = self.stats.setdefault(call.method, MethodTiming())
            timing.count += 1
            timing.total += took
            timing.longest = max(timing.longest, took)
