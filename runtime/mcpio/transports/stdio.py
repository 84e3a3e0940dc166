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
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import IO, cast

import anyio

from mcpio._core.transport import FrameHook
from mcpio.transports._lines import LineStream

CHUNK = 1 << 16
BACKLOG = 2 * CHUNK  # unread bytes of a process's stdout at which its pipe is paused

# What a stdio server inherits of the host's environment (`server_environment`): what a program
# needs to run as this user, and no credentials (API keys, tokens, cloud settings stay with the
# host unless `env=` passes them). Variables absent from the host's environment are not made up.
INHERITED_ENV: tuple[str, ...] = (
    # POSIX
    "HOME",  # the user's home: where a program finds its configuration and caches
    "USER",
    "LOGNAME",  # who runs it (getpass, logs)
    "PATH",  # how a server finds the programs it runs (node, uv, git)
    "SHELL",  # the user's shell, for a server that runs commands
    "TERM",  # what stderr is shown on (colours)
    "LANG",
    "LANGUAGE",  # the locale, and with `LC_*` below the text encoding of stdio and paths
    "TMPDIR",  # where temporary files go (macOS's is per user)
    "TZ",  # the time zone
    # the XDG base directories: where configuration, data and caches are, when not the defaults
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    # Windows
    "SYSTEMROOT",
    "WINDIR",
    "SYSTEMDRIVE",  # without SYSTEMROOT, Python's sockets fail to start
    "COMSPEC",
    "PATHEXT",  # how `npx.cmd` and other scripts run and are found
    "TEMP",
    "TMP",  # temporary files
    "USERNAME",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",  # the user and their home
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",  # configuration and caches
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "COMMONPROGRAMFILES",  # where programs are installed
    "PROCESSOR_ARCHITECTURE",
    "NUMBER_OF_PROCESSORS",  # what the machine is
)
INHERITED_ENV_PREFIXES: tuple[str, ...] = ("LC_",)  # LC_ALL, LC_CTYPE, ...: the locale


def server_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the environment a stdio server starts with.

    That is the host's variables named in `INHERITED_ENV` (or starting with `LC_`), then `env`
    over them.
    """
    names = frozenset(INHERITED_ENV)
    windows = sys.platform == "win32"  # where names are case-insensitive
    inherited = {
        key: value
        for key, value in os.environ.items()
        if (key.upper() if windows else key) in names or key.startswith(INHERITED_ENV_PREFIXES)
    }
    return {**inherited, **(env or {})}


def _pollable(fd: int) -> bool:
    """Whether the event loop can watch the file: a pipe, socket or terminal, not a regular file
    nor a device such as /dev/null (which uvloop's pipe transports do not refuse but abort on)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


async def _pipe_reader(fd: int) -> Callable[[], Awaitable[bytes]]:
    """Chunks of a pipe read through the event loop (the inspector's relay); a regular file
    (stdin redirected from one) read through a worker thread, since the loop cannot poll files."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK)
    try:
        if not _pollable(fd):
            raise ValueError("not a pipe")
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0, closefd=False)
        )
    except ValueError:
        return lambda: anyio.to_thread.run_sync(os.read, fd, CHUNK)
    return lambda: reader.read(CHUNK)


async def _pipe_writer(fd: int) -> tuple[Callable[[bytes], Awaitable[None]], bool]:
    """A writer of the file and whether it is atomic (see `LineStream`): a pipe's, through the
    event loop, is; a regular file's, through a worker thread, is not."""
    loop = asyncio.get_running_loop()
    try:
        if not _pollable(fd):
            raise ValueError("not a pipe")
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", 0, closefd=False)
        )
    except ValueError:

        async def write_file(data: bytes) -> None:
            await anyio.to_thread.run_sync(_write_all, fd, data)

        return write_file, False
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def write(data: bytes) -> None:
        transport.write(data)  # (what `writer.write` does, one call less)
        if transport.get_write_buffer_size() or transport.is_closing():
            await writer.drain()  # only when the pipe did not take it all at once, or broke

    return write, True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextlib.contextmanager
