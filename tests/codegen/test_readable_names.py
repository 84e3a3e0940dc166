"""Generated names a reviewer can read (issue 49): union variants named from what tells them
apart, never by position, the same when a schema reorders its unions; an extension's inline
copies of core definitions generated as the core's classes (the Apps models reuse the core's
content models)."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

import mcp_wire
from codegen.core_copies import reuse_core
from codegen.errors import CodegenError
from codegen.naming import variant_names
from codegen.normalize import definitions_of
from mcp_wire.v2025_11_25.ext import apps as legacy_apps
from mcp_wire.v2026_07_28.ext import apps
from tests.support import PROJECT, ROOT
from tests.support.projects import make_project, official, run

GENERATED = ROOT / "generated" / "mcp_wire"
MODERN = "2026-07-28"
# A codec's class carries its revision's date (`Codec2026_07_28`): a name, not a position.
REVISION_SUFFIX = re.compile(r"\d{4}_\d{2}_\d{2}$")


def class_names(package: Path) -> set[str]:
    return {
        node.name
        for path in sorted(package.rglob("*.py"))
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ClassDef)
    }


def class_members(package: Path) -> dict[str, list[str]]:
    """Each class's annotated members: a name moved to another variant shows."""
    return {
        node.name: sorted(
            s.target.id
            for s in node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        )
        for path in sorted(package.rglob("*.py"))
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ClassDef)
    }


def obj(*members: str, required: tuple[str, ...] = (), **consts: str) -> dict[str, Any]:
    props: dict[str, Any] = {m: {"type": "number"} for m in members}
    props |= {k: {"type": "string", "const": v} for k, v in consts.items()}
    return {"type": "object", "properties": props, "required": list(required)}


def test_no_generated_class_name_ends_in_a_number_but_a_revision_date() -> None:
    names = class_names(GENERATED)
    assert "McpUiHostContextContainerDimensionsHeightWidth" in names
    assert sorted(n for n in names if n[-1].isdigit() and not REVISION_SUFFIX.search(n)) == []


def test_variants_are_named_by_their_constant_else_their_own_members() -> None:
    tagged = [obj("a", kind="circle"), obj("a", kind="square"), {"$ref": "#/$defs/Other"}]
    assert variant_names(tagged, "Shape") == {0: "ShapeCircle", 1: "ShapeSquare"}
    sizes = [obj("height", "width"), obj("height", "maxWidth"), obj("maxHeight", "maxWidth")]
    assert variant_names(sizes, "Size") == {
        0: "SizeHeightWidth",
        1: "SizeHeightMaxWidth",
        2: "SizeMaxHeightMaxWidth",
    }
    # the same members, told apart by those they require
    contents = [obj("uri", "text", required=("text",)), obj("uri", "text", required=("uri",))]
    assert variant_names(contents, "C") == {0: "CText", 1: "CUri"}
    # one's members a subset of another's: all their members
    assert variant_names([obj("a", "b"), obj("a")], "S") == {0: "SAB", 1: "SA"}
    assert variant_names([{"type": "string"}, obj("a")], "Value") == {1: "ValueObject"}


def test_variants_nothing_tells_apart_are_an_error() -> None:
    with pytest.raises(CodegenError, match="cannot name the variants of Twins"):
        variant_names([obj("a"), obj("a")], "Twins")


def test_a_reordered_union_keeps_its_variant_names() -> None:
    members = [obj("height", "width"), obj("height"), {"type": "string"}, obj("width", kind="k")]
    names = variant_names(members, "P")
    again = variant_names(members[::-1], "P")
    assert {names[i] for i in names} == {again[len(members) - 1 - i] for i in names}
    assert len(again) == 3


