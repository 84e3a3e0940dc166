"""`mcp-codegen diff OLD NEW`: a semantic changelog of two revisions, in Markdown, from the IR."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from codegen import wirecompat
from codegen.ir import Definition, ErrorCode, Method, Revision

_UNIONS = ("anyOf[", "oneOf[")


def _bullets(items: list[str]) -> list[str]:
    return [f"- {item}" for item in items] or ["- none"]


def _union_members(summary: str) -> tuple[str, frozenset[str]] | None:
    """`anyOf[A, B]` -> ("anyOf", {A, B}); None for anything that is not a top-level union."""
    prefix = next((p for p in _UNIONS if summary.startswith(p)), None)
    if prefix is None or not summary.endswith("]"):
        return None
    members, depth, start = [], 0, len(prefix)
    for at, char in enumerate(summary[len(prefix) : -1], start=len(prefix)):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:  # `anyOf[A] | anyOf[B]`-like text: not one union
                return None
        elif char == "," and depth == 0:
            members.append(summary[start:at].strip())
            start = at + 1
    members.append(summary[start:-1].strip())
    return prefix[:-1], frozenset(members)


def _type_change(old: str, new: str) -> str | None:
    """How a type summary changed; None when it did not (a reordered union is no change)."""
    if old == new:
        return None
    a, b = _union_members(old), _union_members(new)
    if a is None or b is None or a[0] != b[0]:
        return f"type: {old} -> {new}"
    if a[1] == b[1]:
        return None
    parts = [f"+ {m}" for m in sorted(b[1] - a[1])] + [f"- {m}" for m in sorted(a[1] - b[1])]
    return f"{b[0]} members: " + ", ".join(parts)


@dataclass(frozen=True)
class Change:
    """One change to one definition: its text, and whether it breaks the wire."""

    text: str
    breaks: bool = False
    move: bool = False  # a member's type named differently, same shape


def _field_changes(
    old_rev: Revision, new_rev: Revision, old: Definition, new: Definition
) -> list[Change]:
    changes = []
    old_fields = {f.name: f for f in old.fields}
    new_fields = {f.name: f for f in new.fields}
    for name in sorted(new_fields.keys() - old_fields.keys()):
        f = new_fields[name]
        text = f"`{name}` added ({f.type}{', required' if f.required else ''})"
        changes.append(Change(text, breaks=f.required))
    for name in sorted(old_fields.keys() - new_fields.keys()):
        changes.append(Change(f"`{name}` removed", breaks=True))
    for name in sorted(old_fields.keys() & new_fields.keys()):
        a, b = old_fields[name], new_fields[name]
        if (change := _type_change(a.type, b.type)) is not None:
            move = wirecompat.moved(old_rev, new_rev, a.type, b.type)
            narrow = wirecompat.narrows(old_rev, new_rev, a.type, b.type)
            changes.append(Change(f"`{name}` {change}", breaks=narrow, move=move))
        if a.required != b.required:
            changes.append(
                Change(f"`{name}` now {'required' if b.required else 'optional'}", b.required)
            )
    if (change := _type_change(old.type, new.type)) is not None:
        changes.append(
            Change(change, breaks=wirecompat.narrows(old_rev, new_rev, old.type, new.type))
        )
    return changes


def _params(rev: Revision, m: Method) -> str:
    """The inventory's vocabulary: `Name`, or `inline {a?, b}` for an inline (hoisted) object."""
    if m.params is None:
        return "-"
    text = m.params
    definition = rev.definitions.get(m.params)
    if m.params_inline and definition is not None:
        names = ", ".join(f.name + ("" if f.required else "?") for f in definition.fields)
        text = f"inline {{{names}}}"
    return text + ("" if m.params_required else " (optional)")


def _results(m: Method) -> str:
    text = " | ".join(m.results) if m.results else "-"
    if m.task_result:
        text += f" (or {m.task_result} when task-augmented)"
    return text


def _method_line(rev: Revision, m: Method) -> str:
    return f"`{m.name}` ({m.kind}, {m.direction}; params {_params(rev, m)}; result {_results(m)})"


def _method_changes(old: Revision, a: Method, new: Revision, b: Method) -> list[str]:
    name, changes = a.name, []
    if (a.kind, a.direction) != (b.kind, b.direction):
        changes.append(f"`{name}`: {a.kind}, {a.direction} -> {b.kind}, {b.direction}")
    if set(a.results) != set(b.results) or a.task_result != b.task_result:
        changes.append(f"`{name}`: result {_results(a)} -> {_results(b)}")
    if _params(old, a) != _params(new, b):
        changes.append(f"`{name}`: params {_params(old, a)} -> {_params(new, b)}")
    return changes


def _definitions_added(old: Revision, new: Revision, was: str = "was") -> list[str]:
    """Definitions of `new` that `old` lacks, or that `old` only had as an inline object.

    Inline objects (hoisted by the pre-pass, not named by the schema) say so, so that the names
    the schema itself adds can be told apart from generated ones.
    """
    lines = []
    for name, d in sorted(new.definitions.items()):
        before = old.definitions.get(name)
        if before is None:
            inline = f" (inline object of `{d.hoisted_from}`)" if d.hoisted_from else ""
            lines.append(f"`{name}`{inline}")
        elif d.hoisted_from is None and before.hoisted_from is not None:
            lines.append(f"`{name}` ({was} an inline object of `{before.hoisted_from}`)")
    return lines


