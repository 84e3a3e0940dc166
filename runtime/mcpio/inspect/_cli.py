"""`mcpio inspect` and `mcpio replay` (their options: `mcpio.cli`).

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
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

import anyio

from mcpio.inspect._guard import is_loopback
from mcpio.inspect._stateful import output_checked
from mcpio.inspect._transcript import MAX_FRAMES, Recorder


class UsageError(Exception):
    """A bad argument or an unreadable file: one line, exit status 2."""


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


def _listen_address(value: str, remote: bool) -> tuple[str, int]:
    """`--listen PORT` (on 127.0.0.1) or `HOST:PORT`; a host other than loopback only with
    `--allow-remote` (the relay would reach the upstream for anyone who reaches it)."""
    host, colon, port = value.rpartition(":")
    if not colon:
        host, port = "127.0.0.1", value
    if not port.isdigit() or not host:
        raise UsageError(f"--listen wants HOST:PORT (or PORT), not {value!r}")
    if not is_loopback(host) and not remote:
        raise UsageError(
            f"--listen {value}: not a loopback address; add --allow-remote to listen there"
        )
    return host, int(port)


def inspect(args: argparse.Namespace) -> int:
    """`mcpio inspect`: relay a stdio or HTTP session, check each frame, write what was found."""
    upstream: str | None = args.upstream
    address: str | None = args.listen
    http = upstream is not None or address is not None
    if http and (upstream is None or address is None):
        raise UsageError("HTTP mode needs both --upstream URL and --listen [HOST:]PORT")
    if http and args.server:
        raise UsageError("give either a server command (stdio) or --upstream (HTTP), not both")
    if not http and not args.server:
        raise UsageError("no server command: mcpio inspect -- <server command...>")
    if not http and shutil.which(args.server[0]) is None:
        raise UsageError(f"cannot run {args.server[0]!r}: not found or not executable")
    if upstream is not None and _has_userinfo(upstream):
        raise UsageError(
            "--upstream: credentials in the URL are not supported; the relay forwards the "
            "client's own Authorization header"
        )
    remote = bool(getattr(args, "allow_remote", False))
    listen = _listen_address(address, remote) if address is not None else None
    with _opened(args.log, sys.stderr) as log, _opened(args.jsonl, None) as jsonl:
        assert log is not None
        recorder = Recorder(log, jsonl, max_frames=getattr(args, "max_frames", None) or MAX_FRAMES)
        try:
            if http:
                assert upstream is not None and listen is not None
                status = _inspect_http(upstream, listen, recorder)
            else:
                status = _inspect_stdio(args.server, recorder)
        finally:
            log.write(recorder.summary())
            if not output_checked():
                log.write(
                    "mcpio inspect: structuredContent was not checked against outputSchema "
                    "(install the 'inspect' extra: jsonschema)\n"
                )
            log.flush()
            if args.report is not None:
                from mcpio.inspect._report import write_report

                write_report(args.report, recorder.entries, recorder.summary())
    return status


def _has_userinfo(url: str) -> bool:
    """Whether `url` names a user (`scheme://user:password@host`)."""
    return "@" in urlsplit(url).netloc


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _inspect_stdio(command: list[str], recorder: Recorder) -> int:
    from mcpio.inspect._relay import Observer, relay_stdio

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
    from mcpio.inspect._http_proxy import serve_proxy

    serve_proxy(upstream, listen, recorder)
    return 0


def replay(args: argparse.Namespace) -> int:
    """`mcpio replay`: send a transcript's requests to a server again and report what differs."""
    from mcpio.inspect._replay import ReplayError, replay_transcript
    from mcpio.inspect._transcript import read_transcript

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
    try:
        differences = anyio.run(replay_transcript, entries, target, args.timeout, sys.stdout)
    except ReplayError as exc:
        raise UsageError(str(exc)) from None
    return 1 if differences else 0
