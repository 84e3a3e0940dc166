"""A new protocol revision is `mcp-codegen add` + `generate`: no generator code changes.

In a temporary project with the five official revisions, add
- 2027-01-01: a byte copy of the 2026-07-28 schema (an ordinary modern revision),
- 2027-01-15: the 2025-11-25 schema with per-method `<Name>ResultResponse` definitions in the
  2026-07-28 style, while its task-augmented requests may still answer `CreateTaskResult`
  (tools/call's response names CallToolResult only, so the codec widens `result`;
  elicitation/create's names CreateTaskResult itself; sampling/createMessage has none),
- 2027-01-20: the 2026-07-28 schema with 2025-11-25's tasks: a task-augmented tools/call may
  answer CreateTaskResult beside InputRequiredResult and CallToolResult, results tagged by
  `resultType`, and
- 2027-02-02: the 2025-11-25 schema with a new client request `xyz/do` (XyzRequest,
  XyzRequestParams, XyzResult, wired into ClientRequest / ServerResult) and without `ping`,
then generate once, and check the IR, the generated package (imported in a fresh interpreter
from the temporary tree only), the changelog and pyright over the whole temporary tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from codegen.cli import main
from codegen.ir import Direction, Era, Kind, Revision
from codegen.pins import Pin, render_pins
from codegen.pipeline import Project, load_revision
from tests.support import MIRROR, PROJECT, REVISIONS, ROOT, SHARED, free_port, revision_ir

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
# The hand-written runtime the generated code imports (mcp_wire_runtime): the checkout's, not copied.
RUNTIME = ROOT / "runtime"
COPY, RESPONSES, TASKS, CHANGED = "2027-01-01", "2027-01-15", "2027-01-20", "2027-02-02"


def _with_xyz_and_without_ping(schema: dict) -> dict:
    defs = schema["$defs"]
    ref = "#/$defs/"
    del defs["PingRequest"]
    for union in ("ClientRequest", "ServerRequest"):
        members = defs[union]["anyOf"]
        assert {"$ref": ref + "PingRequest"} in members
        defs[union]["anyOf"] = [m for m in members if m != {"$ref": ref + "PingRequest"}]
    defs["XyzRequest"] = {
        "description": "Asks the server to do xyz.",
        "type": "object",
        "properties": {
            "id": {"$ref": ref + "RequestId"},
            "jsonrpc": {"const": "2.0", "type": "string"},
            "method": {"const": "xyz/do", "type": "string"},
            "params": {"$ref": ref + "XyzRequestParams"},
        },
        "required": ["id", "jsonrpc", "method", "params"],
    }
    defs["XyzRequestParams"] = {
        "description": "Parameters for an `xyz/do` request.",
        "type": "object",
        "properties": {
            "_meta": {"additionalProperties": {}, "type": "object"},
            "target": {"type": "string", "description": "What to do xyz to."},
            "times": {"type": "integer", "minimum": 1},
        },
        "required": ["target"],
    }
    defs["XyzResult"] = {
        "description": "The server's response to an `xyz/do` request.",
        "type": "object",
        "properties": {
            "_meta": {"additionalProperties": {}, "type": "object"},
            "done": {"type": "boolean"},
            "log": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["done"],
    }
    defs["ClientRequest"]["anyOf"].append({"$ref": ref + "XyzRequest"})
    defs["ServerResult"]["anyOf"].append({"$ref": ref + "XyzResult"})
    return schema


def _with_result_responses(schema: dict) -> dict:
    """Give every request a `<Name>ResultResponse` as 2026-07-28 does, but keep 2025-11-25's
    tasks: a task-augmented tools/call (or sampling/createMessage, elicitation/create) may answer
    `CreateTaskResult`, which tools/call's response definition does not name."""
    defs = schema["$defs"]
    ref = "#/$defs/"
    requests = [m["$ref"].removeprefix(ref) for u in ("ClientRequest", "ServerRequest")
                for m in defs[u]["anyOf"]]  # fmt: skip
    assert {"CallToolRequest", "ElicitRequest", "CreateMessageRequest", "PingRequest"} <= set(
        requests
    )
    for message in dict.fromkeys(requests):
        base = message.removesuffix("Request")
        if base == "CreateMessage":
            continue  # a revision may define some response types and not others
        final = f"{base}Result" if f"{base}Result" in defs else "EmptyResult"
        result: dict = {"$ref": ref + final}
        if base == "Elicit":  # the schema itself names the task result
            result = {"anyOf": [{"$ref": ref + final}, {"$ref": ref + "CreateTaskResult"}]}
        name = f"{base}ResultResponse"
        assert name not in defs
        defs[name] = {
            "description": f"A successful response to a {message}.",
            "type": "object",
            "properties": {
                "id": {"$ref": ref + "RequestId"},
                "jsonrpc": {"const": "2.0", "type": "string"},
                "result": result,
            },
            "required": ["id", "jsonrpc", "result"],
        }
    return schema


def _with_tasks(schema: dict, tasks_from: dict) -> dict:
    """A modern revision whose tools/call may be task-augmented (2025-11-25's tasks)."""
    defs, old = schema["$defs"], tasks_from["$defs"]
    ref = "#/$defs/"
    for name in ("Task", "TaskStatus", "TaskMetadata"):
        assert name not in defs
        defs[name] = old[name]
    assert "CreateTaskResult" not in defs and "task" not in defs["CallToolRequestParams"]
    task_result = json.loads(json.dumps(old["CreateTaskResult"]))
    task_result["properties"]["resultType"] = {"type": "string"}
    task_result["required"] = [*task_result["required"], "resultType"]
    defs["CreateTaskResult"] = task_result
    defs["CallToolRequestParams"]["properties"]["task"] = {"$ref": ref + "TaskMetadata"}
    return schema


