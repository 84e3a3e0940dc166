"""The server's dispatch core on its fast path: answers written straight from the result model
(`Codec.encode_result`), request handlers as plain tasks (cancelled by `notifications/cancelled`
even before they start, cancelled with the session, waited for when the transport ends), the
shared `_meta` stamp of modern results."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_wire
from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime.errors import INTERNAL_ERROR, MessageBuildError, ProtocolError
from mcpio import Server
from mcpio._core.handlers import tool_result
from mcpio._core.session import Session
from mcpio.transports._lines import LineStream
from tests.support import ENVELOPE, MODERN, REVISIONS

pytestmark = pytest.mark.anyio

RESULTS = {
    "tools/call": {"content": [{"type": "text", "text": 'a "quoted" é'}], "isError": False},
    "resources/read": {"contents": [{"uri": "test://x", "text": "x", "mimeType": "text/plain"}]},
    "prompts/list": {"prompts": [{"name": "p", "arguments": [{"name": "a", "required": True}]}]},
}


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("id", [0, 7, -3, 2**62, "x", 'q"\\é'])
def test_encode_result_writes_what_encode_writes(revision: str, id: int | str) -> None:
    codec = mcp_wire.codec(revision)
    for method, result in RESULTS.items():
        frame = codec.response(id, method, result)
        written = codec.encode_result(id, frame.result)
        assert json.loads(written) == json.loads(codec.encode(frame))
        assert codec.decode_response(written, method).result == frame.result


def test_encode_result_fills_what_the_revision_requires() -> None:
    """A modern result read without its resultType (an older peer's) is written with it."""
    codec = mcp_wire.codec(MODERN)
    read = codec.decode_response(b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', "tools/call")
    assert "resultType" not in read.result.model_fields_set
    written = json.loads(codec.encode_result(1, read.result))
    assert written == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [], "resultType": "complete"},
    }


def test_encode_result_refuses_what_is_not_its_revisions() -> None:
    codec = mcp_wire.codec(MODERN)
    older = mcp_wire.codec("2025-06-18").response(1, "tools/call", {"content": []}).result
    with pytest.raises(ProtocolError) as caught:
        codec.encode_result(1, older)
    assert caught.value.code == INTERNAL_ERROR
    with pytest.raises(MessageBuildError):
        codec.encode_result(1.5, codec.response(1, "tools/call", RESULTS["tools/call"]).result)  # type: ignore[arg-type]


TEXTS = ["", "hello", 'a "quoted" é 中 😀', "\\ \n\t\x00\x7f\u2028", "\ud800"]


@pytest.mark.parametrize("index", range(len(TEXTS)))
async def test_a_text_answer_is_written_as_its_result_model_is(index: int) -> None:
    """A tool's string answer to a modern request is written without a model (`TextAnswer`),
    the server's `_meta` spliced in: the same bytes as the model written with that `_meta`,
    or the same error."""
    server = Server("core", "1.0")

    @server.tool(structured_output=False)
    async def text_of(index: int) -> str:  # pyright: ignore[reportUnusedFunction]
        return TEXTS[index]  # (a lone surrogate cannot arrive in JSON, but a tool may make one)

    codec = mcp_wire.codec(MODERN)
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    call["params"] = {"_meta": ENVELOPE, "name": "text_of", "arguments": {"index": index}}
    raw = json.dumps(call).encode()
    answer = await server.connect(_Kept(), modern=True).answer(raw, codec.peek(raw))
    text = TEXTS[index]
    model = tool_result(text)
    model.meta = server.result_meta
    try:
        expected = codec.encode_result(3, model)
    except Exception:
        assert answer is not None and json.loads(answer)["error"]["code"] == INTERNAL_ERROR
        return
    assert answer == expected
    assert codec.encode_result(3, tool_result(text), server.result_meta_json) == expected
    assert (
        codec.result_frame(3, b"{}", b'{"k":1}')
        == b'{"jsonrpc":"2.0","id":3,"result":{"_meta":{"k":1}}}'
    )