def reordered(node: Any) -> Any:
    """Every union's members (and every object's members) in reverse order."""
    if isinstance(node, list):
        return [reordered(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: reordered(v) for k, v in reversed(node.items())}
    for key in ("anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            out[key] = out[key][::-1]
    return out


def own_reordered(ext: dict[str, Any]) -> dict[str, Any]:
    """An extension's schema with its own definitions reordered (its copies of core ones must
    stay equal to core's)."""
    core = definitions_of(json.loads(official(MODERN)))
    defs = {n: d if n in core else reordered(d) for n, d in definitions_of(ext).items()}
    return {k: v for k, v in ext.items() if k not in ("$defs", "definitions")} | {"$defs": defs}


def test_the_class_names_stay_when_an_extension_reorders_its_unions(tmp_path: Path) -> None:
    """Each extension's own definitions with every union (and object) in reverse order, generated in a
    scratch project: the same classes as the committed ones. (The core schemas' unions name
    their variants by constants; reordering them would also defeat codegen/patches.py.)"""
    project = make_project(tmp_path / "p")
    pins: list[str] = []
    for ext in PROJECT.extension_pins().values():
        schema = ROOT / "schema" / "ext" / ext.name / "schema.json"
        data = json.dumps(own_reordered(json.loads(schema.read_text(encoding="utf-8")))).encode()
        target = project / "schema" / "ext" / ext.name / "schema.json"
        target.parent.mkdir(parents=True)
        target.write_bytes(data)
        pins.append(
            f'["{ext.id}"]\nname = "{ext.name}"\nsha256 = "{hashlib.sha256(data).hexdigest()}"\n'
            f'built_on = ["{MODERN}"]\ntask_methods = {json.dumps(list(ext.task_methods))}\n'
        )
    (project / "schema" / "extensions.toml").write_text("\n".join(pins), encoding="utf-8")

    result = run("--root", project, "generate", MODERN)

    assert result.exit_code == 0, result.output
    module = "v" + MODERN.replace("-", "_")
    generated = class_members(project / "generated" / "mcp_wire" / module / "ext")
    assert generated == class_members(GENERATED / module / "ext")
    assert generated["McpUiHostContextContainerDimensionsMaxHeightWidth"] == ["maxHeight", "width"]


# --- inline copies of core definitions --------------------------------------------------------

CORE = {
    "Role": {"type": "string", "enum": ["assistant", "user"]},
    "Cursor": {"type": "string"},
    "Meta": {"type": "object"},
    "Icon": {
        "type": "object",
        "properties": {
            "src": {"type": "string", "format": "uri"},
            "_meta": {"$ref": "#/$defs/Meta"},
        },
        "required": ["src"],
    },
}
ICON_COPY = {
    "type": "object",
    "description": "An icon.",
    "properties": {
        "src": {"type": "string"},
        "_meta": {"type": "object", "additionalProperties": {}},
    },
    "required": ["src"],
    "additionalProperties": False,
}


def own(member: Any) -> dict[str, Any]:
    return {"Ext": {"type": "object", "properties": {"m": member}}}


def test_a_closed_copy_of_a_core_definition_is_a_reference_to_it() -> None:
    defs, reused = reuse_core(own({"type": "array", "items": ICON_COPY}), CORE)
    assert defs["Ext"]["properties"]["m"]["items"] == {
        "$ref": "#/$defs/Icon",
        "description": "An icon.",
    }
    roles, reused_roles = reuse_core(own({"type": "string", "enum": ["user", "assistant"]}), CORE)
    assert roles["Ext"]["properties"]["m"] == {"$ref": "#/$defs/Role"}
    assert (reused, reused_roles) == (["Icon"], ["Role"])


@pytest.mark.parametrize(
    "member",
    [
        {"type": "string"},  # equal to the alias Cursor, but a bare string is no copy of it
        ICON_COPY | {"properties": ICON_COPY["properties"] | {"src": {"type": "integer"}}},
        ICON_COPY | {"required": []},
    ],
    ids=["bare-string", "other-type", "other-required"],
)
def test_what_accepts_otherwise_stays_the_extension_s_own(member: dict[str, Any]) -> None:
    assert reuse_core(own(member), CORE) == (own(member), [])


def test_a_copy_of_a_closed_core_definition_that_is_open_stays_its_own() -> None:
    core = CORE | {"Icon": CORE["Icon"] | {"additionalProperties": False}}
    member = {k: v for k, v in ICON_COPY.items() if k != "additionalProperties"}
    assert reuse_core(own(member), core)[1] == []


def test_the_apps_models_reuse_the_core_content_models() -> None:
    for module, revision in ((apps, MODERN), (legacy_apps, "2025-11-25")):
        core = mcp_wire.revision(revision)
        message = module.McpUiMessageRequest.model_validate(
            {
                "method": "ui/message",
                "params": {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "hi"},
                        {"type": "resource", "resource": {"uri": "a://b", "blob": "AA=="}},
                    ],
                },
            }
        )
        text, resource = message.params.content
        assert type(text) is core.TextContent and type(resource) is core.EmbeddedResource
        assert type(resource.resource) is core.BlobResourceContents
        names = class_names(GENERATED / core.__name__.rsplit(".", 1)[1] / "ext" / "apps")
        assert not [n for n in names if n.endswith(("ResourceText", "ResourceBlob", "Annotations"))]
