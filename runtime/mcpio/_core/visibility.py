"""Which registered components a client sees: FastMCP's `enable`/`disable` rules.

A component starts enabled unless registered with `enabled=False`. Rules are applied in order,
the server's (`Server.enable`/`disable`) then the session's (`ctx.enable_components`, legacy
sessions only), and the last rule that matches a component decides. A rule matches a component
when every criterion it gives does: one of `names` (a name, or a resource's URI or a template's
URI template), one of `tags`, the `version`, one of the `components` kinds ("tool", "resource",
"template", "prompt"); a rule of no criterion matches nothing. `enable(..., only=True)` is an
allowlist: everything disabled first, then what matches enabled. A hidden component is unlisted
and answers as unknown. Of several versions of one component the highest visible one is served
(see `version_key`), or the one a request names in `_meta.fastmcp.version` (FastMCP's
client does); each version is listed with `_meta.fastmcp.version` and `versions`, as FastMCP
lists them.

A mounted server's components answer to the rules of every server it is mounted in too (each
server's own, under the names it offers them by: `Outer`), the session's rules applied at the
outermost one, where the session is: what a mounted server hides stays hidden, a parent's rules
may hide more.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

from mcpio._core.authorization import permitted
from mcpio._core.hub import LIST_CHANGED
from mcpio._core.options import VisibilityCriteria, check_names
from mcpio._core.principal import Principal

Kind = Literal["tool", "resource", "template", "prompt"]
KINDS: frozenset[str] = frozenset(("tool", "resource", "template", "prompt"))
#: The list-changed flag (`mcpio._core.hub.LIST_CHANGED`) of each kind's list.
FLAGS: dict[str, str] = {
    "tool": "toolsListChanged",
    "resource": "resourcesListChanged",
    "template": "resourcesListChanged",
    "prompt": "promptsListChanged",
}
#: Where a legacy session's own rules are kept in its `ctx.state`.
SESSION_KEY = "mcpio.visibility"


@dataclass(frozen=True)
class Rule:
    """One `enable` or `disable`: what it matches, and whether it shows or hides it."""

    enabled: bool
    names: frozenset[str] | None = None
    tags: frozenset[str] | None = None
    version: str | None = None
    components: frozenset[str] | None = None
    match_all: bool = False

    def matches(self, kind: str, entry: Any) -> bool:
        if self.match_all:
            return True
        if all(c is None for c in (self.names, self.tags, self.version, self.components)):
            return False  # no criterion: nothing (`match_all` for everything)
        if self.components is not None and kind not in self.components:
            return False
        if self.names is not None and self.names.isdisjoint(identifiers(entry)):
            return False
        if self.version is not None and version_of(entry) != self.version:
            return False
        return self.tags is None or not self.tags.isdisjoint(tags_of(entry))


def rules(enabled: bool, criteria: VisibilityCriteria, only: bool = False) -> list[Rule]:
    """The rules one `enable`/`disable` call adds; `TypeError` naming the fix for a misuse."""
    check_names("enable" if enabled else "disable", criteria, VisibilityCriteria)
    version = criteria.get("version")
    made = Rule(
        enabled,
        _names("names", criteria.get("names")),
        _names("tags", criteria.get("tags")),
        None if version is None else str(version),
        _names("components", criteria.get("components")),
    )
    if made.components is not None and not made.components <= KINDS:
        unknown = ", ".join(sorted(made.components - KINDS))
        raise TypeError(f"components are among {sorted(KINDS)}, not {unknown}")
    return [Rule(False, match_all=True), made] if only else [made]


def _names(what: str, given: Collection[str] | None) -> frozenset[str] | None:
    if given is None:
        return None
    if isinstance(given, str):
        raise TypeError(f"{what} is a set of strings: {what}={{{given!r}}}, not {what}={given!r}")
    return frozenset(given)


def flags(made: Iterable[Rule]) -> list[str]:
    """The list-changed flags the rules may change, each once."""
    kinds: set[str] = set()
    for rule in made:
        kinds |= rule.components or KINDS
    return sorted({FLAGS[kind] for kind in kinds})


def identifiers(entry: Any) -> set[str]:
    """What `names` may call a component: its name, and a resource's URI or a template's."""
    definition = entry.definition
    found = {definition.name}
    for member in ("uri", "uriTemplate"):
        value = getattr(definition, member, None)
        if value is not None:
            found.add(str(value))
    return found


def tags_of(entry: Any) -> Collection[str]:
    return entry.options.get("tags") or ()


def version_of(entry: Any) -> str | None:
    version = entry.options.get("version")
    return None if version is None else str(version)


def version_key(version: str | None) -> tuple[Any, ...]:
    """How versions sort: numbers as numbers (`1.10` above `1.9`), a leading `v` ignored, words
    as text after numbers; no version lowest."""
    if version is None:
        return ()
    parts = re.findall(r"\d+|[^\d.\-_+]+", version.lower().removeprefix("v"))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def requested_version(params: Any) -> str | None:
    """The version a request asks for, as FastMCP's client names it (`_meta.fastmcp.version`);
    None: the highest visible one."""
    extra = getattr(getattr(params, "meta", None), "model_extra", None)
    asked = extra.get("fastmcp") if extra else None
    version = asked.get("version") if isinstance(asked, dict) else None
    return None if version is None else str(version)  # pyright: ignore[reportUnknownArgumentType]


def visible(kind: str, entry: Any, server: Iterable[Rule], session: Iterable[Rule]) -> bool:
    """Whether the rules, the server's then the session's, leave `entry` shown."""
    shown = entry.options.get("enabled", True)
    for group in (server, session):
        for rule in group:
            if rule.matches(kind, entry):
                shown = rule.enabled
    return shown


@dataclass(frozen=True)
class Outer:
    """A server another is mounted in: its rules, and how it names the mounted one's
    components (a tool's or prompt's name; a resource's URI or a template's)."""

    rules: Sequence[Rule]
    name: Callable[[str], str]
    uri: Callable[[str], str]

    def view(self, kind: str, entry: Any) -> Any:
        """`entry` as the rules of this server see it: its identifiers renamed, its tags and
        version kept, shown unless they hide it (its own `enabled=False` was the mounted
        server's to apply)."""
        definition = entry.definition
        seen = SimpleNamespace(
            name=definition.name,
            uri=getattr(definition, "uri", None),
            uriTemplate=getattr(definition, "uriTemplate", None),
        )
        if kind in ("tool", "prompt"):
            seen.name = self.name(seen.name)
        elif kind == "resource":
            seen.uri = self.uri(str(seen.uri))
        else:
            seen.uriTemplate = self.uri(str(seen.uriTemplate))
        options = {k: v for k, v in entry.options.items() if k != "enabled"}
        return SimpleNamespace(definition=seen, options=options)


@dataclass(frozen=True)
class Sight:
    """What a request sees by: the server's rules, its session's, and those of the servers it
    is mounted in (`outer`, the innermost first)."""

    server: Sequence[Rule]
    session: Sequence[Rule]
    outer: Sequence[Outer] = ()
    caller: Principal | None = None
    judged: bool = False  # whether `auth=` checks run (a caller to judge: see there)
    ruled: bool = True  # False: the rules aside (a transformed tool's call of its source)

    def shows(self, kind: str, entry: Any) -> bool:
        """Whether `entry` is shown: its `auth=` checks pass, and the server's rules, then each
        outer one's, leave it visible."""
        if self.judged and not permitted(entry, self.caller):
            return False
        if not self.ruled:
            return True
        session = () if self.outer else self.session
        if not visible(kind, entry, self.server, session):
            return False
        seen = entry
        for depth, outer in enumerate(self.outer, 1):
            seen = outer.view(kind, seen)
            session = self.session if depth == len(self.outer) else ()
            if not visible(kind, seen, outer.rules, session):
                return False
        return True


def session_rules(state: Mapping[str, Any] | None) -> list[Rule]:
    """A legacy session's own rules, kept in its `ctx.state` (none: an empty list)."""
    if state is None:
        return []
    found = state.get(SESSION_KEY)
    return found if isinstance(found, list) else []  # pyright: ignore[reportUnknownVariableType]


async def change_session(
    state: dict[str, Any],
    modern: bool,
    notify: Callable[[str, dict[str, Any]], Awaitable[None]],
    made: list[Rule] | None,
) -> None:
    """Add `made` to a legacy session's rules (None: drop them all), and tell its client which
    of its lists changed. `RuntimeError` on 2026-07-28, which has no sessions."""
    if modern:
        raise RuntimeError(
            "2026-07-28 has no sessions to enable components for: use server.enable/disable, "
            "or a middleware that filters the listings per caller"
        )
    kept: list[Rule] = state.setdefault(SESSION_KEY, [])
    changed = flags(kept if made is None else made)
    if made is None:
        kept.clear()
    else:
        kept.extend(made)
    for flag in changed:
        await notify(LIST_CHANGED[flag][0], {})
