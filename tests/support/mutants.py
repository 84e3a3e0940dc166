"""Mutants of valid instances (the reverse differential's, and the codec fuzzer's)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_TYPE_SWAPS: tuple[Any, ...] = ("x", 7, 1.5, True, [], {})


def _replacements(value: Any) -> Iterator[tuple[str, Any]]:
    """What a value at one position is replaced with."""
    yield "null", None
    for other in _TYPE_SWAPS:
        if type(other) is not type(value):
            yield f"{type(other).__name__}-for-{type(value).__name__}", other
    if isinstance(value, str):
        yield "string-changed", value + "\u0394"
        yield "string-emptied", ""
    elif isinstance(value, bool):
        yield "bool-flipped", not value
    elif isinstance(value, int):
        yield "int-changed", value + 1
        yield "int-negated", -value - 1
        yield "float-for-int", value + 0.5
    elif isinstance(value, float):
        yield "float-changed", value * 2 + 1
    elif isinstance(value, list) and value:
        yield "array-emptied", []


def mutants(instance: Any) -> Iterator[tuple[str, Any]]:
    """(description, mutant) pairs, each one change away from `instance`."""

    def at(node: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
        # (path, replacement description, rebuilt root) for every change below `node`
        for how, other in _replacements(node):
            yield path, how, other
        if isinstance(node, dict):
            for key in node:
                rest = {k: v for k, v in node.items() if k != key}
                yield f"{path}.{key}", "dropped", rest
                for sub, how, new in at(node[key], f"{path}.{key}"):
                    yield sub, how, {**node, key: new}
        elif isinstance(node, list):
            for index, item in enumerate(node):
                for sub, how, new in at(item, f"{path}[{index}]"):
                    yield sub, how, [*node[:index], new, *node[index + 1 :]]

    for path, how, mutant in at(instance, "$"):
        yield f"{how} at {path}", mutant
