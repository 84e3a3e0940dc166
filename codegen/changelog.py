"""`mcp-codegen diff OLD NEW`: a semantic changelog of two revisions, in Markdown, from the IR."""

from __future__ import annotations

from codegen.ir import Definition, Method, Revision


def _bullets(items: list[str]) -> list[str]:
    return [f"- {item}" for item in items] or ["- none"]


def _field_changes(old: Definition, new: Definition) -> list[str]:
    changes = []
    old_fields = {f.name: f for f in old.fields}
    new_fields = {f.name: f for f in new.fields}
    for name in sorted(new_fields.keys() - old_fields.keys()):
        f = new_fields[name]
        changes.append(f"`{name}` added ({f.type}{', required' if f.required else ''})")
    for name in sorted(old_fields.keys() - new_fields.keys()):
        changes.append(f"`{name}` removed")
    for name in sorted(old_fields.keys() & new_fields.keys()):
        a, b = old_fields[name], new_fields[name]
        if a.type != b.type:
            changes.append(f"`{name}` type: {a.type} -> {b.type}")
        if a.required != b.required:
            changes.append(f"`{name}` now {'required' if b.required else 'optional'}")
    if old.type != new.type:
        changes.append(f"type: {old.type} -> {new.type}")
    return changes


def _method_line(m: Method) -> str:
    results = " | ".join(m.results) if m.results else "-"
    return f"`{m.name}` ({m.kind}, {m.direction}; params {m.params or '-'}; result {results})"


def changelog(old: Revision, new: Revision) -> str:
    lines = [f"# MCP schema changes: {old.name} -> {new.name}", ""]
    if old.era != new.era:
        lines += [f"**Era change: {old.era} -> {new.era}.**", ""]
    else:
        lines += [f"Era: {new.era} (unchanged).", ""]
    old_m = {m.name: m for m in old.methods}
    new_m = {m.name: m for m in new.methods}
    lines += [
        "## Methods added",
        *_bullets([_method_line(new_m[n]) for n in sorted(new_m.keys() - old_m.keys())]),
        "",
    ]
    lines += [
        "## Methods removed",
        *_bullets([_method_line(old_m[n]) for n in sorted(old_m.keys() - new_m.keys())]),
        "",
    ]
    moved = []
    for name in sorted(old_m.keys() & new_m.keys()):
        a, b = old_m[name], new_m[name]
        if (a.kind, a.direction) != (b.kind, b.direction):
            moved.append(f"`{name}`: {a.kind}, {a.direction} -> {b.kind}, {b.direction}")
        if a.results != b.results:
            moved.append(
                f"`{name}`: result {' | '.join(a.results) or '-'} -> {' | '.join(b.results) or '-'}"
            )
        if a.params != b.params and not (a.params_inline and b.params_inline):
            moved.append(f"`{name}`: params {a.params or '-'} -> {b.params or '-'}")
    lines += ["## Methods changed (direction, kind, params, result)", *_bullets(moved), ""]
    old_d, new_d = old.definitions, new.definitions
    lines += [
        "## Definitions added",
        *_bullets([f"`{n}`" for n in sorted(new_d.keys() - old_d.keys())]),
        "",
    ]
    lines += [
        "## Definitions removed",
        *_bullets([f"`{n}`" for n in sorted(old_d.keys() - new_d.keys())]),
        "",
    ]
    changed = []
    for name in sorted(old_d.keys() & new_d.keys()):
        changes = _field_changes(old_d[name], new_d[name])
        if changes:
            changed.append(f"`{name}`: " + "; ".join(changes))
    lines += ["## Definitions changed", *_bullets(changed), ""]
    old_e = {(e.name, e.code) for e in old.errors}
    new_e = {(e.name, e.code) for e in new.errors}
    errs = [f"added `{n}` ({c})" for n, c in sorted(new_e - old_e)] + [
        f"removed `{n}` ({c})" for n, c in sorted(old_e - new_e)
    ]
    lines += ["## Error codes", *_bullets(errs)]
    return "\n".join(lines) + "\n"
