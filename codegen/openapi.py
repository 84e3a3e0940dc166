"""`mcp-codegen openapi`: a typed module of tools for an OpenAPI document.

The operations are mcpio's own mapping of the document (`mcpio.openapi`), each component schema
kept as one `$defs` entry; datamodel-code-generator writes the models (the component schemas,
and a request or response body defined inline), and the types of each operation's arguments and
result, read back from two helper models per operation that the module then leaves out. Each
operation is a typed async function (the client first, its arguments by keyword); `register`
serves them all as tools. The header holds the document's sha256; the output is formatted
(ruff, black) and the same for the same document on every machine.
"""

from __future__ import annotations

import ast
import hashlib
import json
import keyword
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datamodel_code_generator as dcg

from codegen import models
from codegen.errors import CodegenError
from codegen.format import format_python
from codegen.models import _defined_before_use, _eager_annotations
from codegen.normalize import pascal
from codegen.render import render
from mcpio.openapi._document import parse_text, read_document
from mcpio.openapi._operations import Operation, operations_of
from mcpio.openapi._schemas import Schemas

# The revisions' option set (codegen.models), but for what an API's models need otherwise: their
# own base, snake_case members (the document's names as aliases), lax JSON types, no wire marks.
_NOT_HERE = {"strict_types", "type_overrides", "field_extra_keys", "use_field_description"}
OPTIONS: dict[str, Any] = {
    **{k: v for k, v in models.OPTIONS.items() if k not in _NOT_HERE},
    "base_class": "mcpio.openapi.ApiModel",
    "snake_case_field": True,
    # Timestamps, URIs, e-mail addresses and bytes stay the strings the API sends.
    "type_mappings": [
        f"string+{fmt}=string"
        for fmt in ("uri", "byte", "binary", "date-time", "date", "time", "email", "uuid")
        + ("ipv4", "ipv6", "hostname")
    ],
}
# Names the module's own code uses: no function takes one.
_TAKEN = {"request", "read_result", "register", "add_functions", "httpx", "Field", "ApiModel"}
_TAKEN |= {"Annotated", "Any", "Literal", "TYPE_CHECKING", "Server", "OPERATIONS"}


@dataclass
class Function:
    """One operation as the module's function: what the template writes."""

    name: str  # the tool's
    function: str
    method: str
    path: str
    doc: str
    params: list[tuple[str, str, str | None]] = field(default_factory=list)  # name, type, default
    places: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # where: (http, py)
    unexploded: list[str] = field(default_factory=list)
    body: str | None = None
    members: list[tuple[str, str]] = field(default_factory=list)
    content_type: str | None = None
    returns: str = "Any"


def render_openapi(data: bytes, label: str) -> str:
    """The module for the OpenAPI document `data` (its file name `label`), formatted."""
    try:
        document = read_document(parse_text(data))
        schemas = Schemas(document, typed=True)
        operations = operations_of(schemas)
    except ValueError as exc:
        raise CodegenError(f"{label}: {exc}") from None
    defs = dict(schemas.defs)
    helpers: dict[str, tuple[str, str]] = {}
    for operation in operations:
        stem = pascal(re.sub(r"\W", "_", operation.name))
        args, result = f"{stem}OpArguments", f"{stem}OpResult"
        helpers[operation.name] = (args, result)
        defs[args] = {k: v for k, v in operation.input_schema.items() if k != "$defs"}
        returned = _result_schema(operation)
        if _is_model(returned):  # an object defined inline: a model named for it
            defs[f"{stem}Response"] = returned
            returned = {"$ref": f"#/$defs/{stem}Response"}
        defs[result] = {
            "type": "object",
            "properties": {"result": returned},
            "required": ["result"],
        }
    source = _models(defs, label)
    imports, source, fields = _without_helpers(
        source, {n for pair in helpers.values() for n in pair}
    )
    functions = _functions(operations, helpers, fields)
    info = document.get("info") or {}
    text = render(
        "openapi_module.py.jinja",
        label=label,
        sha256=hashlib.sha256(data).hexdigest(),
        title=str(info.get("title") or label),
        version=str(info.get("version") or ""),
        imports=imports,
        models=source,
        functions=functions,
    )
    return format_python(text, "openapi_module.py")


def _is_model(schema: dict[str, Any]) -> bool:
    """An inline object (or a combination of schemas), not a reference, array or scalar."""
    if "$ref" in schema or schema.get("type") not in (None, "object"):
        return False
    return any(k in schema for k in ("properties", "allOf", "anyOf", "oneOf"))


def _result_schema(operation: Operation) -> dict[str, Any]:
    """The success response's schema, unwrapped ({}: none)."""
    if operation.output_schema is None:
        return {}
    schema = operation.output_schema
    return schema["properties"]["result"] if operation.wrapped else schema


