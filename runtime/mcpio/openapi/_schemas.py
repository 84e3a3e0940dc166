"""The document's schemas as plain JSON Schema (2020-12): each component schema
(`#/components/schemas/X`) a `$defs` entry that a schema using it carries (a cycle is then
nothing special), any other local `$ref` inlined (a recursive one kept in `$defs` too: a cycle
is found, never followed twice), OpenAPI 3.0's own dialect (`nullable`, boolean
`exclusiveMinimum`) rewritten. Only local references (`#/...`) are read.

Kept as `$defs`, a component used in many places is written once per schema, not once per
place: a thousand operations over deeply nested components stay small."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpio.openapi._document import is_version_31

# Keys whose values are data, not schemas: never walked for `$ref`s.
_DATA_KEYS = frozenset({"example", "examples", "enum", "const", "default"})


class Schemas:
    """The schemas of one document, each reference inlined once and kept (see the module)."""

    def __init__(self, document: Mapping[str, Any], typed: bool = False) -> None:
        self.document = document
        # `typed` (the typed modules: a model per `$defs` entry): `schema` leaves a reference
        # at the root as it is and `$defs` out (`defs` has them all).
        self.typed = typed
        self.dialect_30 = not is_version_31(document)
        self.defs: dict[str, Any] = {}  # the recursive schemas, by their `$defs` name
        self._names: dict[str, str] = {}  # pointer -> `$defs` name
        self._inlined: dict[str, Any] = {}  # pointer -> its schema, inlined
        self._recursive: set[str] = set()
        self._walking: list[str] = []
        self._named: dict[str, set[str]] = {}  # a definition's own `$defs` references

    def target(self, ref: str) -> Any:
        """What a local reference (`#/components/schemas/Pet`) points to.

        Raises:
            ValueError: Not a local reference, or nothing at it.
        """
        if not ref.startswith("#"):
            raise ValueError(f"only local references (#/...) are read, not {ref!r}")
        node: Any = self.document
        for part in ref[1:].split("/")[1:]:
            key = part.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(key)] if isinstance(node, list) else node[key]
            except (KeyError, IndexError, ValueError, TypeError):
                raise ValueError(f"the reference {ref!r} points to nothing") from None
        return node

    def resolve(self, node: Any) -> Any:
        """A parameter, request body or response with its `$ref` chain followed.

        Raises:
            ValueError: The chain is a cycle, or a reference points to nothing.
        """
        seen: set[str] = set()
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            ref: str = node["$ref"]  # pyright: ignore[reportUnknownVariableType]
            if ref in seen:
                raise ValueError(f"the reference {ref!r} refers to itself")
            seen.add(ref)
            node = self.target(ref)
        return node

    def schema(self, node: Any) -> dict[str, Any]:
        """`node` as a JSON Schema, with the `$defs` of the recursive schemas it names."""
        out = self._walk(node if isinstance(node, Mapping) else {})
        if self.typed:
            return out
        ref = out.get("$ref")
        if isinstance(ref, str):  # a reference at the root: its definition there
            siblings = {k: v for k, v in out.items() if k != "$ref"}
            out = {**self.defs[ref.removeprefix("#/$defs/")], **siblings}
        used = self._defs_used(out)
        if not used:
            return out
        return {**out, "$defs": {name: self.defs[name] for name in sorted(used)}}

    def _walk(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self._walk(item) for item in node]  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            siblings = {k: self._walk(v) for k, v in node.items() if k != "$ref"}
            return self._referenced(ref, siblings)
        out: dict[str, Any] = {
            k: v if k in _DATA_KEYS else self._walk(v) for k, v in node.items()  # pyright: ignore
        }
        return _from_30(out) if self.dialect_30 else _exclusive_bounds(out)

    def _referenced(self, ref: str, siblings: dict[str, Any]) -> dict[str, Any]:
        """The schema at `ref`, inlined; a `$defs` reference where it is recursive."""
        if ref.startswith("#/components/schemas/"):
            name = self._name(ref)
            if name not in self.defs and ref not in self._walking:
                self._walking.append(ref)
                try:
                    self.defs[name] = self._walk(self.target(ref))
                finally:
                    self._walking.pop()
            return {"$ref": f"#/$defs/{name}", **siblings}
        if ref not in self._inlined:
            if ref in self._walking or ref in self._recursive:
                self._recursive.add(ref)
                return {"$ref": f"#/$defs/{self._name(ref)}", **siblings}
            self._walking.append(ref)
            try:
                out = self._walk(self.target(ref))
            finally:
                self._walking.pop()
            if ref in self._recursive:
                self.defs[self._name(ref)] = out
                return {"$ref": f"#/$defs/{self._name(ref)}", **siblings}
            self._inlined[ref] = out
        out = self._inlined[ref]
        return {**out, **siblings} if siblings else out

    def _name(self, ref: str) -> str:
        name = self._names.get(ref)
        if name is None:
            base = re.sub(r"[^A-Za-z0-9_.-]", "_", ref.rsplit("/", 1)[-1]) or "schema"
            name, taken = base, set(self._names.values())
            while name in taken:
                name += "_"
            self._names[ref] = name
        return name

    def _defs_used(self, schema: Any) -> set[str]:
        """The `$defs` names `schema` refers to, and those they refer to."""
        used: set[str] = set()
        pending = list(_refs_in(schema))
        while pending:
            name = pending.pop()
            if name not in used:
                used.add(name)
                named = self._named.get(name)
                if named is None:  # each definition's own references, found once
                    named = self._named[name] = _refs_in(self.defs[name])
                pending.extend(named)
        return used


def _refs_in(schema: Any) -> set[str]:
    """The `$defs` names `schema` itself refers to (not those of the definitions it names)."""
    found: set[str] = set()
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(node, dict):
            ref = node.get("$ref")  # pyright: ignore[reportUnknownVariableType]
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                found.add(ref.removeprefix("#/$defs/"))
            pending.extend(v for k, v in node.items() if k not in _DATA_KEYS)  # pyright: ignore
    return found


def _exclusive_bounds(schema: dict[str, Any]) -> dict[str, Any]:
    """A boolean `exclusiveMinimum` (draft 4's, which 3.0 has and some 3.1 documents keep) as
    2020-12's number."""
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = schema.get(exclusive)
        if flag is True and bound in schema:
            schema[exclusive] = schema.pop(bound)
        elif isinstance(flag, bool):
            del schema[exclusive]
    return schema


def _from_30(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI 3.0 schema object's own keywords as JSON Schema 2020-12 says them."""
    schema = _exclusive_bounds(schema)
    if schema.pop("nullable", False) is not True:
        return schema
    kind = schema.get("type")
    if isinstance(kind, str):
        schema["type"] = [kind, "null"]
        enum = schema.get("enum")
        if isinstance(enum, list) and None not in enum:
            schema["enum"] = [*enum, None]  # pyright: ignore[reportUnknownArgumentType]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}
