"""The IR of every pinned revision against the machine-generated ../shared/schema-inventory.md.

The inventory was produced by an independent script from the same official schema.json files, so
it is an oracle for the IR: its Markdown tables are parsed here at test time (never copied) and
their vocabulary is mapped to the IR's (`C→S` -> Direction.CLIENT_TO_SERVER, `inline {a?, b}` ->
a hoisted params definition with fields a (optional) and b (required), ...).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from codegen.errors import CodegenError
from codegen.ir import Era, Kind, Revision, build_revision
from codegen.normalize import JSON_VALUE, definitions_of, normalize
from tests.support import REVISIONS, official_schema, revision_ir
from tests.support.inventory import (
    InventoryParams,
    _inventory_sections,
    _params,
    _results,
    _table,
    inventory_churn,
    inventory_methods,
)

IGNORED = {"draft"}

YES_NO = {"yes": True, "no": False}


# --- parsing the inventory -------------------------------------------------------------------


@dataclass(frozen=True)
class InventoryError:
    code: int
    definition: str
    data_fields: tuple[str, ...]


@functools.cache
def inventory_signals() -> dict[str, dict[str, str]]:
    return {row["Revision"]: row for row in _table(_inventory_sections()["2"])}


@functools.cache
def inventory_errors() -> dict[str, set[InventoryError]]:
    out: dict[str, set[InventoryError]] = {}
    for row in _table(_inventory_sections()["5"]):
        errors = out.setdefault(row["Revision"], set())
        if row["code"] == "—":
            continue
        data = tuple(sorted(f.strip() for f in row["error.data fields"].split(",") if f.strip()))
        errors.add(InventoryError(int(row["code"]), row["definition"], data))
    return out


@functools.cache
def inventory_counts() -> dict[str, int]:
    """§1: revision -> number of definitions in its schema.json."""
    return {row["Revision"]: int(row["# defs"]) for row in _table(_inventory_sections()["1"])}


def schema_definitions(rev: Revision) -> set[str]:
    """Definitions named by the schema itself (plus the pre-pass's JSONValue), not hoisted ones."""
    return {name for name, d in rev.definitions.items() if d.hoisted_from is None}


# --- the parser itself -----------------------------------------------------------------------


def test_inventory_covers_exactly_the_pinned_revisions() -> None:
    for table in (inventory_methods(), inventory_signals(), inventory_errors()):
        assert set(table) - IGNORED == set(REVISIONS)
    assert set(inventory_counts()) - IGNORED == set(REVISIONS)
    pairs = set(zip(REVISIONS, REVISIONS[1:], strict=False))
    assert {p for p in inventory_churn() if IGNORED.isdisjoint(p)} == pairs


@pytest.mark.parametrize("name", REVISIONS)
def test_inventory_method_table_agrees_with_its_heading(name: str) -> None:
    """Guards the parser: no row dropped, every kind recognised."""
    inv = inventory_methods()[name]
    for kind, count in inv.counts.items():
        assert sum(m.kind is kind for m in inv.methods.values()) == count, kind


def test_inventory_result_cells_parse() -> None:
    assert _results("CallToolResult | CreateTaskResult if params.task (!not in union)") == (
        frozenset({"CallToolResult"}),
        True,
        "CreateTaskResult",
    )
    assert _results("InputRequiredResult | GetPromptResult") == (
        frozenset({"InputRequiredResult", "GetPromptResult"}),
        True,
        None,
    )
    assert _results("—") == (frozenset(), True, None)
    assert _params("inline {a?, b} (optional)") == InventoryParams(
        None, {"a": False, "b": True}, False
    )
    assert _params("RequestParams") == InventoryParams("RequestParams", None, True)
    with pytest.raises(ValueError):
        _results("A or B")


# --- methods ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", REVISIONS)
def test_method_sets_match_inventory(name: str) -> None:
    rev = revision_ir(name)
    assert {m.name for m in rev.methods} == set(inventory_methods()[name].methods)
    assert len(rev.methods) == len({m.name for m in rev.methods})


@pytest.mark.parametrize("name", REVISIONS)
def test_method_kind_direction_and_definition_match_inventory(name: str) -> None:
    rev = revision_ir(name)
    wrong = []
    for inv in inventory_methods()[name].methods.values():
        m = rev.method(inv.name)
        assert m is not None, inv.name
        got = (m.kind, m.direction, m.message)
        if got != (inv.kind, inv.direction, inv.definition):
            wrong.append(
                f"{inv.name}: IR {got}, inventory {(inv.kind, inv.direction, inv.definition)}"
            )
    assert not wrong, "\n".join(wrong)


def _base_declares_meta(name: str, kind: Kind) -> bool:
    """Whether the revision's base `Request` / `Notification` has `params._meta`: then every
    request's (notification's) params declare it too (codegen.normalize._declare_base_meta)."""
    base = {Kind.REQUEST: "Request", Kind.NOTIFICATION: "Notification"}.get(kind)
    params = definitions_of(official_schema(name)).get(base or "", {}).get("properties", {})
    return "_meta" in params.get("params", {}).get("properties", {})


@pytest.mark.parametrize("name", REVISIONS)
def test_method_params_match_inventory(name: str) -> None:
    rev = revision_ir(name)
    wrong = []
    for inv in inventory_methods()[name].methods.values():
        m = rev.method(inv.name)
        assert m is not None, inv.name
        expected = inv.params
        if m.params_required != expected.required:
            wrong.append(
                f"{inv.name}: params required {m.params_required}, expected {expected.required}"
            )
        if expected.inline_fields is not None:
            if not m.params_inline or m.params is None:
                wrong.append(f"{inv.name}: params {m.params} not inline")
                continue
            hoisted = rev.definitions[m.params]
            if hoisted.hoisted_from != m.message:
                wrong.append(f"{inv.name}: {m.params} hoisted from {hoisted.hoisted_from}")
            fields = {f.name: f.required for f in hoisted.fields}
            inherited = {"_meta": False} if _base_declares_meta(name, m.kind) else {}
            if fields != {**inherited, **expected.inline_fields}:
                wrong.append(
                    f"{inv.name}: inline fields {fields}, expected {expected.inline_fields}"
                )
        else:
            if m.params_inline or m.params != expected.name:
                wrong.append(
                    f"{inv.name}: params {m.params} (inline {m.params_inline}), expected {expected.name}"
                )
            elif m.params is not None and rev.definitions[m.params].hoisted_from is not None:
                wrong.append(f"{inv.name}: named params {m.params} marked as hoisted")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("name", REVISIONS)
def test_method_results_match_inventory(name: str) -> None:
    rev = revision_ir(name)
    wrong = []
    for inv in inventory_methods()[name].methods.values():
        m = rev.method(inv.name)
        assert m is not None, inv.name
        got = (frozenset(m.results), m.task_result, m.result_link, m.results_in_union)
        expected = (inv.results, inv.task_result, inv.result_link, inv.results_in_union)
        if got != expected:
            wrong.append(f"{inv.name}: IR {got}, inventory {expected}")
        if len(m.results) != len(set(m.results)):
            wrong.append(f"{inv.name}: duplicate results {m.results}")
    assert not wrong, "\n".join(wrong)


# --- errors, era signals, definitions --------------------------------------------------------


@pytest.mark.parametrize("name", REVISIONS)
def test_error_codes_match_inventory(name: str) -> None:
    got = {
        InventoryError(e.code, e.name, tuple(sorted(e.data_fields)))
        for e in revision_ir(name).errors
    }
    assert got == inventory_errors()[name]


def _agree(*values: bool) -> bool | None:
    """The common value of several IR readings of one signal; None if they disagree."""
    return values[0] if len(set(values)) == 1 else None


def _requests_carry_id_and_jsonrpc(rev: Revision) -> bool | None:
    carry = {
        {"id", "jsonrpc"} <= {f.name for f in rev.definitions[m.message].fields}
        for m in rev.methods
        if m.kind is Kind.REQUEST
    }
    return _agree(*carry)


SIGNALS: dict[str, Callable[[Revision], bool | None]] = {
    "initialize": lambda r: _agree(r.method("initialize") is not None, r.signals["initialize"]),
    "server/discover": lambda r: r.method("server/discover") is not None,
    "_meta protocolVersion required": lambda r: _agree(
        r.meta_envelope is not None, r.signals["per_request_version"]
    ),
    "Result.resultType required": lambda r: r.result_type_required,
    "ServerRequest union": lambda r: "ServerRequest" in schema_definitions(r),
    "InputRequiredResult": lambda r: _agree(
        r.interim_result == "InputRequiredResult", r.signals["interim_result"]
    ),
    "batch arrays in JSONRPCMessage": lambda r: _agree(r.batching, r.signals["batching"]),
    "Request defs carry id/jsonrpc": _requests_carry_id_and_jsonrpc,
    "*RequestParams defs": lambda r: any(
        n.endswith("RequestParams") for n in schema_definitions(r)
    ),
    "tasks (tasks/get)": lambda r: r.method("tasks/get") is not None,
}


@pytest.mark.parametrize("name", REVISIONS)
def test_era_matches_inventory(name: str) -> None:
    rev = revision_ir(name)
    expected = Era(inventory_signals()[name]["era"])
    assert rev.derived_era == expected
    assert rev.era == expected


@pytest.mark.parametrize("name", REVISIONS)
def test_era_signals_match_inventory(name: str) -> None:
    row = inventory_signals()[name]
    assert set(row) == {"Revision", "era"} | set(SIGNALS), "inventory columns changed"
    rev = revision_ir(name)
    got = {column: read(rev) for column, read in SIGNALS.items()}
    assert got == {column: YES_NO[row[column]] for column in SIGNALS}


@pytest.mark.parametrize("name", REVISIONS)
def test_schema_definitions_match_inventory_count(name: str) -> None:
    """Non-hoisted IR definitions are exactly the schema's, plus JSONValue where it lacks one."""
    official = set(definitions_of(official_schema(name)))
    assert len(official) == inventory_counts()[name]
    rev = revision_ir(name)
    assert schema_definitions(rev) == official | {JSON_VALUE}
    for d in rev.definitions.values():
        if d.hoisted_from is not None:
            assert d.name not in official


# --- deriving the era ------------------------------------------------------------------------


def _modern_with_initialize() -> tuple[str, dict[str, Any]]:
    """2026-07-28 plus an `initialize` request in ClientRequest."""
    schema = copy.deepcopy(official_schema("2026-07-28"))
    defs = schema["$defs"]
    defs["InitializeRequest"] = {
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0", "type": "string"},
            "id": {"$ref": "#/$defs/RequestId"},
            "method": {"const": "initialize", "type": "string"},
            "params": {"$ref": "#/$defs/RequestParams"},
        },
        "required": ["jsonrpc", "id", "method", "params"],
    }
    defs["ClientRequest"]["anyOf"].append({"$ref": "#/$defs/InitializeRequest"})
    return "2026-07-28", schema