def _deprecated(rev: Revision) -> set[str]:
    """What the schema deprecates: "method `m`" and "`Definition.member`" lines."""
    out = {f"method `{m.name}`" for m in rev.methods if m.deprecated}
    out |= {
        f"`{name}.{f.name}`"
        for name, d in rev.definitions.items()
        for f in d.fields
        if f.deprecated
    }
    return out


def _deprecations(old: Revision, new: Revision) -> list[str]:
    """Deprecated in `new` and not in `old` (added so, or newly marked), and the other way
    round where it is still there."""
    before, after = _deprecated(old), _deprecated(new)
    present = {f"method `{m.name}`" for m in new.methods} | {
        f"`{name}.{f.name}`" for name, d in new.definitions.items() for f in d.fields
    }
    lines = [f"deprecated: {item}" for item in sorted(after - before)]
    return lines + [f"no longer deprecated: {item}" for item in sorted((before - after) & present)]


def _error_line(e: ErrorCode) -> str:
    data = f"; error.data: {', '.join(e.data_fields)}" if e.data_fields else ""
    return f"`{e.name}` ({e.code}{data})"


# JSON-RPC 2.0's own error codes: part of every revision, named in its schema or not.
JSONRPC_ERRORS = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
}


def _error_changes(old: Revision, new: Revision) -> list[str]:
    """Error codes added, removed or changed. A standard JSON-RPC code that only gains (or loses)
    a named definition was there all along: it is reported as named, not added."""
    old_e = {(e.name, e.code): e for e in old.errors}
    new_e = {(e.name, e.code): e for e in new.errors}
    old_codes = {e.code for e in old.errors}
    new_codes = {e.code for e in new.errors}
    added = sorted(new_e.keys() - old_e.keys())
    removed = sorted(old_e.keys() - new_e.keys())
    named = [k for k in added if k[1] in JSONRPC_ERRORS and k[1] not in old_codes]
    unnamed = [k for k in removed if k[1] in JSONRPC_ERRORS and k[1] not in new_codes]
    lines = [f"added {_error_line(new_e[k])}" for k in added if k not in named]
    lines += [f"removed {_error_line(old_e[k])}" for k in removed if k not in unnamed]
    if named:
        lines.append(
            "standard JSON-RPC errors now named by a definition (same codes, not new): "
            + ", ".join(_error_line(new_e[k]) for k in sorted(named, key=lambda k: k[1]))
        )
    if unnamed:
        lines.append(
            "standard JSON-RPC errors no longer named by a definition (the codes remain): "
            + ", ".join(_error_line(old_e[k]) for k in sorted(unnamed, key=lambda k: k[1]))
        )
    for key in sorted(old_e.keys() & new_e.keys()):
        a, b = old_e[key].data_fields, new_e[key].data_fields
        if a != b:
            lines.append(
                f"changed `{key[0]}` ({key[1]}): error.data {', '.join(a) or '-'}"
                f" -> {', '.join(b) or '-'}"
            )
    return lines


# A change made alike to this many definitions or more is one line.
FOLD_AT = 6

Changes = dict[str, list[Change]]


def _definition_changes(old: Revision, new: Revision) -> Changes:
    """Definition -> its changes, for every definition both revisions have."""
    old_d, new_d = old.definitions, new.definitions
    out = {
        n: _field_changes(old, new, old_d[n], new_d[n]) for n in sorted(old_d.keys() & new_d.keys())
    }
    return {n: c for n, c in out.items() if c}


def _moves(old: Revision, new: Revision, changes: Changes) -> list[str]:
    """Definitions renamed (one shape, another name) and members whose type is now named
    differently for the same shape."""
    lines = [f"`{a}` -> `{b}` (renamed: same shape)" for a, b in wirecompat.renames(old, new)]
    for name, found in changes.items():
        lines += [f"`{name}`: {c.text}" for c in found if c.move]
    return lines


def _envelope(old: Revision, new: Revision, name: str, change: Change) -> bool:
    """A JSON-RPC envelope member (`jsonrpc`, `id`) declared on, or no longer on, a message
    definition: every message carries the envelope either way."""
    envelope = wirecompat.envelope_members(old) | wirecompat.envelope_members(new)
    messages = {m.message for m in (*old.methods, *new.methods)}
    messages |= {n for rev in (old, new) for n, d in rev.definitions.items() if d.field("method")}
    member = change.text.split("`")[1] if change.text.startswith("`") else ""
    tail = change.text.removeprefix(f"`{member}` ")
    return name in messages and member in envelope and tail.split(" (")[0] in ("added", "removed")


