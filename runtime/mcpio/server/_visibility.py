"""`Server.enable` and `Server.disable` (FastMCP's visibility controls), and what the built-in
methods ask of them: which components a request sees, and which version of each (the rules:
`mcpio._core.visibility`). A change is announced to every listener as the lists it may touch
changing (`notifications/*/list_changed`, both eras). The rules reach the components of the
servers mounted here too, by the names they are offered under here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mcpio._core.visibility import (
    Kind,
    Outer,
    Rule,
    Sight,
    flags,
    requested_version,
    rules,
    session_rules,
    version_key,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpio._core.context import Context
    from mcpio._core.options import VisibilityCriteria

E = TypeVar("E")


class Visibility:
    """`Server`'s visibility controls: its rules, and the components each request sees."""

    if TYPE_CHECKING:  # what the controls use of the rest of `Server`
        versions: dict[str, dict[str, dict[str, Any]]]
        visibility_rules: list[Rule]
        filtered: bool  # whether any rule, version or `enabled=False` may hide a component

        def _announce(self, flag: str) -> None: ...

    def enable(self, *, only: bool = False, **criteria: Unpack[VisibilityCriteria]) -> None:
        """Show the components that match every criterion given, to every client.

        The last `enable`/`disable` that matches a component decides; `only=True` hides all
        the others first (an allowlist). Listeners are told the lists changed.

        Args:
            only: Show these alone.
            **criteria: What to match (`VisibilityCriteria`): `names` (names, or a resource's
                URI or a template's URI template), `tags` (one is enough), `version`,
                `components` (kinds: "tool", "resource", "template", "prompt").
        """
        self._add_rules(rules(True, criteria, only))

    def disable(self, **criteria: Unpack[VisibilityCriteria]) -> None:
        """Hide the components that match every criterion given, from every client.

        A hidden component is unlisted, and calling, reading or getting it is as for one that
        does not exist.

        Args:
            **criteria: What to match (`VisibilityCriteria`, as `enable`'s).
        """
        self._add_rules(rules(False, criteria))

    def _add_rules(self, made: list[Rule]) -> None:
        self.visibility_rules = [*self.visibility_rules, *made]
        self.filtered = True
        for flag in flags(made):
            self._announce(flag)

    def _sight(self, ctx: Context) -> Sight | None:
        """The rules the request sees components by; None: none can hide one."""
        outer: tuple[Outer, ...] = ctx._mounted_in  # pyright: ignore[reportPrivateUsage]
        if not (self.filtered or outer or ctx.state):  # (every call's path: kept short)
            return None
        judged = ctx.principal is not None or ctx.client_key is not None
        if ctx._sees_all:  # pyright: ignore[reportPrivateUsage]
            return Sight((), (), (), ctx.principal, judged, ruled=False) if judged else None
        session = session_rules(ctx.state)
        if not (self.filtered or session or any(o.rules for o in outer)):
            return None
        return Sight(self.visibility_rules, session, outer, ctx.principal, judged)

    def _shown(self, ctx: Context, kind: Kind, table: Mapping[str, E]) -> Mapping[str, E]:
        """The components of `table` the request sees, each in the version it is served in."""
        sight = self._sight(ctx)
        if sight is None:
            return table
        seen: dict[str, E] = {}
        for key, entry in table.items():
            found = self._pick(kind, key, entry, sight)
            if found is not None:
                seen[key] = found
        return seen

    def _find(
        self, ctx: Context, kind: Kind, table: Mapping[str, E], key: str, params: Any = None
    ) -> E | None:
        """The component at `key` the request sees, in the version its `params` ask for if
        they name one (None: none, or hidden)."""
        entry = table.get(key)
        sight = None if entry is None else self._sight(ctx)
        if sight is None:
            return entry
        wanted = requested_version(params)
        if wanted is None:
            return self._pick(kind, key, entry, sight)
        chosen: E | None = self.versions[kind].get(key, {}).get(wanted)
        return chosen if chosen is not None and sight.shows(kind, chosen) else None

    def _pick(self, kind: Kind, key: str, entry: E, sight: Sight) -> E | None:
        """The highest version of `key` the rules leave visible (None: none)."""
        kept = self.versions[kind].get(key)
        if not kept:
            return entry if sight.shows(kind, entry) else None
        for version in sorted(kept, key=version_key, reverse=True):
            if sight.shows(kind, kept[version]):
                return kept[version]  # type: ignore[no-any-return]
        return None
