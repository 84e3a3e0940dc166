"""The model base class every revision shares (mcpio.wire.base)."""

from __future__ import annotations

import inspect

from pydantic import TypeAdapter

from mcp_wire.v2025_06_18 import models as v2025_06_18
from mcp_wire.v2026_07_28 import TextContent


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
