"""An extension's inline copies of core definitions, replaced by references to the core's.

An extension written against the SDK's types (MCP Apps) spells the core shapes it uses out
inline (a message's content blocks, a resource's contents, an icon), each of which would
otherwise become a class of its own per place (`...ContentItemResourceResourceText` beside
the core's `TextResourceContents`). An inline subschema that accepts what a core definition
accepts is replaced by a reference to that definition, so the extension's models reuse the
core's classes.

"Accepts what the core definition accepts" is judged on a form of both schemas (`_form`):
annotations dropped (descriptions, titles, `format`, which JSON Schema 2020-12 does not assert
and the models do not check), references resolved, `required`, `enum` and a union's members in
a fixed order. Two differences of the copies are allowed, both upstream's generator's artifacts
(zod): a copy may be closed (`additionalProperties: false`) where the core definition is open,
and a `date-time` string may carry zod's date-time pattern where the core's has none. The core
class accepts at least what the copy accepts either way: it never rejects a frame the
extension's schema allows.
"""

from __future__ import annotations

import json
from typing import Any

from codegen.normalize import REF_PREFIX, ref_name

Schema = dict[str, Any]

_ANNOTATIONS = frozenset(
    {"description", "title", "$schema", "$comment", "examples", "$id", "format", "deprecated"}
)
_LITERALS = ("const", "enum", "default", "examples")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")


def _form(node: Any, defs: Schema, copy: bool, named: frozenset[str], path: frozenset[str]) -> Any:
    """The comparison form of a schema (`copy`: the extension's side, where the artifacts of its
    generator are dropped). A reference to a `named` definition (a reusable core one) stays a
    name: the copies inside a copy are references already (innermost first); any other is
    resolved (an alias such as `MetaObject`, an extension's own enumeration), but for a
    definition on `path` (recursion)."""
    if isinstance(node, list):
        return [_form(v, defs, copy, named, path) for v in node]
    if not isinstance(node, dict):
        return node
    if (name := ref_name(node)) is not None:
        if name in named or name in path or not isinstance(defs.get(name), dict):
            return {"$ref": name}
        return _form(defs[name], defs, copy, named, path | {name})
    out: Schema = {}
    for key, value in node.items():
        if key in _ANNOTATIONS or (key == "propertyNames" and value == {"type": "string"}):
            continue
        if key == "additionalProperties" and (value in ({}, True) or (copy and value is False)):
            continue  # open (or, in a copy, closed by its generator's habit)
        if key == "pattern" and copy and node.get("format") == "date-time":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            if value:
                out[key] = {k: _form(v, defs, copy, named, path) for k, v in sorted(value.items())}
        elif key in _LITERALS:
            out[key] = sorted(value, key=json.dumps) if key == "enum" else value
        elif key == "required" and isinstance(value, list):
            out[key] = sorted(value)
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            out[key] = sorted(_form(value, defs, copy, named, path), key=_key)
        else:
            out[key] = _form(value, defs, copy, named, path)
    return out


def _key(form: Any) -> str:
    return json.dumps(form, sort_keys=True)


def _worth_reusing(node: Any) -> bool:
    """An object with members, an enumeration or a union: never a bare string or number, which
    a core alias (`Cursor`) would match by chance."""
    return isinstance(node, dict) and bool(
        node.get("properties") or node.get("enum") or node.get("anyOf")
    )


def core_forms(core_defs: Schema) -> dict[str, str]:
    """{form: core definition} of the core definitions a copy may be replaced by; a form two of
    them share names neither (which one a copy means is not known)."""
    named = frozenset(n for n, d in core_defs.items() if _worth_reusing(d))
    seen: dict[str, list[str]] = {}
    for name in sorted(named):
        form = _form(core_defs[name], core_defs, False, named, frozenset({name}))
        seen.setdefault(_key(form), []).append(name)
    return {form: names[0] for form, names in seen.items() if len(names) == 1}


def reuse_core(own: Schema, core_defs: Schema) -> tuple[Schema, list[str]]:
    """The extension's own definitions with every inline copy of a core definition replaced by
    a reference to it (innermost first), and the core definitions so reused (one entry per
    replaced copy). An own definition itself stays (its name is the extension's)."""
    forms = core_forms(core_defs)
    named = frozenset(forms.values())
    defs = core_defs | own
    reused: list[str] = []

    def within(node: Schema) -> Schema:
        return {
            k: (
                v
                if k in _LITERALS
                else {p: visit(s) for p, s in v.items()} if k in _SCHEMA_MAPS else visit(v)
            )
            for k, v in node.items()
        }

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(v) for v in node]
        if not isinstance(node, dict) or ref_name(node) is not None:
            return node
        out = within(node)
        form = _form(out, defs, True, named, frozenset()) if _worth_reusing(out) else None
        core = forms.get(_key(form)) if form is not None else None
        if core is None:
            return out
        reused.append(core)
        kept = {k: v for k, v in out.items() if k in ("description", "title")}
        return {"$ref": REF_PREFIX + core, **kept}

    return {name: within(node) for name, node in own.items()}, reused