@pytest.mark.parametrize("revision", [r for r in REVISIONS if r != MODERN])
@pytest.mark.parametrize("index", range(len(TEXTS)))
async def test_a_legacy_text_answer_is_written_as_its_projected_model_is(
    revision: str, index: int
) -> None:
    server = Server("core", "1.0")

    @server.tool(structured_output=False)
    async def text_of(index: int) -> str:  # pyright: ignore[reportUnusedFunction]
        return TEXTS[index]

    codec = mcp_wire.codec(revision)
    connection = server.connect(_Kept())
    init = {"protocolVersion": revision, "capabilities": {}}
    init["clientInfo"] = {"name": "t", "version": "1"}
    frame = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
    raw = json.dumps(frame).encode()
    assert b'"result"' in (await connection.answer(raw, codec.peek(raw)) or b"")
    frame = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    frame["params"] = {"name": "text_of", "arguments": {"index": index}}
    raw = json.dumps(frame).encode()
    answer = await connection.answer(raw, codec.peek(raw))
    try:
        expected = codec.encode_result(
            3, codec.from_public("tools/call", tool_result(TEXTS[index]), "result")
        )
    except Exception:
        assert answer is not None and json.loads(answer)["error"]["code"] == INTERNAL_ERROR
        return
    assert answer == expected


async def test_a_result_whose_meta_is_set_to_none_gets_the_servers() -> None:
    server = Server("core", "1.0")

    @server.tool(structured_output=False)
    async def echo(text: str) -> Any:  # pyright: ignore[reportUnusedFunction]
        model = tool_result(text)
        model.meta = None  # set, to None
        return model

    codec = mcp_wire.codec(MODERN)
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    call["params"] = {"_meta": ENVELOPE, "name": "echo", "arguments": {"text": "x"}}
    raw = json.dumps(call).encode()
    answer = await server.connect(_Kept(), modern=True).answer(raw, codec.peek(raw))
    assert answer is not None and answer.count(b'"_meta"') == 1
    assert json.loads(answer)["result"]["_meta"] == {
        "io.modelcontextprotocol/serverInfo": {"name": "core", "version": "1.0"}
    }


class _Kept:
    async def receive(self) -> bytes:
        raise AssertionError("not read")

    async def send(self, data: bytes) -> None:
        raise AssertionError("an answer is returned, not sent")

    async def aclose(self) -> None:
        pass


class Script:
    """A stdio-like byte stream: `feed` hands the server a chunk (several lines at once, as a
    pipe may), `sent` collects its lines; `end` ends its input."""

    def __init__(self) -> None:
        self.send_in, self.receive_in = anyio.create_memory_object_stream[bytes](16)
        self.sent: list[dict[str, Any]] = []
        self.answered = anyio.Event()

    def transport(self) -> LineStream:
        async def read() -> bytes:
            try:
                return await self.receive_in.receive()
            except anyio.EndOfStream:
                return b""

        async def write(data: bytes) -> None:
            self.sent.extend(json.loads(line) for line in data.splitlines())
            self.answered.set()

        async def close() -> None:
            pass

        return LineStream(read, write, close)

    async def feed(self, *frames: dict[str, Any]) -> None:
        await self.send_in.send(b"".join(json.dumps(f).encode() + b"\n" for f in frames))

    def end(self) -> None:
        self.send_in.close()

    async def answer(self, id: Any) -> dict[str, Any]:
        while True:
            for frame in self.sent:
                if frame.get("id") == id:
                    return frame
            self.answered = anyio.Event()
            await self.answered.wait()


def waiting_server() -> tuple[Server, dict[str, Any]]:
    server = Server("core", "1.0")
    seen: dict[str, Any] = {
        "started": 0,
        "running": anyio.Event(),
        "cancelled": anyio.Event(),
        "release": anyio.Event(),
    }

    @server.tool()
    async def wait() -> str:
        seen["started"] += 1
        seen["running"].set()
        try:
            await seen["release"].wait()
        except anyio.get_cancelled_exc_class():
            seen["cancelled"].set()
            raise
        return "released"

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server, seen


def call(id: Any, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}, "_meta": ENVELOPE}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def cancelled(id: Any) -> dict[str, Any]:
    params = {"requestId": id, "_meta": ENVELOPE}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


async def test_a_request_cancelled_in_the_same_read_is_never_run_nor_answered() -> None:
    server, seen = waiting_server()
    script = Script()
    connection = server.connect(script.transport())
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(connection.run)
        await script.feed(call(1, "wait"), cancelled(1), call(2, "echo", {"text": "after"}))
        answer = await script.answer(2)
        assert answer["result"]["content"] == [{"type": "text", "text": "after"}]
        assert seen["started"] == 0  # cancelled before its task first ran
        assert not connection.session.serves(1)  # its id is free again
        await script.feed(call(1, "echo", {"text": "again"}))
        assert (await script.answer(1))["result"]["content"][0]["text"] == "again"
        script.end()
    assert [f.get("id") for f in script.sent] == [2, 1]


