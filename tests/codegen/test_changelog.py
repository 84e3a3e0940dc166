"""`codegen.changelog.changelog` and `mcp-codegen diff`, checked against the schema inventory."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from codegen.changelog import changelog
from codegen.cli import main
from codegen.ir import Definition, Direction, ErrorCode, Field, Kind, Revision
from codegen.normalize import JSON_VALUE
from tests.support import REVISIONS, ROOT, revision_ir
from tests.support.changelog import SECTIONS, sections
from tests.support.inventory import inventory_churn, inventory_methods

PAIRS = list(zip(REVISIONS, REVISIONS[1:], strict=False))
INLINE = " (inline object of `"


def leading_names(items: list[str]) -> list[str]:
    """The first backticked name of each item."""
    names = []
    for item in items:
        m = re.match(r"`([^`]+)`", item)
        assert m is not None, item
        names.append(m[1])
    return names


def schema_names(items: list[str]) -> set[str]:
    """Definition names of a Definitions added/removed list, without the hoisted inline objects."""
    return set(leading_names([item for item in items if INLINE not in item]))


def diff(old: str, new: str) -> str:
    return changelog(revision_ir(old), revision_ir(new))


# --- against the inventory -------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_methods_added_and_removed_match_inventory(old: str, new: str) -> None:
    before = set(inventory_methods()[old].methods)
    after = set(inventory_methods()[new].methods)
    s = sections(diff(old, new))
    assert leading_names(s["Methods added"]) == sorted(after - before)
    assert leading_names(s["Methods removed"]) == sorted(before - after)


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_direction_and_kind_moves_match_inventory(old: str, new: str) -> None:
    before, after = inventory_methods()[old].methods, inventory_methods()[new].methods
    expected = {
        f"`{n}`: {before[n].kind}, {before[n].direction} -> {after[n].kind}, {after[n].direction}"
        for n in before.keys() & after.keys()
        if (before[n].kind, before[n].direction) != (after[n].kind, after[n].direction)
    }
    changed = sections(diff(old, new))["Methods changed (direction, kind, params, result)"]
    moves = {line for line in changed if not re.match(r"`[^`]+`: (result|params) ", line)}
    assert moves == expected


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_definitions_added_and_removed_match_inventory_churn(old: str, new: str) -> None:
    added, removed = inventory_churn()[(old, new)]
    s = sections(diff(old, new))
    # The pre-pass gives every revision a JSONValue; the inventory only sees the schema's own.
    assert JSON_VALUE in revision_ir(old).definitions and JSON_VALUE in revision_ir(new).definitions
    assert schema_names(s["Definitions added"]) == added - {JSON_VALUE}
    assert schema_names(s["Definitions removed"]) == removed - {JSON_VALUE}


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_inline_params_field_changes_match_inventory(old: str, new: str) -> None:
    """A field the inventory shows added to inline params appears under Definitions changed."""
    before, after = inventory_methods()[old].methods, inventory_methods()[new].methods
    changed = sections(diff(old, new))["Definitions changed"]
    by_definition = dict(zip(leading_names(changed), changed, strict=True))
    expected = 0
    for name in before.keys() & after.keys():
        a, b = before[name].params.inline_fields, after[name].params.inline_fields
        if a is None or b is None or a == b:
            continue
        params = revision_ir(new).method(name)
        assert params is not None and params.params is not None
        line = by_definition[params.params]
        for field in b.keys() - a.keys():
            assert f"`{field}` added" in line
            expected += 1
        for field in a.keys() - b.keys():
            assert f"`{field}` removed" in line
            expected += 1
    if (old, new) in (("2024-11-05", "2025-03-26"), ("2025-03-26", "2025-06-18")):
        assert expected > 0  # progress gained `message`, completion/complete gained `context`


def test_params_required_flips_match_inventory() -> None:
    """`(optional)` appearing or vanishing in the inventory is a params line and a flag change."""
    flips = 0
    for old, new in PAIRS:
        before, after = inventory_methods()[old].methods, inventory_methods()[new].methods
        changed = sections(diff(old, new))
        methods_changed = changed["Methods changed (direction, kind, params, result)"]
        for name in before.keys() & after.keys():
            a, b = before[name].params, after[name].params
            if a.name is None or a.name != b.name or a.required == b.required:
                continue
            flips += 1
            old_text = a.name + ("" if a.required else " (optional)")
            new_text = a.name + ("" if b.required else " (optional)")
            assert f"`{name}`: params {old_text} -> {new_text}" in methods_changed
            message = after[name].definition
            flag = f"`params` now {'required' if b.required else 'optional'}"
            assert any(
                line.startswith(f"`{message}`: ") and flag in line
                for line in changed["Definitions changed"]
            ), (old, new, name)
    assert flips > 0  # 2026-07-28 makes the paginated list requests' params required


# --- the 2025-11-25 -> 2026-07-28 era change, through the CLI ----------------------------------


@pytest.fixture(scope="module")
def era_change() -> Result:
    """`mcp-codegen diff 2025-11-25 2026-07-28`, run once."""
    return CliRunner().invoke(main, ["diff", "2025-11-25", "2026-07-28"])


def test_cli_diff_legacy_to_modern_succeeds_silently(era_change: Result) -> None:
    assert era_change.exit_code == 0, era_change.stderr
    assert era_change.stderr == ""


def test_cli_diff_legacy_to_modern_is_the_changelog_and_the_extensions(
    era_change: Result,
) -> None:
    text = era_change.stdout
    tasks, apps = "io.modelcontextprotocol/tasks", "io.modelcontextprotocol/ui"
    fits = [
        f"{tasks} on 2025-11-25: not applicable (older than 2026-07-28)",
        f"{tasks} on 2026-07-28: pinned",
        f"{apps} on 2025-11-25: pinned",  # MCP Apps: built on both
        f"{apps} on 2026-07-28: pinned",
    ]
    assert text == changelog(revision_ir("2025-11-25"), revision_ir("2026-07-28"), fits)
    assert text.startswith(diff("2025-11-25", "2026-07-28").rstrip("\n") + "\n\n## Extensions\n")


def test_cli_diff_legacy_to_modern_names_the_era_change(era_change: Result) -> None:
    assert "**Era change: legacy -> modern.**" in era_change.stdout.splitlines()


def test_cli_diff_legacy_to_modern_lists_methods_added_and_removed(era_change: Result) -> None:
    s = sections(era_change.stdout)
    added = leading_names(s["Methods added"])
    removed = leading_names(s["Methods removed"])
    assert {"server/discover", "subscriptions/listen"} <= set(added)
    assert {"initialize", "ping"} <= set(removed)


def test_cli_diff_legacy_to_modern_lists_moves_of_direction_and_kind(era_change: Result) -> None:
    changed = sections(era_change.stdout)["Methods changed (direction, kind, params, result)"]
    assert (
        f"`notifications/progress`: {Kind.NOTIFICATION}, {Direction.BOTH}"
        f" -> {Kind.NOTIFICATION}, {Direction.SERVER_TO_CLIENT}"
    ) in changed
    assert (
        f"`sampling/createMessage`: {Kind.REQUEST}, {Direction.SERVER_TO_CLIENT}"
        f" -> {Kind.INPUT_REQUEST}, {Direction.INPUT}"
    ) in changed


def test_cli_diff_legacy_to_modern_lists_the_tools_call_result_change(
    era_change: Result,
) -> None:
    changed = sections(era_change.stdout)["Methods changed (direction, kind, params, result)"]
    assert any(
        line.startswith("`tools/call`: result ")
        and "CreateTaskResult" in line.split(" -> ")[0]
        and "InputRequiredResult" in line.split(" -> ")[1]
        for line in changed
    )


def test_cli_diff_legacy_to_modern_lists_error_codes_added_and_removed(
    era_change: Result,
) -> None:
    errors = sections(era_change.stdout)["Error codes"]
    assert any(e.startswith("added `UnsupportedProtocolVersionError` (-32022") for e in errors)
    assert any(e.startswith("removed `URLElicitationRequiredError` (-32042") for e in errors)


def test_cli_diff_adds_elicitation_and_drops_batching() -> None:
    result = CliRunner().invoke(main, ["diff", "2025-03-26", "2025-06-18"])
    assert result.exit_code == 0, result.stderr
    assert "Era: legacy (unchanged)." in result.stdout.splitlines()
    assert "JSON-RPC batching: allowed -> not allowed." in result.stdout.splitlines()
    s = sections(result.stdout)
    assert leading_names(s["Methods added"]) == ["elicitation/create"]
    assert s["Methods removed"] == []
    tasks, apps = "io.modelcontextprotocol/tasks", "io.modelcontextprotocol/ui"
    assert s["Extensions"] == [
        f"{tasks} on 2025-03-26: not applicable (older than 2026-07-28)",
        f"{tasks} on 2025-06-18: not applicable (older than 2026-07-28)",
        f"{apps} on 2025-03-26: not applicable (older than 2025-11-25)",
        f"{apps} on 2025-06-18: not applicable (older than 2025-11-25)",
    ]


@pytest.mark.parametrize(
    "args", [["diff", "2025-11-25", "1999-01-01"], ["diff", "nope", "2026-07-28"]]
)
def test_cli_diff_unknown_revision_is_one_line_on_stderr(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert "unknown revision" in result.stderr


def test_entry_point_reports_unknown_revision() -> None:
    script = Path(sys.executable).parent / "mcp-codegen"  # the venv's console script
    proc = subprocess.run(
        [str(script), "diff", "2024-11-05", "2099-12-31"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "2099-12-31" in proc.stderr


# --- field-level changes, on controlled edits of a real revision -------------------------------


@pytest.mark.parametrize("name", REVISIONS)
def test_a_revision_against_itself_has_no_changes(name: str) -> None:
    text = diff(name, name)
    assert f"Era: {revision_ir(name).era} (unchanged)." in text.splitlines()
    assert all(items == [] for items in sections(text).values())


def _edited(rev: Revision, definition: Definition) -> Revision:
    return replace(rev, name="edited", definitions={**rev.definitions, definition.name: definition})


BREAKS = "Wire breaks for an existing peer"


def _only_definition_change(old: Revision, new: Revision) -> str:
    s = sections(changelog(old, new))
    assert all(s[k] == [] for k in SECTIONS if k not in ("Definitions changed", BREAKS)), s
    assert len(s["Definitions changed"]) == 1
    return s["Definitions changed"][0]


def _breaks(old: Revision, new: Revision) -> list[str]:
    return sections(changelog(old, new))[BREAKS]


def test_field_added_removed_and_required_flag_changes_appear() -> None:
    old = revision_ir("2025-06-18")
    tool = old.definitions["Tool"]
    name_field = tool.field("name")
    assert name_field is not None and name_field.required
    fields = [f for f in tool.fields if f.name != "description"]
    fields = [replace(f, required=False) if f.name == "name" else f for f in fields]
    fields.append(Field("deprecated", True, "boolean"))
    new = _edited(old, replace(tool, fields=tuple(sorted(fields, key=lambda f: f.name))))
    line = _only_definition_change(old, new)
    assert line.startswith("`Tool`: ")
    assert "`deprecated` added (boolean, required)" in line
    assert "`description` removed" in line
    assert "`name` now optional" in line
    # A newly required member and a removed one break an existing peer; an optional one not.
    assert _breaks(old, new) == [
        "`Tool`: `deprecated` added (boolean, required)",
        "`Tool`: `description` removed",
    ]
    back = _only_definition_change(new, old)
    assert "`name` now required" in back and "`description` added" in back
    assert _breaks(new, old) == ["`Tool`: `deprecated` removed", "`Tool`: `name` now required"]


def test_field_type_change_appears_and_union_reordering_does_not() -> None:
    old = revision_ir("2025-06-18")
    ref = old.definitions["CompleteRequestParams"].field("ref")
    assert ref is not None and ref.type.startswith("anyOf[")
    members = ref.type.removeprefix("anyOf[").removesuffix("]").split(", ")
    assert len(members) == 2
    params = old.definitions["CompleteRequestParams"]

    def with_ref_type(text: str) -> Revision:
        fields = tuple(replace(f, type=text) if f.name == "ref" else f for f in params.fields)
        return _edited(old, replace(params, fields=fields))

    reordered = with_ref_type(f"anyOf[{members[1]}, {members[0]}]")
    assert all(items == [] for items in sections(changelog(old, reordered)).values())
    widened = with_ref_type(f"anyOf[{members[0]}, {members[1]}, ResourceLink]")
    assert "`ref` anyOf members: + ResourceLink" in _only_definition_change(old, widened)
    assert _breaks(old, widened) == []  # a widened union takes every old value
    assert _breaks(widened, old) == ["`CompleteRequestParams`: `ref` anyOf members: - ResourceLink"]
    retyped = with_ref_type("string")
    assert f"`ref` type: {ref.type} -> string" in _only_definition_change(old, retyped)
    assert _breaks(old, retyped) == [f"`CompleteRequestParams`: `ref` type: {ref.type} -> string"]


def test_error_code_data_change_appears() -> None:
    old = revision_ir("2026-07-28")
    target = next(e for e in old.errors if e.data_fields)
    errors = tuple(
        ErrorCode(e.name, e.code, (*e.data_fields, "hint")) if e == target else e
        for e in old.errors
    )
    s = sections(changelog(old, replace(old, name="edited", errors=errors)))
    before, after = ", ".join(target.data_fields), ", ".join((*target.data_fields, "hint"))
    assert s["Error codes"] == [
        f"changed `{target.name}` ({target.code}): error.data {before} -> {after}"
    ]


def test_standard_json_rpc_errors_that_become_named_are_not_reported_as_added() -> None:
    """2026-07-28 names ParseError & co.; their codes were part of every revision before."""
    s = sections(changelog(revision_ir("2025-11-25"), revision_ir("2026-07-28")))
    errors = s["Error codes"]
    standard = ("ParseError", "InvalidRequestError", "MethodNotFoundError", "InvalidParamsError")
    for name in (*standard, "InternalError"):
        assert not any(e.startswith(f"added `{name}`") for e in errors), errors
    named = [e for e in errors if e.startswith("standard JSON-RPC errors now named")]
    assert named == [
        "standard JSON-RPC errors now named by a definition (same codes, not new): "
        "`ParseError` (-32700), `InternalError` (-32603), `InvalidParamsError` (-32602), "
        "`MethodNotFoundError` (-32601), `InvalidRequestError` (-32600)"
    ]
    # Backwards: the names go, the codes stay.
    back = sections(changelog(revision_ir("2026-07-28"), revision_ir("2025-11-25")))
    assert not any(e.startswith("removed `ParseError`") for e in back["Error codes"])
    assert any(
        e.startswith("standard JSON-RPC errors no longer named") for e in back["Error codes"]
    )
    # A code that is not JSON-RPC's own is still added and removed as before.
    assert any(e.startswith("added `HeaderMismatchError` (-32020)") for e in errors)
    # A standard code that moves to another name is a real change.
    old = revision_ir("2026-07-28")
    renamed = tuple(
        ErrorCode("JSONParseError", e.code, e.data_fields) if e.name == "ParseError" else e
        for e in old.errors
    )
    edited = sections(changelog(old, replace(old, name="edited", errors=renamed)))["Error codes"]
    assert edited == ["added `JSONParseError` (-32700)", "removed `ParseError` (-32700)"]


# --- folding, moves and wire breaks on the real revisions --------------------------------------


LIST_TOOLS_MOVE = (
    "`ListToolsRequest`: `params` type: ListToolsRequestParams -> PaginatedRequestParams"
)


@pytest.fixture(scope="module")
def diff_2025_11_25() -> str:
    """The changelog from 2025-06-18 to 2025-11-25."""
    return diff("2025-06-18", "2025-11-25")


def test_diff_2025_06_18_to_2025_11_25_folds_jsonrpc_added_to_every_message(
    diff_2025_11_25: str,
) -> None:
    # `jsonrpc`/`id` now declared on every message: one line each, not one per message.
    changed = sections(diff_2025_11_25)["Definitions changed"]
    per_definition = [line for line in changed if re.match(r"`[^`]+`: ", line)]
    assert per_definition and not any("`jsonrpc` added" in line for line in per_definition)
    (jsonrpc,) = [line for line in changed if line.startswith("`jsonrpc` added in ")]
    assert "(the JSON-RPC envelope: no wire change)" in jsonrpc
    assert "CallToolRequest" in jsonrpc and "CancelledNotification" in jsonrpc


def test_diff_2025_06_18_to_2025_11_25_folds_id_added_to_every_request(
    diff_2025_11_25: str,
) -> None:
    changed = sections(diff_2025_11_25)["Definitions changed"]
    (ids,) = [line for line in changed if line.startswith("`id` added in ")]
    assert "CallToolRequest" in ids and "CancelledNotification" not in ids


def test_diff_2025_06_18_to_2025_11_25_folds_a_member_added_to_many_definitions(
    diff_2025_11_25: str,
) -> None:
    changed = sections(diff_2025_11_25)["Definitions changed"]
    icons = "`icons` added (array[Icon]) in 6 definitions: "
    assert (
        icons + "Implementation, Prompt, Resource, ResourceLink, ResourceTemplate, Tool" in changed
    )


def test_diff_2025_06_18_to_2025_11_25_lists_a_rename_as_a_move(diff_2025_11_25: str) -> None:
    moves = sections(diff_2025_11_25)["Moves and renames (no wire change)"]
    assert "`JSONRPCErrorError` -> `Error` (renamed: same shape)" in moves


def test_diff_2025_06_18_to_2025_11_25_lists_a_same_shape_params_type_as_a_move_only(
    diff_2025_11_25: str,
) -> None:
    s = sections(diff_2025_11_25)
    moves, changed = s["Moves and renames (no wire change)"], s["Definitions changed"]
    assert LIST_TOOLS_MOVE in moves and not any(
        line.startswith("`ListToolsRequest`") for line in changed
    )


def test_diff_2025_06_18_to_2025_11_25_lists_removed_members_as_wire_breaks(
    diff_2025_11_25: str,
) -> None:
    breaks = sections(diff_2025_11_25)["Wire breaks for an existing peer"]
    assert "`EnumSchema`: `enum` removed" in breaks
    assert "`ElicitRequestParams`: `requestedSchema` removed" in breaks


def test_diff_2025_06_18_to_2025_11_25_does_not_call_folds_or_moves_wire_breaks(
    diff_2025_11_25: str,
) -> None:
    breaks = sections(diff_2025_11_25)["Wire breaks for an existing peer"]
    assert not any(
        "icons" in line or "`jsonrpc` added" in line or LIST_TOOLS_MOVE in line for line in breaks
    )


def test_diff_2025_06_18_to_2025_11_25_counts_the_wire_breaks_up_front(
    diff_2025_11_25: str,
) -> None:
    breaks = sections(diff_2025_11_25)["Wire breaks for an existing peer"]
    line = f"Wire breaks for an existing peer: {len(breaks)} (listed last)."
    assert line in diff_2025_11_25.splitlines()


def test_diff_2025_11_25_to_2026_07_28_marks_removed_methods_and_required_members() -> None:
    s = sections(diff("2025-11-25", "2026-07-28"))
    breaks = s["Wire breaks for an existing peer"]
    for line in (
        "method `initialize` removed",
        "method `ping` removed",
        "method `tools/list`: params now required",
        "method `tools/call`: no longer answers CreateTaskResult",
        "`ListToolsResult`: `ttlMs` added (integer, required)",
        "`ClientCapabilities`: `tasks` removed",
    ):
        assert line in breaks, line
    (meta,) = [
        line for line in breaks if line.startswith("`_meta` type: map[JSONValue] -> MetaObject in ")
    ]
    assert "TextContent" in meta
    changed = s["Definitions changed"]
    assert (
        "`jsonrpc` removed in 3 messages (the JSON-RPC envelope: no wire change): "
        "CreateMessageRequest, ElicitRequest, ListRootsRequest"
    ) in changed
    (result_type,) = [
        line for line in changed if line.startswith("`resultType` added (string, required) in ")
    ]
    assert "CallToolResult" in result_type
    moves = s["Moves and renames (no wire change)"]
    assert "`ServerCapabilities`: `logging` type: ServerCapabilitiesLogging -> JSONObject" in moves
    assert not any("ServerCapabilitiesLogging" in line for line in breaks)
