"""The false-positive suite: sessions recorded from real peers of both eras (the official
Python SDK's client and server, mcp 2.3.0; npm `@modelcontextprotocol/server-everything`; our
client and examples/everything_server.py), through `mcpio inspect` over stdio, kept in
tests/inspect_sessions/ and checked again frame by frame: a conformant session has no finding.
Recorded with `pytest tests/test_inspect_peers.py --basetemp=DIR` (each test's t.jsonl)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpio.inspect.checks import Checker
from mcpio.inspect.transcript import read_transcript

SESSIONS = sorted((Path(__file__).parent / "inspect_sessions").glob("*.jsonl"))


def test_there_are_sessions_of_both_eras() -> None:
    names = [path.stem for path in SESSIONS]
    assert len(names) >= 6
    assert any("2026-07-28" in name for name in names) and any("legacy" in n for n in names)


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
