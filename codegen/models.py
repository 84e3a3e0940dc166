"""Pydantic models of one revision, by datamodel-code-generator with one pinned option set.

The schema it reads has been through `codegen.normalize` first; every option below is part of
the output's contract (reviewed diffs depend on them), so change them only on purpose.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
import warnings
from typing import Any

import datamodel_code_generator as dcg
from datamodel_code_generator.enums import DataModelType, InputFileType, StrictTypes
from datamodel_code_generator.format import PythonVersion

from codegen.errors import CodegenError

BASE_MODULE = "mcpio.wire.base"  # hand-written (runtime/), shared by every revision
_REBUILD = re.compile(r"^\w+\.model_rebuild\(\)$")

OPTIONS: dict[str, Any] = {
    "input_file_type": InputFileType.JsonSchema,
    "output_model_type": DataModelType.PydanticV2BaseModel,
    "target_python_version": PythonVersion.PY_311,
    "base_class": f"{BASE_MODULE}.WireModel",
    "type_overrides": {"JSONValue": f"{BASE_MODULE}.JSONValue"},
    # Bytes and URIs stay the strings they are on the wire (no Base64Str / AnyUrl rewriting).
    "type_mappings": ["string+uri=string", "string+byte=string", "string+uri-template=string"],
    # JSON numbers and booleans are read exactly as JSON types them: no `true` as 1, no "12" as
    # 12, no 1 as `true` (pydantic's lax mode would coerce them, and change the message).
    "strict_types": [StrictTypes.int, StrictTypes.float, StrictTypes.bool],
    "use_annotated": True,
    "field_constraints": True,
    "use_standard_collections": True,
    "use_union_operator": True,
    "enum_field_as_literal": "all",
    "use_double_quotes": True,
    "disable_timestamp": True,
    "use_schema_description": True,
    "use_field_description": True,
    "use_type_alias": True,
    "skip_root_model": True,
    "remove_special_field_name_prefix": True,
    # An optional member whose schema allows null carries the mark (codegen.normalize); the
    # models refuse null for every other optional member (mcpio.wire.base).
    "field_extra_keys": {"x-nullable"},
    "formatters": [],
}


def _without_open_markers(node: Any) -> Any:
    """Drop `additionalProperties: {}` beside properties: every model keeps unknown members
    (typed as JSON values, in the base class), so a per-model `Any` extras annotation is noise."""
    if isinstance(node, list):
        return [_without_open_markers(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _without_open_markers(v) for k, v in node.items()}
    if "properties" in out and out.get("additionalProperties") in ({}, True):
        del out["additionalProperties"]
    return out


def generate_models(normalized_schema: dict[str, Any], revision: str) -> str:
    """Model source text of one revision (unformatted, no header)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            schema = json.dumps(_without_open_markers(normalized_schema), sort_keys=True)
            out = dcg.generate(schema, **OPTIONS)
        except Exception as exc:  # the generator raises many types; all mean "bad schema"
            raise CodegenError(
                f"{revision}: model generation failed: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(out, str):
        raise CodegenError(f"{revision}: model generation produced no single module")
    lines = out.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)  # datamodel-codegen's own header: ours replaces it
    # Models build their validators on first use (defer_build in the base class), which also
    # resolves forward references; eager model_rebuild() calls would cost the import that time.
    lines = [line for line in lines if not _REBUILD.match(line)]
    source = "\n".join(lines) + "\n"
    return _keep_schema_names(source, set(normalized_schema.get("$defs", {})), revision)


_FROM_IMPORT = re.compile(r"^from [\w.]+ import (?P<names>[\w, ]+)$", re.MULTILINE)


def _keep_schema_names(source: str, definitions: set[str], revision: str) -> str:
    """Every model keeps its schema name, also one named like a name the module imports.

    datamodel-code-generator renames such a model (2024-11-05's `Annotated` became
    `AnnotatedModel`), and the revision package then exported `typing.Annotated` under the
    schema's name. Instead, the import gets a private alias (`Annotated as _Annotated`) and the
    model its own name back. Only code tokens are rewritten, never docstrings or comments.
    """
    imported = {n.strip() for m in _FROM_IMPORT.finditer(source) for n in m["names"].split(",")}
    clashes = sorted(
        name
        for name in definitions & imported
        if f"{name}Model" not in definitions and re.search(rf"^class {name}Model\(", source, re.M)
    )
    if not clashes:
        return source
    renames: dict[str, str] = {}
    for name in clashes:
        if re.search(rf"\b_{name}\b", source):
            raise CodegenError(f"{revision}: cannot alias the import {name}: _{name} is taken")
        renames[name] = f"_{name}"
        renames[f"{name}Model"] = name
    edits: dict[int, list[tuple[int, int, str]]] = {}
    in_import = False
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in ("from", "import") and tok.start[1] == 0:
            in_import = True
        elif tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            in_import = False
        if tok.type != tokenize.NAME or tok.string not in renames:
            continue
        new = renames[tok.string]
        if in_import:
            new = f"{tok.string} as {new}"
        edits.setdefault(tok.start[0], []).append((tok.start[1], tok.end[1], new))
    lines = source.splitlines(keepends=True)
    for row, changes in edits.items():
        line = lines[row - 1]
        for start, end, new in sorted(changes, reverse=True):
            line = line[:start] + new + line[end:]
        lines[row - 1] = line
    out = "".join(lines)
    for name in clashes:
        if not re.search(rf"^class {name}\(", out, re.M):
            raise CodegenError(f"{revision}: model {name} lost its schema name")
    return out
