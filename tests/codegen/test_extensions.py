"""Extensions as generator inputs: pins, restyling, the repeated-definition rule, the generated
package, and `mcp-codegen fetch / list / check` with an extension pinned.

The real extension is the Tasks extension (io.modelcontextprotocol/tasks) from the shared
mirror; the synthetic schemas here are small ones written for each rule.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

import mcp_wire
from codegen.errors import CodegenError
from codegen.extension import canonical, merged_schema, restyle
from codegen.pins import ExtensionPin, read_extension_pins
from codegen.pipeline import Project
from mcp_wire.v2026_07_28 import ext as ext_package
from mcp_wire.v2026_07_28.ext import tasks
from tests.support import EXTENSIONS, PROJECT, ROOT, SHARED, official_schema
from tests.support.projects import assert_one_line_error, make_project, run, snapshot

TASKS = "io.modelcontextprotocol/tasks"
UI = "io.modelcontextprotocol/ui"
PIN = PROJECT.extension_pins()[TASKS]
EXT_MIRROR = SHARED / "mcp-spec" / "ext" / "tasks" / "schema.json"


def ext_schema() -> dict[str, Any]:
    return copy.deepcopy(official_schema("2026-07-28+tasks"))


def core_schema() -> dict[str, Any]:
    return copy.deepcopy(official_schema("2026-07-28"))


# --- pins -----------------------------------------------------------------------------------


def test_the_tasks_extension_is_pinned_beside_the_revisions() -> None:
    assert PIN == ExtensionPin(
        TASKS,
        "tasks",
        PIN.sha256,
        "https://raw.githubusercontent.com/modelcontextprotocol/ext-tasks/"
        "e4345978be1f602f1fc48d89051e8559dd5302a6/schema/draft/schema.json",
        ("2026-07-28",),
        ("tools/call",),
    )
    assert sorted(EXTENSIONS) == ["2025-11-25+apps", "2026-07-28+apps", "2026-07-28+tasks"]


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ('["x"]\nname = "x"', "not an extension table"),
        ('["a.b/x"]\nname = "X-1"', "name must be a lowercase Python identifier"),
        ('["a.b/x"]\nname = "x"\nsha256 = "abc"', "sha256 must be 64 lowercase hex digits"),
        (
            '["a.b/x"]\nname = "x"\nsha256 = "' + "0" * 64 + '"\nbuilt_on = "2026-07-28"',
            "built_on must be a non-empty list",
        ),
        (
            '["a.b/x"]\nname = "x"\nsha256 = "' + "0" * 64 + '"\nbuilt_on = []',
            "built_on must be a non-empty list",
        ),
        (
            '["a.b/x"]\nname = "x"\nsha256 = "' + "0" * 64 + '"\nbuilt_on = ["soon"]',
            "built_on must be a non-empty list",
        ),
        ('["a.b/x"]\nname = "x"\nsince = "2026-07-28"', "`since` is replaced by `built_on"),
        ('["a.b/x"]\nname = "x"\nflavour = 1', "unknown key 'flavour'"),
        (
            '["a.b/x"]\nname = "x"\nsha256 = "' + "0" * 64 + '"\nbuilt_on = ["2026-07-28"]\n'
            "task_methods = [1]",
            "task_methods must be a list of method names",
        ),
        ("[[[", "not valid TOML"),
    ],
)
def test_malformed_extension_pins_are_one_error(tmp_path: Path, table: str, fragment: str) -> None:
    path = tmp_path / "extensions.toml"
    path.write_text(table + "\n", encoding="utf-8")
    with pytest.raises(CodegenError, match=fragment):
        read_extension_pins(path)


def test_no_extensions_file_pins_none(tmp_path: Path) -> None:
    assert read_extension_pins(tmp_path / "extensions.toml") == {}


# --- restyling: the same instances, in the core schemas' style --------------------------------


def test_restyle_turns_the_extension_style_into_the_core_style() -> None:
    status = {"anyOf": [{"type": "string", "const": c} for c in ("on", "off")]}
    item = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "propertyNames": {"type": "string"},
        "properties": {"id": {"type": "string"}, "status": copy.deepcopy(status)},
        "required": ["id"],
    }
    on = {"type": "object", "properties": {"status": {"type": "string", "const": "on"}}}
    off = {"type": "object", "properties": {"status": {"type": "string", "const": "off"}}}
    defs = {
        "Status": {"$schema": "https://json-schema.org/draft/2020-12/schema", **status},
        "Item": item,
        "Closed": {"type": "object", "additionalProperties": {"not": {}}},
        "On": on,
        "Either": {"allOf": [{"$ref": "#/$defs/Result"}, {"anyOf": [copy.deepcopy(on), off]}]},
    }
    out = restyle(defs)
    # anyOf of string constants -> an enum; an inline copy of a named definition -> its $ref.
    assert out["Status"] == {"type": "string", "enum": ["on", "off"]}
    assert out["Item"]["properties"]["status"] == {"$ref": "#/$defs/Status"}
    assert "propertyNames" not in out["Item"] and "$schema" not in out["Item"]
    assert out["Closed"]["additionalProperties"] is False
    # allOf over an anyOf member -> an anyOf of allOfs, each variant named by its constant.
    assert out["Either"] == {"anyOf": [{"$ref": "#/$defs/EitherOn"}, {"$ref": "#/$defs/EitherOff"}]}
    assert out["EitherOn"] == {"allOf": [{"$ref": "#/$defs/Result"}, {"$ref": "#/$defs/On"}]}
    assert out["EitherOff"] == {"allOf": [{"$ref": "#/$defs/Result"}, off]}


def test_restyle_refuses_variants_no_constant_tells_apart() -> None:
    a = {"type": "object", "properties": {"x": {"type": "string"}}}
    b = {"type": "object", "properties": {"y": {"type": "string"}}}
    with pytest.raises(CodegenError, match="no constant tells its variants apart"):
        restyle({"Both": {"anyOf": [a, b]}})


def test_canonical_forms_ignore_annotations_and_order_only() -> None:
    one = {"description": "a", "type": "object", "required": ["b", "a"], "properties": {"a": {}}}
    two = {"properties": {"a": {"title": "x"}}, "required": ["a", "b"], "type": "object"}
    assert canonical(one) == canonical(two)
    assert canonical(one) != canonical({**two, "required": ["a"]})


# --- repeated core definitions ----------------------------------------------------------------


def test_every_repeated_definition_is_the_core_class() -> None:
    _, own, same = merged_schema(core_schema(), ext_schema(), "tasks", ["tools/call"])
    ext_defs = official_schema("2026-07-28+tasks")["$defs"]
    assert set(same) | (set(own) & set(ext_defs)) == set(ext_defs)
    variants = sorted(set(own) - set(ext_defs))  # a union's variants, named by their status
    statuses = ["Cancelled", "Completed", "Failed", "InputRequired", "Working"]
    assert variants == [f"{union}{s}" for union in ("GetTaskResult", "TaskStatusNotificationParams")
                        for s in statuses]  # fmt: skip
    assert {"Result", "JSONRPCRequest", "Tool", "ElicitRequest", "CreateMessageRequest"} <= set(
        same
    )
    core = mcp_wire.revision("2026-07-28")
    for name in same:
        assert getattr(tasks, name) is getattr(core, name), name
    for name in own:
        assert not hasattr(core, name), name
        assert getattr(tasks, name).__module__ == "mcp_wire.v2026_07_28.ext.tasks.models", name


def test_the_extension_codec_reuses_the_core_codecs_tables() -> None:
    """The extension's codec imports its core codec's tables, spread with its own and changed
    entries: every core entry it does not change is the core's own object, and its source
    writes none of them again."""
    from mcp_wire.v2026_07_28 import codec as core_module
    from mcp_wire.v2026_07_28.ext.tasks import codec as ext_module

    core, ext = core_module.Codec2026_07_28, ext_module.Codec2026_07_28Tasks
    source = Path(ext_module.__file__).read_text()
    for table in ("requests", "notifications", "responses"):
        ours, theirs = getattr(ext, table), getattr(core, table)
        assert theirs.keys() <= ours.keys(), table
        changed = {k for k in theirs if ours[k] is not theirs[k]}
        assert changed == (
            {"prompts/get", "resources/read", "tools/call"} if table == "responses" else set()
        )
        for method in theirs.keys() - changed:
            assert f'"{method}": m.{theirs[method].__name__},' not in source, (table, method)
    assert {"tasks/get", "tasks/cancel", "tasks/update"} <= ext.requests.keys()
    for name in (
        "error_frames",
        "envelope_keys",
        "envelope_model",
        "meta_key",
        "known_reserved_keys",
    ):
        assert getattr(ext, name) is getattr(core, name), name
    assert core.open_models < ext.open_models and "CreateTaskResult" in ext.open_models
    # The discriminated responses read the extension's own resultType ("task"): classes of
    # its own, not the core's.
    assert ext.responses["tools/call"] is ext_module.CallToolResultResponse
    assert ext_module.RequestFrame != core_module.RequestFrame


EXTENSION_CODECS = [("2025-11-25", UI), ("2026-07-28", UI), ("2026-07-28", TASKS)]


@pytest.mark.parametrize(("revision", "extension"), EXTENSION_CODECS)
def test_an_extension_codec_is_its_revision_codec_and_sets_only_what_the_extension_adds(
    revision: str, extension: str
) -> None:
    """The extension's codec class derives from its revision's: every attribute the extension
    does not change is inherited (none is set on the class again), and the typed API declares
    again only the methods whose types the extension changes (apps: none; tasks: those naming
    its messages and widened results)."""
    plain = mcp_wire.codec(revision)
    codec = plain.with_extensions(extension)
    core, ext = type(plain), type(codec)
    assert ext.__bases__ == (core,) and isinstance(codec, core)
    own = {name for name in vars(ext) if not name.startswith("__")}
    changes = {"open_models", "own_modules", "extension_ids"}
    if extension == TASKS:
        changes |= {"methods", "requests", "notifications", "responses", "extension_result_tags"}
    assert own == changes
    for name in ("revision", "era", "batching", "result_response", "error_frames", "extensions"):
        assert getattr(ext, name) is getattr(core, name), name
    assert core.own_modules < ext.own_modules and core.open_models < ext.open_models
    source = Path(sys.modules[ext.__module__].__file__ or "").read_text(encoding="utf-8")
    declared = set(re.findall(r"^        def (\w+)\(", source, re.MULTILINE))
    if extension == TASKS:
        assert declared == {"decode", "decode_response", "request", "notification", "response"}
    else:
        assert declared == set() and "TYPE_CHECKING" not in source and "TypeAlias" not in source


@pytest.mark.parametrize(
    ("revision", "extension"), [(r, None) for r in mcp_wire.REVISIONS] + EXTENSION_CODECS
)
def test_every_frame_a_codec_names_is_one_it_encodes(revision: str, extension: str | None) -> None:
    """A frame class in a codec's tables is of a module the codec writes (`own_modules`): an
    extension's codec encodes the frames it shares with its revision's codec too (it refused
    them once: "CallToolResultResponse is not a message of revision 2026-07-28")."""
    codec = mcp_wire.codec(revision)
    codec = codec.with_extensions(extension) if extension else codec
    frames = [*codec.requests.values(), *codec.notifications.values(), *codec.responses.values()]
    frames += [*codec.error_frames.values(), codec.result_response, codec.error_response]
    assert [f for f in frames if f.__module__ not in codec.own_modules] == []
    built = codec.response(7, "tools/call", {"content": [{"type": "text", "text": "hi"}]})
    raw = codec.encode(built)
    assert json.loads(raw)["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert type(codec.decode_response(raw, "tools/call")) is type(built)


def test_an_extension_codec_asked_for_another_extension_gives_both_in_one_codec() -> None:
    """(Composition itself: tests/wire/test_composed_codec.py.)"""
    apps = mcp_wire.codec("2026-07-28").with_extensions(UI)
    both = apps.with_extensions(TASKS)
    assert both.extension_ids == {TASKS, UI} and isinstance(both, type(apps))
    assert type(apps.with_extensions(UI)) is type(apps)


def test_a_repeated_definition_that_differs_from_core_is_reported() -> None:
    ext = ext_schema()
    ext["$defs"]["Tool"]["properties"]["name"] = {"type": "integer"}
    ext["$defs"]["Role"]["enum"] = ["user"]
    ext["$defs"]["Result"]["description"] = "only an annotation differs: still the same class"
    with pytest.raises(CodegenError) as info:
        merged_schema(core_schema(), ext, "2026-07-28 + x.y/z", ["tools/call"])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("2026-07-28 + x.y/z: repeats core definitions with a different")
    assert "Role (at /enum)" in message
    assert "Tool (at /properties/name/type)" in message
    assert "Result" not in message


def test_a_synthetic_extension_generates_against_core(tmp_path: Path) -> None:
    """A small extension of our own: one request, its result, one repeated definition."""
    defs = official_schema("2026-07-28")["$defs"]
    ext = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "JSONRPCRequest": copy.deepcopy(defs["JSONRPCRequest"]),
            "RequestId": copy.deepcopy(defs["RequestId"]),
            "Result": copy.deepcopy(defs["Result"]),
            "ResultMetaObject": copy.deepcopy(defs["ResultMetaObject"]),
            "PingPongRequest": {
                "allOf": [
                    {"$ref": "#/$defs/JSONRPCRequest"},
                    {
                        "type": "object",
                        "properties": {
                            "method": {"type": "string", "const": "ping/pong"},
                            "params": {"type": "object", "properties": {"n": {"type": "integer"}}},
                        },
                        "required": ["method"],
                    },
                ]
            },
            "PingPongResult": {"allOf": [{"$ref": "#/$defs/Result"}]},
        },
    }
    merged, own, same = merged_schema(core_schema(), ext, "x", [])
    assert own == ["PingPongRequest", "PingPongResult"]
    assert same == ["JSONRPCRequest", "RequestId", "Result", "ResultMetaObject"]
    members = [m["$ref"] for m in merged["$defs"]["ClientRequest"]["anyOf"]]
    assert members[-1] == "#/$defs/PingPongRequest"
    with pytest.raises(CodegenError, match="cannot tell its task result"):
        merged_schema(core_schema(), ext, "x", ["tools/call"])


# --- the generated package --------------------------------------------------------------------


def test_the_generated_extension_names_its_inputs() -> None:
    package = ROOT / "generated" / "mcp_wire" / "v2026_07_28" / "ext"
    files = sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    pins = {p.name: p for p in PROJECT.extension_pins().values() if "2026-07-28" in p.built_on}
    assert sorted(pins) == ["apps", "tasks"]
    assert [str(p.relative_to(package)) for p in files] == ["__init__.py"] + [
        f"{name}/{module}.py"
        for name in sorted(pins)
        for module in ("__init__", "codec", "dispatch", "models")
    ]
    core = PROJECT.pins()["2026-07-28"].sha256
    for path in files:
        head = path.read_text(encoding="utf-8").splitlines()
        assert head[0].startswith("# Generated by mcpgen"), path
        assert f"schema.json sha256 {core}" in head[1], path
        named = [pins[path.parent.name]] if path.parent != package else list(pins.values())
        inputs = sorted(named, key=lambda p: p.id)
        assert head[2 : 2 + len(inputs)] == [
            f"# input: MCP extension {p.id}, schema.json sha256 {p.sha256}" for p in inputs
        ], path
    assert ext_package.EXTENSIONS == {p.id: p.name for p in pins.values()}
    assert mcp_wire.EXTENSIONS[TASKS] == ("2026-07-28",)
    assert mcp_wire.EXTENSION_SHA256 == {p.id: p.sha256 for p in PROJECT.extension_pins().values()}
    assert (tasks.REVISION, tasks.EXTENSION, tasks.SHA256) == ("2026-07-28", TASKS, PIN.sha256)


def test_the_dispatch_table_has_the_extension_methods() -> None:
    from mcp_wire.v2026_07_28 import dispatch as core_dispatch
    from mcp_wire.v2026_07_28.ext.tasks import dispatch

    added = set(dispatch.METHODS) - set(core_dispatch.METHODS)
    assert added == {"tasks/get", "tasks/update", "tasks/cancel", "notifications/tasks"}
    for name in ("tasks/get", "tasks/update", "tasks/cancel"):
        spec = dispatch.METHODS[name]
        assert (spec.kind, spec.direction) == ("request", "client->server"), name
    assert dispatch.METHODS["tasks/get"].result is tasks.GetTaskResult
    note = dispatch.METHODS["notifications/tasks"]
    assert (note.kind, note.direction, note.params) == (
        "notification",
        "server->client",
        tasks.TaskStatusNotificationParams,
    )
    call = dispatch.METHODS["tools/call"]
    assert call.task_result is tasks.CreateTaskResult
    assert call.results == core_dispatch.METHODS["tools/call"].results
    assert call.result is tasks.CallToolResult
    assert [n for n, s in dispatch.METHODS.items() if s.task_result] == ["tools/call"]


@pytest.mark.parametrize(("revision", "extension"), EXTENSION_CODECS)
def test_an_extension_dispatch_module_adds_its_methods_to_the_revisions_sets(
    revision: str, extension: str
) -> None:
    """Each method set of an extension's dispatch module is the core's with the extension's
    methods added (the core's own object where it adds none), as METHODS says."""
    codec = mcp_wire.codec(revision).with_extensions(extension)
    core = importlib.import_module(f"{mcp_wire.revision(revision).__name__}.dispatch")
    ext = importlib.import_module(type(codec).__module__.replace(".codec", ".dispatch"))
    assert ext.METHODS == codec.methods  # the core's table, when the extension adds nothing
    kinds = {
        "REQUESTS": "request",
        "NOTIFICATIONS": "notification",
        "INPUT_REQUESTS": "input request",
    }
    for name, kind in kinds.items():
        ours, theirs = getattr(ext, name), getattr(core, name)
        assert ours == {n for n, spec in ext.METHODS.items() if spec.kind == kind}, name
        assert theirs <= ours and (ours is theirs) == (ours == theirs), name
    added = set(ext.METHODS) - set(core.METHODS)
    assert ext.CLIENT_TO_SERVER - core.CLIENT_TO_SERVER == {
        n for n in added if ext.METHODS[n].direction == "client->server"
    }
    assert ext.SERVER_TO_CLIENT - core.SERVER_TO_CLIENT == {
        n for n in added if ext.METHODS[n].direction == "server->client"
    }
    assert ext.ERROR_CODES is core.ERROR_CODES
    assert added == (
        {"tasks/get", "tasks/update", "tasks/cancel", "notifications/tasks"}
        if extension == TASKS
        else set()
    )


# --- the CLI with an extension pinned ---------------------------------------------------------


def pin_extension(root: Path, fetched: bool = True) -> Path:
    """`root` (a make_project folder) with the Tasks extension pinned (an offline source)."""
    gone = root.parent / f"{root.name}-upstream-gone" / "ext.json"
    (root / "schema" / "extensions.toml").write_text(
        f'["{TASKS}"]\nname = "tasks"\nsha256 = "{PIN.sha256}"\nsource = "{gone}"\n'
        'built_on = ["2026-07-28"]\ntask_methods = ["tools/call"]\n',
        encoding="utf-8",
    )
    target = root / "schema" / "ext" / "tasks" / "schema.json"
    if fetched:
        target.parent.mkdir(parents=True)
        shutil.copyfile(EXT_MIRROR, target)
    return target


def test_fetch_brings_the_extension_from_the_mirror(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    target = pin_extension(project, fetched=False)
    mirror = tmp_path / "mirror"
    shutil.copytree(SHARED / "mcp-spec" / "schema", mirror / "schema")
    shutil.copytree(SHARED / "mcp-spec" / "ext", mirror / "ext")

    result = run("--root", project, "fetch", "--mirror", mirror / "schema", TASKS)

    assert result.exit_code == 0, result.output
    assert result.stdout == f"{TASKS}: schema/ext/tasks/schema.json ok\n"
    assert target.read_bytes() == EXT_MIRROR.read_bytes()


def test_fetch_refuses_an_extension_that_does_not_match_its_pin(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    pin_extension(project, fetched=False)
    mirror = tmp_path / "mirror"
    shutil.copytree(SHARED / "mcp-spec" / "schema", mirror / "schema")
    (mirror / "ext" / "tasks").mkdir(parents=True)
    (mirror / "ext" / "tasks" / "schema.json").write_bytes(EXT_MIRROR.read_bytes() + b"\n")
    before = snapshot(project)

    result = run("--root", project, "fetch", "--mirror", mirror / "schema")

    assert_one_line_error(result, f"extension {TASKS}: sha256 mismatch", "expected " + PIN.sha256)
    assert snapshot(project) == before  # nothing written, not even the revisions


def test_list_shows_the_extension(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    target = pin_extension(project)
    result = run("--root", project, "list")
    assert result.exit_code == 0, result.output
    last = result.stdout.splitlines()[-1].split()
    assert last == [TASKS, "extension", "built", "on", "2026-07-28", PIN.sha256, "fetched"]

    target.unlink()
    result = run("--root", project, "list")
    assert_one_line_error(result, f"{TASKS} missing", status=1)


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [("missing", "is missing; run `mcp-codegen fetch`"),
     ("tampered", "does not match its pinned sha256; fetch it again")],
)  # fmt: skip
@pytest.mark.parametrize("command", ["check", "generate"])
def test_check_and_generate_refuse_a_missing_or_tampered_extension(
    tmp_path: Path, damage: str, fragment: str, command: str
) -> None:
    project = make_project(tmp_path / "p")
    target = pin_extension(project)
    if damage == "missing":
        target.unlink()
    else:
        schema = json.loads(target.read_bytes())
        schema["$defs"]["Task"]["required"].remove("ttlMs")
        target.write_text(json.dumps(schema), encoding="utf-8")
    before = snapshot(project)

    result = run("--root", project, command)

    assert_one_line_error(result, f"extension {TASKS}:", "schema/ext/tasks/schema.json", fragment)
    assert snapshot(project) == before


def test_add_says_how_the_extension_fits_the_new_revision(tmp_path: Path) -> None:
    """`add` of 2026-07-28 plus one optional member of `Tool`: the Tasks extension is re-based
    there; with the extension not fetched, the revision is still pinned and `add` says it
    cannot tell yet."""
    project = make_project(tmp_path / "p")
    schema = core_schema()
    schema["$defs"]["Tool"]["properties"]["color"] = {"type": "string"}
    new = tmp_path / "new.json"
    new.write_text(json.dumps(schema), encoding="utf-8")
    target = pin_extension(project)

    result = run("--root", project, "add", "2027-01-01", "--from", new)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"{TASKS} on 2027-01-01: re-based from 2026-07-28 onto the widened Tool of 2027-01-01"
    )

    target.unlink()
    result = run("--root", project, "add", "2027-02-01", "--from", new)
    assert result.exit_code == 0, result.output
    last = result.stdout.splitlines()[-1]
    assert last.startswith("2027-02-01: cannot tell how the extensions fit it yet: extension ")
    assert "2027-02-01" in Project(project).pins()
