"""Each operation of an OpenAPI document as what a tool needs: its name and description, the
input schema its parameters and request body make, where each argument goes in the request,
and the output schema of its success response."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from mcpio.openapi._schemas import Schemas

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
Location = Literal["path", "query", "header", "cookie"]
_IGNORED_HEADERS = ("accept", "content-type", "authorization")
_JSON = re.compile(r"^application/([\w.+-]*\+)?json\b|^\*/\*$")


@dataclass(frozen=True)
class Parameter:
    """One argument of an operation, and where it goes in the request.

    Args:
        name: Its name in the request (a header's, a body member's, ...).
        location: "path", "query", "header", "cookie", or "body" (a member of the body).
        argument: The tool's argument (`name`, unless that clashes or is no identifier).
        required: Whether the tool requires it.
        schema: Its JSON Schema.
        explode: A query array as repeated keys (`a=1&a=2`), else `a=1,2`.
    """

    name: str
    location: Location | Literal["body"]
    argument: str  # the tool's argument (`name`, unless that clashes or is no identifier)
    required: bool
    schema: dict[str, Any]
    explode: bool = True  # a query array as repeated keys (`a=1&a=2`), else `a=1,2`


@dataclass(frozen=True)
class Operation:
    """An operation of the document, as a tool, resource or template serves it.

    Args:
        name: The component's name (the operationId, else the method and path).
        method: The HTTP method, upper case.
        path: The document's path template (`/pets/{petId}`).
        description: Its summary and description.
        tags: Its tags.
        parameters: Its arguments, each with its place in the request.
        body_type: The request body's content type (None: no body).
        body_argument: The argument holding the whole body (None: its members are arguments).
        input_schema: The tool's input schema.
        output_schema: The success response's JSON Schema, object-shaped (None: none).
        wrapped: The response's JSON travels as `{"result": value}` (not an object).
        operation_id: Its operationId.
        deprecated: Whether the document deprecates it.
        body_required: Whether the request body is required.
    """

    name: str
    method: str  # upper case
    path: str  # the document's path template (`/pets/{petId}`)
    description: str | None
    tags: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    body_type: str | None  # the request body's content type (None: no body)
    body_argument: str | None  # the argument holding the whole body (None: its members are)
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None  # the success response's JSON schema, object-shaped
    wrapped: bool  # the response's JSON travels as `{"result": value}` (not an object)
    operation_id: str | None = None
    deprecated: bool = False
    body_required: bool = False

    def without_headers(self, names: Collection[str]) -> Operation:
        """The operation without the header parameters `names` (lower case) name.

        They are headers the client sets itself: no argument of the tool.
        """
        dropped = {
            p.argument
            for p in self.parameters
            if p.location == "header" and p.name.lower() in names
        }
        if not dropped:
            return self
        schema = dict(self.input_schema)
        schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in dropped}
        required = [r for r in schema.get("required", ()) if r not in dropped]
        schema.pop("required", None)
        if required:
            schema["required"] = required
        kept = tuple(p for p in self.parameters if p.argument not in dropped)
        return replace(self, parameters=kept, input_schema=schema)

    @property
    def path_arguments(self) -> tuple[Parameter, ...]:
        """The parameters the path needs, in the order they appear."""
        return tuple(p for p in self.parameters if p.location == "path")


def operations(document: Mapping[str, Any]) -> list[Operation]:
    """Every operation of the document, in its order, each with a name of its own.

    Raises:
        ValueError: A reference that cannot be read (not local, pointing to nothing, a cycle).
    """
    return operations_of(Schemas(document))


def operations_of(schemas: Schemas) -> list[Operation]:
    """`operations` of the document `schemas` reads (its schemas as they are kept)."""
    document = schemas.document
    found: list[Operation] = []
    taken: set[str] = set()
    for path, method, item, operation in _each(document, schemas):
        made = _operation(schemas, path, method, item, operation)
        name, n = made.name, 2
        while name in taken:
            name, n = f"{made.name}_{n}", n + 1
        taken.add(name)
        found.append(made if name == made.name else _renamed(made, name))
    return found


def _each(
    document: Mapping[str, Any], schemas: Schemas
) -> Iterator[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
    for path, item in (document.get("paths") or {}).items():
        item = schemas.resolve(item)
        for method in METHODS:
            operation = item.get(method)
            if isinstance(operation, Mapping):
                yield str(
                    path
                ), method, item, operation  # pyright: ignore[reportUnknownArgumentType]


def _renamed(operation: Operation, name: str) -> Operation:
    return replace(operation, name=name)


def tool_name(operation_id: str | None, method: str, path: str) -> str:
    """The operationId, else the method and path (`get_pets_petId`), as MCP allows a name."""
    base = operation_id or f"{method}_{path}"
    name = re.sub(r"[^A-Za-z0-9.-]+", "_", base).strip("_") or method
    return name[:128]


def _operation(
    schemas: Schemas, path: str, method: str, item: Mapping[str, Any], op: Mapping[str, Any]
) -> Operation:
    parameters = _parameters(schemas, item, op)
    body_type, body_schema, body_required = _request_body(schemas, op)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in parameters:
        properties[parameter.argument] = parameter.schema
        if parameter.required:
            required.append(parameter.argument)
    body_argument = None
    defs: dict[str, Any] = {}
    if body_schema is not None:
        members = _members(body_schema, set(properties))
        if members is None:
            body_argument = _free("body", set(properties))
            properties[body_argument] = {k: v for k, v in body_schema.items() if k != "$defs"}
            if body_required:
                required.append(body_argument)
        else:
            parameters = (*parameters, *members)
            properties.update({m.argument: m.schema for m in members})
            required.extend(m.argument for m in members if m.required and body_required)
        defs.update(body_schema.get("$defs", {}))
    for parameter in parameters:
        defs.update(parameter.schema.pop("$defs", None) or {})
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    if defs:
        input_schema["$defs"] = defs
    output_schema, wrapped = _output(schemas, op)
    operation_id = op.get("operationId")
    return Operation(
        name=tool_name(operation_id, method, path),
        method=method.upper(),
        path=path,
        description=_description(op),
        tags=tuple(str(t) for t in op.get("tags") or ()),
        parameters=parameters,
        body_type=body_type,
        body_argument=body_argument,
        input_schema=input_schema,
        output_schema=output_schema,
        wrapped=wrapped,
        operation_id=operation_id if isinstance(operation_id, str) else None,
        deprecated=op.get("deprecated") is True,
        body_required=body_required,
    )


def _description(op: Mapping[str, Any]) -> str | None:
    parts = [str(op[k]).strip() for k in ("summary", "description") if op.get(k)]
    if len(parts) == 2 and parts[1].startswith(parts[0]):
        parts = parts[1:]
    return "\n\n".join(parts) or None


def _parameters(
    schemas: Schemas, item: Mapping[str, Any], op: Mapping[str, Any]
) -> tuple[Parameter, ...]:
    """The path item's parameters, overridden by the operation's of the same name and place."""
    declared: dict[tuple[str, str], Mapping[str, Any]] = {}
    for raw in [*(item.get("parameters") or ()), *(op.get("parameters") or ())]:
        param = schemas.resolve(raw)
        declared[(str(param.get("name")), str(param.get("in")))] = param
    made: list[Parameter] = []
    taken: set[str] = set()
    for (name, location), param in declared.items():
        if location not in ("path", "query", "header", "cookie"):
            continue
        if location == "header" and name.lower() in _IGNORED_HEADERS:
            continue  # the specification says to ignore them (the client's own to set)
        schema = _parameter_schema(schemas, param)
        argument = _free(_identifier(name), taken, location)
        taken.add(argument)
        style = param.get("style", "form")
        explode = param.get("explode", style == "form")
        required = location == "path" or param.get("required") is True
        made.append(Parameter(name, location, argument, required, schema, explode is True))  # type: ignore[arg-type]
    return tuple(made)


def _parameter_schema(schemas: Schemas, param: Mapping[str, Any]) -> dict[str, Any]:
    raw = param.get("schema")
    if raw is None:  # `content` instead: its one media type's schema
        content = param.get("content") or {}
        raw = next(iter(content.values()), {}).get("schema", {}) if content else {}
    schema = schemas.schema(raw)
    if param.get("description") and "description" not in schema:
        schema = {**schema, "description": str(param["description"])}
    return schema


def _identifier(name: str) -> str:
    """A parameter's name as an argument: what a URI template variable may be, too."""
    return re.sub(r"\W", "_", name) or "_"


