"""The stdio transport with real processes: framing, bad lines, process lifetime."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, ConnectionClosed, RequestTimeout
from mcpio.transports.stdio import (
    BACKLOG,
    PushedLines,
    server_environment,
    spawn,
    stdio_server_transport,
)
from tests.support import ROOT, until

EVERYTHING = [sys.executable, str(ROOT / "examples" / "everything_server.py"), "stdio"]
SLEEPY = [sys.executable, str(ROOT / "tests" / "peers" / "sleepy_server.py")]
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def exchange(lines: list[bytes], timeout: float = 20) -> list[Any]:
    """Feed lines to a fresh everything server, close its stdin, read all it answers."""
    done = subprocess.run(
        EVERYTHING,
        input=b"".join(line + b"\n" for line in lines),
        capture_output=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def request(id: int, method: str, **params: Any) -> bytes:
    frame = {"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": ENVELOPE, **params}}
    return json.dumps(frame).encode()


def test_bad_lines_get_their_error_and_the_next_line_is_served() -> None:
    oversized = (
        b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"'
        + b"a" * (17 << 20)
        + b'"}}'
    )
    answers = exchange(
        [
            b"this is not json",
            request(1, "tools/list"),
            b"",  # blank lines are skipped
            b'{"jsonrpc":"2.0","id":2,',  # truncated
            oversized,
            b"[1, 2]",
            request(3, "tools/call", name="test_simple_text"),
        ]
    )
    codes = [a["error"]["code"] for a in answers if "error" in a]
    assert codes == [-32700, -32700, -32600, -32600]
    assert all("id" not in a for a in answers if "error" in a)  # unreadable ids go unsaid
    results = {a["id"]: a["result"] for a in answers if "result" in a}
    assert len(results[1]["tools"]) > 20
    assert results[3]["content"][0]["text"] == "This is a simple text response for testing."


def test_stdout_carries_protocol_messages_only() -> None:
    done = subprocess.run(
        EVERYTHING,
        input=request(1, "tools/call", name="nonexistent") + b"\n" + b"junk\n",
        capture_output=True,
        timeout=20,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert b"Traceback" not in done.stdout and b"Traceback" not in done.stderr


def test_server_exits_when_stdin_ends() -> None:
    started = time.monotonic()
    done = subprocess.run(EVERYTHING, input=b"", capture_output=True, timeout=20)
    assert done.returncode == 0 and done.stdout == b""
    assert time.monotonic() - started < 10


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_client_spawns_and_ends_the_server(mode: str) -> None:
    async with Client(SLEEPY, mode=mode) as client:
        result = await client.call_tool("sleep", {"seconds": 0.01})
        assert result.content[0].text == "slept 0.01"  # type: ignore[union-attr]
        process = client._session.transport.process  # type: ignore[union-attr]
    assert process.returncode == 0  # stdin closed, it exited by itself: no zombie


@pytest.mark.anyio
async def test_a_dying_server_fails_pending_requests() -> None:
    async with Client(SLEEPY) as client:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tasks:
                failures: list[BaseException] = []

                async def pending() -> None:
                    try:
                        await client.call_tool("sleep", {"seconds": 30})
                    except ConnectionClosed as exc:
                        failures.append(exc)

                tasks.start_soon(pending)
                await until(lambda: client._session._pending)  # type: ignore[union-attr]
                with pytest.raises(ConnectionClosed):
                    await client.call_tool("die", {})
        assert len(failures) == 1
        with pytest.raises(ConnectionClosed):
            await client.list_tools()


@pytest.mark.anyio
async def test_a_server_that_ignores_eof_is_terminated() -> None:
    hang = [sys.executable, "-c", "import signal, time; time.sleep(60)"]
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        async with Client(hang, mode="legacy", timeout=0.3):
            pass
    assert time.monotonic() - started < 8  # grace 2 s, then SIGTERM


PRINTING = """
from mcpio import Server

server = Server("printing", "1.0")


@server.tool()
async def chatty() -> str:
    print("hello from the handler")
    return "done"


server.run_stdio()
"""


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_prints_of_a_handler_go_to_stderr(
    mode: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "printing.py"
    script.write_text(PRINTING)
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as stderr:
        async with Client([sys.executable, str(script)], mode=mode, stderr=stderr) as client:
            result = await client.call_tool("chatty", {})
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    assert "unreadable frame" not in caplog.text
    assert "hello from the handler" in errors.read_text()


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
def test_an_error_after_initialize_follows_its_answer(revision: str) -> None:
    params = {
        "protocolVersion": revision,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    answers = exchange([json.dumps(initialize).encode(), b"garbage"])
    error_members = {"error", "jsonrpc", "id"} if revision == "2025-06-18" else {"error", "jsonrpc"}
    assert [set(a) for a in answers] == [{"id", "jsonrpc", "result"}, error_members]
    assert answers[0]["result"]["protocolVersion"] == revision
    assert answers[1]["error"]["code"] == -32700
    if revision == "2025-06-18":
        assert answers[1]["id"] is None  # the schema requires an id: JSON-RPC's null


CONTEXT_SERVER = """
import contextvars