def protocol_stdout() -> Iterator[IO[bytes]]:
    """Take stdout over for protocol frames, pointing everything else written there to stderr.

    Yields the real stdout (a duplicate of its file descriptor) while descriptor 1 and
    `sys.stdout` point to stderr; restores both after.
    """
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
    """Open the server's side of stdio: its own stdin and stdout (or the given binary files).

    A pipe is read through the event loop, its lines pushed as they come (`PushedLines`); a
    regular file (stdin redirected from one) through a worker thread, since the loop cannot
    poll files.
    """
    in_fd = (stdin or sys.stdin.buffer).fileno()
    out_fd = (stdout or sys.stdout.buffer).fileno()
    write, atomic = await _pipe_writer(out_fd)

    async def close() -> None:
        pass  # the process owns its standard streams

    if _pollable(in_fd):
        lines = PushedLines(write, close, atomic=atomic)
        try:
            await asyncio.get_running_loop().connect_read_pipe(
                lambda: _PushingPipe(lines), os.fdopen(in_fd, "rb", 0, closefd=False)
            )
            return lines
        except ValueError:
            pass
    return LineStream(
        lambda: anyio.to_thread.run_sync(os.read, in_fd, CHUNK), write, close, atomic=atomic
    )


class _ProcessProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol of a spawned process, its stdout handed to `sink` as it comes (kept
    until there is one) instead of going through a `StreamReader`."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit, loop)
        self.sink: Callable[[bytes], None] | None = None
        self.early: list[bytes] = []
        self.stdout_pipe: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # (uvloop's process and pipe transports are not registered as asyncio's classes)
        pipes = getattr(transport, "get_pipe_transport", None)
        if pipes is not None:
            self.stdout_pipe = pipes(1)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd != 1:
            super().pipe_data_received(fd, data)
            return
        chunk = data if isinstance(data, bytes) else data.encode()
        if self.sink is not None:
            self.sink(chunk)
        else:
            self.early.append(chunk)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        super().pipe_connection_lost(fd, exc)
        if fd == 1:  # the end, or a failure to read: the end too
            self.pipe_data_received(1, b"")


