"""`mcpio inspect` against a hostile peer (issue 31): a peer's terminal escapes and bidi
characters are shown escaped in the findings log, the summary and the report; the HTTP relay
checks Host and Origin itself and listens on loopback unless told otherwise; a JSON answer too
large to check streams through, and the frames kept for the report are bounded."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import AsyncIterator

import httpx
import pytest

from mcpio.inspect._escape import printable
from mcpio.inspect._guard import RelayGuard, is_loopback
from mcpio.inspect._http_proxy import HeldBody, ProxyApp
from mcpio.inspect._relay import Line, Observer
from mcpio.inspect._report import render
from mcpio.inspect._transcript import Recorder
from tests.support import ACCEPT

HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202egnp.exe\u2066\x9b31m"
UNSAFE = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066"]


def test_printable_escapes_controls_and_bidi_only() -> None:
    assert printable(HOSTILE) == ("\\x1b]0;owned\\x07\\x1b[2J\\u202egnp.exe\\u2066\\x9b31m")
    assert printable("café 日本 😀 tab\there") == "café 日本 😀 tab\\x09here"
    assert printable("tag\U000e0041") == "tag\\U000e0041"


def test_a_hostile_peer_s_text_reaches_log_summary_and_report_escaped() -> None:
    log = io.StringIO()
    recorder = Recorder(log)
    observer = Observer(recorder)
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
    frames = [
        json.dumps(hello, ensure_ascii=False),
        json.dumps({"jsonrpc": "2.0", "id": HOSTILE, "method": HOSTILE}, ensure_ascii=False),
        "not json " + HOSTILE,
    ]
    for frame in frames:
        data = frame.encode()
        observer.line("client->server", Line(data, len(data)))
    recorder.record("server->client", b"{}", [], session=HOSTILE)
    observer.finish()
    written = log.getvalue() + recorder.summary()
    assert "owned" in written  # the hostile text is there, escaped
    for char in UNSAFE:
        assert char not in written, repr(char)
    page = render(recorder.entries, recorder.summary())
    for char in UNSAFE:
        assert char not in page, repr(char)
    assert "\\x1b]0;owned" in page


def test_a_loopback_guard_admits_loopback_hosts_and_origins() -> None:
    guard = RelayGuard("127.0.0.1")
    assert guard.refusal("127.0.0.1:9000", None) is None
    assert guard.refusal("localhost:9000", "http://localhost:3000") is None
    assert guard.refusal("[::1]:9000", "http://127.0.0.1:9000") is None
    assert guard.refusal(None, None) is None  # HTTP/1.0: no Host, no browser


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:9000",
        "127.0.0.1.evil.example",
        "",
        "a b",
        "127.0.0.1:x",
        "[::1]evil.com",
        "127.0.0.1evil.com",
        "127.0.0.1:80:80",
        "localhost/x",
        "u@localhost",
    ],
)
def test_a_loopback_guard_answers_another_host_421(host: str) -> None:
    refused = RelayGuard("127.0.0.1").refusal(host, None)
    assert refused is not None and refused[0] == 421, host


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "null",
        "file://",
        "http://127.0.0.1.nip.io",
        "http://[::1].evil.com",
        "http://localhost.evil.com",
        "http://localhost:3000/path",
        "http://user@localhost",
        "ftp://localhost",
    ],
)
def test_a_loopback_guard_answers_another_origin_403(origin: str) -> None:
    refused = RelayGuard("127.0.0.1").refusal("127.0.0.1:9000", origin)
    assert refused is not None and refused[0] == 403, origin


def test_a_guard_on_every_interface_admits_its_own_origin_only() -> None:
    anywhere = RelayGuard("0.0.0.0")
    assert anywhere.refusal("box.lan:9000", "http://box.lan:9000") is None
    assert anywhere.refusal("box.lan:9000", "http://evil.example") is not None


def test_a_guard_on_a_named_host_admits_that_host_only() -> None:
    named = RelayGuard("box.lan")
    assert named.refusal("box.lan:9000", None) is None
    assert named.refusal("other.lan:9000", None) is not None


def test_loopback_names_are_loopback_and_others_are_not() -> None:
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")


class _Pieces(httpx.AsyncByteStream):
    """An upstream body arriving in pieces of 64 KiB."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), 1 << 16):
            yield self.body[start : start + (1 << 16)]


def _upstream(answer: bytes, calls: list[httpx.Request]) -> httpx.AsyncClient:
    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        json_type = {"content-type": "application/json"}
        return httpx.Response(200, headers=json_type, stream=_Pieces(answer))

    return httpx.AsyncClient(transport=httpx.MockTransport(handle))


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