def _invoke(*args: str | Path) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return result.stdout


def _official_project(root: Path) -> Path:
    """A project in `root` pinning the five official revisions, fetched (upstream unreachable)."""
    gone = root.parent / "upstream-gone"
    pins = {r: Pin(r, p.sha256, str(gone / r), p.era) for r, p in PROJECT.pins().items()}
    (root / "schema").mkdir()
    (root / "schema" / "revisions.toml").write_text(render_pins(pins), encoding="utf-8")
    for rev in REVISIONS:
        (root / "schema" / rev).mkdir()
        (root / "schema" / rev / "schema.json").write_bytes(
            (MIRROR / rev / "schema.json").read_bytes()
        )
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The temporary project after `add` x4 and one `generate`."""
    root = _official_project(tmp_path_factory.mktemp("new-revision"))
    inputs = root.parent / "new-revision-inputs"
    inputs.mkdir()
    (inputs / "copy.json").write_bytes((MIRROR / "2026-07-28" / "schema.json").read_bytes())
    changed = _with_xyz_and_without_ping(
        json.loads((MIRROR / "2025-11-25" / "schema.json").read_bytes())
    )
    (inputs / "changed.json").write_text(json.dumps(changed, indent=2), encoding="utf-8")
    responses = _with_result_responses(
        json.loads((MIRROR / "2025-11-25" / "schema.json").read_bytes())
    )
    (inputs / "responses.json").write_text(json.dumps(responses, indent=2), encoding="utf-8")
    tasks = _with_tasks(
        json.loads((MIRROR / "2026-07-28" / "schema.json").read_bytes()),
        json.loads((MIRROR / "2025-11-25" / "schema.json").read_bytes()),
    )
    (inputs / "tasks.json").write_text(json.dumps(tasks, indent=2), encoding="utf-8")

    out = _invoke("--root", root, "add", COPY, "--from", inputs / "copy.json")
    assert out.startswith(f"{COPY}: pinned (modern era, ")
    out = _invoke("--root", root, "add", RESPONSES, "--from", inputs / "responses.json")
    assert out.startswith(f"{RESPONSES}: pinned (legacy era, ")
    out = _invoke("--root", root, "add", TASKS, "--from", inputs / "tasks.json")
    assert out.startswith(f"{TASKS}: pinned (modern era, ")
    out = _invoke("--root", root, "add", CHANGED, "--from", inputs / "changed.json")
    assert out.startswith(f"{CHANGED}: pinned (legacy era, ")
    out = _invoke("--root", root, "generate")
    assert out.splitlines()[-1].startswith("generated ")
    yield root


def test_add_pinned_both_revisions_without_an_era_override(project: Path) -> None:
    pins = Project(project).pins()
    assert list(pins) == [*REVISIONS, COPY, RESPONSES, TASKS, CHANGED]
    assert pins[COPY].sha256 == PROJECT.pins()["2026-07-28"].sha256
    for rev in (COPY, RESPONSES, TASKS, CHANGED):
        assert pins[rev].era is None
        assert (project / "schema" / rev / "schema.json").is_file()
        module = project / "generated" / "mcp_wire" / ("v" + rev.replace("-", "_"))
        assert {"__init__.py", "models.py"} <= {p.name for p in module.iterdir()}


@pytest.fixture(scope="module")
def copy_ir(project: Path) -> Revision:
    """The IR of 2027-01-01, a byte copy of the 2026-07-28 schema."""
    tmp = Project(project)
    return load_revision(tmp, tmp.pins()[COPY])[0]


@pytest.fixture(scope="module")
def changed_ir(project: Path) -> Revision:
    """The IR of 2027-02-02: 2025-11-25 with `xyz/do` and without `ping`."""
    tmp = Project(project)
    return load_revision(tmp, tmp.pins()[CHANGED])[0]


def test_a_byte_copy_of_a_modern_schema_is_a_modern_revision(copy_ir: Revision) -> None:
    assert copy_ir.era is Era.MODERN and copy_ir.derived_era is Era.MODERN


def test_a_byte_copy_has_its_original_s_methods(copy_ir: Revision) -> None:
    latest = revision_ir("2026-07-28")
    assert [(m.name, m.kind, m.direction, m.results) for m in copy_ir.methods] == [
        (m.name, m.kind, m.direction, m.results) for m in latest.methods
    ]


def test_a_changed_legacy_schema_is_a_legacy_revision(changed_ir: Revision) -> None:
    assert changed_ir.era is Era.LEGACY and changed_ir.derived_era is Era.LEGACY


def test_a_method_removed_from_the_schema_is_gone_from_the_ir(changed_ir: Revision) -> None:
    assert revision_ir("2025-11-25").method("ping") is not None
    assert changed_ir.method("ping") is None
    assert "PingRequest" not in changed_ir.definitions


def test_a_method_added_to_the_schema_is_in_the_ir_with_its_types(changed_ir: Revision) -> None:
    xyz = changed_ir.method("xyz/do")
    assert xyz is not None
    assert (xyz.kind, xyz.direction, xyz.message) == (
        Kind.REQUEST,
        Direction.CLIENT_TO_SERVER,
        "XyzRequest",
    )
    assert (xyz.params, xyz.params_required, xyz.results, xyz.result) == (
        "XyzRequestParams",
        True,
        ("XyzResult",),
        "XyzResult",
    )
    assert xyz.results_in_union


def test_the_changed_revision_has_its_base_s_methods_without_ping_and_with_xyz(
    changed_ir: Revision,
) -> None:
    base = revision_ir("2025-11-25")
    assert {m.name for m in changed_ir.methods} == {m.name for m in base.methods} - {"ping"} | {
        "xyz/do"
    }


def test_ir_of_the_revision_with_response_types(project: Path) -> None:
    tmp = Project(project)
    rev = load_revision(tmp, tmp.pins()[RESPONSES])[0]
    base = revision_ir("2025-11-25")
    assert rev.era is Era.LEGACY
    # The generic result response is still JSONRPCResultResponse, not a shorter-named one
    # whose result is a union (ElicitResultResponse).
    assert rev.frames == base.frames
    shape = {m.name: (m.results, m.result, m.result_link, m.task_result) for m in rev.methods}
    assert shape["tools/call"] == (
        ("CallToolResult",),
        "CallToolResult",
        "response",
        "CreateTaskResult",
    )
    # A task result the response definition lists is the task result, not the final result.
    assert shape["elicitation/create"] == (
        ("ElicitResult", "CreateTaskResult"),
        "ElicitResult",
        "response",
        "CreateTaskResult",
    )
    assert shape["sampling/createMessage"] == (
        ("CreateMessageResult",),
        "CreateMessageResult",
        "name",
        "CreateTaskResult",
    )
    assert shape["ping"] == (("EmptyResult",), "EmptyResult", "response", None)
    assert [m.name for m in rev.methods] == [m.name for m in base.methods]
    for m in base.methods:
        own = rev.method(m.name)
        assert own is not None
        assert (own.result, own.task_result, own.cacheable, own.list_field) == (
            m.result,
            m.task_result,
            m.cacheable,
            m.list_field,
        ), m.name


def test_ir_of_the_modern_revision_with_tasks(project: Path) -> None:
    tmp = Project(project)
    rev = load_revision(tmp, tmp.pins()[TASKS])[0]
    assert rev.era is Era.MODERN
    call = rev.method("tools/call")
    assert call is not None
    assert (call.results, call.result, call.task_result, call.interim_results) == (
        ("InputRequiredResult", "CallToolResult"),
        "CallToolResult",
        "CreateTaskResult",
        ("InputRequiredResult",),
    )
    latest = revision_ir("2026-07-28")
    assert rev.frames == latest.frames and rev.result_types == latest.result_types
    assert [m.name for m in rev.methods if m.task_result] == ["tools/call"]


def test_diff_reports_the_added_and_removed_methods(project: Path) -> None:
    out = _invoke("--root", project, "diff", "2025-11-25", CHANGED)
    assert out.startswith(f"# MCP schema changes: 2025-11-25 -> {CHANGED}\n")
    added = out[out.index("## Methods added") : out.index("## Methods removed")]
    removed = out[out.index("## Methods removed") :].split("\n## ")[0]
    assert "`xyz/do`" in added and "`ping`" not in added
    assert "`ping`" in removed and "`xyz/do`" not in removed
    assert "`XyzRequest`" in out and "`PingRequest`" in out


IMPORT_CHECK = textwrap.dedent("""
    import importlib, json, sys
    from pathlib import Path

    root = Path(sys.argv[1])
    expected = json.loads(sys.argv[2])

    import mcp_wire
    from pydantic import ValidationError

    assert Path(mcp_wire.__file__).resolve().is_relative_to(root), mcp_wire.__file__
    assert list(mcp_wire.REVISIONS) == list(expected["eras"]), mcp_wire.REVISIONS
    assert mcp_wire.ERAS == expected["eras"], mcp_wire.ERAS
    assert mcp_wire.SHA256 == expected["sha256"]
    assert mcp_wire.LATEST == "2027-02-02"

    # Generic: every revision's package and all its generated modules import, and agree with
    # the registry and the IR (message, params and result models exist; tables, if generated,
    # list exactly the IR's methods with their directions).
    for rev, era in expected["eras"].items():
        pkg = mcp_wire.revision(rev)
        assert Path(pkg.__file__).resolve().is_relative_to(root)
        assert (pkg.REVISION, pkg.ERA, pkg.SHA256) == (rev, era, expected["sha256"][rev])
        for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
            importlib.import_module(f"{pkg.__name__}.{path.stem}")
        models = importlib.import_module(f"{pkg.__name__}.models")
        methods = expected["methods"][rev]
        for name, (direction, message, params, results) in methods.items():
            for cls in (message, params, *results):
                assert cls is None or hasattr(models, cls), (rev, name, cls)
        dispatch = sys.modules.get(f"{pkg.__name__}.dispatch")
        if dispatch is not None and hasattr(dispatch, "METHODS"):
            assert set(dispatch.METHODS) == set(methods), rev
            for name, spec in dispatch.METHODS.items():
                assert str(spec.direction) == methods[name][0], (rev, name)

    from mcp_wire.v2027_01_01 import CallToolRequest
    from mcp_wire.v2027_02_02 import XyzRequest, XyzRequestParams, XyzResult
    import mcp_wire.v2027_02_02 as changed

    raw = '{"jsonrpc":"2.0","id":7,"method":"xyz/do","params":{"target":"t","times":2}}'
    req = XyzRequest.model_validate_json(raw)
    assert isinstance(req.params, XyzRequestParams)
    assert (req.method, req.params.target, req.params.times, req.id) == ("xyz/do", "t", 2, 7)
    assert json.loads(req.model_dump_json(exclude_unset=True)) == json.loads(raw)
    for bad in (
        '{"jsonrpc":"2.0","id":7,"method":"xyz/other","params":{"target":"t"}}',
        '{"jsonrpc":"2.0","id":7,"method":"xyz/do","params":{"times":2}}',
        '{"jsonrpc":"2.0","id":7,"method":"xyz/do"}',
    ):
        try:
            XyzRequest.model_validate_json(bad)
        except ValidationError:
            pass
        else:
            raise AssertionError(f"accepted {bad}")
    res = XyzResult.model_validate({"done": True, "log": ["a"], "_meta": {"k": 1}})
    assert res.done is True and res.log == ["a"]
    assert not hasattr(changed, "PingRequest")
    assert hasattr(mcp_wire.v2025_11_25, "PingRequest")
    assert not hasattr(mcp_wire.v2025_11_25, "XyzRequest")
    assert CallToolRequest.__module__ == "mcp_wire.v2027_01_01.models"

    # 2027-01-15: response types of the schema's own, tasks that may answer CreateTaskResult.
    import mcp_wire.v2027_01_15 as rm
    from mcp_wire.v2027_01_15 import codec as rc

    codec = mcp_wire.codec("2027-01-15")
    task = {"task": {"taskId": "t1", "status": "working", "ttl": 60000,
                     "createdAt": "2027-01-15T00:00:00Z", "lastUpdatedAt": "2027-01-15T00:00:00Z"}}
    call = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    cases = [
        # tools/call: the schema's response names CallToolResult only; the codec's frame widens
        # `result`, so it is a class of its own, not the schema's.
        ("tools/call", call, rc.CallToolResultResponse, rm.CallToolResult),
        ("tools/call", task, rc.CallToolResultResponse, rm.CreateTaskResult),
        # elicitation/create: the schema's response names CreateTaskResult itself: used as is.
        ("elicitation/create", {"action": "accept"}, rm.ElicitResultResponse, rm.ElicitResult),
        ("elicitation/create", task, rm.ElicitResultResponse, rm.CreateTaskResult),
        # sampling/createMessage: no response definition: the codec's own, as in 2025-11-25.
        ("sampling/createMessage", task, rc.CreateMessageResultResponse, rm.CreateTaskResult),
        ("tools/list", {"tools": []}, rm.ListToolsResultResponse, rm.ListToolsResult),
    ]
    assert not issubclass(rc.CallToolResultResponse, rm.CallToolResultResponse)
    assert "CreateTaskResult" in (rc.CallToolResultResponse.__doc__ or "")
    for method, result, frame, result_class in cases:
        raw = json.dumps({"jsonrpc": "2.0", "id": 3, "result": result})
        msg = codec.decode_response(raw, method)
        assert codec.responses[method] is frame, method
        assert type(msg) is frame and type(msg.result) is result_class, (method, msg)
        assert json.loads(codec.encode(msg)) == json.loads(raw), method
        built = codec.response(3, method, result)
        assert type(built) is frame and codec.encode(built) == codec.encode(msg), method
        assert codec.decode(raw).__class__ is rm.JSONRPCResultResponse  # method unknown here
    bad = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"task": {"taskId": "t1"}}})
    for method in ("tools/call", "elicitation/create"):
        try:
            codec.decode_response(bad, method)
        except mcp_wire.ProtocolError as exc:
            assert exc.code in (-32600, -32602), exc
        else:
            raise AssertionError(f"accepted {bad} for {method}")
    ping = codec.decode_response('{"jsonrpc":"2.0","id":"p","result":{}}', "ping")
    assert type(ping) is rm.PingResultResponse and codec.responses["ping"] is rm.PingResultResponse
    assert codec.result_response is rm.JSONRPCResultResponse

    # 2027-01-20: modern, results tagged by resultType, and tools/call may answer a task.
    import mcp_wire.v2027_01_20 as tm
    from mcp_wire.v2027_01_20 import codec as tc

    codec = mcp_wire.codec("2027-01-20")
    import warnings

    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        extended = codec.with_result_types("task")
    assert [w.category for w in told] == [DeprecationWarning]
    assert not issubclass(tc.CallToolResultResponse, tm.CallToolResultResponse)
    for result, result_class, codecs in (
        ({**call, "resultType": "complete"}, tm.CallToolResult, (codec, extended)),
        ({**task, "resultType": "complete"}, tm.CreateTaskResult, (codec, extended)),
        ({**task, "resultType": "task"}, tm.CreateTaskResult, (extended,)),
        ({"resultType": "input_required", "requestState": "s"}, tm.InputRequiredResult,
         (codec, extended)),
    ):  # fmt: skip
        raw = json.dumps({"jsonrpc": "2.0", "id": 5, "result": result})
        for c in codecs:
            msg = c.decode_response(raw, "tools/call")
            assert type(msg) is tc.CallToolResultResponse, msg
            assert type(msg.result) is result_class, (result, msg)
            assert json.loads(c.encode(msg)) == json.loads(raw)
        if codecs == (extended,):
            try:
                codec.decode_response(raw, "tools/call")
            except mcp_wire.ProtocolError as exc:
                assert exc.code == -32600 and "resultType" in exc.message, exc
            else:
                raise AssertionError(f"accepted {raw} without the extension")
    print("ok")
    """)


def test_generated_package_imports_and_validates(project: Path) -> None:
    tmp = Project(project)
    pins = tmp.pins()
    irs = {rev: load_revision(tmp, pin)[0] for rev, pin in pins.items()}
    expected = {
        "eras": {rev: str(ir.era) for rev, ir in irs.items()},
        "sha256": {rev: pin.sha256 for rev, pin in pins.items()},
        "methods": {
            rev: {
                m.name: [str(m.direction), m.message, m.params, list(m.results)] for m in ir.methods
            }
            for rev, ir in irs.items()
        },
    }
    assert expected["eras"][COPY] == "modern" and expected["eras"][CHANGED] == "legacy"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(project / "generated"), str(RUNTIME)])
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK, str(project / "generated"), json.dumps(expected)],
        capture_output=True, text=True, env=env, cwd=project, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip() == "ok"


RESPONSES_CONSUMER = textwrap.dedent("""
    from typing import assert_type

    import mcp_wire
    from mcp_wire.v2027_01_15 import models as m
    from mcp_wire.v2027_01_15.codec import CallToolResultResponse, CreateMessageResultResponse
    from mcp_wire.v2027_01_20 import models as tm
    from mcp_wire.v2027_01_20.codec import CallToolResultResponse as TaskCallResponse

    codec = mcp_wire.codec("2027-01-15")
    tasks = mcp_wire.codec("2027-01-20")


    def read(raw: bytes) -> None:
        call = codec.decode_response(raw, "tools/call")
        if isinstance(call, CallToolResultResponse):
            assert_type(call.result, m.CallToolResult | m.CreateTaskResult)
        elicit = codec.decode_response(raw, "elicitation/create")
        if isinstance(elicit, m.ElicitResultResponse):
            assert_type(elicit.result, m.ElicitResult | m.CreateTaskResult)
        sample = codec.decode_response(raw, "sampling/createMessage")
        if isinstance(sample, CreateMessageResultResponse):
            assert_type(sample.result, m.CreateMessageResult | m.CreateTaskResult)
        tools = codec.decode_response(raw, "tools/list")
        if isinstance(tools, m.ListToolsResultResponse):
            assert_type(tools.result, m.ListToolsResult)
        modern = tasks.decode_response(raw, "tools/call")
        if isinstance(modern, TaskCallResponse):
            assert_type(modern.result, tm.InputRequiredResult | tm.CallToolResult | tm.CreateTaskResult)
    """)


def test_pyright_is_clean_on_the_generated_tree(project: Path) -> None:
    config = {
        "include": ["generated"],
        # mcp_wire resolves to this tree, not the checkout's; mcpio to the checkout's runtime.
        "extraPaths": ["generated", str(RUNTIME)],
        "pythonVersion": "3.11",
        "typeCheckingMode": "standard",
        "venvPath": str(BIN.parent.parent),
        "venv": BIN.parent.name,
    }
    (project / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    # A consumer of 2027-01-15's responses: the codec's frames are typed as they decode.
    (project / "generated" / "consumer_of_responses.py").write_text(RESPONSES_CONSUMER)
    proc = subprocess.run(
        [str(BIN / "pyright"), "--outputjson", "-p", str(project / "pyrightconfig.json")],
        capture_output=True, text=True, cwd=project, timeout=600, check=False,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert errors == [], errors[:5]
    assert report["summary"]["errorCount"] == 0
    assert proc.returncode == 0, proc.stderr
    py_files = list((project / "generated").rglob("*.py"))
    assert len(py_files) >= 2 * (len(REVISIONS) + 2)
    assert report["summary"]["filesAnalyzed"] == len(py_files)


# ---------------------------------------------------------------------- the runtime on a new revision
#
# The five official revisions with two extensions built on 2026-07-28 (the Tasks extension and a
# small one of our own, `ping`), then `add` of
# - 2025-12-01: 2025-11-25 as it is (a legacy revision between the eras: no extension applies),
# - 2027-01-01: 2026-07-28 with new optional members on `Tool` and `Implementation`, which the
#   Tasks extension repeats and uses (re-based) and `ping` does not use (carried),
# - 2027-03-01: 2026-07-28 with a narrower `Result.resultType` (no "task"), which both
#   extensions use (skipped, with a warning each),
# and one `generate`.

LEGACY_NEXT, MODERN_NEXT, NARROWER = "2025-12-01", "2027-01-01", "2027-03-01"
TASKS_ID, PING_ID = "io.modelcontextprotocol/tasks", "example.com/ping"

RUNTIME_CHECK = textwrap.dedent("""
    import json, os, subprocess, sys

    import anyio
    import mcp_wire
    from mcpio import Client
    from mcpio.latest import REVISION
    from mcpio.tasks._client import TaskHandle

    SERVER = [sys.executable, sys.argv[1]]
    PORT = int(sys.argv[2])
    TASKS = "io.modelcontextprotocol/tasks"


    async def ours(target: object, transport: str, **options: object) -> dict[str, list[object]]:
        seen: dict[str, list[object]] = {}
        for mode in ("auto", "legacy", *mcp_wire.REVISIONS):
            async with Client(target, mode=mode, tasks=True, **options) as client:
                tools = await client.list_tools()
                call = await client.call_tool("test_simple_text", {})
                names = {t.name for t in tools.tools}
                answer = await client.start_tool("slow_compute", {"seconds": 0.05, "label": "x"})
                is_task = isinstance(answer, TaskHandle)
                result = await answer.result() if is_task else answer
                offered = None  # what server/discover says in this revision (modern only)
                if client.codec.era == "modern":
                    caps = (await client.request("server/discover")).capabilities
                    offered = TASKS in (caps.extensions or {})
                seen[f"{transport} {mode}"] = [
                    client.codec.revision, "test_simple_text" in names, call.content[0].text,
                    is_task, result.content[0].text, offered,
                ]
        return seen


    async def sdk() -> dict[str, list[object]]:
        from mcp import Client as SdkClient, StdioServerParameters

        params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], "stdio"], env=dict(os.environ))
        seen: dict[str, list[object]] = {}
        for mode in ("auto", "legacy"):
            async with SdkClient(params, mode=mode) as client:
                call = await client.call_tool("test_simple_text", {})
                seen["sdk " + mode] = [client.protocol_version, call.content[0].text]
        return seen


    async def main() -> None:
        http = subprocess.Popen([*SERVER, "http", "--port", str(PORT)], stderr=subprocess.PIPE)
        try:
            assert http.stderr is not None
            http.stderr.readline()  # the endpoint's URL, once listening
            with anyio.fail_after(240):
                seen = {"latest": [REVISION, mcp_wire.LATEST], "fits": mcp_wire.EXTENSION_FITS,
                        "extensions": mcp_wire.EXTENSIONS}
                # a stdio server inherits an allow-list of the environment: the tree is added
                tree = {"PYTHONPATH": os.environ["PYTHONPATH"]}
                seen |= await ours([*SERVER, "stdio"], "stdio", env=tree)
                seen |= await ours(f"http://127.0.0.1:{PORT}/mcp", "http")
                seen |= await sdk()
            print(json.dumps(seen))
        finally:
            http.terminate()
            http.wait(10)


    anyio.run(main)
    """)


def _with_generation(schema: dict) -> dict:
    """A newer revision's small changes: `Implementation` gains an optional `generation`, `Tool`
    an optional `color`."""
    implementation = schema["$defs"]["Implementation"]
    assert "generation" not in implementation["properties"]
    implementation["properties"]["generation"] = {"type": "integer", "minimum": 0}
    assert "color" not in schema["$defs"]["Tool"]["properties"]
    schema["$defs"]["Tool"]["properties"]["color"] = {"type": "string"}
    return schema


def _with_narrower_result_type(schema: dict) -> dict:
    """A change that breaks the extensions' own results: `resultType` may no longer be "task"."""
    result_type = schema["$defs"]["Result"]["properties"]["resultType"]
    assert "enum" not in result_type
    result_type["enum"] = ["complete", "input_required"]
    return schema


