"""The false-positive suite: sessions recorded from real peers of both eras (the official
Python SDK's client, declaring roots or not, and server, mcp 2.3.0; FastMCP 4.1.6's client with
roots; the TypeScript SDK v2 client; npm `@modelcontextprotocol/server-everything`; the MCP
Inspector 2.12.0 CLI; our client and examples/everything_server.py), through `mcpio inspect`
over stdio, kept in tests/inspect_sessions/ and checked again frame by frame: a conformant
session has no finding. They carry what issue 32 reported as 426 false findings:
`roots.listChanged` in 2026-07-28 `_meta` client capabilities, `capabilities.extensions` in a
2025-11-25 `initialize`.

Recorded with `pytest tests/inspect/test_inspect_peers.py --basetemp=DIR` (each test's t.jsonl); the
Inspector's (not installed by the tests) with `mcp-inspector --cli --protocol-era legacy|modern
--method tools/call --tool-name test_simple_text -- python -m mcpio inspect --jsonl FILE --
python examples/everything_server.py stdio`."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpio.inspect._checks import Checker
from mcpio.inspect._transcript import read_transcript

SESSIONS = sorted((Path(__file__).parent / "inspect_sessions").glob("*.jsonl"))


def test_there_are_sessions_of_both_eras() -> None:
    names = [path.stem for path in SESSIONS]
    assert len(names) >= 15
    assert any("2026-07-28" in name for name in names) and any("legacy" in n for n in names)


def test_the_reported_patterns_are_among_them() -> None:
    """Open members real clients send, each in at least two recorded sessions."""
    frames = [entry.frame for path in SESSIONS for entry in read_transcript(path)]
    roots = b'"io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": true}'
    compact = roots.replace(b": ", b":")
    assert sum(1 for frame in frames if roots in frame or compact in frame) >= 2
    initialize = [f for f in frames if b'"method":"initialize"' in f.replace(b": ", b":")]
    assert sum(1 for frame in initialize if b'"extensions"' in frame) >= 1


@pytest.mark.parametrize("path", SESSIONS, ids=[path.stem for path in SESSIONS])
def test_a_recorded_real_session_has_no_finding(path: Path) -> None:
    checker = Checker()
    entries = read_transcript(path)
    assert len(entries) > 4
    found = [
        finding.line()
        for entry in entries
        for finding in checker.check(entry.direction, entry.frame, index=entry.index)
    ]
    assert found + [f.line() for f in checker.finish()] == []
