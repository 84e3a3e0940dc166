"""Numbers JSON cannot carry: NaN and Infinity, and numbers beyond a float's range (1e400).

pydantic-core's JSON reader accepts the NaN and Infinity tokens and reads an overflowing number as
infinity. Members typed as numbers refuse them by themselves (`allow_inf_nan=False`). Members
that hold any JSON value (tool arguments, `_meta`, unknown members) are read as they come, so
their numbers are checked by `finite_json`, which every JSON value read from JSON text goes
through (`mcp_wire_runtime.base.JSONValue`): such a number would otherwise be written back as null.
The codec reads a large frame with `read_large`, which bounds what the check costs.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from pydantic_core import PydanticCustomError

NON_FINITE = "finite_number"  # the error type, pydantic's own for a non-finite number

# A frame of this size or more is read without walking its JSON values as they are read; they
# are checked once it is read, at a cost bounded by the frame's size: walked while they are
# small, else the frame's bytes are scanned (about 1.2 ns a byte, where a walk costs 50-150 ns
# an item, up to 8 ns a byte of JSON value). Only a frame that may hold a non-finite number is
# read again, walking them, so that its error names the number. Smaller frames are walked as
# they are read.
LARGE = 1024
# The walk gives way to the scan after one item per this many bytes of the frame: at most about
# a quarter of what the scan costs is spent walking first.
_BYTES_PER_ITEM = 512
_DIGITS = bytes.maketrans(b"0123456789E", b"0000000000e")
# A float beyond a double's range has an exponent of 3 digits or more, or else at least 210
# digits before its point (309 digits in all, at most 99 of them from the exponent).
_LONG_EXPONENT, _LONG_INTEGER = b"e000", b"0" * 210

T = TypeVar("T")

_UNWALKED: ContextVar[list[Any] | None] = ContextVar("_UNWALKED", default=None)


def finite_json(value: Any) -> Any:
    """`value`, a JSON value just read, if every number in it is finite (a validator)."""
    kind = type(value)
    if kind is float:
        if value - value != 0.0:  # inf - inf and nan - nan are nan
            raise PydanticCustomError(NON_FINITE, "number out of range")
    elif kind is dict or kind is list:
        unwalked = _UNWALKED.get()
        if unwalked is not None:  # a large frame: checked once it is read
            unwalked.append(value)
        elif not _all_finite(value):
            raise PydanticCustomError(NON_FINITE, "number out of range", {"at": _where(value)})
    return value


def read_large(read: Callable[[bytes], T], data: bytes) -> T:
    """`read(data)` for a frame of `LARGE` bytes or more (see there)."""
    unwalked: list[Any] = []
    token = _UNWALKED.set(unwalked)
    try:
        message = read(data)
    finally:
        _UNWALKED.reset(token)
    if unwalked and not _known_finite(unwalked, data):
        return read(data)
    return message


def _known_finite(values: list[Any], data: bytes) -> bool:
    """Whether every number in `values` (read from `data`) is known to be finite."""
    walked = _walk(values, len(data) // _BYTES_PER_ITEM)
    if walked is None:  # scanning the bytes costs less than walking on
        return not (may_hold_non_finite(data) or _may_overflow(data))
    return walked


def _may_overflow(data: bytes) -> bool:
    digits = data.translate(_DIGITS, b"+-")
    return _LONG_EXPONENT in digits or _LONG_INTEGER in digits


def _all_finite(value: Any) -> bool:
    """Whether every number inside `value` (a dict or list read from JSON) is finite. (Every
    small frame's path: recursion is 15-20 % faster here than `_walk`'s stack.)"""
    item: Any
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is float:
            if item - item != 0.0:
                return False
        elif (kind is dict or kind is list) and not _all_finite(item):
            return False
    return True


def _walk(values: list[Any], budget: int) -> bool | None:
    """Whether every number inside `values` (dicts and lists read from JSON) is finite; None
    once more than `budget` items are seen. Empties `values`."""
    while values:
        value = values.pop()
        items = value.values() if type(value) is dict else value
        budget -= len(items)
        if budget < 0:
            return None
        for item in items:
            kind = type(item)
            if kind is float:
                if item - item != 0.0:
                    return False
            elif kind is dict or kind is list:
                values.append(item)
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
    """Whether `data` may spell NaN or Infinity, which are not JSON.

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