def _ping_extension() -> dict:
    """A small extension of our own built on 2026-07-28: one request and its result, repeating
    the core definitions they use, and `Tool`, which nothing of its own uses."""
    core = json.loads((MIRROR / "2026-07-28" / "schema.json").read_bytes())["$defs"]
    names = ("JSONRPCRequest", "RequestId", "Result", "ResultMetaObject", "MetaObject", "Tool")
    defs = {n: core[n] for n in names}
    for name in ("ToolAnnotations", "Icon", "JSONObject", "JSONValue"):
        defs[name] = core[name]  # what Tool refers to
    defs["PingPongRequest"] = {
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
    }
    defs["PingPongResult"] = {
        "allOf": [
            {"$ref": "#/$defs/Result"},
            {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        ]
    }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def _pin_extensions(root: Path) -> None:
    """The Tasks extension (from the mirror) and `ping`, both built on 2026-07-28."""
    tables = []
    for name, ext_id, data in (
        ("tasks", TASKS_ID, (SHARED / "mcp-spec" / "ext" / "tasks" / "schema.json").read_bytes()),
        ("ping", PING_ID, json.dumps(_ping_extension(), indent=1).encode()),
    ):
        target = root / "schema" / "ext" / name / "schema.json"
        target.parent.mkdir(parents=True)
        target.write_bytes(data)
        methods = '["tools/call"]' if name == "tasks" else "[]"
        tables.append(
            f'["{ext_id}"]\nname = "{name}"\nsha256 = "{hashlib.sha256(data).hexdigest()}"\n'
            f'built_on = ["2026-07-28"]\ntask_methods = {methods}\n'
        )
    (root / "schema" / "extensions.toml").write_text("\n".join(tables), encoding="utf-8")


def _run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def runtime_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Result]]:
    """The project described above, and what `add` and `generate` printed."""
    root = _official_project(tmp_path_factory.mktemp("runtime-on-new-revisions"))
    _pin_extensions(root)
    newer = _with_generation(json.loads((MIRROR / "2026-07-28" / "schema.json").read_bytes()))
    (root / "newer.json").write_text(json.dumps(newer, indent=2), encoding="utf-8")
    narrower = _with_narrower_result_type(
        json.loads((MIRROR / "2026-07-28" / "schema.json").read_bytes())
    )
    (root / "narrower.json").write_text(json.dumps(narrower, indent=2), encoding="utf-8")
    said = {
        LEGACY_NEXT: _run(
            "--root", root, "add", LEGACY_NEXT, "--from", MIRROR / "2025-11-25" / "schema.json"
        ),
        MODERN_NEXT: _run("--root", root, "add", MODERN_NEXT, "--from", root / "newer.json"),
        NARROWER: _run("--root", root, "add", NARROWER, "--from", root / "narrower.json"),
        "generate": _run("--root", root, "generate"),
    }
    for result in said.values():
        assert result.exit_code == 0, result.output
    return root, said


