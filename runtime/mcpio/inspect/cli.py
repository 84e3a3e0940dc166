"""The `mcpio` command (also `python -m mcpio`):

    mcpio inspect [--log FILE] [--jsonl FILE] [--report FILE.html] -- <server command...>
    mcpio inspect --upstream URL --listen 127.0.0.1:PORT [--log FILE] [--jsonl FILE] [--report ...]
    mcpio replay TRANSCRIPT --server CMD|URL
    mcpio worker APP --redis URL [--concurrency N] [--lease S] [--grace S] [--attempts N]

Findings go to stderr (or `--log`), the summary table when the session ends. Bad arguments
and unreadable files are one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import shutil
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import anyio

from mcpio.extras import MissingExtra, needs
from mcpio.inspect.transcript import Recorder


class UsageError(Exception):
    """A bad argument or an unreadable file: one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcpio", description="MCP traffic tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser(
        "inspect",
        help="relay an MCP session and check every frame",
        description="Relay stdio (`-- <server command...>`) or Streamable HTTP (`--upstream URL "
        "--listen HOST:PORT`) unchanged, checking every frame against its revision.",
    )
    inspect.add_argument("--log", type=Path, help="findings and summary here, not stderr")
    inspect.add_argument("--jsonl", type=Path, help="write a transcript: every frame, findings")
    inspect.add_argument("--report", type=Path, help="write a static HTML report at the end")
    inspect.add_argument("--upstream", help="HTTP: the MCP endpoint URL to relay to")
    inspect.add_argument("--listen", help="HTTP: HOST:PORT to serve on (127.0.0.1:PORT)")
    inspect.add_argument("server", nargs="*", help="stdio: the server command, after --")
    replay = commands.add_parser(
        "replay",
        help="re-send a transcript's client side and report how the answers differ",
    )
    replay.add_argument("transcript", type=Path)
    replay.add_argument("--server", required=True, help="a command line, or an http(s) URL")
    replay.add_argument("--timeout", type=float, default=30.0, help="seconds per answer")
    worker = commands.add_parser(
        "worker",
        help="run the queued tasks of a server's tools (mcpio.tasks.worker)",
        description="Run the tasks HTTP instances queued in Redis, with APP's tools.",
    )
    worker.add_argument("app", help="the server's tools: module:attr or file.py[:attr]")
    worker.add_argument(
        "--redis", required=True, metavar="URL", help="the task store, queue and bus (redis://)"
    )
    worker.add_argument("--concurrency", type=int, default=8, help="tasks run at once")
    worker.add_argument("--lease", type=float, default=30.0, help="task lease, seconds")
    worker.add_argument("--grace", type=float, default=10.0, help="seconds tasks get at SIGTERM")
    worker.add_argument("--attempts", type=int, default=3, help="runs of a retry-safe task")
    return parser


@contextlib.contextmanager
def _opened(path: Path | None, default: IO[str] | None) -> Iterator[IO[str] | None]:
    if path is None:
        yield default
        return
    try:
        file = path.open("w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    with file:
        yield file


def _listen_address(value: str) -> tuple[str, int]:
    host, colon, port = value.rpartition(":")
    if not colon or not port.isdigit() or not host:
        raise UsageError(f"--listen wants HOST:PORT, not {value!r}")
    return host, int(port)


def inspect(args: argparse.Namespace) -> int:
    upstream: str | None = args.upstream
    address: str | None = args.listen
    http = upstream is not None or address is not None
    if http and (upstream is None or address is None):
        raise UsageError("HTTP mode needs both --upstream URL and --listen HOST:PORT")
    if http and args.server:
        raise UsageError("give either a server command (stdio) or --upstream (HTTP), not both")
    if not http and not args.server:
        raise UsageError("no server command: mcpio inspect -- <server command...>")
    if not http and shutil.which(args.server[0]) is None:
        raise UsageError(f"cannot run {args.server[0]!r}: not found or not executable")
    listen = _listen_address(address) if address is not None else None
    try:
        with needs("inspect", "mcpio inspect"):
            import jsonschema  # noqa: F401  (the outputSchema check's, loaded up front)
    except MissingExtra as exc:
        raise UsageError(str(exc)) from None
    with _opened(args.log, sys.stderr) as log, _opened(args.jsonl, None) as jsonl:
        assert log is not None
        recorder = Recorder(log, jsonl)
        try:
            if http:
                assert upstream is not None and listen is not None
                status = _inspect_http(upstream, listen, recorder)
            else:
                status = _inspect_stdio(args.server, recorder)
        finally:
            log.write(recorder.summary())
            log.flush()
            if args.report is not None:
                from mcpio.inspect.report import write_report

                write_report(args.report, recorder.entries)
    return status


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _inspect_stdio(command: list[str], recorder: Recorder) -> int:
    from mcpio.inspect.relay import Observer, relay_stdio

    # A host ends the server by closing stdin, or by SIGTERM: end the relay (and the server).
    signal.signal(signal.SIGTERM, _interrupt)
    observer = Observer(recorder)
    try:
        return anyio.run(relay_stdio, command, observer)
    except KeyboardInterrupt:
        return 130
    finally:
        observer.finish()


def _inspect_http(upstream: str, listen: tuple[str, int], recorder: Recorder) -> int:
    from mcpio.inspect.http_proxy import serve_proxy

    serve_proxy(upstream, listen, recorder)
    return 0


def replay(args: argparse.Namespace) -> int:
    from mcpio.inspect.replay import replay_transcript
    from mcpio.inspect.transcript import read_transcript

    try:
        entries = read_transcript(args.transcript)
    except OSError as exc:
        raise UsageError(f"cannot read {args.transcript}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    server = args.server
    target: str | list[str] = (
        server if server.startswith(("http://", "https://")) else shlex.split(server)
    )
    if not target:
        raise UsageError("--server is empty")
    differences = anyio.run(replay_transcript, entries, target, args.timeout, sys.stdout)
    return 1 if differences else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "inspect":
            return inspect(args)
        if args.command == "worker":
            from mcpio.tasks.worker import main as worker

            return worker(args)
        return replay(args)
    except UsageError as exc:
        print(f"mcpio {args.command}: {exc}", file=sys.stderr)
        return 2


def run() -> None:
    """The console script's entry point."""
    sys.exit(main())
