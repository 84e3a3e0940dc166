"""`mcpio inspect` over stdio: bytes pass through unchanged both ways (garbage, oversized and
unterminated lines included), every rule is flagged with its path and severity by a scripted
server and client that each break one rule, clean sessions raise nothing, transcripts and the
summary say what happened, and bad command lines are one line and exit status 2."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpio.inspect._checks import Checker
from mcpio.inspect._rules import RULES
from mcpio.inspect._transcript import read_transcript
from tests.support import ROOT
from tests.support.inspect_scenarios import (
    ALSO,
    EXPECTED,
    MODERN,
    SCENARIOS,
    complete,
    modern,
    wire,
)

PEER = str(ROOT / "tests" / "peers" / "inspect_peer.py")
INSPECT = [sys.executable, "-m", "mcpio", "inspect"]
DIRECTION = {"c": "client->server", "s": "server->client"}


def findings_of(name: str) -> list[tuple[str, str, str]]:
    """The findings of a scenario's frames and of its end (requests left unanswered)."""
    checker = Checker()
    found = [
        f
        for index, (who, frame) in enumerate(SCENARIOS[name])
        for f in checker.check(DIRECTION[who], wire(frame).rstrip(b"\n"), index=index)  # type: ignore[arg-type]
    ]
    return [(f.rule, f.path, f.severity) for f in found + checker.finish()]


def assert_expected(name: str, found: list[tuple[str, str, str]]) -> None:
    expected = EXPECTED[name]
    if expected is None:
        assert found == []
        return
    assert expected in found
    assert {rule for rule, _, _ in found} <= {expected[0], *ALSO.get(name, set())}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_rule_is_flagged_with_its_path_and_severity(name: str) -> None:
    assert_expected(name, findings_of(name))


def test_every_rule_has_a_test() -> None:
    scripted = {expected[0] for expected in EXPECTED.values() if expected is not None}
    # the others: test_bytes_pass_through_unchanged_both_ways (frame.too-large), and
    # tests/inspect/test_inspect_http.py (the two HTTP header rules)
    # test_a_closed_objects_unknown_member_is_flagged (frame.unknown-member), and
    # test_param_headers_must_mirror_the_arguments and tests/inspect/test_inspect_http.py (HTTP headers)
    elsewhere = {"frame.too-large", "http.header-mismatch", "http.protocol-version-header"}
    elsewhere |= {"frame.unknown-member", "http.param-header"}
    # tests/inspect/test_inspect_http.py: test_a_message_after_a_post_s_last_answer_is_a_warning
    elsewhere |= {"stream.after-response"}
    assert set(RULES) == scripted | elsewhere and not scripted & elsewhere


def run_through_proxy(name: str, tmp_path: Path, *options: str) -> tuple[list[Any], str]:
    """Play the client's side of a scenario through the proxy to the scripted server."""
    transcript = tmp_path / "t.jsonl"
    proxy = subprocess.Popen(
        [*INSPECT, *options, "--jsonl", str(transcript), "--", sys.executable, PEER, name],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proxy.stdin is not None and proxy.stdout is not None
    for who, frame in SCENARIOS[name]:
        if who == "c":
            proxy.stdin.write(wire(frame))
            proxy.stdin.flush()
        else:
            assert proxy.stdout.readline() == wire(frame)
    _, err = proxy.communicate(timeout=60)
    assert proxy.returncode == 0, err
    return [e.to_json() for e in read_transcript(transcript)], err.decode()


FAST = {"clean-legacy", "frame.schema", "capability.client"}


@pytest.mark.parametrize(
    "name",
    [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in sorted(SCENARIOS)],
)
def test_the_proxy_flags_what_the_checker_flags(name: str, tmp_path: Path) -> None:
    """Every scenario played through the real proxy process (three in the fast subset)."""
    entries, err = run_through_proxy(name, tmp_path)
    assert len(entries) == len(SCENARIOS[name])
    found = [(f["rule"], f["path"], f["severity"]) for e in entries for f in e["findings"]]
    assert_expected(name, found)
    assert [e["direction"] for e in entries] == [DIRECTION[who] for who, _ in SCENARIOS[name]]
    assert all(f["frame"] == e["index"] for e in entries for f in e["findings"])
    assert f"mcpio inspect: {len(entries)} frames" in err
    for rule, path, severity in found:
        assert f"[{severity}]" in err and f"{rule} at {path}" in err


@pytest.mark.parametrize("host", ["pipes", "files"])
def test_bytes_pass_through_unchanged_both_ways(host: str, tmp_path: Path) -> None:
    """The host's stdin and stdout as pipes (read and written through the event loop), or as
    regular files (which the loop cannot poll: worker threads read and write them)."""
    big = b'{"jsonrpc":"2.0","method":"x","params":{"p":"' + b"a" * (17 << 20) + b'"}}'
    from_server = (
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}\n'
        b"garbage \xff\xfe not json\r\n\n   \n" + big + b"\n" + b'{"unterminated": tr'
    )
    to_server = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n\x00\x01 junk\n' + big + b"\n{"
    out_file, in_file = tmp_path / "out", tmp_path / "in"
    out_file.write_bytes(from_server)
    transcript = tmp_path / "t.jsonl"
    command = [*INSPECT, "--jsonl", str(transcript), "--", sys.executable, PEER, "raw",
               str(out_file), str(in_file)]  # fmt: skip
    if host == "pipes":
        proxy = subprocess.run(command, input=to_server, capture_output=True, timeout=120)
        stdout = proxy.stdout
    else:
        (tmp_path / "host_in").write_bytes(to_server)
        with (tmp_path / "host_in").open("rb") as stdin, (tmp_path / "host_out").open("wb") as out:
            proxy = subprocess.run(command, stdin=stdin, stdout=out, stderr=subprocess.PIPE,
                                   timeout=120)  # fmt: skip
        stdout = (tmp_path / "host_out").read_bytes()
    assert proxy.returncode == 0, proxy.stderr
    assert stdout == from_server
    assert in_file.read_bytes() == to_server
    entries = read_transcript(transcript)
    rules = {(e.direction, f.rule) for e in entries for f in e.findings}
    for direction in ("client->server", "server->client"):
        assert (direction, "frame.too-large") in rules
        assert (direction, "frame.json") in rules
    sizes = [e.size for e in entries if e.truncated]
    assert sizes == [len(big), len(big)]


