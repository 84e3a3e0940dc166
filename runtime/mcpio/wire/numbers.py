"""Numbers JSON cannot carry: NaN and Infinity, and numbers beyond a float's range (1e400).

pydantic-core's JSON reader accepts the NaN and Infinity tokens and reads an overflowing number as
infinity. Members typed as numbers refuse them by themselves (`allow_inf_nan=False`); members
that hold any JSON value (tool arguments, `_meta`, unknown members) keep what was read, so a
message that may hold one is searched after it validated: the same numbers would otherwise be
written back as null.
"""

from __future__ import annotations

import math
from typing import Any

import pydantic_core
from pydantic import BaseModel

from mcpio.wire.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ProtocolError


def may_hold_non_finite(data: bytes) -> bool:
    """Whether `data` may spell NaN or Infinity. (Rare bytes of each first: `int in bytes` is a
    memchr, ten times cheaper than a substring search. "I" is in every modern request's
    clientInfo and "y" in most results' "type", but seldom both.)"""
    return (78 in data and b"NaN" in data) or (73 in data and 121 in data and spells_infinity(data))


def spells_infinity(data: bytes) -> bool:
    """Whether `data` holds "Infinity": each "I" found by memchr (a few at most), then compared,
    costs less than one substring search over the whole frame."""
    at = data.find(b"I")
    while at >= 0:
        if data.startswith(b"Infinity", at):
            return True
        at = data.find(b"I", at + 1)
    return False


def refuse_non_finite(message: Any, data: bytes, method: str | None) -> None:
    """Raise if a validated message holds a non-finite number."""
    path = _find(message, "")
    if path is None:
        return
    try:
        pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        raise ProtocolError(PARSE_ERROR, f"not valid JSON: {exc}") from None
    field = path.rstrip(".")
    if method is not None and field.startswith("params."):
        raise ProtocolError(
            INVALID_PARAMS,
            f"invalid params for {method}: {field}: number out of range",
            {"field": field},
        )
    raise ProtocolError(INVALID_REQUEST, f"{field}: number out of range", {"field": field})


def _find(value: Any, path: str) -> str | None:
    """The path of the first non-finite number in `value`, if any."""
    if type(value) is float:
        return None if math.isfinite(value) else path
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        for name in value.model_fields_set:
            field = fields.get(name)
            wire = field.alias or name if field is not None else name
            found = _find(value.__dict__.get(name), f"{path}{wire}.")
            if found is not None:
                return found
        for key, item in (value.__pydantic_extra__ or {}).items():
            found = _find(item, f"{path}{key}.")
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            found = _find(item, f"{path}{key}.")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _find(item, f"{path}{index}.")
            if found is not None:
                return found
    return None
