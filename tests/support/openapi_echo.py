"""A stand-in for any API an OpenAPI document describes: an ASGI app that serves each of its
operations, checks every request against the document (the path, its parameters where the
document puts them, the body against its schema: 422 saying what is wrong otherwise) and answers
with the operation's first success status and a value made from its response schema. It keeps
the requests it took (`calls`) for the tests to look at. Independent of mcpio's own mapping: it
reads the document itself (jsonschema resolves the `$ref`s)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from re import _parser  # type: ignore[attr-defined]
from typing import Any
from urllib.parse import parse_qsl, unquote

from jsonschema import Draft4Validator, Draft202012Validator

from tests.support import request_body

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def sample(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """A small value valid against `schema` (its `$ref`s read in `root`): required members only,
    the first of an enum or of a choice, the shortest array."""
    if not isinstance(schema, dict) or depth > 12:
        return None
    if "$ref" in schema:
        return sample(pointer(root, schema["$ref"]), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    if "allOf" in schema:
        return sample(_merged(schema, root), root, depth + 1)
    for choice in ("oneOf", "anyOf"):
        if schema.get(choice):
            options = [o for o in schema[choice] if o.get("type") != "null"] or schema[choice]
            return sample(options[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _scalar(kind, schema, root, depth)


def _merged(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """An `allOf`'s parts as one schema: their properties and required members together."""
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        while isinstance(part, dict) and "$ref" in part:
            part = pointer(root, part["$ref"])
        if "allOf" in part:
            part = _merged(part, root)
        props = {**merged.get("properties", {}), **part.get("properties", {})}
        required = [*merged.get("required", []), *part.get("required", [])]
        merged.update(part)
        if props:
            merged["properties"] = props
        if required:
            merged["required"] = list(dict.fromkeys(required))
    return merged


def _text(schema: dict[str, Any]) -> str:
    """A string its format and pattern allow: a given example when it fits, else one made."""
    pattern = schema.get("pattern")
    text = _FORMATS.get(schema.get("format", ""), "text").ljust(
        int(schema.get("minLength", 0)), "x"
    )
    if pattern is None:
        return text
    examples = [schema.get("default"), schema.get("example"), *(schema.get("examples") or []), text]
    for candidate in examples:
        if isinstance(candidate, str) and re.search(pattern, candidate):
            return candidate
    return _matching(_parser.parse(pattern))


_CATEGORY = {"CATEGORY_DIGIT": "0", "CATEGORY_WORD": "a", "CATEGORY_SPACE": " "}


def _matching(parsed: Any) -> str:
    """The shortest string a parsed regular expression matches, each choice the first
    (deterministic: the same every run)."""
    out = ""
    for op, arg in parsed:
        name = str(op)
        if name == "LITERAL":
            out += chr(arg)
        elif name == "NOT_LITERAL":
            out += "a" if chr(arg) != "a" else "b"
        elif name == "ANY":
            out += "a"
        elif name == "IN":
            out += _first_in(arg)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _, item = arg
            out += _matching(item) * low
        elif name == "SUBPATTERN":
            out += _matching(arg[-1])
        elif name == "BRANCH":
            out += _matching(arg[1][0])
        elif name == "CATEGORY":
            out += _CATEGORY.get(str(arg), "a")
    return out


def _first_in(items: Any) -> str:
    if items and str(items[0][0]) == "NEGATE":
        return "~" if "~" not in str(items) else "!"
    op, arg = items[0]
    if str(op) == "LITERAL":
        return chr(arg)
    if str(op) == "RANGE":
        return chr(arg[0])
    return _CATEGORY.get(str(arg), "a")


_FORMATS = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "email": "someone@example.com",
    "uri": "https://example.com/x",
    "url": "https://example.com/x",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "binary": "x",
}


def _scalar(kind: str, schema: dict[str, Any], root: dict[str, Any], depth: int) -> Any:
    if kind == "object":
        props = schema.get("properties") or {}
        value = {
            name: sample(props.get(name, {}), root, depth + 1)
            for name in schema.get("required") or ()
        }
        return value
    if kind == "array":
        return [sample(schema.get("items", {}), root, depth + 1)] * max(
            int(schema.get("minItems", 1)), 1
        )
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        low = low if not isinstance(low, bool) else schema.get("minimum", 0)
        value = max(low, 0) + (1 if "exclusiveMinimum" in schema else 0)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _text(schema)


