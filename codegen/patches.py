"""Asserted fixes for known defects of the official schemas.

A patch names a definition and the defective value(s) it knows, each at a path. Where the
definition exists but none of those values is found, upstream has changed it: generation stops
and says so, so that the patch is reviewed (most likely deleted) instead of silently rewriting
a fixed schema. A defect that is a missing member (`ABSENT`) is added where it is missing and
left alone where a revision declares it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codegen.errors import CodegenError

Path = tuple[str | int, ...]
ABSENT = object()  # `expected`: the defect is a member missing (where present, nothing to do)
_SCALARS_WITHOUT_NUMBER = {"type": ["string", "integer", "boolean"]}


@dataclass(frozen=True)
class Patch:
    definition: str
    known_defects: tuple[Path, ...]  # each path holds `expected` in some revision
    expected: Any
    replacement: Any
    reason: str


PATCHES: tuple[Patch, ...] = (
    Patch(
        "JSONValue",
        (("anyOf", 2),),
        _SCALARS_WITHOUT_NUMBER,
        {"type": ["string", "integer", "number", "boolean", "null"]},
        "JSONValue means any JSON value, but upstream's scalar branch omits number and null",
    ),
    Patch(
        "ElicitResult",
        (
            ("properties", "content", "additionalProperties"),
            ("properties", "content", "additionalProperties", "anyOf", 1),
        ),
        _SCALARS_WITHOUT_NUMBER,
        {"type": ["string", "integer", "number", "boolean"]},
        "form answers to a NumberSchema field are numbers, which upstream's value type omits",
    ),
    *(
        Patch(
            "Tool",
            (("properties", member, "additionalProperties"),),
            ABSENT,
            {},
            f"{member} is a JSON Schema (2020-12 by default): its other keywords ($defs, allOf,"
            " if/then/else, ...) are part of it and are kept; 2026-07-28 declares them so",
        )
        for member in ("inputSchema", "outputSchema")
    ),
)


def _lookup(node: Any, path: Path) -> tuple[Any, bool]:
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None, False
    return node, True


def apply_patches(defs: dict[str, Any], revision: str) -> list[Patch]:
    """Patch `defs` in place; returns the patches applied."""
    applied = []
    for patch in PATCHES:
        if patch.definition not in defs:
            continue
        for path in patch.known_defects:
            value, found = _lookup(defs[patch.definition], path)
            parent, parent_found = _lookup(defs[patch.definition], path[:-1])
            if patch.expected is ABSENT:
                if not found and isinstance(parent, dict):
                    parent[path[-1]] = patch.replacement
                    applied.append(patch)
                break  # declared already (or nowhere to declare it): nothing to fix
            if found and value == patch.expected:
                parent[path[-1]] = patch.replacement
                applied.append(patch)
                break
        else:
            raise CodegenError(
                f"{revision}: patch for {patch.definition} found none of its known defects "
                f"({patch.reason}); upstream changed it: review codegen/patches.py"
            )
    return applied
