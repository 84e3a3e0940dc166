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
from collections.abc import Callable
from typing import Any

import datamodel_code_generator as dcg
from datamodel_code_generator.enums import DataModelType, InputFileType, StrictTypes
from datamodel_code_generator.format import PythonVersion

from codegen.errors import CodegenError

BASE_MODULE = "mcp_wire_runtime.base"  # hand-written (runtime/), shared by every revision
_REBUILD = re.compile(r"^\w+\.model_rebuild\(\)$")

OPTIONS: dict[str, Any] = {
    "input_file_type": InputFileType.JsonSchema,
    "output_model_type": DataModelType.PydanticV2BaseModel,
    "target_python_version": PythonVersion.PY_311,
    "base_class": f"{BASE_MODULE}.WireModel",
    "type_overrides": {"JSONValue": f"{BASE_MODULE}.JSONValue"},
    # Bytes, URIs and timestamps stay the strings they are on the wire (no Base64Str, AnyUrl,
    # datetime rewriting: the model keeps what it read).
    "type_mappings": [
        "string+uri=string",
        "string+byte=string",
        "string+uri-template=string",
        "string+date-time=string",
    ],
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
    # models refuse null for every other optional member (mcp_wire_runtime.base).
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
    source = _generated(normalized_schema, revision)
    source = _keep_schema_names(source, set(normalized_schema.get("$defs", {})), revision)
    return _eager_annotations(_defined_before_use(source, revision), revision)


def module_names(source: str) -> set[str]:
    """The names a generated models module defines (classes and type aliases)."""
    out: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def generate_extension_models(
    merged_schema: dict[str, Any], own: set[str], core_names: set[str], core_module: str, label: str
) -> str:
    """Model source text of an extension's own definitions (`own`): `merged_schema` is the core
    revision's with them; every class the core revision's module defines (`core_names`) is
    imported from `core_module`, never generated again (all of it: this module names the
    extended revision's every model)."""
    source = _generated(merged_schema, label)
    source = _keep_schema_names(source, set(merged_schema.get("$defs", {})), label)
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    head: list[str] = []
    kept: list[str] = []
    defined: set[str] = set()
    used: set[str] = set()
    keep = False
    for node in tree.body:
        text = "".join(lines[node.lineno - 1 : node.end_lineno])
        if isinstance(node, ast.Import | ast.ImportFrom):
            head.append(text)
            continue
        if isinstance(node, ast.Expr):  # a docstring of the definition before it
            if keep:
                kept.append(text)
            continue
        names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
        name = node.name if isinstance(node, ast.ClassDef) else names[0] if names else ""
        keep = name not in core_names
        if keep:
            kept.append("\n\n" + text)
            defined.add(name)
            used.update(names)
    imported = {
        (a.asname or a.name) for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names
    }
    core = sorted((used & core_names) - defined - imported)
    missing = sorted(own - defined)
    if missing:
        raise CodegenError(f"{label}: no model generated for {', '.join(missing)}")
    # Relative: a star import from a library module is not re-exported to type checkers; the
    # names this module uses itself are imported by name too, re-exported (`X as X`).
    imports = [f"from {core_module} import *  # noqa: F403 (the extended revision's models)\n"]
    if core:
        imports.append(f"from {core_module} import {', '.join(f'{n} as {n}' for n in core)}\n")
    source = "".join(head) + "".join(imports) + "".join(kept) + "\n"
    return _eager_annotations(_defined_before_use(source, label), label)


def _generated(normalized_schema: dict[str, Any], revision: str) -> str:
    """datamodel-code-generator's module, without its header and eager rebuild calls."""
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
    return "\n".join(lines) + "\n"


_Unit = tuple[str, int, int, set[str], set[str]]  # name, its lines, needs (hard, soft)


def _needs(node: ast.stmt, revision: str) -> tuple[str, set[str], set[str]]:
    """A definition's name, the names it needs bound when it is evaluated (hard: bases, an
    alias's value, class body code) and those only its annotations name (soft)."""
    if isinstance(node, ast.ClassDef):
        hard = {n.id for e in [*node.bases, *node.keywords] for n in ast.walk(e)
                if isinstance(n, ast.Name)}  # fmt: skip
        soft: set[str] = set()
        for stmt in node.body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name):
                    in_annotation = isinstance(stmt, ast.AnnAssign) and any(
                        n is m for m in ast.walk(stmt.annotation)
                    )
                    (soft if in_annotation else hard).add(n.id)
        return node.name, hard, soft
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return (
            node.targets[0].id,
            {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)},
            set(),
        )
    raise CodegenError(f"{revision}: unexpected module statement at line {node.lineno}")


