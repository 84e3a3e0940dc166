"""Which revisions an extension is generated for, and how: its fit to each pinned revision.

An extension's schema repeats the core definitions it uses, copied from the core revision(s) it
was written against: its `built_on` revisions in schema/extensions.toml. For each pinned
revision the generator decides one of:

- **pinned**: the revision is one of `built_on`. Every repeated definition must equal the
  revision's own (anything else is an error in the pins: the extension does not match the
  revision it claims to be built on).
- **carried**: a newer revision of the same era as the newest `built_on` revision before it (its
  *base*), in which every core definition the extension's own definitions depend on (through
  references, transitively) is the same as in the base. Differences in definitions the
  extension never reaches do not count.
- **re-based**: as carried, but some definitions it depends on changed, each only by widening:
  what the extension's copy accepts, the new definition accepts too (new optional members, new
  definitions, wider enumerations or types, more union members, looser bounds, dropped
  constraints). The extension is generated against the new revision's definitions, and the
  output names them.
- **skipped**: as carried, but a definition it depends on narrowed or changed shape (a member
  that became required or changed type, a narrower enumeration, a new closed object...), is gone
  from the revision, or the revision defines one of the extension's own names differently, or
  the merge itself fails (a union it extends is gone). The revision is generated without the
  extension, `generate` prints one warning naming the definition and the member, and the
  generated registry (`mcp_wire.EXTENSIONS`) leaves the revision out, which is how the runtime
  knows the extension is unavailable there.
- **not applicable**: older than every `built_on` revision, or of another era than its base.

`make generate` never fails because a revision is newer than an extension: only a pinned
revision that contradicts its extension is an error.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from codegen.errors import CodegenError
from codegen.extension import canonical, extension_definitions, merged_schema, repeated
from codegen.normalize import definitions_of, ref_name
from codegen.pins import ExtensionPin

Schema = dict[str, Any]
FitKind = Literal["pinned", "carried", "re-based", "skipped", "not applicable"]
APPLIED: frozenset[str] = frozenset({"pinned", "carried", "re-based"})

# Keywords whose larger value accepts less (a raised minimum) and whose smaller value accepts less.
_LOWER_BOUNDS = frozenset({"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"})
_UPPER_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"})
_UNIONS = ("anyOf", "oneOf")


@dataclass(frozen=True)
class Fit:
    """How one extension is generated for one revision."""

    extension: str
    revision: str
    kind: FitKind
    base: str | None = None  # the `built_on` revision it is carried from
    changed: tuple[str, ...] = ()  # re-based: the widened core definitions it now uses
    reason: str = ""  # skipped / not applicable: why
    schema: Schema | None = field(default=None, compare=False, repr=False)  # applied: merged
    core: Schema | None = field(default=None, compare=False, repr=False)  # the revision's own

    @property
    def applied(self) -> bool:
        return self.kind in APPLIED

    def describe(self) -> str:
        """One line for `generate`, `add`, `list` and the changelog."""
        return f"{self.extension} on {self.revision}: {self.summary()}"

    def summary(self) -> str:
        """What `describe` says after the extension and the revision."""
        if self.kind == "carried":
            return f"carried from {self.base} (the core definitions it uses are unchanged)"
        if self.kind == "re-based":
            changed = ", ".join(self.changed)
            return f"re-based from {self.base} onto the widened {changed} of {self.revision}"
        if self.kind in ("skipped", "not applicable"):
            return f"{self.kind} ({self.reason})"
        return self.kind


# ---------------------------------------------------------------------- widening


def narrowing(old: Any, new: Any, path: str = "") -> str | None:
    """Where `new` accepts less than `old` (canonical forms, references by name): a
    JSON-pointer-like path, or None when every instance `old` accepts `new` accepts too (new
    optional members of an object count as widening: a peer written against `old` never sends
    them). Conservative: a change it cannot judge is a narrowing."""
    if old == new:
        return None
    if new is True or new == {}:
        return None
    if old is False:
        return None
    if not isinstance(old, dict) or not isinstance(new, dict):
        return path or "/"
    for key in sorted(new.keys() - old.keys()):
        if key in ("properties", "required"):
            continue  # new members (optional ones widen; see `required` below)
        if key == "additionalProperties" and new[key] in (True, {}):
            continue
        return f"{path}/{key}"  # a new assertion
    for key in sorted(old.keys() & new.keys()):
        where = _keyword_narrowing(key, old, new, f"{path}/{key}")
        if where is not None:
            return where
    if "required" in new and "required" not in old:
        return f"{path}/required/{sorted(new['required'])[0]}"
    # A member the old schema named but the new one neither names nor lets through.
    if new.get("additionalProperties") is False:
        for name in sorted(set(old.get("properties", {})) - set(new.get("properties", {}))):
            return f"{path}/properties/{name}"
    return None  # keys only in `old`: dropped assertions accept more


def _keyword_narrowing(key: str, old: Schema, new: Schema, path: str) -> str | None:
    a, b = old[key], new[key]
    if a == b:
        return None
    if key == "properties" and isinstance(a, dict) and isinstance(b, dict):
        for name in sorted(a.keys() & b.keys()):
            if (where := narrowing(a[name], b[name], f"{path}/{name}")) is not None:
                return where
        return None  # added members: see `required`; removed ones: see additionalProperties
    if key == "required" and isinstance(a, list) and isinstance(b, list):
        added = sorted(set(b) - set(a))
        return f"{path}/{added[0]}" if added else None
    if key == "enum" and isinstance(a, list) and isinstance(b, list):
        return None if all(v in b for v in a) else path
    if key == "type":
        return None if _types(a) <= _types(b) else path
    if key in _UNIONS and isinstance(a, list) and isinstance(b, list):
        for index, member in enumerate(a):
            if all(narrowing(member, other) is not None for other in b):
                return f"{path}/{index}"
        return None
    if key == "allOf" and isinstance(a, list) and isinstance(b, list):
        for index, member in enumerate(b):  # every new conjunct implied by an old one
            if all(narrowing(other, member) is not None for other in a):
                return f"{path}/{index}"
        return None
    if key in _LOWER_BOUNDS and _numbers(a, b):
        return None if b <= a else path
    if key in _UPPER_BOUNDS and _numbers(a, b):
        return None if b >= a else path
    if key in ("items", "additionalProperties", "propertyNames"):
        return narrowing(a, b, path)
    return path  # $ref to another definition, const, pattern, format, not, ...: changed


def _types(value: Any) -> set[str]:
    types = set(value) if isinstance(value, list) else {value}
    return types | {"integer"} if "number" in types else types


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


# ---------------------------------------------------------------------- dependencies


def _references(node: Any) -> set[str]:
    if isinstance(node, list):
        return set().union(*map(_references, node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found = {name} if (name := ref_name(node)) is not None else set()
    for key, value in node.items():
        if key not in ("const", "enum", "default", "examples"):
            found |= _references(value)
    return found


def dependencies(defs: Schema, roots: Iterable[str]) -> dict[str, str]:
    """Every definition reachable from `roots` through `defs`' references, each with the root
    it was first reached from (for the report)."""
    seen: dict[str, str] = {}
    stack = [(root, root) for root in sorted(roots, reverse=True)]
    while stack:
        name, root = stack.pop()
        if name in seen or name not in defs:
            continue
        seen[name] = root
        stack.extend((ref, root) for ref in sorted(_references(defs[name]), reverse=True))
    return seen


# ---------------------------------------------------------------------- the fit


def base_of(pin: ExtensionPin, revision: str) -> str | None:
    """The newest `built_on` revision not newer than `revision`."""
    older = [r for r in pin.built_on if r <= revision]
    return max(older) if older else None


def fit(
    pin: ExtensionPin,
    ext: Schema,
    revision: str,
    core: Schema,
    base_core: Schema | None,
    eras: Mapping[str, str],
) -> Fit:
    """How `pin` (schema `ext`) is generated for `revision` (schema `core`); `base_core` is the
    schema of its base (see `base_of`), None when there is none."""
    label = f"{revision} + {pin.id}"
    base = base_of(pin, revision)
    if base is None or base_core is None:
        first = min(pin.built_on)
        return Fit(pin.id, revision, "not applicable", reason=f"older than {first}")
    if eras[revision] != eras[base]:
        why = f"{eras[revision]} era, built on {base} of the {eras[base]} era"
        return Fit(pin.id, revision, "not applicable", base, reason=why)
    ext_defs = extension_definitions(ext, label)
    core_defs = definitions_of(core)
    if revision in pin.built_on:
        repeated(ext_defs, core_defs, label)  # an error: the pins contradict each other
        schema = merged_schema(core, ext, label, pin.task_methods)[0]
        return Fit(pin.id, revision, "pinned", base, schema=schema, core=core)
    base_defs = definitions_of(base_core)
    skip = _conflict(ext_defs, base_defs, core_defs, revision)
    if isinstance(skip, str):
        return Fit(pin.id, revision, "skipped", base, reason=skip)
    changed, rebased_defs = skip
    rebased = {k: v for k, v in ext.items() if k not in ("$defs", "definitions")}
    rebased["$defs"] = rebased_defs
    try:
        schema = merged_schema(core, rebased, label, pin.task_methods)[0]
    except CodegenError as exc:
        return Fit(pin.id, revision, "skipped", base, reason=str(exc).removeprefix(label + ": "))
    kind: FitKind = "re-based" if changed else "carried"
    return Fit(pin.id, revision, kind, base, tuple(changed), schema=schema, core=core)


def skipped(found: Fit, reason: str) -> Fit:
    """`found` (carried or re-based) turned into a skip: its generation failed for `reason`."""
    return Fit(found.extension, found.revision, "skipped", found.base, reason=reason)


def _conflict(
    ext_defs: Schema, base_defs: Schema, core_defs: Schema, revision: str
) -> str | tuple[list[str], Schema]:
    """Why the extension does not fit `revision` (one line), or the core definitions it uses
    that widened and its definitions re-based on `revision`'s (every core definition it
    repeats is `revision`'s own; those `revision` lacks and nothing of its own uses are gone)."""
    own = sorted(ext_defs.keys() - base_defs.keys())
    for name in own:
        if name in core_defs and canonical(core_defs[name]) != canonical(ext_defs[name]):
            return f"{revision} defines the extension's own {name} differently"
    used = dependencies(ext_defs, own)
    changed: list[str] = []
    rebased = {name: ext_defs[name] for name in own}
    for name in sorted(ext_defs.keys() & base_defs.keys()):
        if name in core_defs:
            rebased[name] = copy.deepcopy(core_defs[name])
        if name not in used:
            continue  # nothing of the extension's own reaches it
        if name not in core_defs:
            return f"{name} (used by its {used[name]}) is gone from {revision}"
        old, new = canonical(ext_defs[name]), canonical(core_defs[name])
        if old == new:
            continue
        where = narrowing(old, new)
        if where is not None:
            return f"{name} (at {where}, used by its {used[name]}) accepts less in {revision}"
        changed.append(name)
    return changed, dict(sorted(rebased.items()))
