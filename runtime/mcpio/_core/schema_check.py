"""Values checked against a JSON Schema (2020-12) given by hand: a tool's `input_schema` and
`output_schema`, an elicitation's `requestedSchema`. Schemas derived from type hints are
checked by Pydantic instead. The validator is `jsonschema`, from the `schemas` extra; without
it nothing is checked and one warning says so."""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger("mcpio")


@functools.cache
def _warned() -> None:
    log.warning(
        "hand-written JSON Schemas are not enforced: install the 'schemas' extra (jsonschema)"
    )


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import json

    from jsonschema import Draft202012Validator

    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def violation(instance: Any, schema: Mapping[str, Any]) -> str | None:
    """How `instance` breaks `schema` ("at path: message", the first error found), or None when
    it fits (or when jsonschema is missing: see the module docstring). A schema that is itself
    invalid is a `ValueError`."""
    import json

    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
    except ModuleNotFoundError:
        _warned()
        return None
    except Exception as exc:  # jsonschema's SchemaError
        raise ValueError(f"not a valid JSON Schema: {exc}") from None
    error = next(iter(validator.iter_errors(instance)), None)
    if error is None:
        return None
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where.lstrip('.') or '(root)'}: {error.message}"
