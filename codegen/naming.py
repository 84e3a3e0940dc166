"""Class names of hoisted inline definitions: from the schema's words, never from positions.

An inline object becomes a definition named from its path (`<Parent><Property>`); the inline
variants of a union are named from what tells them apart, so that a reordered union keeps its
names and a reviewer reads what each variant is: the constant a variant pins (`type:
"resource"` -> `<Parent>Resource`), else the members only it declares (`{height, width}` ->
`<Parent>HeightWidth`), else the members only it requires, else all its members.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from codegen.errors import CodegenError

Schema = dict[str, Any]


def pascal(text: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", text)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def is_inline_object(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and "$ref" not in node
        and ("properties" in node or ("allOf" in node and node.get("type", "object") == "object"))
    )


def const_tag(node: Schema) -> Any:
    """The constant a variant pins: its first pinned member (by name), or its own `const`."""
    for prop in sorted(node.get("properties", {})):
        value = node["properties"][prop]
        if isinstance(value, dict) and "const" in value:
            return value["const"]
    if "const" in node:
        return node["const"]
    return None


def _members(node: Schema) -> frozenset[str]:
    return frozenset(node.get("properties") or ())


def _required(node: Schema) -> frozenset[str]:
    return frozenset(node.get("required") or ())


def _told_apart(variants: dict[int, Schema]) -> dict[int, str] | None:
    """Each variant's own members, in name order and Pascal case: the first of these under which
    every variant has some and no two the same: those it declares that not all of them share,
    those it requires that not all of them require, all it declares (one variant's members a
    subset of another's)."""
    tries: list[tuple[Callable[[Schema], frozenset[str]], bool]] = [
        (_members, True),
        (_required, True),
        (_members, False),
    ]
    for key, drop_common in tries:
        sets = {i: key(v) for i, v in variants.items()}
        common = frozenset.intersection(*sets.values()) if drop_common else frozenset()
        words = {i: "".join(pascal(m) for m in sorted(s - common)) for i, s in sets.items()}
        if all(words.values()) and len(set(words.values())) == len(words):
            return words
    return None


def variant_names(members: list[Any], parent: str) -> dict[int, str]:
    """The names of a union's inline object variants, by their index in `members` (the others,
    references and scalars, are not hoisted)."""
    inline = {i: m for i, m in enumerate(members) if is_inline_object(m)}
    names: dict[int, str] = {}
    untagged: dict[int, Schema] = {}
    for i, member in inline.items():
        tag = const_tag(member)
        if tag is not None:
            names[i] = parent + pascal(str(tag))
        else:
            untagged[i] = member
    if len(untagged) == 1:
        names.update({i: parent + "Object" for i in untagged})  # the one object among others
    elif untagged:
        words = _told_apart(untagged)
        if words is None:
            raise CodegenError(
                f"cannot name the variants of {parent}: neither a constant nor their members "
                "tell them apart"
            )
        names.update({i: parent + word for i, word in words.items()})
    return names