import anyio

from mcpio import Server
from mcpio.transports.stdio import protocol_stdout, stdio_server_transport

TENANT = contextvars.ContextVar("tenant", default="unset")
server = Server("context", "1.0")


@server.tool(structured_output=False)
async def tenant(mark: str) -> str:
    seen = TENANT.get()
    TENANT.set(mark)  # a handler's own change stays its own
    return seen


async def main():
    with protocol_stdout() as stdout:
        transport = await stdio_server_transport(stdout=stdout)
        TENANT.set("acme")  # in the serving task, after the pipe is connected
        await server.serve(transport)


anyio.run(main)
"""


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_handlers_run_in_the_serving_context_however_their_request_came(
    mode: str, tmp_path: Path
) -> None:
    """A request whose handler starts straight from the pipe (the read loop idle) runs in the
    context the read loop would have given it (the serving task's, not the one the pipe was
    connected in), each handler in its own copy."""
    script = tmp_path / "context_server.py"
    script.write_text(CONTEXT_SERVER)
    async with Client([sys.executable, str(script)], mode=mode) as client:
        seen = [await client.call_tool("tenant", {"mark": f"m{i}"}) for i in range(20)]
        answers: list[Any] = []

        async def call(i: int) -> None:
            answers.append(await client.call_tool("tenant", {"mark": f"c{i}"}))

        async with anyio.create_task_group() as tasks:
            for i in range(20):
                tasks.start_soon(call, i)
    assert {r.content[0].text for r in seen + answers} == {"acme"}


ECHO_SERVER = """
from mcpio import Server

server = Server("echo", "1.0")


@server.tool(structured_output=False)
async def echo(text: str) -> str:
    return text


server.run_stdio()
"""


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_progress_is_told_before_the_call_returns(mode: str) -> None:
    """A response settled as soon as it is read never overtakes the frames before it."""
    async with Client(EVERYTHING, mode=mode) as client:
        seen: list[float] = []
        for _ in range(5):
            seen.clear()
            await client.call_tool(
                "test_tool_with_progress", {}, progress=lambda p, *_: seen.append(p)
            )
            assert seen == [0, 50, 100]


@pytest.mark.anyio
async def test_many_large_answers_in_flight(tmp_path: Path) -> None:
    """Answers far beyond what the client reads ahead (its pipe paused and resumed), many in
    flight, each whole and matched to its call."""
    script = tmp_path / "echo_server.py"
    script.write_text(ECHO_SERVER)
    async with Client([sys.executable, str(script)], mode="2026-07-28") as client:
        texts = [f"{i}:" + "x" * (100_000 + i) for i in range(24)]
        answers: dict[int, str] = {}

        async def call(i: int) -> None:
            result = await client.call_tool("echo", {"text": texts[i]})
            answers[i] = result.content[0].text  # type: ignore[union-attr]

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tasks:
                for i in range(len(texts)):
                    tasks.start_soon(call, i)
        assert answers == dict(enumerate(texts))


@pytest.mark.anyio
async def test_a_process_read_ahead_pauses_its_pipe_until_read() -> None:
    """Output nobody reads yet fills at most about BACKLOG bytes before the pipe is paused;
    reading resumes it, and every line comes, in order."""
    await _read_ahead_pauses()


@pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="uvloop not installed")
def test_a_process_read_ahead_pauses_its_pipe_on_uvloop_too() -> None:
    """As above, on the loop `Client.run` picks."""
    Client.run(_read_ahead_pauses)


async def _read_ahead_pauses() -> None:
    lines = 5_000
    code = f"import sys\nfor i in range({lines}): sys.stdout.write(f'{{i:09d}}' + 'y' * 90 + '\\n')"
    transport = await spawn([sys.executable, "-c", code])
    try:
        await until(lambda: transport._paused)
        assert transport._backlog <= BACKLOG + 256 * 1024  # one read of the pipe beyond it
        pipe = transport.pipe
        assert pipe is not None and not pipe.is_reading()  # type: ignore[attr-defined]
        with anyio.fail_after(30):
            got = [int((await transport.receive())[:9]) for _ in range(lines)]
        assert got == list(range(lines))
        assert not transport._paused
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()
    finally:
        await transport.aclose()


@pytest.mark.anyio
async def test_a_servers_read_ahead_pauses_its_stdin_until_read(tmp_path: Path) -> None:
    """The server's side alike: frames its read loop has not taken fill at most about BACKLOG
    bytes before stdin is paused; reading resumes it, every line comes, in order, then the
    end."""
    lines = 5_000
    read_end, write_end = os.pipe()
    out = (tmp_path / "out").open("wb")
    stdin = os.fdopen(read_end, "rb", 0)
    transport = await stdio_server_transport(stdin=stdin, stdout=out)
    assert isinstance(transport, PushedLines)

    def write_all() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            for i in range(lines):
                pipe.write(f"{i:09d}".encode() + b"y" * 90 + b"\n")

    got: list[int] = []
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(anyio.to_thread.run_sync, write_all)
            await until(lambda: transport._paused)  # pyright: ignore[reportPrivateUsage]
            assert transport._backlog <= BACKLOG + 256 * 1024  # pyright: ignore[reportPrivateUsage]
            with anyio.fail_after(30):
                got = [int((await transport.receive())[:9]) for _ in range(lines)]
        assert got == list(range(lines))
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()
    finally:
        stdin.close()
        out.close()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_client_run_owns_its_loop_uvloop_where_installed(mode: str) -> None:
    """`Client.run` runs on uvloop where installed; the process's stdout (read straight into the
    client there too) answers, and its end fails what is still pending."""

    async def main(seconds: float) -> tuple[str, str]:
        async with Client(SLEEPY, mode=mode) as client:
            result = await client.call_tool("sleep", {"seconds": seconds})
            process = client._session.transport.process  # type: ignore[union-attr]
            process.kill()
            with pytest.raises(ConnectionClosed):
                await client.call_tool("sleep", {"seconds": 5})
        return type(asyncio.get_running_loop()).__module__, result.content[0].text  # type: ignore[union-attr]

    loop, text = Client.run(main, 0.01)
    assert text == "slept 0.01"
    assert loop.split(".")[0] == ("uvloop" if importlib.util.find_spec("uvloop") else "asyncio")


@pytest.mark.anyio
@pytest.mark.parametrize("stdout_kind", ["pipe", "file"])
async def test_a_servers_answers_sent_at_once_stay_whole_lines(
    tmp_path: Path, stdout_kind: str
) -> None:
    """Frames sent concurrently, each larger than a pipe takes at once (the writer drains
    between them), come out as whole lines: to a pipe, written whole without a lock (the
    transport is `atomic`); to a regular file, written by a worker thread, one at a time."""
    read_end, write_end = os.pipe()
    stdin = os.fdopen(read_end, "rb", 0)
    out_read = -1
    if stdout_kind == "pipe":
        out_read, out_write = os.pipe()
        out = os.fdopen(out_write, "wb", 0)
    else:
        out = (tmp_path / "out").open("wb")
    frames = [f'{{"n":{i},"pad":"{"z" * (150_000 + i)}"}}'.encode() for i in range(12)]
    transport = await stdio_server_transport(stdin=stdin, stdout=out)
    assert transport._atomic is (stdout_kind == "pipe")  # pyright: ignore[reportPrivateUsage]

    got: list[bytes] = []

    def read_all() -> None:
        with os.fdopen(out_read, "rb") as pipe:
            got.append(pipe.read())

    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as reader:
                if stdout_kind == "pipe":
                    reader.start_soon(anyio.to_thread.run_sync, read_all)
                async with anyio.create_task_group() as tasks:
                    for frame in frames:
                        tasks.start_soon(transport.send, frame)
                out.close()
        written = got[0] if stdout_kind == "pipe" else (tmp_path / "out").read_bytes()
    finally:
        stdin.close()
        os.close(write_end)
        out.close()
    assert sorted(written.splitlines()) == sorted(frames)


ENVIRONMENT_SERVER = """
import json, os
from mcpio import Server

