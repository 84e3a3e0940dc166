"""An extension's schema as a generator input, next to the core revision it extends.

Upstream publishes an extension (e.g. `io.modelcontextprotocol/tasks`) with a schema of its own:
JSON Schema 2020-12 in another style than the core schemas (every definition carries `$schema`;
`allOf` of a `$ref` and inline objects; `anyOf` of `const`s for enumerations; `allOf` with an
`anyOf` member for "a base plus one of several shapes"; `propertyNames: {type: string}`), and it
repeats the core definitions it uses. This module:

1. restyles the extension's own definitions into the core schemas' style (`restyle`), without
   changing what they accept: `allOf` distributed over an `anyOf` member, `anyOf` of string
   constants as an `enum`, an inline subschema equal to one of the extension's own named
   definitions replaced by a reference to it, the no-op keywords dropped;
2. compares every repeated definition with the core revision's own, by a normalized form
   (`canonical`: annotations dropped, keys sorted): an identical one becomes the core class (the
   extension's models import it); one that differs is an error naming it (`repeated`), never a
   second class;
3. merges the extension's own definitions into the core schema (`merged_schema`), as the IR
   reads them: its requests go client->server and its notifications server->client (the modern
   era has no other JSON-RPC directions: a server's questions are MRTR input requests), its
   results are server results, and each method its pin names as answered by a task lists the
   extension's task result beside its own results.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from codegen.core_copies import reuse_core
from codegen.errors import CodegenError
from codegen.normalize import REF_PREFIX, definitions_of, pascal, ref_name

Schema = dict[str, Any]

# Keywords that say nothing about what a schema accepts (compared away, never generated from).
_ANNOTATIONS = frozenset({"description", "title", "$schema", "$comment", "examples", "$id"})
# `propertyNames: {type: string}`: every JSON object's member names are strings already.
_NO_OP_PROPERTY_NAMES = {"type": "string"}


def canonical(node: Any) -> Any:
    """The form two definitions are compared in: annotations and no-op keywords dropped,
    `required` and `enum` as sets, `additionalProperties: {not: {}}` as `false`, references by
    definition name."""
    if isinstance(node, list):
        return [canonical(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ANNOTATIONS:
            continue
        if key == "propertyNames" and value == _NO_OP_PROPERTY_NAMES:
            continue
        if key == "$ref" and (name := ref_name(node)) is not None:
            out[key] = REF_PREFIX + name
        elif key in ("required", "enum") and isinstance(value, list):
            out[key] = sorted(value, key=lambda v: json.dumps(v, sort_keys=True))
        elif key == "additionalProperties" and value == {"not": {}}:
            out[key] = False
        elif key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            out[key] = {k: canonical(v) for k, v in sorted(value.items())}
        else:
            out[key] = canonical(value)
    return dict(sorted(out.items()))


def _difference(a: Any, b: Any, path: str = "") -> str:
    """Where two canonical forms first differ (a JSON-pointer-like path), for the report."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            if key not in a or key not in b:
                return f"{path}/{key}"
            if a[key] != b[key]:
                return _difference(a[key], b[key], f"{path}/{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _difference(x, y, f"{path}/{index}")
    return path or "/"


def repeated(ext_defs: Schema, core_defs: Schema, label: str) -> list[str]:
    """The definitions the extension repeats from core; an error naming each one that differs."""
    same, differ = [], []
    for name in sorted(ext_defs.keys() & core_defs.keys()):
        ours, theirs = canonical(ext_defs[name]), canonical(core_defs[name])
        if ours == theirs:
            same.append(name)
        else:
            differ.append(f"{name} (at {_difference(ours, theirs)})")
    if differ:
        raise CodegenError(
            f"{label}: repeats core definitions with a different schema: {', '.join(differ)}; "
            "an extension's copy of a core definition must be identical (or renamed)"
        )
    return same


def extension_definitions(ext: Schema, label: str) -> Schema:
    """An extension's definitions, those nested in a definition lifted to the top: a definition
    generated standalone carries its own `$defs`, which its `#/$defs/...` references name. A
    lifted name becomes a class name (`__schema0` -> `Schema0`); a name nested twice (or also
    at the top) must be the same schema each time."""
    out: Schema = {}
    nested: Schema = {}
    for name, node in definitions_of(ext).items():
        inner = node.get("$defs")
        if isinstance(inner, dict):
            node = {k: v for k, v in node.items() if k != "$defs"}
            for sub, schema in inner.items():
                if sub in nested and canonical(nested[sub]) != canonical(schema):
                    raise CodegenError(f"{label}: nested definitions {sub} differ")
                nested[sub] = schema
        out[name] = node
    renames = {sub: pascal(sub) for sub in nested}
    for sub, schema in nested.items():
        if canonical(out.setdefault(renames[sub], schema)) != canonical(schema):
            raise CodegenError(f"{label}: nested definition {sub} differs from {renames[sub]}")
    return {name: _renamed(node, renames) for name, node in out.items()}


def _renamed(node: Any, renames: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_renamed(v, renames) for v in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: v if k in ("const", "enum", "default", "examples") else _renamed(v, renames)
        for k, v in node.items()
    }
    if (name := ref_name(node)) in renames:
        out["$ref"] = REF_PREFIX + renames[name]
    return out


# ---------------------------------------------------------------------- restyling


def _is_string_const(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and isinstance(node.get("const"), str)
        and set(node) - _ANNOTATIONS <= {"type", "const"}
        and node.get("type", "string") == "string"
    )


def _clean(node: Any) -> Any:
    """No-op keywords dropped, `anyOf` of string constants as an enum, `additionalProperties:
    {not: {}}` as `false` (and a closed object's members that must be absent unnamed); depth
    first."""
    if isinstance(node, list):
        return [_clean(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$schema" or (key == "propertyNames" and value == _NO_OP_PROPERTY_NAMES):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {k: _clean(v) for k, v in value.items()}
        elif key in ("const", "enum", "default", "examples"):
            out[key] = value
        elif key == "additionalProperties" and value == {"not": {}}:
            out[key] = False
        else:
            out[key] = _clean(value)
    props = out.get("properties")
    if out.get("additionalProperties") is False and isinstance(props, dict):
        # A member no value may have (`not: {}`) of a closed object: one it does not name.
        out["properties"] = {k: v for k, v in props.items() if v != {"not": {}}}
    members = out.get("anyOf")
    if isinstance(members, list) and len(members) > 1 and all(map(_is_string_const, members)):
        rest = {k: v for k, v in out.items() if k != "anyOf"}
        return rest | {"type": "string", "enum": [m["const"] for m in members]}
    return out


def _distribute(node: Any) -> Any:
    """`allOf: [A, {anyOf: [B1, B2]}, C]` -> `anyOf: [{allOf: [A, B1, C]}, {allOf: [A, B2, C]}]`
    (the same instances: an object matches all of A, C and one of the Bi); depth first."""
    if isinstance(node, list):
        return [_distribute(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {
        k: (v if k in ("const", "enum", "default", "examples") else _distribute(v))
        for k, v in node.items()
    }
    parts = node.get("allOf")
    if not isinstance(parts, list):
        return node
    at = next(
        (
            i
            for i, p in enumerate(parts)
            if isinstance(p, dict) and "anyOf" in p and set(p) - _ANNOTATIONS == {"anyOf"}
        ),
        None,
    )
    if at is None:
        return node
    rest = {k: v for k, v in node.items() if k != "allOf"}
    branches = [
        _distribute({"allOf": [*parts[:at], branch, *parts[at + 1 :]]})
        for branch in parts[at]["anyOf"]
    ]
    return rest | {"anyOf": _flat_any_of(branches)}


def _flat_any_of(members: list[Any]) -> list[Any]:
    """`anyOf: [{anyOf: [A, B]}, C]` -> `anyOf: [A, B, C]` (the same instances): what distributing
    an `allOf` of several `anyOf` members leaves."""
    out: list[Any] = []
    for member in members:
        nested = member.get("anyOf") if isinstance(member, dict) else None
        if isinstance(nested, list) and set(member) - _ANNOTATIONS == {"anyOf"}:
            out += _flat_any_of(nested)
        else:
            out.append(member)
    return out


def _named(node: Any, own: dict[str, Any], skip: str) -> Any:
    """Inline subschemas equal to one of the extension's own named definitions (objects and
    enumerations, never trivial ones) become references to it; `skip` is the definition being
    rewritten (a definition is not a reference to itself)."""
    if isinstance(node, list):
        return [_named(v, own, skip) for v in node]
    if not isinstance(node, dict):
        return node
    form = json.dumps(canonical(node), sort_keys=True)
    for name, other in own.items():
        if name != skip and form == other:
            return {"$ref": REF_PREFIX + name}
    out = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {k: _named(v, own, skip) for k, v in value.items()}
        elif key in ("const", "enum", "default", "examples"):
            out[key] = value
        else:
            out[key] = _named(value, own, skip)
    return out


def _worth_naming(node: Any) -> bool:
    return isinstance(node, dict) and ("properties" in node or "enum" in node or "anyOf" in node)


def _consts(node: Any, defs: Schema, depth: int = 0) -> dict[str, Any]:
    """The members an object schema pins to a constant (through `allOf` and references)."""
    if depth > 16 or not isinstance(node, dict):
        return {}
    if (name := ref_name(node)) is not None:
        return _consts(defs.get(name), defs, depth + 1)
    out: dict[str, Any] = {}
    for part in node.get("allOf", []):
        out |= _consts(part, defs, depth + 1)
    for prop, value in (node.get("properties") or {}).items():
        if isinstance(value, dict) and "const" in value:
            out[prop] = value["const"]
    return out


def _hoist_variants(defs: Schema) -> None:
    """A union definition's inline variants become definitions named by the constant that tells
    them apart (`GetTaskResult` -> `GetTaskResultWorking`, ...), in place."""
    for name in sorted(defs):
        members = defs[name].get("anyOf")
        if not isinstance(members, list) or not any(
            isinstance(m, dict) and not ref_name(m) and m.keys() & {"properties", "allOf"}
            for m in members
        ):
            continue  # no inline object among them (a JSON value, say): nothing to name
        consts = [_consts(m, defs) for m in members]
        tag = next(
            (
                prop
                for prop in sorted(set.intersection(*(set(c) for c in consts)))
                if len({json.dumps(c[prop]) for c in consts}) == len(members)
            ),
            None,
        )
        if tag is None:
            raise CodegenError(f"{name}: no constant tells its variants apart")
        refs = []
        for member, values in zip(members, consts, strict=True):
            if ref_name(member):
                refs.append(member)
                continue
            variant = name + pascal(str(values[tag]))
            if variant in defs:
                raise CodegenError(f"cannot name a variant of {name} {variant}: the name is taken")
            defs[variant] = member
            refs.append({"$ref": REF_PREFIX + variant})
        defs[name] = {**defs[name], "anyOf": refs}


def restyle(defs: Schema) -> Schema:
    """The extension's own definitions in the core schemas' style (what they accept unchanged);
    references to the definitions it repeats from core stay as they are."""
    out = {name: _distribute(_clean(copy.deepcopy(d))) for name, d in defs.items()}
    forms = {
        name: json.dumps(canonical(d), sort_keys=True)
        for name, d in sorted(out.items())
        if _worth_naming(d)
    }
    # A definition itself is never replaced (two named definitions may well be equal).
    out = {
        name: {k: _named(v, forms, name) if k not in ("const", "enum") else v for k, v in d.items()}
        for name, d in sorted(out.items())
    }
    _hoist_variants(out)
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------- merging with core


def _method(node: Any) -> tuple[str, str] | None:
    """(kind, method) of a message definition in the extension's style: an `allOf` with a
    JSON-RPC request or notification, pinning `method` to a constant."""
    if not isinstance(node, dict):
        return None
    parts: list[Any] = node["allOf"] if isinstance(node.get("allOf"), list) else [node]
    kinds = {ref_name(p) for p in parts if isinstance(p, dict)} & {
        "JSONRPCRequest",
        "JSONRPCNotification",
    }
    for part in parts:
        method = part.get("properties", {}).get("method", {}) if isinstance(part, dict) else {}
        if isinstance(method, dict) and isinstance(method.get("const"), str) and kinds:
            kind = "request" if "JSONRPCRequest" in kinds else "notification"
            return kind, method["const"]
    return None


def _add_member(defs: Schema, union: str, member: str) -> None:
    node = defs.get(union)
    if not isinstance(node, dict) or not isinstance(node.get("anyOf"), list):
        raise CodegenError(f"the core schema has no union {union} to extend")
    ref = {"$ref": REF_PREFIX + member}
    if ref not in node["anyOf"]:
        node["anyOf"] = [*node["anyOf"], ref]


def merged_schema(
    core: Schema, ext: Schema, label: str, task_methods: Iterable[str]
) -> tuple[Schema, list[str], list[str]]:
    """The core schema with the extension's own definitions: (schema, own names, repeated
    names). The repeated definitions are core's (checked identical); core's unions list the
    extension's messages and results."""
    core_defs = definitions_of(core)
    ext_defs = extension_definitions(ext, label)
    same = repeated(ext_defs, core_defs, label)
    own = restyle({n: d for n, d in ext_defs.items() if n not in core_defs})
    own = reuse_core(own, core_defs)[0]  # its inline copies of core definitions: the core's
    defs = copy.deepcopy(core_defs)
    defs.update(own)
    messages = {n: kind_method for n, d in ext_defs.items() if (kind_method := _method(d))}
    for name, (kind, _) in sorted(messages.items()):
        if name not in own:
            continue
        if kind == "request":
            _add_member(defs, "ClientRequest", name)
            result = name.removesuffix("Request") + "Result"
            if result not in own:
                raise CodegenError(f"{label}: request {name} has no result {result}")
            _add_member(defs, "ServerResult", result)
        else:
            _add_member(defs, "ServerNotification", name)
    task_result = _task_result(own, label) if task_methods else ""
    for method in task_methods:
        response = _response_of(core_defs, method, label)
        result = defs[response].setdefault("properties", {}).get("result")
        if not isinstance(result, dict):
            raise CodegenError(f"{label}: {response} has no result member")
        members = result["anyOf"] if isinstance(result.get("anyOf"), list) else [result]
        result = {k: v for k, v in result.items() if k not in ("$ref", "anyOf")}
        result["anyOf"] = [*members, {"$ref": REF_PREFIX + task_result}]
        defs[response]["properties"]["result"] = result
    if task_methods:
        _add_member(defs, "ServerResult", task_result)
    schema = {k: v for k, v in core.items() if k not in ("$defs", "definitions")}
    return schema | {"$defs": dict(sorted(defs.items()))}, sorted(own), same


def _task_result(own: Schema, label: str) -> str:
    """The extension's result that a task-answered method may send: the one result definition
    that pins `resultType` to a constant of its own."""
    found = []
    for name, node in own.items():
        parts = node.get("allOf", [node]) if isinstance(node, dict) else []
        for part in parts:
            kind = (
                part.get("properties", {}).get("resultType", {}) if isinstance(part, dict) else {}
            )
            if isinstance(kind, dict) and isinstance(kind.get("const"), str):
                if kind["const"] != "complete" and ref_name(parts[0]) == "Result":
                    found.append(name)
    if len(found) != 1:
        raise CodegenError(
            f"{label}: cannot tell its task result (results pinning their own resultType: "
            f"{', '.join(sorted(found)) or 'none'})"
        )
    return found[0]


def _response_of(core_defs: Schema, method: str, label: str) -> str:
    for name, node in sorted(core_defs.items()):
        props = node.get("properties", {}) if isinstance(node, dict) else {}
        pinned = props.get("method", {}) if isinstance(props, dict) else {}
        if isinstance(pinned, dict) and pinned.get("const") == method and "id" in props:
            response = name.removesuffix("Request") + "ResultResponse"
            if response in core_defs:
                return response
    raise CodegenError(f"{label}: the core schema has no response definition for {method}")
