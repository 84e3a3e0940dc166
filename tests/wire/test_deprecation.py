"""What the schema deprecates warns once when a user sets or sends it (issue 49), never when a
frame that carries it is read: the models' hook (mcp_wire_runtime.base) and the codec's."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from pydantic import Field

import mcp_wire
from mcp_wire_runtime._deprecation import DEPRECATED_MARK
from mcp_wire_runtime.base import WireModel

DEPRECATED = Field(json_schema_extra={DEPRECATED_MARK: True})


def caught(action: Callable[[], Any]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        action()
    return found


def test_setting_a_deprecated_member_warns_once_at_the_caller() -> None:
    class Widget(WireModel):
        size: int | None = None
        colour: Annotated[str | None, DEPRECATED] = None

    first = caught(lambda: Widget(colour="red"))
    assert [(w.category, w.filename) for w in first] == [(DeprecationWarning, __file__)]
    assert "member 'colour' of" in str(first[0].message)
    assert "Widget is deprecated by the MCP schema" in str(first[0].message)
    assert caught(lambda: Widget(colour="blue")) == []
    assert caught(lambda: Widget(size=1)) == []


def test_a_deprecated_member_set_by_its_wire_name_warns_under_its_name() -> None:
    class Gadget(WireModel):
        old: Annotated[
            str | None, Field(alias="_old", json_schema_extra={DEPRECATED_MARK: True})
        ] = None

    found = caught(lambda: Gadget(**{"_old": "x"}))
    assert len(found) == 1 and "member 'old' of" in str(found[0].message)
    assert caught(lambda: Gadget(old="y")) == []  # once per member, whichever name sets it


def test_reading_a_deprecated_member_never_warns() -> None:
    class Part(WireModel):
        colour: Annotated[str | None, DEPRECATED] = None

    def read() -> None:
        for part in (
            Part.model_validate({"colour": "red"}),
            Part.model_validate_json('{"colour": "red"}'),
        ):
            assert part.colour == "red" and part.model_dump() == {"colour": "red"}

    assert caught(read) == []
    assert len(caught(lambda: Part(colour="red"))) == 1  # the user's own setting still warns


@pytest.fixture
def codec() -> Any:
    """The 2025-06-18 codec, its ping and progress notification deprecated (no pinned schema
    deprecates a method)."""
    base = type(mcp_wire.codec("2025-06-18"))
    methods = {
        name: dataclasses.replace(spec, deprecated=name in ("ping", "notifications/progress"))
        for name, spec in base.methods.items()
    }
    return type("DeprecatingCodec", (base,), {"methods": methods})()


def test_sending_a_deprecated_method_warns_once(codec: Any) -> None:
    first = caught(lambda: codec.request("ping", id=1))
    assert [(w.category, w.filename) for w in first] == [(DeprecationWarning, __file__)]
    assert str(first[0].message) == (
        "method 'ping' of MCP revision 2025-06-18 is deprecated by the MCP schema"
    )
    assert caught(lambda: codec.request("ping", id=2)) == []
    params = {"progressToken": "t", "progress": 1}
    assert len(caught(lambda: codec.notification("notifications/progress", params))) == 1
    assert caught(lambda: codec.request("tools/list", id=3)) == []


def test_decoding_a_deprecated_method_never_warns(codec: Any) -> None:
    frame = b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}'
    assert caught(lambda: codec.decode(frame)) == []
    assert caught(lambda: codec.decode(frame, strict=True)) == []
