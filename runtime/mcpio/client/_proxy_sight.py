"""What the visibility rules (`Server.enable`/`disable`, a legacy session's own, and those of
every server a proxy is mounted in: `mcpio._core.visibility`) let a request see of a proxy's
target: a listing's items filtered, a call, get or read of a hidden one answered as for one that
does not exist, as for a mounted server's own components.

A target's component is judged by what its listing says: its name (a resource's URI, a
template's URI template), and the tags and version a FastMCP server lists under `_meta.fastmcp`
(`_meta._fastmcp` before FastMCP 3). It has no `auth=` here: the target judges its own callers.
A read of a URI no resource is listed under is judged by the first listed template it fits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError
from mcpio._core.jsonrpc import plain
from mcpio._core.uritemplate import UriTemplate
from mcpio._core.visibility import Sight

# listing method -> (kind, result field, the member naming an item)
LISTED: dict[str, tuple[str, str, str]] = {
    "tools/list": ("tool", "tools", "name"),
    "prompts/list": ("prompt", "prompts", "name"),
    "resources/list": ("resource", "resources", "uri"),
    "resources/templates/list": ("template", "resourceTemplates", "uriTemplate"),
}
# request method -> (its listing, the params member naming the item, the error's words)
NAMED: dict[str, tuple[str, str, str]] = {
    "tools/call": ("tools/list", "name", "unknown tool {!r}"),
    "prompts/get": ("prompts/list", "name", "unknown prompt {!r}"),
    "resources/read": ("resources/list", "uri", "resource not found: {}"),
}


def entry_of(item: Any) -> SimpleNamespace:
    """A listed item as the rules see a component: its definition, and its tags and version."""
    meta = plain(item).get("_meta") or {}
    told: dict[str, Any] = {}
    for key in ("fastmcp", "_fastmcp"):
        if isinstance(meta.get(key), dict):
            told = meta[key]
            break
    options: dict[str, Any] = {}
    if isinstance(told.get("tags"), list):
        options["tags"] = frozenset(str(tag) for tag in told["tags"])
    if told.get("version") is not None:
        options["version"] = told["version"]
    return SimpleNamespace(definition=item, options=options)


class TargetSight:
    """A proxy's target's components as last listed (by kind, then name or URI), judged by the
    request's rules."""

    def __init__(self) -> None:
        self.known: dict[str, dict[str, Any]] = {method: {} for method in LISTED}

    def listed(self, sight: Sight | None, method: str, result: Any) -> Any:
        """A listing's page, kept, with what `sight` hides left out."""
        kind, field, key = LISTED[method]
        items = list(getattr(result, field) or ())
        self.known[method].update((str(getattr(item, key)), item) for item in items)
        if sight is None:
            return result
        shown = [item for item in items if sight.shows(kind, entry_of(item))]
        return result.model_copy(update={field: shown})

    async def check(
        self,
        sight: Sight | None,
        method: str,
        params: Any,
        list_all: Callable[[str], Awaitable[None]],
    ) -> None:
        """-32602 as for an unknown one when `sight` hides the item `params` name (its listing
        asked first when the item is not known yet)."""
        if sight is None or method not in NAMED:
            return
        listing, member, words = NAMED[method]
        name = str(getattr(params, member))
        if name not in self.known[listing]:
            await list_all(listing)
        item = self.known[listing].get(name)
        if item is None and method == "resources/read":
            listing = "resources/templates/list"
            if not self.known[listing]:
                await list_all(listing)
            item = next((t for t in self.known[listing].values() if _fits(t, name)), None)
        if item is not None and not sight.shows(LISTED[listing][0], entry_of(item)):
            raise ProtocolError(INVALID_PARAMS, words.format(name), {member: name})


def _fits(template: Any, uri: str) -> bool:
    try:
        return UriTemplate(str(template.uriTemplate)).match(uri) is not None
    except ValueError:  # a template that is not RFC 6570: it names nothing here
        return False
