"""What the framework layer costs per `tools/call`: no-op middlewares, and a sync tool run in a
worker thread, on the server's dispatch core alone (as ``bench/dispatch.py``'s ``connection``
paths: a 2026-07-28 request's bytes to its answer's bytes, a new connection per request).

A benchmark, not a test: it prints figures (Markdown) and exits 0. Rows: an ``async def`` echo
tool with 0, 1 and 5 no-op middlewares (`mcpio.Middleware` instances that override nothing: the
server leaves them out of the pipeline), with pass-through ones (overriding `on_call_tool` to
call `call_next`: what any real middleware costs at least), and a ``def`` echo tool in
a worker thread (the default) and on the loop (``run_in_thread=False``). Figures: the server's
CPU time per call (``time.process_time``, every thread of this process), the median over
``ROUNDS`` rounds of ``CALLS`` calls, and the ratio to the first row of the same path: the
dispatch core, and the whole HTTP app called in-process with one POST's scope (as
``bench/dispatch.py``'s ``http app`` path: headers, routing, body, the answer's ASGI messages),
where the goal applies (one no-op middleware adds at most 5%; a pass-through one is the cost of
the pipeline itself).

``--instructions`` counts machine instructions per call instead (``bench/callgrind.py``, as
``bench/dispatch.py --instructions``): a figure the machine's load does not move.
``MCPGEN_BENCH_ROWS`` (row numbers from 0, comma-separated) picks some rows.

    MCPGEN_BENCH_CALLS=5000 MCPGEN_BENCH_ROUNDS=5 .venv/bin/python bench/middleware.py
    .venv/bin/python bench/middleware.py --instructions
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind  # noqa: E402
from dispatch import Kept, Round, check, http_path, modern_call  # noqa: E402

from mcpio import Middleware, Server  # noqa: E402
from mcpio._core.negotiate import peek_any  # noqa: E402
from mcpio.latest import public as pub  # noqa: E402
from mcpio.middleware import Call, CallNext  # noqa: E402

CALLS = int(os.environ.get("MCPGEN_BENCH_CALLS", "5000"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "5"))
WARMUP = 500
ONLY_CALLS = 0  # a child under callgrind: run this many calls of one row, measure nothing


class PassThrough(Middleware):
    """A middleware that overrides a hook and only passes the call on: what any real one costs
    at least (a `Middleware` overriding nothing is left out of the pipeline)."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)


def make_server(middlewares: int, kind: str, hooked: bool = False) -> Server:
    made = PassThrough if hooked else Middleware
    server = Server("bench", "1.0", middleware=[made() for _ in range(middlewares)])
    if kind == "async":

        @server.tool(structured_output=False)
        async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return text

    elif kind == "model":

        @server.tool("echo", structured_output=False)
        async def echo_model(
            text: str,
        ) -> pub.CallToolResult:  # pyright: ignore[reportUnusedFunction]
            return pub.CallToolResult(
                content=[pub.TextContent(type="text", text=text)], resultType="complete"
            )

    else:

        @server.tool("echo", structured_output=False, run_in_thread=kind == "thread")
        def echo_sync(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
            return text

    return server


async def measure(
    middlewares: int, kind: str, path: str = "connection", hooked: bool = False
) -> list[float]:
    server = make_server(middlewares, kind, hooked)
    transport = Kept()
    raw = modern_call(1)
    env = peek_any(raw)
    connect = server.connect

    async def on_connection(calls: int) -> None:
        for _ in range(calls):
            await connect(transport, modern=True).on_request(raw, env)
        check(transport.sent[-1], "modern")
        transport.sent.clear()

    run: Round = on_connection
    if path.startswith("http"):
        run = await http_path("modern", server)
    if ONLY_CALLS:
        await run(WARMUP)
        await run(ONLY_CALLS)
        return []

    await run(WARMUP)
    per_call = []
    for _ in range(ROUNDS):
        start = time.process_time()
        await run(CALLS)
        per_call.append((time.process_time() - start) / CALLS * 1e6)
    return per_call


ROWS = [
    ("async tool, no middleware", 0, False, "async", "connection"),
    ("async tool, 1 no-op middleware", 1, False, "async", "connection"),
    ("async tool, 5 no-op middlewares", 5, False, "async", "connection"),
    ("async tool, 1 pass-through middleware", 1, True, "async", "connection"),
    ("async tool, 5 pass-through middlewares", 5, True, "async", "connection"),
    ("sync tool, worker thread (default)", 0, False, "thread", "connection"),
    ("sync tool, on the loop (run_in_thread=False)", 0, False, "loop", "connection"),
    ("HTTP app in-process, no middleware", 0, False, "async", "http"),
    ("HTTP app in-process, 1 no-op middleware", 1, False, "async", "http"),
    ("HTTP app in-process, 5 no-op middlewares", 5, False, "async", "http"),
    ("HTTP app in-process, 1 pass-through middleware", 1, True, "async", "http"),
    # A tool answering a result model (as one returning data, content blocks or a model does):
    # the middlewares see the model it made, and none is made for them.
    ("HTTP app in-process, result model, no middleware", 0, False, "model", "http-model"),
    ("HTTP app in-process, result model, 1 no-op middleware", 1, False, "model", "http-model"),
    ("HTTP app in-process, result model, 1 pass-through", 1, True, "model", "http-model"),
]


def count_instructions() -> None:
    callgrind.check_valgrind()
    print("## Framework layer per tools/call: machine instructions (callgrind)\n")
    print("| path | instructions | / its path's first row |")
    print("|---|---:|---:|")
    bases: dict[str, float] = {}
    wanted = os.environ.get("MCPGEN_BENCH_ROWS")  # "0,1,5": some rows only
    for row, (label, _, _, _, path) in enumerate(ROWS):
        if wanted and str(row) not in wanted.split(","):
            continue
        count = callgrind.per_call(__file__, ["--run", str(row)], f"row {row}")
        base = bases.setdefault(path, count)
        print(f"| {label} | {count:,.0f} | {count / base:.2f}x |", flush=True)


async def main() -> None:
    print(f"## Framework layer per tools/call ({CALLS} calls x {ROUNDS} rounds, CPU µs)\n")
    print("| path | median µs | min..max | / its path's first row |")
    print("|---|---:|---:|---:|")
    bases: dict[str, float] = {}
    for label, middlewares, hooked, kind, path in ROWS:
        figures = await measure(middlewares, kind, path, hooked)
        median = statistics.median(figures)
        base = bases.setdefault(path, median)
        print(
            f"| {label} | {median:.1f} | {min(figures):.1f}..{max(figures):.1f} "
            f"| {median / base:.2f}x |"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        ONLY_CALLS = int(sys.argv[3])
        _, middlewares, hooked, kind, path = ROWS[int(sys.argv[2])]
        asyncio.run(measure(middlewares, kind, path, hooked))
    elif "--instructions" in sys.argv:
        count_instructions()
    else:
        asyncio.run(main())
