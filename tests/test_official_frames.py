"""The complete JSON-RPC frames among the official 2026-07-28 examples decode to their classes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_wire
from tests.conftest import EXAMPLES
from tests.oracle import json_equal

FRAMES = sorted(
    path
    for path in (EXAMPLES / "2026-07-28").glob("*/*.json")
    if '"jsonrpc"' in path.read_text(encoding="utf-8")
)


def test_all_official_frames_are_found() -> None:
    assert len(FRAMES) == 32


@pytest.mark.parametrize("path", FRAMES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_official_frame_decodes_to_its_exact_class(path: Path) -> None:
    codec = mcp_wire.codec("2026-07-28")
    expected = path.parent.name
    raw = path.read_bytes()
    frame = json.loads(raw)
    if "result" in frame:
        # A client knows the method of a response from its id: here, from the example's type.
        methods = [m for m, cls in codec.responses.items() if cls.__name__ == expected]
        assert len(methods) == 1
        message = codec.decode_response(raw, methods[0])
    else:
        message = codec.decode(raw)
    assert type(message).__name__ == expected
    assert isinstance(message, getattr(mcp_wire.v2026_07_28, expected))
    assert json_equal(json.loads(codec.encode(message)), frame)
