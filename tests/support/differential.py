"""The differential tests' oracle, samples and known exceptions (both directions)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support import SCHEMAS, official_schema
from tests.support.oracle import (
    official_definitions,
    reference_table,
)

SEED = os.environ.get("MCPGEN_DIFF_SEED")


EXCEPTIONS_FILE = Path(__file__).parent.parent / "codegen" / "differential_exceptions.toml"


RECURSION_DEPTH = 2


_ANNOTATIONS = {"description", "title", "$comment", "examples", "default", "deprecated"}


_LITERAL_KEYS = {"const", "enum", "default", "examples"}


_SCHEMA_MAPS = {"properties", "patternProperties", "dependentSchemas"}  # name -> schema


def generation_schema(
    revision: str, name: str, *, names_as_properties: bool = True
) -> dict[str, Any]:
    """The official definition with every `$ref` inlined, for hypothesis-jsonschema.

    Equivalent to `{"$ref": ..., "$defs": <whole table>, "$schema": ...}` (which the oracle
    uses), without making the generator canonicalise the whole table for each definition, and
    with two generation-only rewrites that never let an invalid instance through:

    - `number` is drawn as `anyOf: [integer, number]` (the same values), because
      hypothesis-jsonschema draws only floats for `number`, and integers are the numbers whose
      type a model could lose (1 -> 1.0);
    - hypothesis-jsonschema cannot unfold recursive references, so where a definition would
      nest inside itself more than RECURSION_DEPTH times it is `false` (not drawn) instead;
    - an object whose `propertyNames` admit a few names only (constants: an MCP Apps host's
      style variables) is drawn as those `properties`, each with the `additionalProperties`
      schema, and no other member: the same objects, without drawing arbitrary names and
      discarding almost all of them (one definition took 150 s). Not for the reverse suite
      (`names_as_properties=False`): its few instances drawn so have large values of any JSON,
      whose every node it mutates (the same definition then took 250 s instead of 20 s).
    """
    defs = reference_table(revision)
    dialect = official_schema(revision)["$schema"]
    siblings_apply = "draft-07" not in dialect  # draft-07 ignores the siblings of a `$ref`

    def inline(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(v, stack) for v in node]
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            target = node["$ref"].rsplit("/", 1)[-1]
            if stack.count(target) >= RECURSION_DEPTH:
                return False
            resolved = inline(defs[target], (*stack, target))
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if not siblings_apply or not (rest.keys() - _ANNOTATIONS):
                return resolved
            return {"allOf": [inline(rest, stack), resolved]}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _LITERAL_KEYS:
                out[key] = value
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: inline(v, stack) for k, v in value.items()}
            else:
                out[key] = inline(value, stack)
        if names_as_properties:
            out = _names_as_properties(out)
        types = out.get("type")
        if types == "number" or (isinstance(types, list) and "number" in types):
            others = [t for t in ([types] if isinstance(types, str) else types) if t != "number"]
            # `$comment` keeps hypothesis-jsonschema from merging the branches back to `number`.
            split = [{"type": sorted({*others, "integer"})}, {"type": "number", "$comment": "x"}]
            out = {k: v for k, v in out.items() if k != "type"}
            out = {"allOf": [out, {"anyOf": split}]} if "anyOf" in out else out | {"anyOf": split}
        return out

    out = inline(defs[name], (name,))
    return {"$schema": dialect, **out} if isinstance(out, dict) else out


def _names_as_properties(node: dict[str, Any]) -> dict[str, Any]:
    names = _constant_names(node.get("propertyNames"))
    if names is None or node.keys() & {"properties", "patternProperties"}:
        return node
    each = node.get("additionalProperties", True)
    rest = {k: v for k, v in node.items() if k not in ("propertyNames", "additionalProperties")}
    return rest | {"properties": dict.fromkeys(names, each), "additionalProperties": False}


def _constant_names(schema: Any) -> list[str] | None:
    """The names a `propertyNames` schema admits when they are constants, else None."""
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("const"), str):
        return [schema["const"]]
    if isinstance(schema.get("enum"), list) and all(isinstance(v, str) for v in schema["enum"]):
        return list(schema["enum"])
    branches = schema.get("anyOf")
    if isinstance(branches, list) and branches:
        found = [_constant_names(b) for b in branches]
        if all(f is not None for f in found):
            return [n for f in found if f is not None for n in f]
    return None


KINDS = {
    "ungenerable": "hypothesis-jsonschema cannot draw instances of this definition",
    "model-rejects": "the model rejects instances the official schema accepts",
    "round-trip": "the model accepts, but dumps something other than the input",
    # tests/codegen/test_reverse_differential.py: the other direction
    "model-accepts": "the model accepts mutants of valid instances that the schema rejects",
}


REVERSE_KINDS = {"model-accepts"}


@dataclass(frozen=True)
class KnownFailure:
    revision: str
    definition: str
    kind: str
    reason: str
    match: str  # a regex the failure message must contain
    # why the failure comes in some runs and not others: then its absence is not stale
    intermittent: str = ""


def load_exceptions(
    path: Path = EXCEPTIONS_FILE, *, reverse: bool = False
) -> dict[tuple[str, str], KnownFailure]:
    """The entries of one direction: this test's, or (`reverse`) the reverse test's."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[tuple[str, str], KnownFailure] = {}
    for entry in data.get("exception", []):
        keys = {"revision", "definition", "kind", "reason", "match", "intermittent"}
        unknown = entry.keys() - keys
        assert not unknown, f"{path.name}: unknown keys {sorted(unknown)} in {entry}"
        exc = KnownFailure(
            entry["revision"],
            entry["definition"],
            entry["kind"],
            entry["reason"],
            entry["match"],
            entry.get("intermittent", ""),
        )
        assert exc.kind in KINDS, f"{path.name}: kind must be one of {sorted(KINDS)}: {entry}"
        assert exc.reason.strip(), f"{path.name}: every exception needs a reason: {entry}"
        if (exc.kind in REVERSE_KINDS) is not reverse:
            continue
        key = (exc.revision, exc.definition)
        assert key not in out, f"{path.name}: {key} is listed twice"
        out[key] = exc
    return out


CASES = [(rev, name) for rev in SCHEMAS for name in sorted(official_definitions(rev))]


WORKERS = int(os.environ.get("MCPGEN_DIFF_WORKERS", "0")) or os.cpu_count() or 1
