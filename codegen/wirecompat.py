"""Which schema changes between two revisions break the wire for an existing peer, and which
are only names moving (for `mcp-codegen diff`).

A change breaks the wire when a message an existing peer sends or reads may no longer fit: a
member removed (or renamed: removed under its old name), a member newly required, a type
narrowed (a union losing a member, or a type replaced by one that does not take every old
value), a method removed or changing kind or direction. A definition renamed, or a member's type
now named differently for the same shape, is a move: nothing changes on the wire.
"""

from __future__ import annotations

from codegen.ir import Revision

_UNIONS = ("anyOf[", "oneOf[")


def _split(text: str, sep: str) -> list[str]:
    """`text` split at `sep` outside brackets."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == sep and depth == 0:
            parts.append(text[start:at].strip())
            start = at + 1
    parts.append(text[start:].strip())
    return parts


def members(summary: str) -> frozenset[str]:
    """The alternatives a type summary takes: a union's members (nested unions flattened), the
    primitives of `string|integer`, else the type itself."""
    prefix = next((p for p in _UNIONS if summary.startswith(p)), None)
    if prefix is not None and summary.endswith("]"):
        inner = _split(summary[len(prefix) : -1], ",")
        return frozenset(m for part in inner for m in members(part))
    parts = _split(summary, "|")
    if len(parts) > 1:
        return frozenset(m for part in parts for m in members(part))
    return frozenset({summary})


def same_shape(old: Revision, new: Revision, a: str, b: str, depth: int = 0) -> bool:
    """Whether definition `a` of `old` and `b` of `new` take the same messages: their type and
    members alike, a member's type perhaps named differently for the same shape."""
    x, y = old.definitions.get(a), new.definitions.get(b)
    if x is None or y is None or x.type != y.type or depth > 8:
        return False
    if [(f.name, f.required) for f in x.fields] != [(f.name, f.required) for f in y.fields]:
        return False
    return all(
        f.type == g.type or same_shape(old, new, f.type, g.type, depth + 1)
        for f, g in zip(x.fields, y.fields, strict=True)
    )


def moved(old: Revision, new: Revision, a: str, b: str) -> bool:
    """Whether type `a` of `old` and `b` of `new` are one shape under two names."""
    return a != b and same_shape(old, new, a, b)


_CONTAINERS = ("map[", "array[")


def narrows(old: Revision, new: Revision, a: str, b: str) -> bool:
    """Whether the type `b` fails to take a value of `a` (a move does not)."""
    if a == b or moved(old, new, a, b):
        return False
    for box in _CONTAINERS:
        if a.startswith(box) and b.startswith(box) and a.endswith("]") and b.endswith("]"):
            return narrows(old, new, a[len(box) : -1], b[len(box) : -1])
    after = members(b)
    if after == {b} and members(a) == {a}:
        return True
    return any(all(narrows(old, new, m, n) for n in after) for m in members(a))


def renames(old: Revision, new: Revision) -> list[tuple[str, str]]:
    """Definitions only `old` has paired with the one only `new` has of the same shape, when
    each is the other's only match and has members (empty objects are all alike)."""
    gone = [n for n in sorted(old.definitions) if n not in new.definitions]
    came = [n for n in sorted(new.definitions) if n not in old.definitions]
    alike = {a: [b for b in came if same_shape(old, new, a, b)] for a in gone}
    pairs = []
    for a, found in alike.items():
        if len(found) == 1 and old.definitions[a].fields:
            if sum(found[0] in other for other in alike.values()) == 1:
                pairs.append((a, found[0]))
    return pairs


def envelope_members(rev: Revision) -> dict[str, str]:
    """The JSON-RPC envelope's members (name -> type) that a revision's generic request and
    notification declare: what every message carries, declared on it or not."""
    out: dict[str, str] = {}
    for frame in (rev.frames.request, rev.frames.notification):
        definition = rev.definitions.get(frame)
        out |= {f.name: f.type for f in definition.fields} if definition else {}
    return {k: v for k, v in out.items() if k in ("jsonrpc", "id")}