def _folded(old: Revision, new: Revision, changes: Changes) -> list[str]:
    """One line a definition, but the envelope members' declarations and a change made alike
    to `FOLD_AT` definitions or more: one line each, naming the definitions."""
    envelope: defaultdict[str, list[str]] = defaultdict(list)
    alike: defaultdict[str, list[str]] = defaultdict(list)
    for name, found in changes.items():
        for c in found:
            if _envelope(old, new, name, c):
                envelope[c.text.split(" (")[0]].append(name)
            elif not c.move:
                alike[c.text].append(name)
    folded = {text for text, names in alike.items() if len(names) >= FOLD_AT}
    lines = []
    for name, found in changes.items():
        own = [c.text for c in found if not c.move and not _envelope(old, new, name, c)]
        own = [text for text in own if text not in folded]
        if own:
            lines.append(f"`{name}`: " + "; ".join(own))
    for text, names in sorted(envelope.items()):
        what = "messages" if len(names) > 1 else "message"
        lines.append(_many(text, names, what + " (the JSON-RPC envelope: no wire change)"))
    for text in sorted(folded):
        lines.append(_many(text, alike[text], "definitions"))
    return lines


def _method_breaks(old: Revision, new: Revision) -> list[str]:
    old_m = {m.name: m for m in old.methods}
    new_m = {m.name: m for m in new.methods}
    lines = [f"method `{n}` removed" for n in sorted(old_m.keys() - new_m.keys())]
    for n in sorted(old_m.keys() & new_m.keys()):
        a, b = old_m[n], new_m[n]
        if (a.kind, a.direction) != (b.kind, b.direction):
            lines.append(f"method `{n}`: {a.kind}, {a.direction} -> {b.kind}, {b.direction}")
        if a.params is not None and not a.params_required and b.params_required:
            lines.append(f"method `{n}`: params now required")
        lost = sorted(
            {*a.results, *filter(None, [a.task_result])}
            - {*b.results, *filter(None, [b.task_result])}
        )
        if lost:
            lines.append(f"method `{n}`: no longer answers {', '.join(lost)}")
    return lines


def _breaks(old: Revision, new: Revision, changes: Changes) -> list[str]:
    """Every change that breaks the wire for an existing peer (see codegen.wirecompat); one made
    alike to `FOLD_AT` definitions or more is one line."""
    breaking = [
        (name, c.text)
        for name, found in changes.items()
        for c in found
        if c.breaks and not _envelope(old, new, name, c)
    ]
    alike: defaultdict[str, list[str]] = defaultdict(list)
    for name, text in breaking:
        alike[text].append(name)
    lines = _method_breaks(old, new)
    lines += [f"`{name}`: {text}" for name, text in breaking if len(alike[text]) < FOLD_AT]
    folded = sorted(text for text, names in alike.items() if len(names) >= FOLD_AT)
    return lines + [_many(text, alike[text], "definitions") for text in folded]


def _many(text: str, names: list[str], what: str) -> str:
    return f"{text} in {len(names)} {what}: " + ", ".join(names)


def changelog(old: Revision, new: Revision, extensions: list[str] | None = None) -> str:
    """The Markdown changelog; `extensions`: how each pinned extension fits `old` and `new`
    (codegen.carry's lines), a section of its own when given."""
    lines = [f"# MCP schema changes: {old.name} -> {new.name}", ""]
    if old.era != new.era:
        lines += [f"**Era change: {old.era} -> {new.era}.**", ""]
    else:
        lines += [f"Era: {new.era} (unchanged).", ""]
    if old.batching != new.batching:
        state = {True: "allowed", False: "not allowed"}
        lines += [f"JSON-RPC batching: {state[old.batching]} -> {state[new.batching]}.", ""]
    changes = _definition_changes(old, new)
    breaks = _breaks(old, new, changes)
    lines += [f"Wire breaks for an existing peer: {len(breaks)} (listed last).", ""]
    old_m = {m.name: m for m in old.methods}
    new_m = {m.name: m for m in new.methods}
    added = [_method_line(new, new_m[n]) for n in sorted(new_m.keys() - old_m.keys())]
    removed = [_method_line(old, old_m[n]) for n in sorted(old_m.keys() - new_m.keys())]
    lines += ["## Methods added", *_bullets(added), ""]
    lines += ["## Methods removed", *_bullets(removed), ""]
    moved = [
        line
        for n in sorted(old_m.keys() & new_m.keys())
        for line in _method_changes(old, old_m[n], new, new_m[n])
    ]
    lines += ["## Methods changed (direction, kind, params, result)", *_bullets(moved), ""]
    lines += ["## Definitions added", *_bullets(_definitions_added(old, new)), ""]
    lines += ["## Definitions removed", *_bullets(_definitions_added(new, old, "now")), ""]
    lines += ["## Moves and renames (no wire change)", *_bullets(_moves(old, new, changes)), ""]
    lines += ["## Definitions changed", *_bullets(_folded(old, new, changes)), ""]
    lines += ["## Deprecations", *_bullets(_deprecations(old, new)), ""]
    lines += ["## Error codes", *_bullets(_error_changes(old, new)), ""]
    lines += ["## Wire breaks for an existing peer", *_bullets(breaks)]
    if extensions is not None:
        lines += ["", "## Extensions", *_bullets(extensions)]
    return "\n".join(lines) + "\n"
