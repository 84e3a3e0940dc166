"""The `mcp-wire` wheel alone, as a project that wants only the typed models and codecs installs it:
a fresh venv with that wheel and its two dependencies (pydantic, typing-extensions), in which every
revision's codec (and each extension's) builds, encodes and decodes, nothing of `mcpio` exists,
and a consumer's code type-checks under `pyright --strict`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.wheels import installed, run_json

pytestmark = pytest.mark.slow

VERSION = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]  # type: ignore[index]
SAMPLE = ROOT / "tests" / "consumer_types"
PYRIGHT = Path(sys.executable).with_name("pyright")
# pydantic's own dependencies come along, and what the venv starts with; nothing else may
ALLOWED = {"mcp-wire", "pydantic", "pydantic-core", "typing-extensions", "annotated-types",
           "typing-inspection", "pip", "setuptools"}  # fmt: skip

EVERY_REVISION = """
import importlib.metadata, importlib.util, json, sys

import mcp_wire
from mcp_wire_runtime import ProtocolError

report = {}
for revision in mcp_wire.REVISIONS:
    plain = mcp_wire.codec(revision)
    stamp = {"client_capabilities": {}} if mcp_wire.ERAS[revision] == "modern" else {}
    extensions = [e for e, fits in mcp_wire.EXTENSIONS.items() if revision in fits]
    seen = []
    for codec in [plain, *(plain.with_extensions(e) for e in extensions)]:
        call = codec.request("tools/call", {"name": "add", "arguments": {"a": 1}}, id=1, **stamp)
        again = codec.decode(codec.encode(call))
        answer = codec.response(1, "tools/call", {"content": [{"type": "text", "text": "3"}]})
        back = codec.decode_response(codec.encode(answer), "tools/call")
        try:
            codec.decode(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": 5}')
            refused = None
        except ProtocolError as error:
            refused = error.code
        seen.append([again.params.name, again.params.arguments, back.result.content[0].text, refused])
    report[revision] = {"codecs": len(seen), "distinct": [list(x) for x in {json.dumps(s): s for s in seen}.values()]}
print(json.dumps({
    "revisions": report,
    "version": mcp_wire.__version__,
    "absent": {n: importlib.util.find_spec(n) is None for n in ("mcpio", "anyio", "click", "codegen")},
    "installed": sorted(d.metadata["Name"].lower().replace("_", "-") for d in importlib.metadata.distributions()),
}))
"""


@pytest.fixture(scope="module")
def types_wheel(wheels: dict[str, Path]) -> Path:
    """The `mcp-wire` wheel (the session's build, beside the `mcpgen` one)."""
    return wheels["mcp-wire"]


@pytest.fixture(scope="module")
def types_alone(types_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with the types wheel installed (its dependencies from the index); its python."""
    yield installed(tmp_path_factory.mktemp("types-alone"), str(types_wheel))


def test_the_types_wheel_holds_the_generated_types_and_their_runtime_only(
    types_wheel: Path,
) -> None:
    assert types_wheel.name == f"mcp_wire-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(types_wheel) as archive:
        names = set(archive.namelist())
        info = f"mcp_wire-{VERSION}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
    assert {n.split("/")[0] for n in names} == {"mcp_wire", "mcp_wire_runtime", info}
    assert {"mcp_wire/py.typed", "mcp_wire_runtime/py.typed", f"{info}/licenses/LICENSE"} <= names
    assert "mcp_wire/v2026_07_28/ext/tasks/codec.py" in names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    requires = {
        re.split(r"[<>=!~; \[]", line.split(":", 1)[1].strip(), maxsplit=1)[0]
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    }
    assert requires == {"pydantic", "typing-extensions"}


def test_every_revision_and_extension_codec_works_with_nothing_of_mcpio(
    types_alone: Path, tmp_path: Path
) -> None:
    report = run_json(types_alone, tmp_path, "-c", EVERY_REVISION)
    assert report["version"] == VERSION
    assert report["absent"] == {"mcpio": True, "anyio": True, "click": True, "codegen": True}
    assert set(report["installed"]) <= ALLOWED, report["installed"]
    revisions = report["revisions"]
    assert list(revisions) == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
    # every codec of a revision (plain and each extension's) reads and writes the same frames
    for revision, seen in revisions.items():
        assert seen["distinct"] == [["add", {"a": 1}, "3", -32602]], revision
    assert [seen["codecs"] for seen in revisions.values()] == [1, 1, 1, 2, 3]


def test_a_consumer_of_the_types_alone_type_checks_strictly_and_runs(
    types_alone: Path, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [str(PYRIGHT), "--outputjson", "-p", str(SAMPLE), "--pythonpath", str(types_alone)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    diagnostics = report["generalDiagnostics"]
    problems = [d["message"] for d in diagnostics if d["severity"] != "information"]
    assert problems == []
    assert report["summary"]["filesAnalyzed"] == 1
    revealed = [d["message"] for d in diagnostics if d["severity"] == "information"]
    assert revealed == [
        'Type of "modern_codec" is "Codec2026_07_28"',
        'Type of "call" is "CallToolRequest"',
        'Type of "decoded.params.name" is "str"',
        'Type of "legacy_codec" is "Codec2025_11_25"',
        "Type of \"answer.content[0].type\" is \"Literal['text', 'image', 'audio', 'resource_link', 'resource']\"",
    ]
    assert run_json(types_alone, tmp_path, str(SAMPLE / "sample.py")) == {
        "name": "add",
        "revisions": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"],
        "error": -32700,
    }