def _free(name: str, taken: set[str], location: str = "body") -> str:
    """`name`, or `name__location` (then numbered) when another argument has it."""
    if name not in taken:
        return name
    candidate, n = f"{name}__{location}", 2
    while candidate in taken:
        candidate, n = f"{name}__{location}{n}", n + 1
    return candidate


def _request_body(
    schemas: Schemas, op: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any] | None, bool]:
    """The request body's content type and schema (JSON first), and whether it is required."""
    body = schemas.resolve(op.get("requestBody"))
    if not isinstance(body, Mapping) or not body.get("content"):
        return None, None, False
    content: Mapping[str, Any] = body["content"]  # pyright: ignore[reportUnknownVariableType]
    media = next((m for m in content if _JSON.match(m)), next(iter(content)))
    schema = schemas.schema((content[media] or {}).get("schema") or {})
    return str(media), schema, body.get("required") is True


def _members(schema: dict[str, Any], taken: set[str]) -> tuple[Parameter, ...] | None:
    """The body's members as arguments of their own (an object with properties whose names no
    parameter has); None: the body is one argument."""
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict) or not properties:
        return None
    if taken & set(properties) or any(
        k in schema for k in ("allOf", "anyOf", "oneOf")
    ):  # pyright: ignore
        return None
    if not all(isinstance(k, str) and k.isidentifier() for k in properties):  # pyright: ignore
        return None
    required = set(schema.get("required") or ())
    return tuple(
        Parameter(name, "body", name, name in required, prop)
        for name, prop in properties.items()  # pyright: ignore[reportUnknownVariableType]
    )


def _output(schemas: Schemas, op: Mapping[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The JSON schema of the first success response that has one (object-shaped: any other
    wrapped as `{"result": ...}`, as mcpio wraps a tool's non-object return)."""
    responses: Mapping[str, Any] = op.get("responses") or {}
    codes = sorted((c for c in responses if str(c).startswith("2")), key=lambda c: c != "200")
    for code in codes:
        response = schemas.resolve(responses[code])
        content = (response or {}).get("content") or {}
        media = next((m for m in content if _JSON.match(m)), None)
        if media is None or not (content[media] or {}).get("schema"):
            continue
        schema = schemas.schema(content[media]["schema"])
        if schema.get("type") == "object" or ("properties" in schema and "type" not in schema):
            return schema, False
        defs = schema.pop("$defs", None)
        wrapped: dict[str, Any] = {
            "type": "object",
            "properties": {"result": schema},
            "required": ["result"],
        }
        if defs:
            wrapped["$defs"] = defs
        return wrapped, True
    return None, False