RE_BASED = (
    f"{TASKS_ID} on {MODERN_NEXT}: re-based from 2026-07-28 onto the widened Implementation, Tool "
    f"of {MODERN_NEXT}"
)
CARRIED = (
    f"{PING_ID} on {MODERN_NEXT}: carried from 2026-07-28 (the core definitions it uses are "
    "unchanged)"
)


def _skipped(ext_id: str, used_by: str) -> str:
    return (
        f"{ext_id} on {NARROWER}: skipped (Result (at /properties/resultType/enum, used by its "
        f"{used_by}) accepts less in {NARROWER})"
    )


WARNINGS = [
    f"mcp-codegen: warning: {_skipped(PING_ID, 'PingPongResult')}",
    f"mcp-codegen: warning: {_skipped(TASKS_ID, 'CancelTaskResult')}",
]


def test_add_of_a_legacy_revision_says_the_extensions_do_not_apply(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    _, said = runtime_project
    assert said[LEGACY_NEXT].stdout.startswith(f"{LEGACY_NEXT}: pinned (legacy era, ")
    assert said[LEGACY_NEXT].stderr == ""
    assert said[LEGACY_NEXT].stdout.splitlines()[-2:] == [
        f"{PING_ID} on {LEGACY_NEXT}: not applicable (older than 2026-07-28)",
        f"{TASKS_ID} on {LEGACY_NEXT}: not applicable (older than 2026-07-28)",
    ]  # by id, as extensions.toml is read


def test_add_of_a_modern_revision_says_which_extension_is_re_based_and_which_carried(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    _, said = runtime_project
    added = said[MODERN_NEXT].stdout.splitlines()
    assert added[0].startswith(f"{MODERN_NEXT}: pinned (modern era, ")
    assert RE_BASED in added and CARRIED in added
    assert said[MODERN_NEXT].stderr == ""


def test_add_of_a_narrower_revision_warns_that_the_extensions_are_skipped(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    _, said = runtime_project
    assert said[NARROWER].stderr.splitlines() == WARNINGS


def test_generate_warns_again_of_the_skipped_extensions(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    _, said = runtime_project
    assert said["generate"].stderr.splitlines() == WARNINGS


def test_generate_says_how_each_extension_fits(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    _, said = runtime_project
    lines = [line.strip() for line in said["generate"].stdout.splitlines()]
    assert RE_BASED in lines and CARRIED in lines
    assert f"{MODERN_NEXT}: extension {TASKS_ID} (re-based)" in lines
    assert f"{MODERN_NEXT}: extension {PING_ID} (carried)" in lines
    assert not any(line.startswith(f"{NARROWER}: extension") for line in lines)


def test_list_and_diff_show_the_fits(runtime_project: tuple[Path, dict[str, Result]]) -> None:
    root, _ = runtime_project
    listed = _run("--root", root, "list")
    assert listed.exit_code == 0, listed.output
    out = listed.stdout
    tasks = out[out.index(TASKS_ID) :].splitlines()
    assert tasks[0].split()[:5] == [TASKS_ID, "extension", "built", "on", "2026-07-28"]
    assert tasks[1].strip() == RE_BASED.split(": ", 1)[0].replace(f"{TASKS_ID} on ", "") + ": " + (
        RE_BASED.split(": ", 1)[1]
    )
    assert (
        tasks[2].strip()
        == f"{NARROWER}: " + _skipped(TASKS_ID, "CancelTaskResult").split(": ", 1)[1]
    )
    diff = _run("--root", root, "diff", "2026-07-28", MODERN_NEXT)
    assert diff.exit_code == 0, diff.output
    section = diff.stdout[diff.stdout.index("## Extensions") :].splitlines()[1:]
    assert section == [
        f"- {PING_ID} on 2026-07-28: pinned",
        f"- {CARRIED}",
        f"- {TASKS_ID} on 2026-07-28: pinned",
        f"- {RE_BASED}",
    ]


def test_check_fails_when_a_fit_changed_without_regeneration(
    runtime_project: tuple[Path, dict[str, Result]], tmp_path: Path
) -> None:
    """`ping` re-pinned so that its result uses `Tool`: on 2027-01-01 it is then re-based, not
    carried, and `check` says generated/ is stale until `generate` runs."""
    root = tmp_path / "copy"
    shutil.copytree(runtime_project[0], root, ignore=shutil.ignore_patterns("__pycache__"))
    ping = _ping_extension()
    ping["$defs"]["PingPongResult"]["allOf"][1]["properties"]["tool"] = {"$ref": "#/$defs/Tool"}
    data = json.dumps(ping, indent=1).encode()
    (root / "schema" / "ext" / "ping" / "schema.json").write_bytes(data)
    pins = root / "schema" / "extensions.toml"
    old_sha = hashlib.sha256(json.dumps(_ping_extension(), indent=1).encode()).hexdigest()
    text = pins.read_text(encoding="utf-8")
    assert old_sha in text
    pins.write_text(text.replace(old_sha, hashlib.sha256(data).hexdigest()), encoding="utf-8")

    stale = _run("--root", root, "check")
    assert stale.exit_code == 1
    assert "generated/ is stale" in stale.stderr
    assert f"re-based from 2026-07-28 onto the widened Tool of {MODERN_NEXT}" in stale.stdout
    assert _run("--root", root, "generate").exit_code == 0
    assert _run("--root", root, "check").exit_code == 0


EXTENSION_CHECK = textwrap.dedent("""
    import json
    import mcp_wire

    TASKS = "io.modelcontextprotocol/tasks"
    seen = {}
    # 2027-01-01, re-based: the extension's messages round-trip, over the new revision's Tool.
    codec = mcp_wire.codec("2027-01-01").with_extensions(TASKS)
    from mcp_wire.v2027_01_01.ext.tasks import models as tm
    from mcp_wire.v2027_01_01 import models as core
    assert tm.Tool is core.Tool and "color" in core.Tool.model_fields
    task = {"taskId": "t1", "status": "working", "createdAt": "2027-01-01T00:00:00Z",
            "lastUpdatedAt": "2027-01-01T00:00:00Z", "ttlMs": 60000, "resultType": "task"}
    frames = [
        {"jsonrpc": "2.0", "id": 1, "result": task},
        {"jsonrpc": "2.0", "id": 2, "result": {**task, "status": "completed", "resultType": "complete",
         "result": {"content": [{"type": "text", "text": "hi"}], "resultType": "complete"}}},
    ]
    for frame, method in zip(frames, ("tools/call", "tasks/get")):
        raw = json.dumps(frame)
        decoded = codec.decode_response(raw, method)
        assert json.loads(codec.encode(decoded)) == frame, (method, codec.encode(decoded))
    get = {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t1", "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2027-01-01",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}}}
    assert json.loads(codec.encode(codec.decode(json.dumps(get)))) == get
    seen["tasks on 2027-01-01"] = type(codec).__name__
    ping = mcp_wire.codec("2027-01-01").with_extensions("example.com/ping")
    pong = ping.decode_response('{"jsonrpc":"2.0","id":4,"result":{"n":2,"resultType":"complete"}}', "ping/pong")
    seen["ping on 2027-01-01"] = pong.result.n
    # 2027-03-01, skipped: no codec with either extension, and its core codec reads no task.
    for ext in (TASKS, "example.com/ping"):
        try:
            mcp_wire.codec("2027-03-01").with_extensions(ext)
        except LookupError as exc:
            seen[f"{ext} on 2027-03-01"] = str(exc)
    try:
        mcp_wire.codec("2027-03-01").decode_response(json.dumps(frames[0]), "tools/call")
    except mcp_wire.ProtocolError as exc:
        seen["task result on 2027-03-01"] = exc.code
    print(json.dumps(seen))
    """)


def _tree_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(root / "generated"), str(RUNTIME)])
    return env


def test_the_extensions_on_the_new_revisions(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    root, _ = runtime_project
    proc = subprocess.run(
        [sys.executable, "-c", EXTENSION_CHECK],
        capture_output=True, text=True, env=_tree_env(root), cwd=root, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen.pop("tasks on 2027-01-01") == "Codec2027_01_01Tasks"
    assert seen.pop("ping on 2027-01-01") == 2
    assert seen.pop("task result on 2027-03-01") in (-32600, -32602)
    for ext in (TASKS_ID, PING_ID):
        assert seen.pop(f"{ext} on 2027-03-01").startswith(
            f"unknown extension '{ext}' for revision {NARROWER}"
        )
    assert seen == {}


def test_pyright_is_clean_on_the_tree_with_extensions(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    root, _ = runtime_project
    config = {"include": ["generated"], "extraPaths": ["generated", str(RUNTIME)],
              "pythonVersion": "3.11", "venvPath": str(ROOT), "venv": ".venv"}  # fmt: skip
    (root / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run(
        [str(BIN / "pyright"), "--outputjson", "-p", str(root / "pyrightconfig.json")],
        capture_output=True, text=True, cwd=root, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:]
    summary = json.loads(proc.stdout)["summary"]
    assert summary["errorCount"] == 0
    extension_modules = list((root / "generated" / "mcp_wire").glob("v*/ext/*/*.py"))
    assert len(extension_modules) == 16  # tasks and ping on 2026-07-28 and 2027-01-01
    assert summary["filesAnalyzed"] > len(extension_modules)


@pytest.mark.peers
def test_the_runtime_serves_and_calls_the_new_revisions_with_no_hand_edit(
    runtime_project: tuple[Path, dict[str, Result]],
) -> None:
    """The checkout's example server and `Client` (and the official SDK's client) on the
    temporary tree, over stdio and HTTP: the newest modern revision is the public one, auto
    picks it, and every pinned mode connects. A task-capable tool runs as a task where the
    revision has tasks (2025-11-25's own, or the Tasks extension, re-based on 2027-01-01) and as
    a plain call where the extension was skipped (2027-03-01) or never was."""
    root, _ = runtime_project
    server = ROOT / "examples" / "everything_server.py"
    proc = subprocess.run(
        [sys.executable, "-c", RUNTIME_CHECK, str(server), str(free_port())],
        capture_output=True, text=True, env=_tree_env(root), cwd=root, timeout=400, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    text = "This is a simple text response for testing."
    assert seen.pop("latest") == [NARROWER, NARROWER]
    assert seen.pop("extensions") == {
        TASKS_ID: ["2026-07-28", MODERN_NEXT],
        PING_ID: ["2026-07-28", MODERN_NEXT],
    }
    assert seen.pop("fits") == {
        TASKS_ID: {
            "2026-07-28": "pinned",
            MODERN_NEXT: RE_BASED.split(": ", 1)[1],
            NARROWER: _skipped(TASKS_ID, "CancelTaskResult").split(": ", 1)[1],
        },
        PING_ID: {
            "2026-07-28": "pinned",
            MODERN_NEXT: CARRIED.split(": ", 1)[1],
            NARROWER: _skipped(PING_ID, "PingPongResult").split(": ", 1)[1],
        },
    }
    assert seen.pop("sdk auto") == ["2026-07-28", text]  # the SDK's own newest revision
    assert seen.pop("sdk legacy") == ["2025-11-25", text]
    with_tasks = {"2025-11-25", LEGACY_NEXT, "2026-07-28", MODERN_NEXT}
    computed = "computed x after 0.05 s"
    expected = {}
    for transport in ("stdio", "http"):
        for mode in [*REVISIONS, LEGACY_NEXT, MODERN_NEXT, NARROWER]:
            # The server offers the extension (server/discover) where the revision has it.
            offered = mode in ("2026-07-28", MODERN_NEXT) if mode >= "2026" else None
            expected[f"{transport} {mode}"] = [
                mode,
                True,
                text,
                mode in with_tasks,
                computed,
                offered,
            ]
        expected[f"{transport} auto"] = [NARROWER, True, text, False, computed, False]
        expected[f"{transport} legacy"] = [LEGACY_NEXT, True, text, True, computed, None]
    assert seen == expected
