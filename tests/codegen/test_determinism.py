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


def test_shuffled_definitions_and_properties_give_the_same_output(
    tmp_path: Path, rendered: dict[str, str]
) -> None:
    rng = random.Random(20260728)
    pins = PROJECT.pins()
    new_pins = {}
    new_ext_shas: dict[str, str] = {}  # pinned sha256 -> the shuffled file's
    for rev, pin in pins.items():
        original = json.loads((MIRROR / rev / "schema.json").read_bytes())
        schema = shuffled(original, rng)
        assert schema == original  # the same JSON value...
        assert list(_defs(schema)) != list(_defs(original))  # ...in another order
        assert any(
            list(d.get("properties", {})) != list(_defs(original)[n].get("properties", {}))
            for n, d in _defs(schema).items()
        )
        data = json.dumps(schema, indent=1, ensure_ascii=False).encode("utf-8")
        target = tmp_path / "schema" / rev / "schema.json"
        target.parent.mkdir(parents=True)
        target.write_bytes(data)
        sha = hashlib.sha256(data).hexdigest()
        assert sha != pin.sha256
        new_pins[rev] = Pin(rev, sha, str(target), pin.era)
    (tmp_path / "schema" / "revisions.toml").write_text(render_pins(new_pins), encoding="utf-8")
    # The extensions too, shuffled the same way.
    ext_pins = PROJECT.extension_pins()
    tables = []
    for ext_id, ext in ext_pins.items():
        mirrored = SHARED / "mcp-spec" / "ext" / ext.name / "schema.json"
        if not mirrored.is_file():  # not in the shared mirror: the copy `make fetch` brought
            mirrored = ROOT / "schema" / "ext" / ext.name / "schema.json"
        original = json.loads(mirrored.read_bytes())
        schema = shuffled(original, rng)
        assert schema == original and list(_defs(schema)) != list(_defs(original))
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
    proc = subprocess.run(
        [str(CODEGEN), "--root", str(tmp_path), "generate"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    pkg = tmp_path / "generated" / "mcp_wire"
    produced = {
        str(p.relative_to(pkg)): p.read_text(encoding="utf-8")
        for p in sorted(pkg.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert sorted(produced) == sorted(rendered)

    # Header lines name the inputs by sha256 (in full, or its first 12 digits in the registry).
    shas = {p.sha256 for p in pins.values()} | {p.sha256 for p in new_pins.values()}
    shas |= new_ext_shas.keys() | set(new_ext_shas.values())
    needles = shas | {s[:12] for s in shas}
    for path, text in rendered.items():
        assert _without(produced[path], needles) == _without(text, needles), path
    # Exactly the sha256 lines differ, and they name the new inputs.
    for rev, pin in new_pins.items():
        module = "v" + rev.replace("-", "_")
        assert pin.sha256 in produced[f"{module}/models.py"]
        assert pins[rev].sha256 in rendered[f"{module}/models.py"]


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
