"""The pre-pass between an official schema.json and the model generator.

It turns the schema into one canonical, deterministic shape that the generator maps to clean
Python: one `$defs` table sorted by name, inline objects hoisted to stable `<Parent><Prop>`
names, JSON `number` kept as `integer | number` so ints stay ints, every "any JSON" position
pointing at one recursive `JSONValue`, tagged unions marked with their discriminator, and the
asserted fixes of `codegen.patches`. It never changes what the schema accepts, except where a
patch says so.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from codegen.errors import CodegenError
from codegen.patches import apply_patches
from codegen.tsdoc import rewrite_descriptions

JSON_VALUE = "JSONValue"
REF_PREFIX = "#/$defs/"
_SCHEMA_KEYS = {
    "type", "$ref", "anyOf", "oneOf", "allOf", "properties", "items", "additionalProperties",
    "enum", "const", "not", "if", "then", "else", "patternProperties", "format", "pattern",
}  # fmt: skip
_COMPOSITE_KEYS = ("anyOf", "oneOf")
_LITERAL_KEYS = ("const", "enum", "default", "examples")  # values are data, not schemas
_SCHEMA_MAP_KEYS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")

Schema = dict[str, Any]


def definitions_of(schema: Schema) -> dict[str, Schema]:
    defs = schema.get("$defs", schema.get("definitions"))
    if not isinstance(defs, dict) or not defs:
        raise CodegenError("schema has no definitions ($defs or definitions)")
    bad = [name for name, d in defs.items() if not isinstance(d, dict)]
    if bad:
        raise CodegenError(f"definition {bad[0]} is not a JSON object")
    return defs


def pascal(text: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", text)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def ref_name(node: Any) -> str | None:
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        for prefix in (REF_PREFIX, "#/definitions/"):
            if ref.startswith(prefix):
                return ref[len(prefix) :]
        raise CodegenError(f"unsupported $ref {ref!r}: only local definitions are allowed")
    return None


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _rewrite_refs(v) for k, v in node.items()}
        name = ref_name(node)
        if name is not None:
            out["$ref"] = REF_PREFIX + name
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v) for v in node]
    return node


def is_any(node: Any) -> bool:
    """`{}` (or only annotations): the schema accepts any JSON value here."""
    return isinstance(node, dict) and not (_SCHEMA_KEYS & node.keys())


def _is_inline_object(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and "$ref" not in node
        and ("properties" in node or ("allOf" in node and node.get("type", "object") == "object"))
    )


def _keep_ints(node: Any, *, schema_map: bool = False) -> Any:
    """JSON `number` -> `integer | number`, so that 1 stays 1 and is not read back as 1.0.

    In a map of names to schemas (`properties`, ...), every value is a schema, whatever its
    name: a property called `default` or `enum` is rewritten like any other.
    """
    if isinstance(node, dict) and schema_map:
        return {k: _keep_ints(v) for k, v in node.items()}
    if isinstance(node, dict):
        out = {
            k: (
                v
                if k in _LITERAL_KEYS
                else _keep_ints(v, schema_map=k in _SCHEMA_MAP_KEYS and isinstance(v, dict))
            )
            for k, v in node.items()
        }
        typ = out.get("type")
        if typ == "number":
            out["type"] = ["integer", "number"]
        elif isinstance(typ, list) and "number" in typ and "integer" not in typ:
            at = typ.index("number")
            out["type"] = typ[:at] + ["integer"] + typ[at:]
        return out
    if isinstance(node, list):
        return [_keep_ints(v) for v in node]
    return node


class _Hoister:
    """Moves inline object schemas into named definitions, depth first, names from the path."""

    def __init__(self, defs: dict[str, Schema]) -> None:
        self.defs = defs
        self.hoisted: dict[str, str] = {}  # new definition name -> parent definition

    def run(self) -> None:
        for name in sorted(self.defs):
            self.defs[name] = self._walk_def(self.defs[name], name)

    def _claim(self, name: str, schema: Schema, parent: str) -> Schema:
        if name in self.defs or name in self.hoisted:
            raise CodegenError(f"cannot hoist an inline object to {name}: that name is taken")
        self.hoisted[name] = parent
        self.defs[name] = self._walk_def(schema, name)
        return {"$ref": REF_PREFIX + name}

    def _walk_def(self, node: Schema, name: str) -> Schema:
        out = dict(node)
        if isinstance(node.get("properties"), dict):
            out["properties"] = {
                p: self._field(v, name + pascal(p), name) for p, v in node["properties"].items()
            }
        if isinstance(node.get("additionalProperties"), dict):
            out["additionalProperties"] = self._field(
                node["additionalProperties"], name + "Value", name
            )
        if isinstance(node.get("items"), dict):
            out["items"] = self._field(node["items"], name + "Item", name)
        for key in _COMPOSITE_KEYS:
            if isinstance(node.get(key), list):
                out[key] = [self._variant(v, name, i) for i, v in enumerate(node[key])]
        if isinstance(node.get("allOf"), list):
            out["allOf"] = [
                self._walk_def(v, name) if isinstance(v, dict) else v for v in node["allOf"]
            ]
        return out

    def _field(self, node: Any, name: str, parent: str) -> Any:
        if not isinstance(node, dict):
            return node
        if _is_inline_object(node):
            return self._claim(name, node, parent)
        return self._walk_def(node, name)

    def _variant(self, node: Any, parent: str, index: int) -> Any:
        if not _is_inline_object(node):
            return self._walk_def(node, parent) if isinstance(node, dict) else node
        tag = _const_tag(node)
        return self._claim(
            parent + (pascal(str(tag)) if tag is not None else f"Variant{index}"), node, parent
        )


def _const_tag(node: Schema) -> Any:
    for prop in sorted(node.get("properties", {})):
        value = node["properties"][prop]
        if isinstance(value, dict) and "const" in value:
            return value["const"]
    if "const" in node:
        return node["const"]
    return None


def _anys_to_json_value(node: Any, *, in_properties: bool = False) -> Any:
    """Point every "any JSON" value position at the JSONValue definition."""
    json_value = {"$ref": REF_PREFIX + JSON_VALUE}
    if isinstance(node, list):
        return [_anys_to_json_value(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: Schema = {}
    for key, value in node.items():
        if in_properties:
            out[key] = (
                json_value | _annotations(value) if is_any(value) else _anys_to_json_value(value)
            )
        elif key == "properties" and isinstance(value, dict):
            out[key] = _anys_to_json_value(value, in_properties=True)
        elif key == "items" and is_any(value):
            out[key] = json_value
        elif key == "additionalProperties" and is_any(value) and "properties" not in node:
            out[key] = json_value
        elif key in ("const", "enum", "default", "examples"):
            out[key] = value
        else:
            out[key] = _anys_to_json_value(value)
    return out


def _flatten_all_of(defs: dict[str, Schema]) -> None:
    """`allOf` of object schemas -> one object (the later, narrower member wins a shared property).

    Models then stand alone instead of subclassing with narrowed field types, which type
    checkers rightly reject as incompatible overrides.
    """

    def merged(node: Schema, depth: int = 0) -> Schema:
        if depth > 32:
            raise CodegenError("allOf nesting too deep")
        props: Schema = {}
        required: list[str] = []
        extra: Schema = {}
        for part in node["allOf"]:
            target = defs.get(ref_name(part) or "", part) if ref_name(part) else part
            if not isinstance(target, dict) or target.get("type", "object") != "object":
                raise CodegenError(f"allOf member {part!r} is not an object schema")
            if "allOf" in target:
                target = merged(target, depth + 1)
            for name, value in target.get("properties", {}).items():
                if name in props and not (is_any(props[name]) or is_any(value)):
                    base = props[name].get("type")
                    if base is not None and value.get("type", base) != base:
                        raise CodegenError(f"allOf members disagree on the type of {name!r}")
                props[name] = value if name not in props or not is_any(value) else props[name]
            required += [r for r in target.get("required", []) if r not in required]
            if "additionalProperties" in target:
                extra["additionalProperties"] = target["additionalProperties"]
        out = {k: v for k, v in node.items() if k != "allOf"}
        return out | extra | {"type": "object", "properties": props, "required": required}

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(v) for v in node]
        if not isinstance(node, dict):
            return node
        node = {k: visit(v) for k, v in node.items()}
        return merged(node) if isinstance(node.get("allOf"), list) else node

    for name in sorted(defs):
        defs[name] = visit(defs[name])


def _annotations(node: Schema) -> Schema:
    return {k: v for k, v in node.items() if k in ("description", "title")}


def _add_discriminators(defs: dict[str, Schema]) -> None:
    """anyOf/oneOf of definitions that all pin the same property to distinct constants."""

    def tags(member: Any, prop: str) -> Any:
        target = defs.get(ref_name(member) or "", {})
        value = target.get("properties", {}).get(prop, {})
        return value.get("const") if prop in target.get("required", []) else None

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for v in node:
                visit(v)
            return
        if not isinstance(node, dict):
            return
        for key in _COMPOSITE_KEYS:
            members = node.get(key)
            if isinstance(members, list) and len(members) > 1 and all(ref_name(m) for m in members):
                for prop in ("method", "type", "status"):
                    values = [tags(m, prop) for m in members]
                    if all(isinstance(v, str) for v in values) and len(set(values)) == len(values):
                        node["discriminator"] = {"propertyName": prop}
                        break
        for value in node.values():
            visit(value)

    visit(defs)


NULLABLE_MARK = (
    "x-nullable"  # read by mcp_wire_runtime.base (NULLABLE_MARK): null allowed when optional
)


def _allows_null(node: Any, defs: dict[str, Schema], seen: frozenset[str] = frozenset()) -> bool:
    if not isinstance(node, dict):
        return False
    name = ref_name(node)
    if name == JSON_VALUE:
        return False  # any JSON value: the models allow null by the type itself
    if name is not None:
        return name not in seen and _allows_null(defs.get(name), defs, seen | {name})
    typ = node.get("type")
    if typ == "null" or (isinstance(typ, list) and "null" in typ):
        return True
    if node.get("const", 0) is None or None in (node.get("enum") or ()):
        return True
    return any(_allows_null(v, defs, seen) for k in _COMPOSITE_KEYS for v in node.get(k) or ())


def _mark_nullable_optionals(defs: dict[str, Schema]) -> None:
    """An optional member reads as None when absent; mark those whose schema also allows null
    (the models refuse null for every other optional member). Any-JSON members need no mark."""
    for definition in defs.values():
        props = definition.get("properties")
        if not isinstance(props, dict):
            continue
        required = set(definition.get("required") or ())
        for name, prop in props.items():
            if name not in required and _allows_null(prop, defs):
                props[name] = {**prop, NULLABLE_MARK: True}


def _declare_base_meta(defs: dict[str, Schema]) -> None:
    """Every request's and notification's params declare the `_meta` of the base `Request` or
    `Notification` (legacy schemas spell it out there only), so that a progress token is a
    member of the params, not an unknown one."""
    for base, unions in (
        ("Request", ("ClientRequest", "ServerRequest")),
        ("Notification", ("ClientNotification", "ServerNotification")),
    ):
        params = defs.get(ref_name(_member(defs.get(base), "params")) or "")
        meta = _member(params, "_meta")
        if meta is None:
            continue
        for union in unions:
            for message in (defs.get(union) or {}).get("anyOf") or ():
                target = defs.get(
                    ref_name(_member(defs.get(ref_name(message) or ""), "params")) or ""
                )
                if isinstance(target, dict) and _member(target, "_meta") is None:
                    target.setdefault("properties", {})["_meta"] = copy.deepcopy(meta)


def _member(node: Any, name: str) -> Any:
    props = node.get("properties") if isinstance(node, dict) else None
    return props.get(name) if isinstance(props, dict) else None


def normalize(schema: Schema, revision: str) -> tuple[Schema, dict[str, str]]:
    """Canonical schema for model generation, and the inline objects hoisted (name -> parent)."""
    schema = copy.deepcopy(schema)
    defs = _rewrite_refs(definitions_of(schema))
    apply_patches(defs, revision)
    # TSDoc markup ({@link X}, @deprecated, ...) -> plain docstring text
    defs = {
        name: rewrite_descriptions(d, defs.keys(), _LITERAL_KEYS, _SCHEMA_MAP_KEYS)
        for name, d in defs.items()
    }
    _flatten_all_of(defs)
    defs = _keep_ints(defs)
    if JSON_VALUE not in defs:
        defs[JSON_VALUE] = {"description": "Any JSON value."}
    defs = {name: _anys_to_json_value(d) if name != JSON_VALUE else d for name, d in defs.items()}
    hoister = _Hoister(defs)
    hoister.run()
    _declare_base_meta(defs)
    _add_discriminators(defs)
    _mark_nullable_optionals(defs)
    dialect = schema.get("$schema", "https://json-schema.org/draft/2020-12/schema")
    return {"$schema": dialect, "$defs": dict(sorted(defs.items()))}, hoister.hoisted