async def _post(app: ProxyApp, headers: dict[str, str]) -> httpx.Response:
    base = {"content-type": "application/json", "accept": ACCEPT}
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9000") as http:
        return await http.post("/mcp", json=PING, headers={**base, **headers})


@pytest.mark.anyio
async def test_the_relay_refuses_other_hosts_and_origins_before_the_upstream() -> None:
    calls: list[httpx.Request] = []
    answer = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    app = ProxyApp("http://upstream.test/mcp", Recorder(io.StringIO()), _upstream(answer, calls))
    rebound = await _post(app, {"host": "attacker.example:9000"})
    assert rebound.status_code == 421
    other_page = await _post(app, {"origin": "https://attacker.example"})
    assert other_page.status_code == 403
    assert calls == [] and app.recorder.count == 0  # nothing reached the upstream
    own = await _post(app, {"origin": "http://localhost:9000"})
    assert own.status_code == 200 and own.content == answer and len(calls) == 1


@pytest.mark.anyio
async def test_an_answer_too_large_to_check_streams_through_and_is_recorded_cut() -> None:
    calls: list[httpx.Request] = []
    text = "x" * 300_000
    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"t": text}}).encode()
    app = ProxyApp("http://upstream.test/mcp", Recorder(io.StringIO()), _upstream(answer, calls))
    app.max_frame_bytes = 50_000
    relayed = await _post(app, {})
    assert relayed.status_code == 200 and relayed.content == answer  # unchanged
    last = app.recorder.entries[-1]
    assert last.size == len(answer) and len(last.frame) <= len(answer)
    assert [f.rule for f in last.findings] == ["frame.too-large"]


def test_a_held_body_is_held_until_its_limit_then_passes_on() -> None:
    body = HeldBody(10)
    assert body.add(b"12345") == [] and body.add(b"6789") == []
    assert body.whole() == b"123456789"
    over = HeldBody(10)
    assert over.add(b"123456") == []
    assert over.add(b"789012") == [b"123456", b"789012"]
    assert over.add(b"345") == [b"345"]
    assert over.whole() is None and over.size == 15 and over.head == b"123456789012345"


def test_the_recorder_keeps_the_latest_frames_and_counts_them_all() -> None:
    recorder = Recorder(io.StringIO(), max_frames=3, max_kept_bytes=1 << 20)
    for n in range(10):
        recorder.record("client->server", b'{"jsonrpc":"2.0","method":"x%d"}' % n, [])
    assert [e.index for e in recorder.entries] == [7, 8, 9] and recorder.count == 10
    assert recorder.entry(8) is recorder.entries[1] and recorder.entry(2) is None
    assert "10 frames (10 client->server" in recorder.summary()
    by_bytes = Recorder(io.StringIO(), max_kept_bytes=100)
    for _ in range(10):
        by_bytes.record("client->server", b"y" * 40, [])
    assert len(by_bytes.entries) == 2


@pytest.mark.parametrize(
    ("listen", "status", "message"),
    [
        ("0.0.0.0:9", 2, "not a loopback address; add --allow-remote"),
        ("192.168.7.7:9", 2, "not a loopback address; add --allow-remote"),
    ],
)
def test_the_relay_listens_elsewhere_only_when_told(listen: str, status: int, message: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mcpio", "inspect", "--upstream", "http://127.0.0.1:1/mcp",
         "--listen", listen],
        capture_output=True, timeout=60, input=b"",
    )  # fmt: skip
    assert run.returncode == status
    lines = run.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


@pytest.mark.anyio
async def test_a_request_too_large_to_check_streams_to_the_upstream() -> None:
    calls: list[httpx.Request] = []
    answer = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    app = ProxyApp("http://upstream.test/mcp", Recorder(io.StringIO()), _upstream(answer, calls))
    app.max_frame_bytes = 50_000
    frame = {**PING, "params": {"_meta": {"pad": "y" * 300_000}}}
    sent = json.dumps(frame).encode()
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9000") as http:
        headers = {"content-type": "application/json", "accept": ACCEPT}
        relayed = await http.post("/mcp", content=sent, headers=headers)
    assert relayed.status_code == 200 and relayed.content == answer
    assert [await c.aread() for c in calls] == [sent]  # the upstream got it whole
    first = app.recorder.entries[0]
    assert first.direction == "client->server" and first.size == len(sent)
    assert [f.rule for f in first.findings] == ["frame.too-large"]
