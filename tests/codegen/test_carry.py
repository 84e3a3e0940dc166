"""codegen.carry: which revisions an extension is generated for, rule by rule.

The widening check on small schemas (each rule alone), then `fit` on the real Tasks extension
and a small synthetic one against revisions made from the official 2026-07-28 schema by one
change each. The end-to-end runs (generate, import, pyright, example server, clients) are in
tests/codegen/test_new_revision.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from codegen.carry import dependencies, fit, narrowing
from codegen.errors import CodegenError
from codegen.extension import canonical
from codegen.pins import ExtensionPin
from tests.support import PROJECT, official_schema

TASKS = PROJECT.extension_pins()["io.modelcontextprotocol/tasks"]
BASE, NEWER, OLDER = "2026-07-28", "2027-01-01", "2025-11-25"
ERAS = {OLDER: "legacy", BASE: "modern", NEWER: "modern", "2027-06-01": "legacy"}
OBJECT = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def widened(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    return narrowing(canonical(old), canonical(new))


# --- the widening check, each rule alone --------------------------------------------------


@pytest.mark.parametrize(
    ("change", "new"),
    [
        ("a new optional member", {**OBJECT, "properties": {**OBJECT["properties"], "b": {}}}),
        ("a member no longer required", {**OBJECT, "required": []}),
        ("a dropped assertion", {"type": "object"}),
        ("a description only", {**OBJECT, "description": "annotations are not compared"}),
    ],
)
def test_what_accepts_at_least_as_much_widens(change: str, new: dict[str, Any]) -> None:
    assert widened(OBJECT, new) is None, change


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        (OBJECT, {**OBJECT, "required": ["a", "b"]}, "/required/b"),
        (OBJECT, {**OBJECT, "properties": {"a": {"type": "integer"}}}, "/properties/a/type"),
        (OBJECT, {**OBJECT, "additionalProperties": False}, "/additionalProperties"),
        (OBJECT, {**OBJECT, "properties": {"a": {"type": "string", "pattern": "x"}}},
         "/properties/a/pattern"),
        ({"enum": ["x", "y"]}, {"enum": ["x"]}, "/enum"),
        ({"type": "number"}, {"type": "integer"}, "/type"),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, {"anyOf": [{"type": "string"}]},
         "/anyOf/1"),
        ({"type": "integer", "minimum": 0}, {"type": "integer", "minimum": 1}, "/minimum"),
        ({"type": "string", "maxLength": 9}, {"type": "string", "maxLength": 8}, "/maxLength"),
        ({"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, "/$ref"),
        ({"const": "task"}, {"const": "complete"}, "/const"),
        ({"type": "array", "items": {"type": "string"}},
         {"type": "array", "items": {"type": "integer"}}, "/items/type"),
        ({"type": "object", "additionalProperties": False, "properties": {"a": {}, "b": {}}},
         {"type": "object", "additionalProperties": False, "properties": {"a": {}}},
         "/properties/b"),
    ],
)  # fmt: skip
def test_what_accepts_less_is_a_narrowing_at_its_member(
    old: dict[str, Any], new: dict[str, Any], where: str
) -> None:
    assert widened(old, new) == where


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"enum": ["x"]}, {"enum": ["x", "y"]}),
        ({"type": "integer"}, {"type": "number"}),
        ({"type": "string"}, {"type": ["string", "null"]}),
        ({"anyOf": [{"type": "string"}]}, {"anyOf": [{"type": "string"}, {"type": "null"}]}),
        ({"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 0}),
        ({"type": "integer", "maximum": 1}, {"type": "integer", "maximum": 2}),
        ({"type": "object", "additionalProperties": False}, {"type": "object"}),
        ({"type": "string", "pattern": "x"}, {"type": "string"}),
    ],
)
def test_wider_enums_types_unions_and_bounds_widen(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    assert widened(old, new) is None


def test_dependencies_follow_references_transitively() -> None:
    defs = {
        "Own": {"properties": {"x": {"$ref": "#/$defs/A"}}},
        "A": {"anyOf": [{"$ref": "#/$defs/B"}]},
        "B": {"const": "b"},
        "Unused": {"$ref": "#/$defs/B"},
    }
    assert dependencies(defs, ["Own"]) == {"Own": "Own", "A": "Own", "B": "Own"}


# --- the fit of an extension to a revision --------------------------------------------------


def core(change: Any = None) -> dict[str, Any]:
    """The official 2026-07-28 schema, changed by `change(defs)`."""
    schema = copy.deepcopy(official_schema(BASE))
    if change is not None:
        change(schema["$defs"])
    return schema


def tasks_fit(revision: str, schema: dict[str, Any]) -> Any:
    ext = copy.deepcopy(official_schema(f"{BASE}+tasks"))
    return fit(TASKS, ext, revision, schema, official_schema(BASE), ERAS)


def _optional_color(defs: dict[str, Any]) -> None:
    defs["Tool"]["properties"]["color"] = {"type": "string"}
    defs["Implementation"]["properties"]["generation"] = {"type": "integer", "minimum": 0}


def _narrower_result_type(defs: dict[str, Any]) -> None:
    defs["Result"]["properties"]["resultType"]["enum"] = ["complete", "input_required"]


def test_on_its_own_revision_it_is_pinned() -> None:
    found = tasks_fit(BASE, core())
    assert (found.kind, found.base, found.applied) == ("pinned", BASE, True)
    assert found.schema is not None and "CreateTaskResult" in found.schema["$defs"]


def test_on_its_own_revision_a_different_copy_is_an_error() -> None:
    with pytest.raises(CodegenError, match=r"Tool \(at /properties/color\)"):
        tasks_fit(BASE, core(_optional_color))


def test_new_optional_members_it_uses_re_base_it() -> None:
    found = tasks_fit(NEWER, core(_optional_color))
    assert (found.kind, found.base, found.changed) == ("re-based", BASE, ("Implementation", "Tool"))
    assert found.describe() == (
        f"{TASKS.id} on {NEWER}: re-based from {BASE} onto the widened Implementation, Tool "
        f"of {NEWER}"
    )
    assert found.schema is not None
    tool = found.schema["$defs"]["Tool"]
    assert tool["properties"]["color"] == {"type": "string"}  # the new revision's own Tool


def test_an_unchanged_revision_carries_it() -> None:
    found = tasks_fit(NEWER, core())
    assert (found.kind, found.changed) == ("carried", ())


def test_a_narrowing_it_depends_on_skips_it_naming_definition_and_member() -> None:
    found = tasks_fit(NEWER, core(_narrower_result_type))
    assert (found.kind, found.applied, found.schema) == ("skipped", False, None)
    assert found.reason.startswith("Result (at /properties/resultType/enum, used by its ")
    assert "\n" not in found.describe()


def test_a_definition_it_uses_gone_from_the_revision_skips_it() -> None:
    def without_role(defs: dict[str, Any]) -> None:
        del defs["Role"]

    found = tasks_fit(NEWER, core(without_role))
    assert found.kind == "skipped"
    assert found.reason.startswith("Role (used by its ") and found.reason.endswith(
        f") is gone from {NEWER}"
    )


def test_a_revision_defining_its_own_name_differently_skips_it() -> None:
    def with_task(defs: dict[str, Any]) -> None:
        defs["Task"] = {"type": "object", "properties": {"id": {"type": "string"}}}

    found = tasks_fit(NEWER, core(with_task))
    assert (found.kind, found.reason) == (
        "skipped",
        f"{NEWER} defines the extension's own Task differently",
    )


def test_a_merge_that_fails_skips_it() -> None:
    def without_call_response(defs: dict[str, Any]) -> None:
        del defs["CallToolResultResponse"]

    found = tasks_fit(NEWER, core(without_call_response))
    assert found.kind == "skipped"
    assert found.reason == "the core schema has no response definition for tools/call"


def test_older_revisions_and_other_eras_do_not_get_it() -> None:
    older = fit(TASKS, {}, OLDER, {}, None, ERAS)
    assert (older.kind, older.reason) == ("not applicable", f"older than {BASE}")
    legacy = tasks_fit("2027-06-01", core())
    assert legacy.kind == "not applicable"
    assert legacy.reason == f"legacy era, built on {BASE} of the modern era"


def test_the_newest_built_on_revision_before_is_the_base() -> None:
    pin = ExtensionPin("a.b/x", "x", "0" * 64, None, ("2026-07-28", "2027-03-01"), ())
    from codegen.carry import base_of

    assert base_of(pin, "2026-12-31") == "2026-07-28"
    assert base_of(pin, "2027-03-01") == "2027-03-01"
    assert base_of(pin, "2027-09-09") == "2027-03-01"
    assert base_of(pin, "2026-01-01") is None


def ping_pong(with_unused_tool: bool) -> dict[str, Any]:
    """A small extension of our own: one request and its result, repeating four core
    definitions it uses (and, optionally, Tool, which nothing of its own uses)."""
    defs = official_schema(BASE)["$defs"]
    names = ["JSONRPCRequest", "RequestId", "Result", "ResultMetaObject"]
    repeated = {n: copy.deepcopy(defs[n]) for n in names + ["Tool"] * with_unused_tool}
    request = {
        "allOf": [
            {"$ref": "#/$defs/JSONRPCRequest"},
            {
                "type": "object",
                "properties": {"method": {"type": "string", "const": "ping/pong"}},
                "required": ["method"],
            },
        ]
    }
    own = {"PingPongRequest": request, "PingPongResult": {"allOf": [{"$ref": "#/$defs/Result"}]}}
    return {"$defs": repeated | own}


PING = ExtensionPin("example.com/ping", "ping", "0" * 64, None, (BASE,), ())


def test_a_difference_nothing_of_its_own_uses_carries_it() -> None:
    found = fit(PING, ping_pong(True), NEWER, core(_optional_color), official_schema(BASE), ERAS)
    assert (found.kind, found.changed) == ("carried", ())
    assert found.schema is not None and "color" in found.schema["$defs"]["Tool"]["properties"]


def test_a_second_extension_follows_the_same_rules() -> None:
    narrow = core(_narrower_result_type)
    found = fit(PING, ping_pong(False), NEWER, narrow, official_schema(BASE), ERAS)
    assert found.kind == "skipped"
    assert found.reason.startswith("Result (at /properties/resultType/enum, used by its PingPong")
