"""The official examples of 2026-07-28 against the generated models.

Each example (read from the local mirror of the official inputs, never copied here) must
validate with the model named like its folder and round-trip exactly (type-strict: ints stay
ints). Broken variants of each example, derived from the example and the official schema, must
be rejected by the model; a variant only counts when the official schema rejects it too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

from tests.oracle import adapter, dump, first_difference, json_equal, official_definitions, oracle
from tests.support import EXAMPLES

REVISION = "2026-07-28"
EXAMPLE_FILES = sorted((EXAMPLES / REVISION).glob("*/*.json"))
EXPECTED_EXAMPLES = 129  # the official set at the pinned upstream commit

# One value of each JSON type, chosen so that no lenient reading can take it for another type.
WRONG_VALUES: dict[str, Any] = {
    "string": "wrong-type",
    "integer": 12345,
    "number": 0.5,
    "boolean": True,
    "null": None,
    "array": ["wrong-type"],
    "object": {"wrong": "type"},
}

Variant = tuple[str, Any]  # (what was broken, the broken instance)


def _example_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _load(path: Path) -> tuple[str, Any]:
    return path.parent.name, json.loads(path.read_text(encoding="utf-8"))


def _resolve(node: Any) -> Any:
    defs = official_definitions(REVISION)
    for _ in range(64):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            return node
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    raise AssertionError("$ref chain too long")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"


def _allowed_types(node: Any) -> set[str] | None:
    """JSON types a schema node admits; None where it does not constrain the type."""
    node = _resolve(node)
    if not isinstance(node, dict):
        return None
    if "const" in node:
        return {_json_type(node["const"])}
    if isinstance(node.get("enum"), list):
        return {_json_type(v) for v in node["enum"]}
    typ = node.get("type")
    if typ is not None:
        types = set(typ) if isinstance(typ, list) else {typ}
        return types | {"integer"} if "number" in types else types
    members = node.get("anyOf", node.get("oneOf"))
    if isinstance(members, list):
        union: set[str] = set()
        for member in members:
            allowed = _allowed_types(member)
            if allowed is None:
                return None
            union |= allowed
        return union
    return None


def _property_schema(definition: dict[str, Any], key: str) -> Any:
    props = definition.get("properties", {})
    if key in props:
        return props[key]
    extra = definition.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _object_schemas(node: Any) -> Iterator[dict[str, Any]]:
    """The object schemas a value at `node` may match (union members, resolved)."""
    node = _resolve(node)
    if not isinstance(node, dict):
        return
    if isinstance(node.get("properties"), dict):
        yield node
    for key in ("anyOf", "oneOf", "allOf"):
        for member in node.get(key, []):
            yield from _object_schemas(member)


def _mutated(const: Any) -> Any:
    if isinstance(const, bool):
        return not const
    if isinstance(const, int | float):
        return const + 1
    if isinstance(const, str):
        return const + "-mutated"
    return None if const is not None else "mutated"


def _const_variants(instance: dict[str, Any], definition: dict[str, Any]) -> Iterator[Variant]:
    for prop, schema in sorted(definition.get("properties", {}).items()):
        schema = _resolve(schema)
        if isinstance(schema, dict) and "const" in schema and prop in instance:
            if json_equal(instance[prop], schema["const"]):  # the union member this value is
                wrong = _mutated(schema["const"])
                yield f"{prop}={wrong!r}", instance | {prop: wrong}


def _nested_const_variants(
    instance: dict[str, Any], definition: dict[str, Any]
) -> Iterator[Variant]:
    """Constants one object level down: in object members, in map values, in array items."""
    for key in sorted(instance):
        value, schema = instance[key], _property_schema(definition, key)
        schema = _resolve(schema)
        if not isinstance(schema, dict):
            continue
        if isinstance(value, list) and "items" in schema:
            elements, schema = list(enumerate(value)), schema["items"]
        else:
            elements = [(None, value)]
        for index, element in elements:
            if not isinstance(element, dict):
                continue
            seen = []
            for nested in _object_schemas(schema):
                for label, broken in _const_variants(element, nested):
                    if any(json_equal(broken, other) for other in seen):
                        continue
                    seen.append(broken)
                    if index is None:
                        yield f"{key}.{label}", instance | {key: broken}
                    else:
                        whole = list(value)
                        whole[index] = broken
                        yield f"{key}[{index}].{label}", instance | {key: whole}


def negative_variants(type_name: str, instance: Any) -> list[Variant]:
    """Broken copies of a valid instance: required member dropped, constant changed, wrong type."""
    definition = _resolve(official_definitions(REVISION)[type_name])
    assert isinstance(instance, dict) and isinstance(definition, dict)
    out: list[Variant] = []
    required = [r for r in definition.get("required", []) if r in instance]
    for prop in required:
        out.append((f"without {prop}", {k: v for k, v in instance.items() if k != prop}))
    consts = list(_const_variants(instance, definition))
    out += consts or list(_nested_const_variants(instance, definition))
    # Wrong types for the required members; where nothing is required, for the members present,
    # but not null there: an optional member is `X | None = None` in Python, so an explicit null
    # reads as "absent" (and is written back unchanged), a known leniency not asserted here.
    for prop in required or sorted(instance):
        schema = _property_schema(definition, prop)
        allowed = _allowed_types(schema) if schema is not None else None
        if allowed is None:
            continue
        for typ, wrong in WRONG_VALUES.items():
            if typ not in allowed and (required or typ != "null"):
                out.append((f"{prop} as {typ}", instance | {prop: wrong}))
    return out


def _rejected_by_model(type_name: str, instance: Any) -> bool:
    """The model must refuse the instance both as Python data and as JSON text (the wire)."""
    ta = adapter(REVISION, type_name)
    verdicts = []
    for validate, data in (
        (ta.validate_python, instance),
        (ta.validate_json, json.dumps(instance)),
    ):
        try:
            validate(data)
        except pydantic.ValidationError:
            verdicts.append(True)
        else:
            verdicts.append(False)
    return all(verdicts)


def test_every_official_example_is_found():
    assert len(EXAMPLE_FILES) == EXPECTED_EXAMPLES, EXAMPLES / REVISION


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=_example_id)
def test_example_validates_and_round_trips(path: Path):
    type_name, data = _load(path)
    assert oracle(REVISION, type_name).is_valid(data), "the official schema rejects its own example"
    value = adapter(REVISION, type_name).validate_python(data)
    out = dump(REVISION, type_name, value)
    assert json_equal(out, data), first_difference(out, data)
    from_wire = adapter(REVISION, type_name).validate_json(path.read_bytes())
    out = dump(REVISION, type_name, from_wire)
    assert json_equal(out, data), first_difference(out, data)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=_example_id)
def test_example_broken_variants_are_rejected(path: Path):
    type_name, data = _load(path)
    check = oracle(REVISION, type_name)
    negatives = [
        (label, v) for label, v in negative_variants(type_name, data) if not check.is_valid(v)
    ]
    assert negatives, "no broken variant of this example that the official schema rejects"
    accepted = [label for label, v in negatives if not _rejected_by_model(type_name, v)]
    assert (
        not accepted
    ), f"the model accepts {len(accepted)}/{len(negatives)} invalid variants: {accepted}"
