"""Pydantic models of one revision, by datamodel-code-generator with one pinned option set.

The schema it reads has been through `codegen.normalize` first; every option below is part of
the output's contract (reviewed diffs depend on them), so change them only on purpose.
"""

from __future__ import annotations

import ast
import builtins
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
    source = _keep_schema_names(source, set(normalized_schema.get("$defs", {})), revision)
    return _eager_annotations(source, revision)


def _eager_annotations(source: str, revision: str) -> str:
    """Annotations that need no string: no `from __future__ import annotations`.

    Under that import every annotation is a string, and pydantic compiles and evaluates each
    one while it creates the class: most of the time `import mcp_wire.<revision>` took. Instead
    an annotation is a plain expression, evaluated once by Python, unless it names something
    not bound yet (a model defined further down, the class itself) or a name the class body
    binds: that one stays the same string as before, whole, and pydantic resolves it as it did
    (while it creates the class, or when the model is first built). The models' fields, types
    and schemas are the same either way.
    """
    tree = ast.parse(source)
    future = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and [a.name for a in node.names] == ["annotations"]
    ]
    if not future:
        return source
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(row: int, col: int) -> int:  # ast columns count UTF-8 bytes
        line = source[starts[row - 1] : starts[row]]
        return starts[row - 1] + len(line.encode()[:col].decode())

    bound = set(dir(builtins))
    edits: list[tuple[int, int, str]] = []

    def quote_unbound(annotation: ast.expr, local: set[str]) -> None:
        names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
        if names <= bound - local:
            return
        text = " ".join(ast.unparse(annotation).split())
        quote = next((q for q in ('"', "'") if q not in text), None)
        if quote is None:
            raise CodegenError(f"{revision}: cannot quote the annotation {text}")
        start = offset(annotation.lineno, annotation.col_offset)
        end = offset(annotation.end_lineno or annotation.lineno, annotation.end_col_offset or 0)
        edits.append((start, end, quote + text + quote))

    for node in tree.body:
        if node in future:
            edits.append((offset(node.lineno, 0), offset(node.lineno + 1, 0), ""))
            continue
        if isinstance(node, ast.ClassDef):
            local = {  # every name the class body binds (its members)
                n.id
                for stmt in node.body
                if isinstance(stmt, (ast.AnnAssign, ast.Assign))
                for n in ast.walk(stmt)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign):
                    if not isinstance(stmt.annotation, ast.Constant):
                        quote_unbound(stmt.annotation, local)
                elif not isinstance(stmt, (ast.Expr, ast.Assign, ast.Pass)):
                    raise CodegenError(f"{revision}: unexpected statement in class {node.name}")
            bound.add(node.name)
            continue
        if isinstance(node, ast.AnnAssign):
            quote_unbound(node.annotation, set())
        elif not isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.Expr)):
            raise CodegenError(f"{revision}: unexpected module statement {type(node).__name__}")
        for sub in ast.walk(node):
            if isinstance(sub, ast.alias):
                bound.add((sub.asname or sub.name).split(".")[0])
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                bound.add(sub.id)
    out = source
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out


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