def test_the_server_exit_status_is_the_proxy_s(tmp_path: Path) -> None:
    code = "import sys; sys.stdin.read(); sys.exit(3)"
    proxy = subprocess.run(
        [*INSPECT, "--", sys.executable, "-c", code], input=b"", capture_output=True, timeout=60
    )
    assert proxy.returncode == 3
    assert b"mcpio inspect: 0 frames" in proxy.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no server command"),
        (["--upstream", "http://127.0.0.1:1/mcp"], "needs both"),
        (["--", "/nonexistent/server"], "cannot run '/nonexistent/server'"),
        (["--log", "/nonexistent/dir/log", "--", "true"], "cannot write /nonexistent/dir/log"),
        (["--upstream", "http://x/mcp", "--listen", "nope"], "--listen wants HOST:PORT"),
    ],
)
def test_bad_command_lines_are_one_line_and_status_2(args: list[str], message: str) -> None:
    proxy = subprocess.run([*INSPECT, *args], capture_output=True, timeout=60, input=b"")
    assert proxy.returncode == 2
    lines = proxy.stderr.decode().strip().splitlines()
    assert message in lines[0] and lines[0].startswith("mcpio inspect: ")


def test_the_html_report_marks_findings_and_filters(tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    entries, _ = run_through_proxy("capability.server", tmp_path, "--report", str(report))
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "http://" not in page and "https://" not in page and "src=" not in page
    assert page.count('<tr class="frame') == len(entries)
    assert 'data-method="prompts/list" data-severity="error"' in page
    # the answer filters with its request (its own row names no method)
    assert 'data-method="prompts/list" data-severity="" id="f4"' in page
    assert "capability.server at <code>$.method</code>" in page
    assert '<option value="prompts/list">' in page and '<option value="error">' in page


def record(name: str, tmp_path: Path) -> Path:
    """A transcript of a scenario's session through the proxy."""
    transcript = tmp_path / f"{name}.jsonl"
    client = b"".join(wire(frame) for who, frame in SCENARIOS[name] if who == "c")
    subprocess.run(
        [*INSPECT, "--jsonl", str(transcript), "--", sys.executable, PEER, name],
        input=client, capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    return transcript


def test_replay_against_the_same_server_finds_no_difference(tmp_path: Path) -> None:
    transcript = record("clean-legacy", tmp_path)
    replay = subprocess.run(
        [sys.executable, "-m", "mcpio", "replay", str(transcript),
         "--server", f"{sys.executable} {PEER} clean-legacy"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout == "mcpio replay: 0 differences\n"


def test_replay_reports_what_another_server_answers_differently(tmp_path: Path) -> None:
    transcript = record("clean-legacy", tmp_path)
    replay = subprocess.run(
        [sys.executable, "-m", "mcpio", "replay", str(transcript),
         "--server", f"{sys.executable} {PEER} clean-open-members"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert replay.returncode == 1
    assert replay.stdout.splitlines() == [
        '#2 tools/list $.result.bogus: recorded "<absent>", now true',
        "mcpio replay: 1 differences",
    ]


def test_the_example_server_replays_without_differences(tmp_path: Path) -> None:
    """A real session (ids, timestamps and sealed state differ from run to run)."""
    server = f"{sys.executable} {ROOT / 'examples' / 'everything_server.py'} stdio"
    modern = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": modern}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "test_simple_text", "arguments": {}, "_meta": modern}},
    ]  # fmt: skip
    transcript = tmp_path / "t.jsonl"
    subprocess.run(
        [*INSPECT, "--jsonl", str(transcript), "--", *server.split()],
        input=b"".join(wire(f) for f in frames), capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    replay = subprocess.run(
        [sys.executable, "-m", "mcpio", "replay", str(transcript), "--server", server],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert replay.stdout == "mcpio replay: 0 differences\n", replay.stdout


def test_replay_of_a_file_that_is_no_transcript_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a transcript\n")
    replay = subprocess.run(
        [sys.executable, "-m", "mcpio", "replay", str(bad), "--server", "true"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert replay.returncode == 2
    assert replay.stderr.startswith(f"mcpio replay: {bad}:1: not a transcript entry")


NODE_DOM = """
const rows = JSON.parse(process.argv[1]);
const controls = {};
function control(id) {
  return controls[id] = controls[id] || {value: '', handlers: [], textContent: '',
    addEventListener(kind, f) { this.handlers.push(f); }};
}
globalThis.document = {
  getElementById: control,
  querySelectorAll: (selector) => selector === 'tr.frame' ? rows : [],
};
for (const row of rows) row.style = {display: ''};
const script = require('fs').readFileSync(0, 'utf8');
eval(script);
const shown = () => rows.filter(r => r.style.display === '').map(r => r.id);
const out = {all: shown()};
for (const [id, value] of [['severity', 'error'], ['severity', 'any'], ['severity', ''],
                           ['method', 'prompts/list']]) {
  controls[id].value = value;
  controls[id].handlers.forEach(f => f());
  out[id + '=' + value] = shown();
}
out.count = controls['shown'].textContent;
console.log(JSON.stringify(out));
"""


@pytest.mark.slow
def test_the_report_s_filters_run(tmp_path: Path) -> None:
    """The page's own script, run by node against the page's rows (a minimal DOM; the next
    test renders the page in a real browser)."""
    node = shutil.which("node")
    assert node is not None, "node must be on PATH"
    report = tmp_path / "r.html"
    run_through_proxy("capability.server", tmp_path, "--report", str(report))
    page = report.read_text()
    rows = [
        {"id": m[2], "dataset": {"method": m[0], "severity": m[1]}}
        for m in re.findall(r'<tr class="frame[^"]*" data-method="([^"]*)" '
                            r'data-severity="([^"]*)" id="([^"]*)"', page)
    ]  # fmt: skip
    script = re.search(r"<script>(.*)</script>", page, re.S)
    assert script is not None and rows
    ran = subprocess.run(
        [node, "-e", NODE_DOM, json.dumps(rows)],
        input=script[1], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    shown = json.loads(ran.stdout)
    every = [r["id"] for r in rows]
    errors = [r["id"] for r in rows if "error" in r["dataset"]["severity"].split()]
    assert shown["all"] == every
    assert shown["severity=error"] == errors == ["f3"]
    assert shown["severity=any"] == errors
    assert shown["severity="] == every
    assert shown["method=prompts/list"] == ["f3", "f4"]  # the request and its answer
    assert shown["count"] == 2  # shown with the method filter on: the request and its answer


def chromium_render(page: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM headless Chromium (Debian's, from `make services`) has after loading `page`, and
    the console lines it logged (script errors among them)."""
    chromium = shutil.which("chromium")
    assert chromium is not None, "chromium must be on PATH (scripts/ensure-services.sh)"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    done = subprocess.run(
        [chromium, *flags, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.slow
def test_the_report_renders_in_headless_chromium_without_script_errors(tmp_path: Path) -> None:
    """The HTML report in a real browser: it loads without a script error, shows the session's
    findings, and its severity filter hides what it should when used."""
    report = tmp_path / "r.html"
    entries, _ = run_through_proxy("capability.server", tmp_path, "--report", str(report))
    page = report.read_text()
    dom, console = chromium_render(report, tmp_path / "profile")
    assert [line for line in console if "Uncaught" in line or "Error" in line] == [], console
    assert dom.count('<tr class="frame') == len(entries)
    assert "capability.server at <code>$.method</code>" in dom
    assert f'<span id="shown">{len(entries)}</span>' in dom  # the filters ran at load

    # Using the severity filter as a user would: only the frame with an error stays shown.
    choose = (
        "<script>var s=document.getElementById('severity');s.value='error';"
        "s.dispatchEvent(new Event('change'));</script></body>"
    )
    filtered = tmp_path / "filtered.html"
    filtered.write_text(page.replace("</body>", choose, 1))
    dom, console = chromium_render(filtered, tmp_path / "profile")
    assert [line for line in console if "Uncaught" in line] == [], console
    assert '<span id="shown">1</span>' in dom
    hidden = re.findall(r'<tr class="frame[^"]*"[^>]*style="display: none;"', dom)
    assert len(hidden) == len(entries) - 1

    # The error check itself: a page whose script fails is caught.
    broken = tmp_path / "broken.html"
    broken.write_text(page.replace("<script>", "<script>undefinedFunction();", 1))
    _, console = chromium_render(broken, tmp_path / "profile")
    assert any("Uncaught ReferenceError" in line for line in console), console


def test_a_closed_objects_unknown_member_is_flagged() -> None:
    """No object of the pinned core schemas is closed; a closed one (`additionalProperties:
    false`, a model that forbids extras, as the tasks extension's capability) refuses an unknown
    member with pydantic's extra_forbidden, which the checker names with its JSON path."""
    from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError

    refused = {"field": "params.x.bogus", "message": "Extra inputs", "type": "extra_forbidden"}
    other = {"field": "params.name", "message": "Input should be a string", "type": "string_type"}
    error = ProtocolError(INVALID_PARAMS, "invalid", {"errors": [refused, other]})
    found = [(f.rule, f.path, f.severity) for f in Checker()._refusal("client->server", error, "x")]
    assert found == [
        ("frame.unknown-member", "$.params.x.bogus", "error"),
        ("frame.schema", "$.params.name", "error"),
    ]


def test_param_headers_must_mirror_the_arguments() -> None:
    """transports#custom-headers: an x-mcp-header argument's value travels in its Mcp-Param-*
    header too (the tools/list answered earlier in the session declares which)."""
    region = {"type": "string", "x-mcp-header": "Region"}
    tool = {"name": "get", "inputSchema": {"type": "object", "properties": {"region": region}}}
    listed = json.dumps(complete(1, tools=[tool], ttlMs=0, cacheScope="private")).encode()
    base = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "get"}

    def findings(extra: dict[str, str]) -> list[tuple[str, str]]:
        checker = Checker()
        checker.check("client->server", json.dumps(modern(1, "tools/list")).encode())
        assert checker.check("server->client", listed) == []
        call = modern(2, "tools/call", {"name": "get", "arguments": {"region": "eu"}})
        found = checker.check("client->server", json.dumps(call).encode(), {**base, **extra})
        return [(f.rule, f.path) for f in found]

    assert findings({"mcp-param-region": "eu"}) == []
    assert findings({"mcp-param-region": "us"}) == [("http.param-header", "header mcp-param-*")]
    assert findings({}) == [("http.param-header", "header mcp-param-*")]


def test_a_request_the_server_leaves_unanswered_is_an_error_in_the_summary(tmp_path: Path) -> None:
    """The server exits mid-request: the summary counts it (it used to say "0 errors")."""
    entries, err = run_through_proxy("request.unanswered", tmp_path)
    assert [f["rule"] for e in entries for f in e["findings"]] == ["request.unanswered"]
    assert "1 errors, 0 warnings, 1 unanswered requests (errors)" in err
    assert "request.unanswered at $.id: tools/list 1 was never answered nor cancelled" in err


def test_the_summary_counts_per_session() -> None:
    from mcpio.inspect._rules import Finding
    from mcpio.inspect._transcript import Recorder

    recorder = Recorder(io.StringIO())
    ask = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    recorder.record("client->server", ask, [], session="a")
    late = Finding("lifecycle.before-initialize", "client->server", "$.method", "early")
    recorder.record("client->server", ask, [late], session="b")
    recorder.finish([Finding("request.unanswered", "client->server", "$.id", "never", 0)])
    summary = recorder.summary()
    assert "2 frames" in summary and "1 errors, 1 warnings, 1 unanswered requests" in summary
    assert "session a: 1 errors, 0 warnings, 1 unanswered requests (errors)" in summary
    assert "session b: 0 errors, 1 warnings, 0 unanswered requests (errors)" in summary
