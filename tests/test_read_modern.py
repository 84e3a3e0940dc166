"""`read_modern`, the HTTP server's one-parse read of a modern request, against the two reads it
replaces: its envelope is what `peek_any` reads, its message what the codec decodes, for every
official example message of the modern revision and variants of them; what it declines
(None) is left to those reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpio.negotiate import MODERN, PROTOCOL_VERSION_KEY, codec_of, peek_any, read_modern
from mcpio.wire.errors import ProtocolError
from tests.support import EXAMPLES

VERSION = MODERN[-1]
FRAMES = sorted(
    p
    for p in (EXAMPLES / VERSION).glob("*/*.json")
    if p.parent.name.endswith(("Request", "Notification", "Response"))
)


def variants(frame: Any) -> list[Any]:
    """The frame, with its envelope version set to this revision, to another, and removed; its
    id as a string; its routing name of the wrong type."""
    if type(frame) is not dict:
        return [frame]
    out = [frame]
    params = frame.get("params")
    if type(params) is dict:
        for version in (VERSION, "2025-11-25", None):
            meta = dict(params.get("_meta") or {})
            if version is None:
                meta.pop(PROTOCOL_VERSION_KEY, None)
            else:
                meta[PROTOCOL_VERSION_KEY] = version
            out.append({**frame, "params": {**params, "_meta": meta}})
        for key in ("name", "uri", "taskId"):
            if key in params:
                out.append({**frame, "params": {**params, key: 7}})
    if "id" in frame:
        out += [{**frame, "id": str(frame["id"])}, {**frame, "id": None}]
    return out


def test_there_are_examples_of_requests_and_of_other_frames() -> None:
    requests = [p for p in FRAMES if p.parent.name.endswith("Request")]
    assert len(requests) > 10 and len(FRAMES) > len(requests)


@pytest.mark.parametrize("path", FRAMES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_read_modern_agrees_with_peek_and_decode(path: Path) -> None:
    frames = variants(json.loads(path.read_text()))
    for frame in frames:
        raw = json.dumps(frame).encode()
        read = read_modern(VERSION, raw)
        if read is None:
            continue
        message, env = read
        assert env == peek_any(raw)
        assert env.kind == "request" and env.protocol_version == VERSION
        assert message == codec_of(VERSION).decode(raw)
    if path.parent.name.endswith("Request") and len(frames) > 1:
        raw = json.dumps(frames[1]).encode()  # with this revision's envelope
        try:
            codec_of(VERSION).decode(raw)
        except ProtocolError:
            return
        assert read_modern(VERSION, raw) is not None, "a request that decodes is read"


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"[]", b"null", b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","id":1}'],
)
def test_what_does_not_read_is_left_to_peek(raw: bytes) -> None:
    assert read_modern(VERSION, raw) is None


def test_a_legacy_version_header_is_not_read() -> None:
    frame = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    assert read_modern("2025-11-25", json.dumps(frame).encode()) is None
