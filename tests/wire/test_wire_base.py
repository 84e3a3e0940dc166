"""The model base class every revision shares (mcp_wire_runtime.base)."""

from __future__ import annotations

import inspect
import json

import pytest
from pydantic import TypeAdapter

import mcp_wire
from mcp_wire.v2025_06_18 import models as v2025_06_18
from mcp_wire.v2025_11_25 import models as v2025_11_25
from mcp_wire.v2026_07_28 import TextContent
from tests.support import REVISIONS
from tests.support.oracle import oracle

RESULT_TYPE = {"legacy": {}, "modern": {"resultType": "complete"}}


def test_booleans_in_unions_with_integers_dump_as_booleans() -> None:
    adapter = TypeAdapter(v2025_06_18.ClientResult)
    value = adapter.validate_python({"action": "accept", "content": {"ok": False, "n": 1}})
    dumped = adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)
    assert dumped == {"action": "accept", "content": {"ok": False, "n": 1}}
    assert type(dumped["content"]["ok"]) is bool


def test_extra_members_are_kept_and_not_a_constructor_parameter() -> None:
    block = TextContent(type="text", text="x", extra=1)  # type: ignore[call-arg]
    assert block.__pydantic_extra__ == {"extra": 1}
    assert block.model_dump(by_alias=True, exclude_unset=True) == {
        "type": "text",
        "text": "x",
        "extra": 1,
    }
    assert "__pydantic_extra__" not in inspect.signature(TextContent).parameters


@pytest.mark.parametrize("revision", REVISIONS)
def test_what_a_model_writes_by_default_is_valid_for_it_and_for_the_schema(revision: str) -> None:
    """`model_dump_json()` and `model_dump(mode="json")`, without options, leave out members
    that were never set: the same model reads what they wrote, and so does the official schema."""
    models = mcp_wire.revision(revision)
    built = {
        "CallToolResult": models.CallToolResult.model_validate(
            {"content": [{"type": "text", "text": "hi"}], **RESULT_TYPE[models.ERA]}
        ),
        "Tool": models.Tool(name="t", inputSchema={"type": "object"}),
        "Implementation": models.Implementation(name="app", version="1"),
    }
    for name, model in built.items():
        for written in (model.model_dump_json(), json.dumps(model.model_dump(mode="json"))):
            assert "null" not in written, written
            assert type(model).model_validate_json(written) == model
            errors = list(oracle(revision, name).iter_errors(json.loads(written)))
            assert errors == [], f"{name}: {errors[0].message}"
    assert built["Tool"].model_dump(exclude_unset=False)["description"] is None  # still an option


def test_null_is_written_where_the_schema_allows_it() -> None:
    task = v2025_11_25.Task.model_validate(
        {"taskId": "t", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
         "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": None}
    )  # fmt: skip
    assert json.loads(task.model_dump_json())["ttl"] is None  # "null for unlimited"
    assert list(oracle("2025-11-25", "Task").iter_errors(task.model_dump(mode="json"))) == []