def pointer(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for part in ref.lstrip("#").split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def _escaped(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


@dataclass
class Route:
    method: str
    template: str
    pattern: re.Pattern[str]
    operation: dict[str, Any]
    where: str  # the operation's JSON pointer


@dataclass
class EchoApi:
    """The ASGI app (see the module)."""

    document: dict[str, Any]
    calls: list[dict[str, Any]] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.validator = (
            Draft202012Validator
            if str(self.document["openapi"]).startswith("3.1")
            else Draft4Validator
        )
        for path, item in (self.document.get("paths") or {}).items():
            for method in METHODS:
                if method in item:
                    parts = re.split(r"\{([^}]+)\}", path)  # literal, name, literal, ...
                    regex = "".join(
                        re.escape(p) if i % 2 == 0 else f"(?P<{_group(p)}>[^/]+)"
                        for i, p in enumerate(parts)
                    )
                    where = f"#/paths/{_escaped(path)}/{method}"
                    self.routes.append(
                        Route(method.upper(), path, re.compile(f"^{regex}$"), item[method], where)
                    )

    def problems(self, value: Any, where: str) -> list[str]:
        """How `value` breaks the schema at JSON pointer `where` of the document."""
        checker = self.validator({**self.document, "$ref": where})
        return [f"{where}: {e.message}" for e in checker.iter_errors(value)][:3]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await request_body(receive)
        status, answer, kind = self.answer(scope, body)
        payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", kind.encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    def answer(self, scope: dict[str, Any], body: bytes) -> tuple[int, Any, str]:
        path = unquote(scope["path"])
        route, values = self._route(scope["method"], scope["path"])
        if route is None:
            return 404, {"error": f"no operation {scope['method']} {path}"}, "application/json"
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        request = {
            "operation": route.operation.get("operationId") or f"{route.method} {route.template}",
            "path": values,
            "query": parse_qsl(scope["query_string"].decode(), keep_blank_values=True),
            "headers": headers,
            "body": body,
        }
        self.calls.append(request)
        wrong = self._check(route, request)
        if wrong:
            return 422, {"problems": wrong}, "application/json"
        return self._success(route)

    def _route(self, method: str, raw_path: str) -> tuple[Route | None, dict[str, str]]:
        for route in self.routes:
            found = route.pattern.match(raw_path)
            if found and route.method == method:
                groups = {
                    _names(route.template)[k]: unquote(v) for k, v in found.groupdict().items()
                }
                return route, groups
        return None, {}

    def _check(self, route: Route, request: dict[str, Any]) -> list[str]:
        wrong: list[str] = []
        item_where = route.where.rsplit("/", 1)[0]
        item = pointer(self.document, item_where)
        declared = [
            (f"{item_where}/parameters/{i}", p) for i, p in enumerate(item.get("parameters", []))
        ] + [
            (f"{route.where}/parameters/{i}", p)
            for i, p in enumerate(route.operation.get("parameters", []))
        ]
        for where, param in declared:
            if "$ref" in param:
                where, param = param["$ref"], pointer(self.document, param["$ref"])
            wrong += self._parameter(where, param, request)
        wrong += self._body(route, request["body"], request["headers"].get("content-type", ""))
        return wrong

    def _parameter(self, where: str, param: dict[str, Any], request: dict[str, Any]) -> list[str]:
        name, place = param["name"], param["in"]
        if place == "header" and name.lower() in _IGNORED_HEADERS:
            return []  # what the specification says to ignore
        raw: Any
        if place == "path":
            raw = request["path"].get(name)
        elif place == "query":
            given = [v for k, v in request["query"] if k == name]
            raw = given or None
        elif place == "header":
            raw = request["headers"].get(name.lower())
        else:
            cookies = dict(
                c.strip().split("=", 1)
                for c in request["headers"].get("cookie", "").split(";")
                if "=" in c
            )
            raw = unquote(cookies[name]) if name in cookies else None
        if raw is None:
            return [f"{place} parameter {name} is missing"] if param.get("required") else []
        if "schema" not in param:
            return []
        schema = pointer(self.document, f"{where}/schema")
        value = _typed(raw, schema, self.document)
        return self.problems(value, f"{where}/schema")

    def _body(self, route: Route, body: bytes, content_type: str) -> list[str]:
        spec = route.operation.get("requestBody")
        where = f"{route.where}/requestBody"
        if spec is None:
            return []
        if "$ref" in spec:
            where, spec = spec["$ref"], pointer(self.document, spec["$ref"])
        if not body:
            return ["the request body is missing"] if spec.get("required") else []
        media = content_type.split(";")[0].strip()
        content = spec.get("content", {})
        if media not in content:
            return [f"content type {media!r} is not one of {sorted(content)}"]
        if "json" not in media or "schema" not in content[media]:
            return []
        try:
            value = json.loads(body)
        except ValueError:
            return ["the body is no JSON"]
        return self.problems(value, f"{where}/content/{_escaped(media)}/schema")

    def _success(self, route: Route) -> tuple[int, Any, str]:
        responses = route.operation.get("responses", {})
        codes = sorted(
            (str(c) for c in responses if str(c).startswith("2")), key=lambda c: c != "200"
        )
        if not codes:
            return 200, b"", "text/plain"
        response = responses.get(
            codes[0], responses.get(int(codes[0]) if codes[0].isdigit() else 0)
        )
        if "$ref" in response:
            response = pointer(self.document, response["$ref"])
        content = response.get("content") or {}
        status = int(codes[0]) if codes[0].isdigit() else 200
        media = next((m for m in content if "json" in m), None)
        if media is None:
            return status, b"done" if content else b"", next(iter(content), "text/plain")
        return status, sample(content[media].get("schema", {}), self.document), media


_IGNORED_HEADERS = ("accept", "content-type", "authorization")


def _group(name: str) -> str:
    return "g" + "".join(c if c.isalnum() else f"_{ord(c)}_" for c in name)


def _names(template: str) -> dict[str, str]:
    return {_group(n): n for n in re.findall(r"\{([^}]+)\}", template)}


def _typed(raw: Any, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A parameter's text read as its schema's type (a query array: each item)."""
    while "$ref" in schema:
        schema = pointer(root, schema["$ref"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "array":
        items = raw if isinstance(raw, list) else str(raw).split(",")
        return [_typed(v, schema.get("items", {}), root) for v in items]
    if isinstance(raw, list):
        raw = raw[0]
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
        if kind == "boolean":
            return {"true": True, "false": False}.get(raw, raw)
        if kind == "object":
            return json.loads(raw)
    except ValueError:
        return raw
    return raw
