"""Same inputs -> byte-identical output, whatever the order of the schema's objects.

- Two in-memory renders of the real project are byte-identical.
- A project whose schema files list every object's members (definitions, properties, ...) in a
  shuffled order, generated in another process with another hash seed, produces the same files;
  only the header lines naming the inputs' sha256 differ.
- `mcp-codegen check` (what `make check` runs) passes on the repository itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codegen.pins import Pin, render_pins
from codegen.pipeline import render_package
from tests.support import MIRROR, PROJECT, REVISIONS, ROOT, SHARED

pytestmark = pytest.mark.slow

CODEGEN = Path(sys.executable).with_name("mcp-codegen")


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return render_package(PROJECT)


def test_two_renders_are_byte_identical(rendered: dict[str, str]) -> None:
    again = render_package(PROJECT)
    assert list(again) == list(rendered)
    for path, text in rendered.items():
        assert again[path].encode("utf-8") == text.encode("utf-8"), path
    assert {f"v{r.replace('-', '_')}/models.py" for r in REVISIONS} <= rendered.keys()
    assert "v2026_07_28/ext/tasks/models.py" in rendered


def shuffled(node: Any, rng: random.Random) -> Any:
    """The same JSON value with the members of every object in a random order (arrays kept)."""
    if isinstance(node, dict):
        items = list(node.items())
        rng.shuffle(items)
        return {k: shuffled(v, rng) for k, v in items}
    if isinstance(node, list):
        return [shuffled(v, rng) for v in node]
    return node


def _defs(schema: dict) -> dict:
    return schema.get("$defs", schema.get("definitions", {}))


def _without(text: str, needles: set[str]) -> list[str]:
    return [line for line in text.splitlines() if not any(n in line for n in needles)]


@dataclass
class Shuffled:
    """A project whose schemas (revisions and extensions) list every object's members in a
    shuffled order, generated in another process with another hash seed."""

    schemas: dict[str, tuple[Any, Any]]  # revision -> (the official schema, shuffled)
    extensions: dict[str, tuple[Any, Any]]  # extension id -> (the official schema, shuffled)
    pins: dict[str, Pin]  # the project's
    new_pins: dict[str, Pin]  # the shuffled files'
    new_ext_shas: dict[str, str]  # pinned sha256 -> the shuffled file's
    generated: subprocess.CompletedProcess[str]
    produced: dict[str, str]  # path under generated/mcp_wire -> text


@pytest.fixture(scope="module")
def shuffled_project(tmp_path_factory: pytest.TempPathFactory) -> Shuffled:
    tmp_path = tmp_path_factory.mktemp("shuffled")
    rng = random.Random(20260728)
    pins = PROJECT.pins()
    new_pins = {}
    new_ext_shas: dict[str, str] = {}
    schemas: dict[str, tuple[Any, Any]] = {}
    for rev, pin in pins.items():
        original = json.loads((MIRROR / rev / "schema.json").read_bytes())
        schema = shuffled(original, rng)
        schemas[rev] = (original, schema)
        data = json.dumps(schema, indent=1, ensure_ascii=False).encode("utf-8")
        target = tmp_path / "schema" / rev / "schema.json"
        target.parent.mkdir(parents=True)
        target.write_bytes(data)
        sha = hashlib.sha256(data).hexdigest()
        new_pins[rev] = Pin(rev, sha, str(target), pin.era)
    (tmp_path / "schema" / "revisions.toml").write_text(render_pins(new_pins), encoding="utf-8")
    # The extensions too, shuffled the same way.
    ext_pins = PROJECT.extension_pins()
    extensions: dict[str, tuple[Any, Any]] = {}
    tables = []
    for ext_id, ext in ext_pins.items():
        mirrored = SHARED / "mcp-spec" / "ext" / ext.name / "schema.json"
        if not mirrored.is_file():  # not in the shared mirror: the copy `make fetch` brought
            mirrored = ROOT / "schema" / "ext" / ext.name / "schema.json"
        original = json.loads(mirrored.read_bytes())
        schema = shuffled(original, rng)
        extensions[ext_id] = (original, schema)
        data = json.dumps(schema, indent=1, ensure_ascii=False).encode("utf-8")
        target = tmp_path / "schema" / "ext" / ext.name / "schema.json"
        target.parent.mkdir(parents=True)
        target.write_bytes(data)
        sha = hashlib.sha256(data).hexdigest()
        new_ext_shas[ext.sha256] = sha
        tables.append(
            f'["{ext_id}"]\nname = "{ext.name}"\nsha256 = "{sha}"\nsource = "{target}"\n'
            f"built_on = {json.dumps(list(ext.built_on))}\n"
            f"task_methods = {json.dumps(list(ext.task_methods))}\n"
        )
    (tmp_path / "schema" / "extensions.toml").write_text("\n".join(tables), encoding="utf-8")

    env = dict(os.environ, PYTHONHASHSEED="4242")
    env.pop("MCP_SCHEMA_MIRROR", None)
    generated = subprocess.run(
        [str(CODEGEN), "--root", str(tmp_path), "generate"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    pkg = tmp_path / "generated" / "mcp_wire"
    produced = {
        str(p.relative_to(pkg)): p.read_text(encoding="utf-8")
        for p in sorted(pkg.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    return Shuffled(schemas, extensions, pins, new_pins, new_ext_shas, generated, produced)


def test_each_shuffled_schema_is_the_same_json_value_in_another_order(
    shuffled_project: Shuffled,
) -> None:
    for original, schema in shuffled_project.schemas.values():
        assert schema == original  # the same JSON value...
        assert list(_defs(schema)) != list(_defs(original))  # ...in another order
        assert any(
            list(d.get("properties", {})) != list(_defs(original)[n].get("properties", {}))
            for n, d in _defs(schema).items()
        )


def test_each_shuffled_schema_has_another_sha256(shuffled_project: Shuffled) -> None:
    for rev, pin in shuffled_project.new_pins.items():
        assert pin.sha256 != shuffled_project.pins[rev].sha256


def test_each_shuffled_extension_is_the_same_json_value_in_another_order(
    shuffled_project: Shuffled,
) -> None:
    for original, schema in shuffled_project.extensions.values():
        assert schema == original and list(_defs(schema)) != list(_defs(original))


def test_the_shuffled_project_generates(shuffled_project: Shuffled) -> None:
    assert shuffled_project.generated.returncode == 0, shuffled_project.generated.stderr


def test_the_shuffled_project_generates_the_same_files(
    shuffled_project: Shuffled, rendered: dict[str, str]
) -> None:
    assert sorted(shuffled_project.produced) == sorted(rendered)


def test_only_the_lines_naming_the_inputs_by_sha256_differ(
    shuffled_project: Shuffled, rendered: dict[str, str]
) -> None:
    # Header lines name the inputs by sha256 (in full, or its first 12 digits in the registry).
    run = shuffled_project
    shas = {p.sha256 for p in run.pins.values()} | {p.sha256 for p in run.new_pins.values()}
    shas |= run.new_ext_shas.keys() | set(run.new_ext_shas.values())
    needles = shas | {s[:12] for s in shas}
    for path, text in rendered.items():
        assert _without(run.produced[path], needles) == _without(text, needles), path


def test_the_sha256_lines_name_each_project_s_own_inputs(
    shuffled_project: Shuffled, rendered: dict[str, str]
) -> None:
    run = shuffled_project
    for rev, pin in run.new_pins.items():
        module = "v" + rev.replace("-", "_")
        assert pin.sha256 in run.produced[f"{module}/models.py"]
        assert run.pins[rev].sha256 in rendered[f"{module}/models.py"]


def test_make_check_passes_on_the_repository() -> None:
    env = dict(os.environ)
    env.pop("MCP_SCHEMA_MIRROR", None)
    proc = subprocess.run(
        [str(CODEGEN), "check"], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
    assert proc.stdout.startswith("generated/ is up to date (")
    assert proc.stderr == ""