def _legacy_with_per_request_version() -> tuple[str, dict[str, Any]]:
    """2025-11-25 whose RequestParams._meta requires a protocol version and client capabilities."""
    schema = copy.deepcopy(official_schema("2025-11-25"))
    meta = schema["$defs"]["RequestParams"]["properties"]["_meta"]
    meta["properties"]["io.modelcontextprotocol/protocolVersion"] = {"type": "string"}
    meta["properties"]["io.modelcontextprotocol/clientCapabilities"] = {
        "$ref": "#/$defs/ClientCapabilities"
    }
    meta["required"] = [
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/protocolVersion",
    ]
    return "2025-11-25", schema


def _build(name: str, schema: dict[str, Any], era: str | None = None) -> Revision:
    normalized, hoisted = normalize(schema, name)
    return build_revision(name, normalized, hoisted, "0" * 64, era)


HYBRIDS = [_modern_with_initialize, _legacy_with_per_request_version]


@pytest.mark.parametrize("make", HYBRIDS)
def test_hybrid_schema_era_is_undecidable(make: Callable[[], tuple[str, dict[str, Any]]]) -> None:
    base, schema = make()
    assert _build(base, copy.deepcopy(official_schema(base))).derived_era is not None  # control
    with pytest.raises(CodegenError, match="cannot tell the era"):
        _build(base, schema)


