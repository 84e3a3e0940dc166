"""`read_modern`, the HTTP server's one-parse read of a modern request, against the two reads it
replaces: its envelope is what `peek_any` reads, its message what the codec decodes, for every
official example message of the modern revision and variants of them; what it declines
(None) is left to those reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_wire_runtime.errors import ProtocolError
from mcpio._core.negotiate import (
    LEGACY,
    MODERN,
    PROTOCOL_VERSION_KEY,
    codec_of,
    peek_any,
    read_legacy,
    read_modern,
)
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


LEGACY_FRAMES: list[Any] = [
    {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": "a", "method": "ping", "params": {}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "a\nb"}, "_meta": {"progressToken": 3}},
    },
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": 5}},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": "c"}},
    {"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "file:///a"}},
    {"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": "p"}},
    {"jsonrpc": "2.0", "id": 8, "method": "no/such/method"},
    {"jsonrpc": "2.0", "id": 9, "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 10, "result": {}},
    {"jsonrpc": "2.0", "id": 11.0, "method": "ping"},
    {"jsonrpc": "1.0", "id": 12, "method": "ping"},
    {"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "e", "extra": 1}},
    [{"jsonrpc": "2.0", "id": 14, "method": "ping"}],
]


def legacy_variants(frame: Any) -> list[bytes]:
    """The frame as JSON, and with a modern envelope version in its `_meta` (spelt plainly and
    with an escaped slash), its id as a string, a duplicate id after it."""
    out = [json.dumps(frame).encode()]
    if type(frame) is not dict:
        return out
    params = frame.get("params")
    if type(params) is dict or "params" not in frame:
        meta = {**((params or {}).get("_meta") or {}), PROTOCOL_VERSION_KEY: VERSION}
        changed = json.dumps({**frame, "params": {**(params or {}), "_meta": meta}})
        out += [changed.encode(), changed.replace("/", "\\/").encode()]
    if "id" in frame:
        out.append(json.dumps({**frame, "id": str(frame["id"])}).encode())
        out.append(json.dumps(frame).encode()[:-1] + b', "id": "dup"}')
    return out


@pytest.mark.parametrize("revision", LEGACY)
def test_read_legacy_agrees_with_peek_and_decode(revision: str) -> None:
    """What `read_legacy` reads is what `peek_any` and the session's codec read; what it
    declines (None) is left to them. Requests that decode, without a modern envelope, are
    read (the stdio server's one parse)."""
    codec = codec_of(revision)
    read_some = 0
    for frame in LEGACY_FRAMES:
        for raw in legacy_variants(frame):
            read = read_legacy(codec, raw)
            if read is None:
                continue
            read_some += 1
            message, env = read
            assert env == peek_any(raw), raw
            assert env.kind == "request" and env.protocol_version is None
            assert message == codec.decode(raw)
    plain = json.dumps(LEGACY_FRAMES[2]).encode()
    assert read_legacy(codec, plain) is not None, "a request that decodes is read"
    assert read_some >= 10
