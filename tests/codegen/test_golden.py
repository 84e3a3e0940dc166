"""Every method of every revision round-trips through its golden wire exchange, both ways."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

import mcp_wire
from codegen.ir import Kind
from tests.support import REVISIONS, official_schema, revision_ir
from tests.support.oracle import json_equal
from tests.support.wire_samples import GOLDEN, file_name, render

CASES = [
    (rev, m.name) for rev in REVISIONS for m in revision_ir(rev).methods
]  # fmt: skip


def golden(rev: str, method: str) -> dict[str, Any]:
    return json.loads((GOLDEN / rev / file_name(method)).read_text(encoding="utf-8"))


@pytest.mark.parametrize("rev", REVISIONS)
def test_golden_files_are_current_and_complete(rev: str) -> None:
    expected = render(official_schema(rev), revision_ir(rev))
    present = {p.name: p.read_text(encoding="utf-8") for p in (GOLDEN / rev).glob("*.json")}
    assert present == expected, "tests/golden is stale: run `python -m tests.support.wire_samples`"


@pytest.mark.parametrize(("rev", "method"), CASES, ids=[f"{r}:{m}" for r, m in CASES])
def test_message_round_trips_both_ways(rev: str, method: str) -> None:
    codec = mcp_wire.codec(rev)
    spec = revision_ir(rev).method(method)
    assert spec is not None
    exchange = golden(rev, method)
    message = exchange["message"]
    raw = json.dumps(message).encode()
    if spec.kind is Kind.INPUT_REQUEST:
        # Embedded in an "input required" result, never sent as JSON-RPC.
        adapter = TypeAdapter(codec.methods[method].message)
        decoded = adapter.validate_json(raw)
        assert json_equal(
            json.loads(adapter.dump_json(decoded, by_alias=True, exclude_unset=True)), message
        )
        with pytest.raises(mcp_wire.ProtocolError) as info:
            codec.decode(json.dumps({"jsonrpc": "2.0", "id": 1, **message}))
        assert info.value.code == -32601
        return
    decoded = codec.decode(raw)
    frames = codec.requests if spec.kind is Kind.REQUEST else codec.notifications
    assert type(decoded) is frames[method]
    assert json_equal(json.loads(codec.encode(decoded)), message)
    params = message.get("params")
    if spec.kind is Kind.REQUEST:
        built = codec.request(method, params, id=message["id"])
    else:
        built = codec.notification(method, params)
    assert json_equal(json.loads(codec.encode(built)), message)


@pytest.mark.parametrize(("rev", "method"), CASES, ids=[f"{r}:{m}" for r, m in CASES])
def test_results_round_trip_both_ways(rev: str, method: str) -> None:
    codec = mcp_wire.codec(rev)
    spec = revision_ir(rev).method(method)
    assert spec is not None
    results = golden(rev, method).get("results", {})
    assert len(results) == len(spec.results)
    for name, result in results.items():
        expected_type = getattr(mcp_wire.revision(rev), name)
        if spec.kind is Kind.INPUT_REQUEST:
            adapter = TypeAdapter(expected_type)
            value = adapter.validate_python(result)
            assert json_equal(
                adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True), result
            )
            continue
        frame = {"jsonrpc": "2.0", "id": "r-1", "result": result}
        decoded = codec.decode_response(json.dumps(frame), method)
        assert type(decoded) is codec.responses[method]
        assert isinstance(decoded.result, getattr(expected_type, "__value__", expected_type))
        assert json_equal(json.loads(codec.encode(decoded)), frame)
        built = codec.response("r-1", method, result)
        assert json_equal(json.loads(codec.encode(built)), frame)