server = Server("environment")


@server.tool()
def environment() -> str:
    return json.dumps(dict(os.environ))


server.run_stdio()
"""


async def child_environment(tmp_path: Path, **options: Any) -> dict[str, str]:
    script = tmp_path / "environment_server.py"
    script.write_text(ENVIRONMENT_SERVER, encoding="utf-8")
    with anyio.fail_after(60):
        async with Client([sys.executable, str(script)], **options) as client:
            result = await client.call_tool("environment", {})
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_stdio_server_inherits_only_the_allow_listed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPIO_TEST_API_KEY", "s3cret")
    monkeypatch.setenv("LC_TIME", "C")
    seen = await child_environment(tmp_path)
    assert "MCPIO_TEST_API_KEY" not in seen and "s3cret" not in seen.values()
    assert seen["PATH"] == os.environ["PATH"] and seen["HOME"] == os.environ["HOME"]
    assert seen["LC_TIME"] == "C"
    python_own = {"LC_CTYPE"}  # what the interpreter may set itself (PEP 538)
    assert set(seen) - python_own <= set(server_environment()) | {"LC_TIME"}


@pytest.mark.anyio
async def test_env_is_added_to_the_allow_listed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPIO_TEST_API_KEY", "s3cret")
    seen = await child_environment(tmp_path, env={"WEATHER_KEY": "given", "HOME": "/elsewhere"})
    assert seen["WEATHER_KEY"] == "given" and seen["HOME"] == "/elsewhere"  # given wins
    assert seen["PATH"] == os.environ["PATH"] and "MCPIO_TEST_API_KEY" not in seen


def test_the_allow_list_takes_no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY", "SSH_AUTH_SOCK"):
        monkeypatch.setenv(name, "s3cret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert "s3cret" not in server_environment().values()
    assert server_environment({"X": "1"}) == {**server_environment(), "X": "1"}
    assert server_environment()["LANG"] == "C.UTF-8"
