"""Numbers JSON cannot carry: NaN and Infinity, and numbers beyond a float's range (1e400).

pydantic-core's JSON reader accepts the NaN and Infinity tokens and reads an overflowing number as
infinity. Members typed as numbers refuse them by themselves (`allow_inf_nan=False`). Members
that hold any JSON value (tool arguments, `_meta`, unknown members) are read as they come, so
their values are searched by `finite_json`, the check every JSON value read from JSON text goes
through: such a number would otherwise be written back as null.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import PydanticCustomError

NON_FINITE = "finite_number"  # the error type, pydantic's own for a non-finite number


def finite_json(value: Any) -> Any:
    """`value`, a JSON value just read, if every number in it is finite (a validator)."""
    kind = type(value)
    if kind is float:
        if value - value != 0.0:  # inf - inf and nan - nan are nan
            raise PydanticCustomError(NON_FINITE, "number out of range")
    elif (kind is dict or kind is list) and not _all_finite(value):
        raise PydanticCustomError(NON_FINITE, "number out of range", {"at": _where(value)})
    return value


def _all_finite(value: Any) -> bool:
    """Whether every number inside `value` (a dict or list read from JSON) is finite."""
    item: Any
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is float:
            if item - item != 0.0:
                return False
        elif (kind is dict or kind is list) and not _all_finite(item):
            return False
    return True


def _where(value: Any) -> str:
    """The dotted path to the first non-finite number inside `value` (a failing value only)."""
    items = value.items() if type(value) is dict else enumerate(value)
    item: Any
    for key, item in items:
        if type(item) is float and item - item != 0.0:
            return str(key)
        if type(item) in (dict, list) and not _all_finite(item):
            return f"{key}.{_where(item)}"
    return ""


def may_hold_non_finite(data: bytes) -> bool:
    """Whether `data` may spell NaN or Infinity, which are not JSON (a failing frame's path).
    (Rare bytes of each first: `int in bytes` is a memchr, ten times cheaper than a substring
    search. "I" is in every modern request's clientInfo and "y" in most results' "type", but
    seldom both.)"""
    return (78 in data and b"NaN" in data) or (73 in data and 121 in data and _infinity(data))


def _infinity(data: bytes) -> bool:
    """Whether `data` holds "Infinity": each "I" found by memchr (a few at most), then compared,
    costs less than one substring search over the whole frame."""
    at = data.find(b"I")
    while at >= 0:
        if data.startswith(b"Infinity", at):
            return True
        at = data.find(b"I", at + 1)
    return False
