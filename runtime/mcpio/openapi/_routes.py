"""Route maps: which operations become tools, resources, resource templates, or nothing."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from mcpio.openapi._operations import Operation

Kind = Literal["tool", "resource", "resource_template", "exclude"]
KINDS: tuple[Kind, ...] = ("tool", "resource", "resource_template", "exclude")


@dataclass(frozen=True)
class RouteMap:
    """What the operations it matches become: the first route map that matches one decides.

    Args:
        kind: "tool", "resource" (a GET without path parameters, say), "resource_template"
            (its path parameters the URI's variables, its query parameters optional ones), or
            "exclude".
        methods: The HTTP methods it matches ("*": any).
        pattern: A regular expression searched for in the path template (`/pets/{petId}`).
        tags: Every one of them must be among the operation's tags.
        add_tags: Tags given the component made (for `Server.enable` / `disable`).

    Examples:
        >>> RouteMap("resource_template", methods=["GET"], pattern=r"\\{").kind
        'resource_template'
    """

    kind: Kind = "tool"
    methods: Collection[str] | Literal["*"] = "*"
    pattern: str | re.Pattern[str] = r".*"
    tags: Collection[str] = ()
    add_tags: Collection[str] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a route map's kind is one of {KINDS}, not {self.kind!r}")

    def matches(self, operation: Operation) -> bool:
        """Whether `operation` is one of the routes it maps."""
        if self.methods != "*" and operation.method not in {m.upper() for m in self.methods}:
            return False
        if not re.search(self.pattern, operation.path):
            return False
        return set(self.tags) <= set(operation.tags)


def route_for(operation: Operation, route_maps: Sequence[RouteMap]) -> RouteMap:
    """The first route map matching `operation`; a plain tool's when none does."""
    return next((m for m in route_maps if m.matches(operation)), _TOOL)


_TOOL = RouteMap()
