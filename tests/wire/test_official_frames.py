"""The complete JSON-RPC frames among the official 2026-07-28 examples decode to their classes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_wire
from tests.support import EXAMPLES
from tests.support.oracle import json_equal

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
    written = json.loads(codec.encode(message))
    if "result" in frame:
        # What the example leaves out and the revision requires is written as it was read (the
        # caching hints' defaults): encode writes a valid frame of its revision.
        added = {k: v for k, v in written["result"].items() if k not in frame["result"]}
        assert set(added) <= {"ttlMs", "cacheScope"}
        assert added == {k: getattr(message.result, k) for k in added}
        frame = {**frame, "result": {**frame["result"], **added}}
    assert json_equal(written, frame)


ERROR_FRAMES = [p for p in FRAMES if "error" in json.loads(p.read_bytes())]
GENERIC_ERROR = "JSONRPCErrorResponse"


def test_the_official_error_frames_are_found() -> None:
    assert len(ERROR_FRAMES) == 3


@pytest.mark.parametrize("path", ERROR_FRAMES, ids=lambda p: p.parent.name)
def test_an_error_frame_is_chosen_by_its_own_code_not_by_a_code_inside_its_data(
    path: Path,
) -> None:
    """The codec may guess a typed error frame from the bytes; the guess must never stick when
    the error's own code says otherwise, whatever order the members come in."""
    codec = mcp_wire.codec("2026-07-28")
    frame = json.loads(path.read_bytes())
    error = frame["error"]
    own, generic = error["code"], -32603
    # A `code` member in data, written before the error's own code.
    decoys = {**frame, "error": {"data": {**error.get("data", {}), "code": generic}, **error}}
    message = codec.decode(json.dumps(decoys))
    assert type(message).__name__ == path.parent.name
    assert message.error.code == own
    # The error's own code made generic, with the typed code as a decoy: the generic frame.
    generic_frame = {
        **frame,
        "error": {"data": {"code": own}, "code": generic, "message": error["message"]},
    }
    message = codec.decode(json.dumps(generic_frame))
    assert type(message).__name__ == GENERIC_ERROR
    for strict in (False, True):
        assert type(codec.decode(json.dumps(frame), strict=strict)).__name__ == path.parent.name
        # A client reads an error answering its request the same way.
        answer = codec.decode_response(json.dumps(decoys), "tools/call", strict=strict)
        assert type(answer).__name__ == path.parent.name
    answer = codec.decode_response(json.dumps(generic_frame), "tools/call")
    assert type(answer).__name__ == GENERIC_ERROR
    with pytest.raises(mcp_wire.ProtocolError) as caught:
        codec.decode(json.dumps({**frame, "result": {}}))
    assert caught.value.code == -32600
    with pytest.raises(mcp_wire.ProtocolError) as caught:
        codec.decode(json.dumps({**frame, "error": {**error, "code": float(own)}}))
    assert caught.value.code == -32600
    with pytest.raises(mcp_wire.ProtocolError) as caught:
        codec.decode(json.dumps({**frame, "surplus": 1}), strict=True)
    assert caught.value.code == -32600 and caught.value.data == {"unknown": ["surplus"]}
