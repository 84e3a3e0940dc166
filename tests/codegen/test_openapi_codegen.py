"""`mcp-codegen openapi`: the typed module of an OpenAPI document. It is deterministic, its
header holds the document's sha256, `--check` fails when it is stale; it type-checks under
`pyright --strict`; `register(server, client)` serves each operation as a typed tool, and every
tool of it, for a synthetic document and for real ones (@readme/oas-examples), calls its route on
a local server that checks each request against the document."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from mcpio import Client, Server
from mcpio.openapi import read_document
from tests.support import ROOT, serve_app
from tests.support.openapi_echo import EchoApi, sample
from tests.support.openapi_synthetic import synthetic_document

CODEGEN = Path(sys.executable).with_name("mcp-codegen")
PYRIGHT = Path(sys.executable).with_name("pyright")
REAL = ["3.0/yaml/petstore.yaml", "3.1/yaml/train-travel.yaml", "3.1/json/readme.json"]


def _codegen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CODEGEN), "openapi", *map(str, args)],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip


def _generated(document: Path, out: Path) -> ModuleType:
    done = _codegen(document, "--out", out)
    assert done.returncode == 0, done.stderr
    spec = importlib.util.spec_from_file_location(out.name, out / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def things(tmp_path: Path) -> Path:
    path = tmp_path / "things.json"
    path.write_text(json.dumps(synthetic_document(8)), encoding="utf-8")
    return path


def test_the_module_is_deterministic_and_check_fails_when_stale(
    things: Path, tmp_path: Path
) -> None:
    out = tmp_path / "things_api"
    _generated(things, out)
    first = (out / "__init__.py").read_text(encoding="utf-8")
    sha = hashlib.sha256(things.read_bytes()).hexdigest()
    assert f"# input: OpenAPI document things.json, sha256 {sha}\n" in first
    assert _codegen(things, "--out", out, "--check").returncode == 0
    _generated(things, out)
    assert (out / "__init__.py").read_text(encoding="utf-8") == first
    changed = synthetic_document(12)
    things.write_text(json.dumps(changed), encoding="utf-8")
    stale = _codegen(things, "--out", out, "--check")
    assert stale.returncode == 1 and "is stale" in stale.stderr
    assert (out / "__init__.py").read_text(encoding="utf-8") == first  # --check writes nothing


def test_the_module_has_a_typed_function_per_operation(things: Path, tmp_path: Path) -> None:
    module = _generated(things, tmp_path / "things_api")
    names = [name for name, _, _ in module.OPERATIONS]
    assert names == [
        "listThings0", "createThing0", "getThing0", "deleteThing0",
        "listThings1", "createThing1", "getThing1", "deleteThing1",
    ]  # fmt: skip
    hints = module.get_thing0.__annotations__
    assert hints["return"] is module.Thing0
    assert str(hints["thing_id"]).startswith("typing.Annotated[int, FieldInfo(")
    assert module.list_things1.__annotations__["return"] == list[module.Thing1]
    assert module.create_thing1.__annotations__["body"] is module.Thing1


async def _every_tool(module: ModuleType, document: dict[str, Any]) -> list[Any]:
    """Each tool of the module called once against the echo server: the failures."""
    echo = EchoApi(document)
    failed: list[Any] = []
    async with serve_app(echo) as served, httpx.AsyncClient(base_url=served.url) as http:
        server = Server("typed")
        module.register(server, http)
        assert len(server.tools) == len(module.OPERATIONS)
        async with Client(server) as client:
            for tool in (await client.list_tools()).tools:
                schema = tool.inputSchema.model_dump(by_alias=True, exclude_none=True)
                result = await client.call_tool(tool.name, sample(schema, schema))
                if result.isError:
                    failed.append((tool.name, result.content[0].text[:300]))
    assert len(echo.calls) == len(module.OPERATIONS) - len(failed)
    return failed


@pytest.mark.anyio
async def test_register_serves_every_operation_as_a_typed_tool(
    things: Path, tmp_path: Path
) -> None:
    module = _generated(things, tmp_path / "things_api")
    document = read_document(things)
    assert await _every_tool(module, document) == []
    server = Server("typed")
    module.register(server, httpx.AsyncClient())
    get = server.tools["getThing1"].definition
    assert get.inputSchema.model_dump()["required"] == ["thingId"]  # the document's name
    assert get.outputSchema is not None and get.outputSchema.model_dump()["required"] == [
        "id",
        "name",
    ]


def _pyright_strict(folder: Path) -> list[str]:
    config = {"typeCheckingMode": "strict", "pythonVersion": "3.11"}
    (folder / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    proc = subprocess.run(
        [str(PYRIGHT), "--outputjson", "-p", str(folder), "--pythonpath", sys.executable],
        cwd=folder, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    return [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] != "information"
    ]


@pytest.mark.slow
def test_the_module_passes_pyright_strict(things: Path, tmp_path: Path) -> None:
    _generated(things, tmp_path / "typed" / "things_api")
    assert _pyright_strict(tmp_path / "typed") == []


@pytest.mark.slow
@pytest.mark.peers
@pytest.mark.anyio
async def test_modules_of_real_documents_type_check_and_call_every_route(
    openapi_documents: Path, tmp_path: Path
) -> None:
    for i, name in enumerate(REAL):
        module = _generated(openapi_documents / name, tmp_path / "typed" / f"api{i}")
        assert await _every_tool(module, read_document(openapi_documents / name)) == []
    assert _pyright_strict(tmp_path / "typed") == []