async def test_a_running_request_is_cancelled_by_notifications_cancelled() -> None:
    server, seen = waiting_server()
    script = Script()
    connection = server.connect(script.transport())
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(connection.run)
        await script.feed(call(1, "wait"))
        with anyio.fail_after(10):
            await seen["running"].wait()
        await script.feed(cancelled(1))
        with anyio.fail_after(10):
            await seen["cancelled"].wait()
        await script.feed(call(2, "echo", {"text": "next"}))
        await script.answer(2)
        assert not connection.session.serves(1)
        script.end()
    assert [f.get("id") for f in script.sent] == [2]


async def test_the_transport_ending_lets_running_handlers_answer() -> None:
    server, seen = waiting_server()
    script = Script()
    connection = server.connect(script.transport())
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(connection.run)
        await script.feed(call(1, "wait"))
        with anyio.fail_after(10):
            await seen["running"].wait()
        script.end()
        await anyio.sleep(0.01)  # the read loop sees the end; run() waits for the handler
        seen["release"].set()
    assert script.sent[0]["result"]["content"][0]["text"] == "released"
    assert not seen["cancelled"].is_set()


async def test_a_cancelled_session_cancels_its_handlers() -> None:
    server, seen = waiting_server()
    script = Script()
    connection = server.connect(script.transport())
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(connection.run)
            await script.feed(call(1, "wait"), call(2, "wait"))
            while seen["started"] < 2:
                await anyio.sleep(0)
            tasks.cancel_scope.cancel()
    assert seen["cancelled"].is_set()
    assert not connection.session.serves(1) and not connection.session.serves(2)
    assert script.sent == []


class Failing:
    """A peer whose request handler has a bug for request 1."""

    def __init__(self, session_of: list[Session]) -> None:
        self.session_of = session_of

    async def on_request(self, raw: bytes, env: Peek) -> None:
        if env.id == 1:
            raise RuntimeError("a bug")
        await self.session_of[0].send(b'{"jsonrpc":"2.0","id":%d,"result":{}}' % env.id)

    async def on_notification(self, raw: bytes, env: Peek) -> None:
        pass

    async def on_batch(self, raw: bytes, items: list[Any]) -> None:
        pass

    def error_frame(self, id: Any, error: ProtocolError) -> bytes:
        return b"{}"

    async def on_close(self) -> None:
        pass


async def test_a_failing_handler_is_logged_and_the_session_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    script = Script()
    sessions: list[Session] = []
    session = Session(script.transport(), Failing(sessions))
    sessions.append(session)
    with caplog.at_level(logging.ERROR, logger="mcpio"):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(session.run)
            ping = {"jsonrpc": "2.0", "method": "ping"}
            await script.feed({**ping, "id": 1}, {**ping, "id": 2})
            assert (await script.answer(2))["result"] == {}
            script.end()
    assert [f["id"] for f in script.sent] == [2]
    assert "serving request 1 failed" in caplog.text
    assert not session.serves(1)


async def test_modern_results_carry_the_servers_info_as_it_is_now() -> None:
    server, _ = waiting_server()
    script = Script()
    connection = server.connect(script.transport())
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(connection.run)
        await script.feed(call(1, "echo", {"text": "a"}))
        first = await script.answer(1)
        server.info = server.info.model_copy(update={"version": "2.0"})
        await script.feed(call(2, "echo", {"text": "b"}))
        second = await script.answer(2)
        script.end()
    info = "io.modelcontextprotocol/serverInfo"
    assert first["result"]["_meta"][info] == {"name": "core", "version": "1.0"}
    assert second["result"]["_meta"][info] == {"name": "core", "version": "2.0"}


ECHO_SERVER = """
from mcpio import Server

server = Server("files", "1.0")


@server.tool()
async def echo(text: str) -> str:
    return text


server.run_stdio()
"""


def test_run_stdio_serves_regular_files_and_devices(tmp_path: Path) -> None:
    """stdin and stdout redirected from and to regular files, or /dev/null: the event loop
    (uvloop's too) cannot watch them; they are read and written through a thread."""
    script = tmp_path / "server.py"
    script.write_text(ECHO_SERVER)
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "a"}, "_meta": ENVELOPE}},
        call(2, "echo", {"text": "b"}),
    ]  # fmt: skip
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
    answers = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run([sys.executable, str(script)], stdin=stdin, stdout=stdout, timeout=60)
    assert done.returncode == 0
    texts = [json.loads(line)["result"]["content"][0]["text"] for line in answers.read_bytes().splitlines()]  # fmt: skip
    assert sorted(texts) == ["a", "b"]
    with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as stdout:
        done = subprocess.run([sys.executable, str(script)], stdin=stdin, stdout=stdout, timeout=60)
    assert done.returncode == 0
