"""The MCP Apps extension's rules (`io.modelcontextprotocol/ui`), as `mcpio inspect` checks
them on listings and reads: a tool's `_meta.ui` is a valid `McpUiToolMeta` naming a `ui://`
resource the server lists; a `ui://` resource is `text/html;profile=mcp-app`, and its `_meta.ui`
(listed or read) a valid `McpUiResourceMeta` (CSP domains, sandbox permissions). The shapes are
the models generated from the extension's own schema."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pydantic

from mcpio.apps import UI_MIME_TYPE, UI_SCHEME, ui
from mcpio.inspect._rules import Direction, Finding


@dataclass
class AppsSeen:
    """What the session showed of apps so far: the `ui://` resources the server listed (None
    before any listing) and, for each tool's `resourceUri`, where it was declared."""

    listed: set[str] | None = None
    wanted: dict[str, tuple[Direction, str, int]] = field(default_factory=lambda: {})
    reported: set[str] = field(default_factory=lambda: set())


def result_findings(
    direction: Direction, method: str, result: Mapping[str, Any], seen: AppsSeen, index: int
) -> Iterator[Finding]:
    """The findings of one result of `tools/list`, `resources/list` or `resources/read`."""
    if method == "tools/list":
        for at, tool in enumerate(_items(result, "tools")):
            yield from _tool(direction, f"$.result.tools.{at}", tool, seen, index)
    elif method == "resources/list":
        listed = seen.listed if seen.listed is not None else set()
        for at, resource in enumerate(_items(result, "resources")):
            if isinstance(resource.get("uri"), str):
                listed.add(resource["uri"])
            yield from _resource(direction, f"$.result.resources.{at}", resource)
        seen.listed = listed
    elif method == "resources/read":
        for at, contents in enumerate(_items(result, "contents")):
            yield from _resource(direction, f"$.result.contents.{at}", contents)


def unlisted(seen: AppsSeen) -> list[Finding]:
    """At the end of a session whose server listed its resources: each tool's `resourceUri`
    that none of them is (reported once)."""
    if seen.listed is None:
        return []
    found = []
    for uri, (direction, path, index) in sorted(seen.wanted.items()):
        if uri not in seen.listed and uri not in seen.reported:
            seen.reported.add(uri)
            what = f"{uri} is not among the resources the server listed"
            found.append(Finding("apps.unlisted-resource", direction, path, what, index))
    return found


def _items(result: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    items = result.get(key)
    return [i for i in items if type(i) is dict] if type(items) is list else []


def _ui(item: Mapping[str, Any]) -> Any:
    meta = item.get("_meta")
    return meta.get("ui") if type(meta) is dict else None


def _tool(
    direction: Direction, path: str, tool: dict[str, Any], seen: AppsSeen, index: int
) -> Iterator[Finding]:
    found = _ui(tool)
    if found is None:
        return
    try:
        meta = ui.McpUiToolMeta.model_validate(found)
    except pydantic.ValidationError as exc:
        yield Finding("apps.tool-meta", direction, f"{path}._meta.ui", _why(exc))
        return
    uri = meta.resourceUri
    if uri is None:
        return
    if not uri.startswith(UI_SCHEME):
        where = f"{path}._meta.ui.resourceUri"
        yield Finding("apps.tool-meta", direction, where, f"{uri!r} is not a ui:// URI")
        return
    seen.wanted.setdefault(uri, (direction, f"{path}._meta.ui.resourceUri", index))


def _resource(direction: Direction, path: str, item: dict[str, Any]) -> Iterator[Finding]:
    uri = item.get("uri")
    if isinstance(uri, str) and uri.startswith(UI_SCHEME):
        mime = item.get("mimeType")
        if mime != UI_MIME_TYPE:
            what = f"a ui:// resource served as {mime!r}, not {UI_MIME_TYPE!r}"
            yield Finding("apps.resource-mime", direction, f"{path}.mimeType", what)
    found = _ui(item)
    if found is None:
        return
    try:
        ui.McpUiResourceMeta.model_validate(found)
    except pydantic.ValidationError as exc:
        yield Finding("apps.resource-meta", direction, f"{path}._meta.ui", _why(exc))


def _why(exc: pydantic.ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]