class _DirectStdout(asyncio.Protocol):
    """Put in front of asyncio's own protocol of the process's stdout pipe: a chunk read goes to
    `_ProcessProtocol` at once, not through `call_soon` (one event-loop turn less per response);
    the end still goes through asyncio's, which tracks the pipes for `Process.wait`."""

    def __init__(self, inner: asyncio.BaseProtocol, process: _ProcessProtocol) -> None:
        self._inner = inner
        self._process = process

    def data_received(self, data: bytes) -> None:
        self._process.pipe_data_received(1, data)

    def eof_received(self) -> bool | None:
        eof = getattr(self._inner, "eof_received", None)
        return eof() if eof is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class PushedLines(LineStream):
    """Lines of a pipe whose protocol pushes the chunks read (`arrived`) as they come.

    It serves both sides: the server's stdin, the client's view of the server's stdout. While
    the reader waits with nothing queued, a line that `on_frame` takes (a response to a
    pending request, settled there and then, or a request whose handler starts there and then)
    is not queued at all: one task switch less per message. Reading pauses while more than
    `BACKLOG` bytes wait unread.

    Args:
        write: Writes bytes to the peer.
        close: Closes the stream.
        atomic: `write` puts the whole line before its first await (a pipe transport's
            buffer), so lines cannot interleave and `send` takes no lock.
    """

    def __init__(
        self,
        write: Callable[[bytes], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
        *,
        atomic: bool = False,
    ) -> None:
        super().__init__(None, write, close, atomic=atomic)  # the chunks come from `arrived`
        self.on_frame: FrameHook | None = None
        self.pipe: asyncio.BaseTransport | None = None  # what pauses: the read pipe
        self._waiter: asyncio.Future[None] | None = None
        self._backlog = 0
        self._paused = False

    def arrived(self, chunk: bytes) -> None:
        """Take in a chunk read from the pipe (b"": the end)."""
        self._backlog += len(chunk)
        waiter = self._waiter
        take = self.on_frame
        if (
            take is not None
            and waiter is not None
            and not self._lines
            and not self._pending
            and not self._discarding
            and chunk.endswith(b"\n")  # one whole line (a message, mostly); b"": the end
            and chunk.find(b"\n") == len(chunk) - 1
            and len(chunk) <= self._max
            and not waiter.done()
        ):
            line = chunk[:-1]
            if line and not line.isspace() and take(line):
                return
            self._feed(chunk)  # what `take` did not take: as any other line
            if self._lines or self._ended:
                waiter.set_result(None)
            return
        self._feed(chunk)
        if waiter is None or waiter.done():
            if self._backlog > BACKLOG and not self._paused:
                self._pause(True)
            return
        lines, take = self._lines, self.on_frame
        while take is not None and lines:
            line = lines[0]
            if line is None or len(line) > self._max or not take(line):
                break
            lines.popleft()
        if lines or self._ended:
            waiter.set_result(None)

    def _pause(self, pause: bool) -> None:
        transport = self.pipe
        if transport is not None and not transport.is_closing():
            pipe = cast(asyncio.ReadTransport, transport)  # (uvloop's is one, unregistered)
            pipe.pause_reading() if pause else pipe.resume_reading()
        self._paused = pause

    async def receive(self) -> bytes:
        """The next line the pipe brought; `anyio.EndOfStream` once it has ended."""
        while (line := self._take()) is None:
            self._backlog = 0
            if self._paused:
                self._pause(False)
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return line


class _PushingPipe(asyncio.Protocol):
    """The protocol of a read pipe: each chunk to `PushedLines.arrived`, then the end."""

    def __init__(self, lines: PushedLines) -> None:
        self._lines = lines
        self._ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._lines.pipe = transport

    def data_received(self, data: bytes) -> None:
        self._lines.arrived(data)

    def eof_received(self) -> bool | None:
        self.connection_lost(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._ended:  # the end, or a failure to read: the end too
            self._ended = True
            self._lines.arrived(b"")


class ProcessTransport(PushedLines):
    """The client's side of stdio: a spawned server process, over its stdin and stdout.

    Its stdout is pushed as it arrives (see `PushedLines`). Closing ends the process: stdin is
    closed, then after `grace` seconds SIGTERM, then SIGKILL; it is always reaped (no zombie).
    Made by `spawn`.

    Args:
        process: The server process.
        grace: Seconds to wait for it to exit after closing its stdin, and again after SIGTERM.
        protocol: The process's subprocess protocol, that hands its stdout over (and the
            chunks that came before).
    """

    def __init__(
        self, process: asyncio.subprocess.Process, grace: float, protocol: _ProcessProtocol
    ) -> None:
        assert process.stdin is not None
        stdin = process.stdin

        async def write(data: bytes) -> None:  # (`send` writes without it)
            await self.send(data.removesuffix(b"\n"))

        super().__init__(write, self._stop)
        self.process = process
        self._grace = grace
        self._ending: asyncio.Task[None] | None = None  # see `_stop`
        self._stdin = stdin
        self.pipe = protocol.stdout_pipe
        protocol.sink = self.arrived
        for chunk in protocol.early:
            self.arrived(chunk)
        protocol.early.clear()

    async def send(self, data: bytes) -> None:
        # A frame is written whole, synchronously: sends cannot interleave, so no lock; and
        # drain (an await) only when the pipe did not take it all at once, or broke.
        """Write a frame to the server process's stdin."""
        stdin = self._stdin
        pipe = stdin.transport
        try:
            if pipe.is_closing():
                raise ConnectionResetError("the pipe is closed")
            pipe.write(data + b"\n")  # (what `stdin.write` does, one call less)
            if pipe.get_write_buffer_size() or pipe.is_closing():
                await stdin.drain()
        except (ConnectionError, OSError, RuntimeError) as exc:
            raise anyio.BrokenResourceError("the server process is gone") from exc

    async def _stop(self) -> None:
        """End the process (`_end`), even when the close is cancelled meanwhile (a host's
        shutdown that gives up on it): the cancellation goes on once the process has ended,
        within twice the grace; the process is never left running."""
        if self._ending is None:
            self._ending = asyncio.get_running_loop().create_task(self._end())
        try:
            await asyncio.shield(self._ending)
        except asyncio.CancelledError:
            await asyncio.shield(self._ending)  # (a second cancellation: left at once)
            raise

    async def _end(self) -> None:
        process = self.process
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
    """Start a stdio server and return the transport to it.

    Its stderr goes to ours unless `stderr` says otherwise. Its environment: the host's
    allow-listed variables with `env` over them (`server_environment`), never the host's whole
    environment.

    Args:
        command: The program and its arguments.
        env: Variables added to the allow-listed ones (and winning over them).
        cwd: The directory it runs in (None: ours).
        stderr: Where its stderr goes (a `subprocess` constant or a binary file; None: ours).
        grace: Seconds `ProcessTransport` waits at each step of ending the process (default 2).
    """
    loop = asyncio.get_running_loop()
    # What `asyncio.create_subprocess_exec` does, with a protocol that hands stdout over.
    transport, protocol = await loop.subprocess_exec(
        lambda: _ProcessProtocol(CHUNK, loop),
        *command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=server_environment(env),
        cwd=cwd,
    )
    process = asyncio.subprocess.Process(transport, protocol, loop)
    pipe = protocol.stdout_pipe
    if pipe is not None:
        pipe.set_protocol(_DirectStdout(pipe.get_protocol(), protocol))
    return ProcessTransport(process, grace, protocol)


__all__ = [
    "INHERITED_ENV",
    "INHERITED_ENV_PREFIXES",
    "ProcessTransport",
    "server_environment",
    "spawn",
    "stdio_server_transport",
]