def _models(defs: dict[str, Any], label: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            root = {"title": _ROOT, "$defs": defs}
            out = dcg.generate(json.dumps(root, sort_keys=True), **OPTIONS)
        except Exception as exc:  # the generator raises many types; all mean "bad schema"
            what = f"{type(exc).__name__}: {exc}"
            raise CodegenError(f"{label}: model generation failed: {what}") from None
    if not isinstance(out, str):
        raise CodegenError(f"{label}: model generation produced no single module")
    lines = out.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    lines = [line for line in lines if not re.match(r"^\w+\.model_rebuild\(\)$", line)]
    return "\n".join(lines) + "\n"


_ROOT = "DocumentRootOp"  # the root schema's model, left out (it only holds `$defs`)
Fields = dict[str, list[tuple[str, str, str | None, str]]]  # class: (name, type, default, alias)


def _without_helpers(source: str, helpers: set[str]) -> tuple[str, str, Fields]:
    """The models' imports and the models without the helper classes (nor the root's), and
    each helper's fields."""
    source = _eager_annotations(source, "openapi")
    tree = ast.parse(source)
    fields: Fields = {}
    cut: list[tuple[int, int]] = []
    imports: list[str] = []
    for node in tree.body:
        named = _assigned(node)
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(ast.unparse(node))
        elif isinstance(node, ast.ClassDef) and node.name in helpers:
            fields[node.name] = [_field(s) for s in node.body if isinstance(s, ast.AnnAssign)]
        elif named != _ROOT:
            continue
        start = min(d.lineno for d in [node, *getattr(node, "decorator_list", [])])
        cut.append((start, node.end_lineno or start))
    lines = source.splitlines(keepends=True)
    for start, end in sorted(cut, reverse=True):
        del lines[start - 1 : end]
    kept = "".join(lines).strip() + "\n"
    if kept.strip():
        kept = _defined_before_use(kept, "openapi")
    return "\n".join(imports), kept, fields


def _assigned(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _field(stmt: ast.AnnAssign) -> tuple[str, str, str | None, str]:
    name = stmt.target.id if isinstance(stmt.target, ast.Name) else ""
    annotation = ast.unparse(stmt.annotation)  # (not the source's segment: quadratic)
    default = ast.unparse(stmt.value) if stmt.value is not None else None
    alias = name
    for call in ast.walk(stmt.annotation):
        if isinstance(call, ast.Call):
            for kw in call.keywords:
                if kw.arg == "alias" and isinstance(kw.value, ast.Constant):
                    alias = str(kw.value.value)
    return name, " ".join(annotation.split()), default, alias


def _functions(
    operations: list[Operation], helpers: dict[str, tuple[str, str]], fields: Fields
) -> list[Function]:
    made: list[Function] = []
    taken = set(_TAKEN)
    for operation in operations:
        args, result = helpers[operation.name]
        function = _snake(operation.name)
        while function in taken:
            function += "_"
        taken.add(function)
        made.append(_function(operation, function, fields.get(args, []), fields.get(result, [])))
    return made


def _function(
    operation: Operation,
    function: str,
    arguments: list[tuple[str, str, str | None, str]],
    result: list[tuple[str, str, str | None, str]],
) -> Function:
    made = Function(
        operation.name,
        function,
        operation.method,
        operation.path,
        _docstring(operation.description or f"{operation.method} {operation.path}"),
        content_type=operation.body_type,
    )
    by_argument = {alias: (name, kind, default) for name, kind, default, alias in arguments}
    made.params = [(name, kind, default) for name, kind, default, _ in arguments]
    places = {"path": "path_values", "query": "query", "header": "headers", "cookie": "cookies"}
    for param in operation.parameters:
        python = by_argument[param.argument][0]
        if param.location == "body":
            made.members.append((param.name, python))
            continue
        made.places.setdefault(places[param.location], []).append((param.name, python))
        if param.location == "query" and not param.explode:
            made.unexploded.append(param.name)
    if operation.body_argument is not None:
        made.body = by_argument[operation.body_argument][0]
    if operation.output_schema is not None and result:
        made.returns = _unannotated(result[0][1])
    return made


def _unannotated(annotation: str) -> str:
    """`Annotated[X, Field(...)]` as `X`; any other type as it is."""
    tree = ast.parse(annotation, mode="eval").body
    if isinstance(tree, ast.Subscript) and ast.unparse(tree.value) == "Annotated":
        inner = tree.slice.elts[0] if isinstance(tree.slice, ast.Tuple) else tree.slice
        return ast.unparse(inner)
    return annotation


def _snake(name: str) -> str:
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    text = re.sub(r"\W+", "_", text).strip("_").lower() or "operation"
    if text[0].isdigit() or keyword.iskeyword(text):
        text = f"op_{text}"
    return text


def _docstring(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()


def write_openapi(source: Path, out: Path, check: bool) -> tuple[Path, bool]:
    """Render the module of the document at `source` into `out`/__init__.py (check: compare);
    the file, and whether it is (now) what the document makes."""
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise CodegenError(f"{source}: cannot read: {exc}") from None
    text = render_openapi(data, source.name)
    target = out / "__init__.py"
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if check:
        return target, current == text
    if current != text:
        out.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        (out / "py.typed").write_text("", encoding="utf-8")
    return target, True
