"""The official schema as oracle, the generated models as subject, and a type-strict JSON equality.

Shared by the example tests and the differential test.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema
import pydantic
from jsonschema.protocols import Validator

from tests.support import models_module, official_schema


def defs_key(revision: str) -> str:
    """Where a revision's schema keeps its definitions: `$defs` (2020-12) or `definitions`."""
    schema = official_schema(revision)
    return "$defs" if "$defs" in schema else "definitions"


def official_definitions(revision: str) -> dict[str, Any]:
    return official_schema(revision)[defs_key(revision)]


@functools.cache
def reference_table(revision: str) -> dict[str, Any]:
    """The definitions a `#/$defs/...` reference may name: the top ones and, as the extension
    generator reads them, those nested in one (the MCP Apps schema's definitions were each
    generated standalone, and their references name their own nested `$defs`)."""
    table = dict(official_definitions(revision))
    for node in official_definitions(revision).values():
        for sub, schema in (node.get("$defs") or {}).items():
            assert table.setdefault(sub, schema) == schema, sub
    return table


def definition_schema(revision: str, name: str) -> dict[str, Any]:
    """A standalone schema for one definition: a `$ref` to it, the whole defs table, the dialect."""
    schema = official_schema(revision)
    key = defs_key(revision)
    return {"$schema": schema["$schema"], "$ref": f"#/{key}/{name}", key: reference_table(revision)}


@functools.cache
def _validator_class(revision: str) -> type[Validator]:
    """The dialect's validator class, after checking the whole official schema against it once."""
    schema = official_schema(revision)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls


@functools.cache
def oracle(revision: str, name: str) -> Validator:
    """jsonschema validator of one official definition (the dialect the schema declares)."""
    return _validator_class(revision)(definition_schema(revision, name))


@functools.cache
def adapter(revision: str, name: str) -> pydantic.TypeAdapter[Any]:
    """TypeAdapter of the generated model (or type alias) named like the definition."""
    return pydantic.TypeAdapter(getattr(models_module(revision), name))


def dump(revision: str, name: str, value: Any) -> Any:
    return adapter(revision, name).dump_python(
        value, mode="json", by_alias=True, exclude_unset=True
    )


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values that also compares types: 1 != 1.0, True != 1, [] != {}."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def first_difference(a: Any, b: Any, path: str = "$") -> str:
    """Where two JSON values differ (type-strict), for assertion messages."""
    if type(a) is not type(b):
        return f"{path}: {a!r} ({type(a).__name__}) != {b!r} ({type(b).__name__})"
    if isinstance(a, dict):
        for key in sorted(a.keys() | b.keys()):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'first' if key in a else 'second'}"
            if not json_equal(a[key], b[key]):
                return first_difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not json_equal(x, y):
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r} != {b!r}"