def _units(body: list[ast.stmt], first: int, revision: str) -> list[_Unit]:
    """The module's definitions from `first` on, each with its lines (an alias with the
    docstring after it) and what it needs."""
    units: list[_Unit] = []
    i = first
    while i < len(body):
        node = body[i]
        j = i + 1
        while j < len(body) and isinstance(body[j], ast.Expr):  # an alias's docstring
            j += 1
        name, hard, soft = _needs(node, revision)
        if i > first:
            start = body[i - 1].end_lineno
        else:  # where the first definition (its decorators) begins
            start = min(d.lineno for d in [node, *getattr(node, "decorator_list", [])]) - 1
        units.append((name, start or 0, body[j - 1].end_lineno or 0, hard, soft))
        i = j
    return units


def _components(needs: list[list[int]]) -> tuple[dict[int, int], list[list[int]]]:
    """Strongly connected components (Tarjan): each vertex's component, and each component's
    members in the generator's order."""
    component: dict[int, int] = {}
    low: dict[int, int] = {}
    seen: dict[int, int] = {}
    stack: list[int] = []
    members: list[list[int]] = []

    def connect(v: int) -> None:
        seen[v] = low[v] = len(seen)
        stack.append(v)
        for w in needs[v]:
            if w not in seen:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w not in component and w in stack:
                low[v] = min(low[v], seen[w])
        if low[v] == seen[v]:
            group: list[int] = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                component[group[-1]] = len(members)
            members.append(sorted(group))

    for v in range(len(needs)):
        if v not in seen:
            connect(v)
    return component, members


def _topological(units: list[_Unit], needs: list[list[int]]) -> list[_Unit]:
    """Each component after the components it names, in the generator's order (depth first);
    a cycle's members keep the generator's order."""
    component, members = _components(needs)
    ordered: list[_Unit] = []
    placed: set[int] = set()

    def place(c: int) -> None:
        placed.add(c)
        named = {component[w] for v in members[c] for w in needs[v]} - {c}
        for d in sorted(named, key=lambda d: members[d][0]):
            if d not in placed:
                place(d)
        ordered.extend(units[v] for v in members[c])

    for v in range(len(units)):
        if component[v] not in placed:
            place(component[v])
    return ordered


def _defined_before_use(source: str, revision: str) -> str:
    """Each model and type alias after what its annotations name, where cycles allow.

    datamodel-code-generator orders definitions as `from __future__ import annotations` allows
    (a class may name one defined further down). A model whose annotations all name what is
    already defined gets its fields complete when the class is created; one with a forward
    reference is created incomplete and collects its fields again on first use. So the
    definitions are put in a stable topological order: the generator's order, except that what
    a definition names moves up before it (depth first). The members of a cycle keep the
    generator's order among themselves (it is valid for what is evaluated at once: bases, an
    alias's value); only such a cycle leaves a forward reference, quoted by _eager_annotations.
    """
    body = ast.parse(source).body
    first = next(
        (i for i, node in enumerate(body) if not isinstance(node, (ast.Import, ast.ImportFrom))),
        len(body),
    )
    units = _units(body, first, revision)
    index = {u[0]: k for k, u in enumerate(units)}
    needs = [
        sorted({index[n] for n in u[3] | u[4] if n in index} - {k}) for k, u in enumerate(units)
    ]
    ordered = _topological(units, needs)
    done: set[str] = set()
    for name, _, _, hard, _ in ordered:
        missing = sorted((hard & index.keys()) - {name} - done)
        if missing:
            raise CodegenError(f"{revision}: {name} needs {', '.join(missing)} defined first")
        done.add(name)
    if ordered == units:
        return source
    lines = source.splitlines(keepends=True)
    head = "".join(lines[: units[0][1]]).rstrip("\n")
    head += "\n\n\n" if head else ""
    return (
        head
        + "\n\n\n".join("".join(lines[start:end]).strip("\n") for _, start, end, _, _ in ordered)
        + "\n"
    )


def _offsets(source: str) -> Callable[[int, int], int]:
    """The character offset in `source` of an ast (row, column); columns count UTF-8 bytes."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(row: int, col: int) -> int:
        line = source[starts[row - 1] : starts[row]]
        return starts[row - 1] + len(line.encode()[:col].decode())

    return offset


def _binds(node: ast.stmt) -> set[str]:
    """The names a module-level statement binds (imports, assignment targets)."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.alias):
            names.add((sub.asname or sub.name).split(".")[0])
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
    return names


def _class_locals(node: ast.ClassDef) -> set[str]:
    """Every name the class body binds (its members)."""
    return {
        n.id
        for stmt in node.body
        if isinstance(stmt, (ast.AnnAssign, ast.Assign))
        for n in ast.walk(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


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
    offset = _offsets(source)
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
            local = _class_locals(node)
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
        bound |= _binds(node)
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
