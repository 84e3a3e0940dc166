"""stdio: the server reads its stdin and writes its stdout; the client spawns the server process.

stdout carries protocol messages only: everything else a server says goes to stderr. While a
server serves its own stdio (`protocol_stdout`), `print()` and whatever else is written to file
descriptor 1 (by C code, or by a child process) goes to stderr; the protocol writes to a
duplicate of the real stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import IO

import anyio

from mcpio.transports.lines import LineStream

CHUNK = 1 << 16


async def _pipe_reader(fd: int) -> Callable[[], Awaitable[bytes]]:
    """Read a pipe through the event loop; a regular file (stdin redirected from one) through a
    worker thread, since the loop cannot poll files."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK)
    try:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0, closefd=False)
        )
    except ValueError:
        return lambda: anyio.to_thread.run_sync(os.read, fd, CHUNK)
    return lambda: reader.read(CHUNK)


async def _pipe_writer(fd: int) -> Callable[[bytes], Awaitable[None]]:
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", 0, closefd=False)
        )
    except ValueError:

        async def write_file(data: bytes) -> None:
            await anyio.to_thread.run_sync(_write_all, fd, data)

        return write_file
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return write


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextlib.contextmanager
def protocol_stdout() -> Iterator[IO[bytes]]:
    """Take stdout over for protocol frames: yields the real stdout (a duplicate of its file
    descriptor) while descriptor 1 and `sys.stdout` point to stderr; restores both after."""
    sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    previous, sys.stdout = sys.stdout, sys.stderr
    out = open(real, "wb", buffering=0)
    try:
        yield out
    finally:
        sys.stdout = previous
        os.dup2(real, 1)
        out.close()


async def stdio_server_transport(
    stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> LineStream:
    """The server's side: its own stdin and stdout (or the given binary files)."""
    in_fd = (stdin or sys.stdin.buffer).fileno()
    out_fd = (stdout or sys.stdout.buffer).fileno()
    read = await _pipe_reader(in_fd)
    write = await _pipe_writer(out_fd)

    async def close() -> None:
        pass  # the process owns its standard streams

    return LineStream(read, write, close)


class ProcessTransport(LineStream):
    """The client's side: a spawned server process, spoken to over its stdin and stdout.

    Closing ends the process: stdin is closed, then after `grace` seconds SIGTERM, then SIGKILL;
    it is always reaped (no zombie)."""

    def __init__(self, process: asyncio.subprocess.Process, grace: float) -> None:
        assert process.stdout is not None and process.stdin is not None
        stdout, stdin = process.stdout, process.stdin

        async def read() -> bytes:
            try:
                return await stdout.read(CHUNK)
            except (ConnectionError, OSError):
                return b""

        async def write(data: bytes) -> None:
            try:
                stdin.write(data)
                await stdin.drain()
            except (ConnectionError, OSError, RuntimeError) as exc:
                raise anyio.BrokenResourceError("the server process is gone") from exc

        super().__init__(read, write, self._stop)
        self.process = process
        self._grace = grace
        self._stdin = stdin

    async def send(self, data: bytes) -> None:
        # A frame is written whole, synchronously: sends cannot interleave, so no lock; and
        # drain (an await) only when the pipe did not take it all at once, or broke.
        stdin = self._stdin
        pipe = stdin.transport
        try:
            if pipe.is_closing():
                raise ConnectionResetError("the pipe is closed")
            stdin.write(data + b"\n")
            if pipe.get_write_buffer_size() or pipe.is_closing():
                await stdin.drain()
        except (ConnectionError, OSError, RuntimeError) as exc:
            raise anyio.BrokenResourceError("the server process is gone") from exc

    async def _stop(self) -> None:
        process = self.process
        with anyio.CancelScope(shield=True):
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            with anyio.move_on_after(self._grace):
                await process.wait()
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(self._grace):
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def spawn(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stderr: int | IO[bytes] | None = None,
    grace: float = 2.0,
) -> ProcessTransport:
    """Start a stdio server; its stderr goes to ours unless `stderr` says otherwise."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        limit=CHUNK,
    )
    return ProcessTransport(process, grace)