@pytest.mark.parametrize("make", HYBRIDS)
@pytest.mark.parametrize("era", list(Era))
def test_hybrid_schema_builds_with_an_era_override(
    make: Callable[[], tuple[str, dict[str, Any]]], era: Era
) -> None:
    base, schema = make()
    rev = _build(base, schema, era.value)
    assert rev.era is era
    assert rev.derived_era is None
    assert rev.signals["initialize"] and rev.signals["per_request_version"]
    assert rev.method("initialize") is not None
    assert rev.meta_envelope is not None


def test_schema_without_either_signal_is_undecidable() -> None:
    schema = copy.deepcopy(official_schema("2025-11-25"))
    defs = schema["$defs"]
    del defs["InitializeRequest"]
    defs["ClientRequest"]["anyOf"] = [
        m for m in defs["ClientRequest"]["anyOf"] if m != {"$ref": "#/$defs/InitializeRequest"}
    ]
    with pytest.raises(CodegenError, match="cannot tell the era"):
        _build("2025-11-25", schema)
    assert _build("2025-11-25", schema, "legacy").method("initialize") is None


def test_result_missing_from_the_answering_union_is_flagged() -> None:
    """The inventory's `(!not in union)`: here, CallToolResult dropped from ServerResult."""
    schema = copy.deepcopy(official_schema("2025-11-25"))
    union = schema["$defs"]["ServerResult"]["anyOf"]
    union.remove({"$ref": "#/$defs/CallToolResult"})
    rev = _build("2025-11-25", schema)
    tools_call = rev.method("tools/call")
    assert tools_call is not None and tools_call.results == ("CallToolResult",)
    assert not tools_call.results_in_union
    assert all(m.results_in_union for m in rev.methods if m.name != "tools/call")
