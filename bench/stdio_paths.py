"""The per-call CPU of each side of a stdio `tools/call`, one call in flight, in one process:
the runtime's own Python work without the pipes, the other process or the cross-CPU wake-up.

A benchmark, not a test: it prints figures (Markdown) and exits 0.

* ``server``: the stdio server's real path (`PushedLines` as `stdio_server_transport` makes it,
  `Session._take_now`, the connection, the tool, the answer's line): each request line is
  pushed as a pipe's chunk once the previous answer was written;
* ``client``: `Client.call_tool` over a `PushedLines` transport whose far end answers at once
  (the handshake by a real server connection, each call by the answer it gave the first one,
  its id replaced), the answer pushed as a chunk on the next event-loop turn.

Figures: CPU µs per call (`time.process_time`), the median over ``ROUNDS`` rounds of ``CALLS``
calls (min..max), on uvloop where installed. ``--instructions`` counts machine instructions
per call instead, under valgrind's callgrind (two runs, ``dispatch.INSTRUCTION_CALLS`` and 6 x that,
their difference; about a minute per path): a figure the machine's load does not move, for
comparing two versions of the code (their noise: a few per cent).

    .venv/bin/python bench/stdio_paths.py
    .venv/bin/python bench/stdio_paths.py --instructions
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import dispatch  # (this directory's: the same server, sink and callgrind runs)
from dispatch import Kept, make_server

from mcpio import Client
from mcpio._core.negotiate import peek_any
from mcpio.transports.stdio import PushedLines

CALLS = int(os.environ.get("MCPGEN_BENCH_CALLS", "5000"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "7"))
WARMUP = 500
UVLOOP = importlib.util.find_spec("uvloop") is not None
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1.0"},
}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1.0"},
}
CALL_ID = re.compile(rb'\{"jsonrpc":"2\.0","id":(\d+),"method":"tools/call"')

Calls = Callable[[int], Awaitable[None]]


def line(id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        frame["params"] = params
    return json.dumps(frame, separators=(",", ":")).encode() + b"\n"


async def server_path(era: str) -> tuple[Calls, Callable[[], Awaitable[None]]]:
    """The stdio server fed line by line, the next once the previous answer was written."""
    loop = asyncio.get_running_loop()
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": "hello"}}
    if era == "modern":
        params["_meta"] = ENVELOPE
    calls = [line(i, "tools/call", params) for i in range(1, 4001)]
    state: dict[str, Any] = {"left": 0, "next": 0, "done": None, "last": b""}

    def push() -> None:
        if state["left"] == 0:
            state["done"].set_result(None)
            return
        state["left"] -= 1
        state["next"] += 1
        lines.arrived(calls[state["next"] % len(calls)])

    class Pipe:  # what the pipe writer of `stdio_server_transport` calls, as cheap
        def write(self, data: bytes) -> None:
            state["last"] = data
            loop.call_soon(push)

        def get_write_buffer_size(self) -> int:
            return 0

        def is_closing(self) -> bool:
            return False

    pipe = Pipe()

    async def write(data: bytes) -> None:
        pipe.write(data)
        if pipe.get_write_buffer_size() or pipe.is_closing():
            raise AssertionError("never")

    async def close() -> None:
        pass

    lines = PushedLines(write, close, atomic=True)
    serving = asyncio.ensure_future(make_server().serve(lines))
    await asyncio.sleep(0)
    if era == "legacy":
        state["done"] = loop.create_future()
        lines.arrived(line(0, "initialize", INITIALIZE))
        await state["done"]
        lines.arrived(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        await asyncio.sleep(0)

    async def run(n: int) -> None:
        state["done"] = loop.create_future()
        state["left"] = n - 1
        state["next"] += 1
        lines.arrived(calls[state["next"] % len(calls)])
        await state["done"]
        if b'"text":"hello"' not in state["last"]:
            raise SystemExit(f"error: unexpected answer {state['last'][:200]!r}")

    async def end() -> None:
        lines.arrived(b"")
        await serving

    return run, end


class AnsweringPipe(PushedLines):
    """The client's transport, its far end answering each call at once (see the module)."""

    def __init__(self) -> None:
        super().__init__(self._write, self._close)
        self.server = make_server()
        self.connection: Any = None
        self.answer: tuple[bytes, bytes] | None = None  # a call's answer around its id

    async def _write(self, data: bytes) -> None:
        await self.send(data.removesuffix(b"\n"))

    async def _close(self) -> None:
        self.arrived(b"")

    async def send(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        call = CALL_ID.match(data)
        if call is not None and self.answer is not None:
            head, tail = self.answer
            loop.call_soon(self.arrived, head + call[1] + tail)
            return
        kept = Kept()
        env = peek_any(data)
        if self.connection is None or env.protocol_version is not None:
            modern = env.protocol_version is not None
            self.connection = self.server.connect(kept, modern=modern)
        self.connection.transport, self.connection._session = kept, None
        if env.kind == "notification":
            await self.connection.on_notification(data, env)
        else:
            await self.connection.on_request(data, env)
        for answer in kept.sent:
            if call is not None:
                key = b'"id":' + call[1]
                at = answer.index(key)
                self.answer = (answer[:at] + b'"id":', answer[at + len(key) :] + b"\n")
            loop.call_soon(self.arrived, answer + b"\n")


async def client_path(era: str) -> tuple[Calls, Callable[[], Awaitable[None]]]:
    client = Client(AnsweringPipe(), mode="legacy" if era == "legacy" else "2026-07-28")
    await client.__aenter__()

    async def run(n: int) -> None:
        for _ in range(n):
            result = await client.call_tool("echo", {"text": "hello"})
            if result.content[0].type != "text" or result.content[0].text != "hello":
                raise SystemExit(f"error: unexpected answer {result!r}")

    async def end() -> None:
        await client.__aexit__(None, None, None)

    return run, end


PATHS = {"server": server_path, "client": client_path}


async def measure(side: str, era: str, rounds: int, calls: int) -> list[float]:
    run, end = await PATHS[side](era)
    await run(WARMUP)
    figures: list[float] = []
    for _ in range(rounds):
        start = time.process_time()
        await run(calls)
        figures.append((time.process_time() - start) / calls * 1e6)
    await end()
    return figures


def instructions(side: str, era: str) -> float:
    """Instructions per call of one side (see `dispatch.instructions`)."""
    return dispatch.instructions(side, era, __file__)


def run(main: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return anyio.run(main, *args, backend_options={"use_uvloop": UVLOOP})


def main() -> None:
    if sys.argv[1:2] == ["--run"]:
        run(measure, sys.argv[2], sys.argv[3], 1, int(sys.argv[4]))
        return
    if "--instructions" in sys.argv:
        if shutil.which("valgrind") is None:
            raise SystemExit("error: --instructions needs valgrind (apt-get install valgrind)")
        print("# stdio tools/call, each side in-process: machine instructions per call\n")
        print("| side | modern | legacy |\n|---|---:|---:|")
        for side in PATHS:
            cells = [f"{instructions(side, era):,.0f}" for era in ("modern", "legacy")]
            print(f"| {side} | {' | '.join(cells)} |", flush=True)
        return
    print("# stdio tools/call, each side in-process: CPU µs per call\n")
    print(f"{CALLS} calls per round, {ROUNDS} rounds, Python {sys.version.split()[0]}, ", end="")
    print(f"{'uvloop' if UVLOOP else 'asyncio'}, load {os.getloadavg()[0]:.2f}\n")
    print("| side | era | CPU µs per call, median (min..max) |\n|---|---|---:|")
    for side in PATHS:
        for era in ("modern", "legacy"):
            figures = run(measure, side, era, ROUNDS, CALLS)
            median = statistics.median(figures)
            print(f"| {side} | {era} | {median:.1f} ({min(figures):.1f}..{max(figures):.1f}) |")


if __name__ == "__main__":
    main()
