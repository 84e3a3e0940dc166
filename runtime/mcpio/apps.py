"""MCP Apps: tools with an HTML page that the host renders in a sandboxed iframe.

The extension `io.modelcontextprotocol/ui`: a tool names a `ui://` resource, an HTML page
served as `text/html;profile=mcp-app`, that a host renders in a sandboxed iframe.

Server side: `UiApp`, the `app=` of `Server.tool` (the tool's typed `_meta.ui`), and
`ui_resource_meta`, the `_meta.ui` of `Server.app_resource` (CSP, permissions). Client side:
`tool_ui` and `resource_ui` read the typed `_meta.ui` of a listed tool, a listed resource or a
read resource's contents. Every `_meta.ui` is validated with the models generated from the
extension's own schema (`mcp_wire.<revision>.ext.apps`). The extension is negotiated: a server
that serves apps offers it in `capabilities.extensions`, and a client that renders them declares
it there (`declares_apps`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import mcp_wire
from mcp_wire_runtime.base import WireModel
from mcpio._core.extension import Extension
from mcpio.latest import public as pub

F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def _generated() -> ModuleType:
    """The extension's models, of the newest revision it was generated for, imported on first
    use (mcpio also runs on a generated tree without the extension: until an app is used)."""
    revisions = mcp_wire.EXTENSIONS.get(UI_EXTENSION)
    if not revisions:
        raise LookupError(f"{UI_EXTENSION} is not generated (schema/extensions.toml)")
    package = mcp_wire.revision(revisions[-1]).__name__ + ".ext"
    name = importlib.import_module(package).EXTENSIONS[UI_EXTENSION]
    return importlib.import_module(f"{package}.{name}")


class _Models:
    """`ui.McpUiToolMeta` and the rest: attributes of the generated module, found on use."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_generated(), name)


if TYPE_CHECKING:
    from mcp_wire.v2026_07_28.ext.apps import models as ui
else:
    ui = _Models()

UI_EXTENSION = "io.modelcontextprotocol/ui"
UI_MIME_TYPE = "text/html;profile=mcp-app"
UI_SCHEME = "ui://"
Visibility = Literal["model", "app"]

__all__ = [
    "UI_EXTENSION",
    "UI_MIME_TYPE",
    "UiApp",
    "app_only",
    "client_capability",
    "declares_apps",
    "resource_ui",
    "tool_ui",
    "ui",
    "ui_resource_meta",
]


@dataclass(frozen=True)
class UiApp:
    """The app a tool declares: what `@server.tool(app=UiApp(...))` takes.

    FastMCP's `AppConfig` on a tool: `resource_uri`, the `ui://` resource the host renders for
    the tool, and `visibility`, who may see and call it ("model": the agent, "app": the app's
    iframe; both by default).
    """

    resource_uri: str
    visibility: Sequence[Visibility] | None = None

    def meta(self) -> dict[str, Any]:
        """The tool's `_meta.ui`, checked against the extension's `McpUiToolMeta`."""
        if not self.resource_uri.startswith(UI_SCHEME):
            raise ValueError(
                f"an app's resource_uri must be a ui:// URI, not {self.resource_uri!r}"
            )
        data: dict[str, Any] = {"resourceUri": self.resource_uri}
        if self.visibility is not None:
            data["visibility"] = list(self.visibility)
        return _dumped(ui.McpUiToolMeta.model_validate(data))


def ui_resource_meta(
    csp: ui.McpUiResourceCsp | Mapping[str, Any] | None = None,
    permissions: ui.McpUiResourcePermissions | Mapping[str, Any] | None = None,
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> dict[str, Any]:
    """Make an app resource's `_meta.ui` (`McpUiResourceMeta`), checked against the schema.

    It says the origins its CSP allows (`connectDomains`, `resourceDomains`, `frameDomains`,
    `baseUriDomains`), the sandbox permissions it asks for (`camera`, `microphone`,
    `geolocation`, `clipboardWrite`), its dedicated origin and whether it wants a border.

    Args:
        csp: The origins the page's Content Security Policy allows (a model or plain data).
        permissions: The sandbox permissions the page asks for (a model or plain data).
        domain: The page's dedicated origin.
        prefers_border: Whether the page wants the host to draw a border around it.
    """
    data: dict[str, Any] = {}
    for key, value in (
        ("csp", csp),
        ("permissions", permissions),
        ("domain", domain),
        ("prefersBorder", prefers_border),
    ):
        if value is not None:
            data[key] = _dumped(value) if isinstance(value, WireModel) else value
    return _dumped(ui.McpUiResourceMeta.model_validate(data))


def _dumped(model: Any) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def with_meta(fn: F, uri: str, meta: Mapping[str, Any]) -> F:
    """`fn` (sync or async, its signature kept) whose HTML answer becomes the app's contents:
    `text/html;profile=mcp-app` with `meta` as their `_meta`."""

    def contents(value: Any) -> Any:
        if not isinstance(value, str):
            return value  # contents or a result of its own making
        data = {"uri": uri, "mimeType": UI_MIME_TYPE, "text": value, "_meta": dict(meta)}
        return pub.TextResourceContents.model_validate(data)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def served_async(*args: Any, **kwargs: Any) -> Any:
            return contents(await fn(*args, **kwargs))

        return served_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def served(*args: Any, **kwargs: Any) -> Any:
        return contents(fn(*args, **kwargs))

    return served  # type: ignore[return-value]


# ---------------------------------------------------------------------- negotiation


def client_capability() -> dict[str, Any]:
    """What a client that renders apps declares under `capabilities.extensions`."""
    return _dumped(ui.McpUiClientCapabilities(mimeTypes=[UI_MIME_TYPE]))


def declares_apps(capabilities: Any) -> bool:
    """Tell whether client capabilities (a model or plain data) declare the extension.

    They must declare it with the app MIME type, or with no `mimeTypes` (which says nothing
    against it).
    """
    if isinstance(capabilities, Mapping):
        extensions = capabilities.get("extensions")  # pyright: ignore[reportUnknownMemberType]
    else:
        extensions = getattr(capabilities, "extensions", None)
    if not isinstance(extensions, Mapping) or UI_EXTENSION not in extensions:
        return False
    settings = extensions[UI_EXTENSION]  # pyright: ignore[reportUnknownVariableType]
    types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None  # pyright: ignore
    return not isinstance(types, list) or UI_MIME_TYPE in types


def app_only(meta: Any) -> bool:
    """Tell whether a tool's `_meta` (a model or plain data) marks it for the app alone.

    That is `visibility: ["app"]`: the tool is hidden from clients that do not render apps.
    """
    found = _ui_in(meta)
    visibility = found.get("visibility") if isinstance(found, Mapping) else None  # pyright: ignore
    return isinstance(visibility, list) and "model" not in visibility and "app" in visibility


def serves_apps(metas: Iterable[Any]) -> bool:
    """Whether any of these tools' or resources' `_meta` carries a `ui` entry."""
    return any(isinstance(_ui_in(meta), Mapping) for meta in metas)


class AppsExtension(Extension):
    """MCP Apps as a server extension: declared once a tool or resource names an app, and
    app-only tools listed only to clients that render apps (every `Server` has it)."""

    id = UI_EXTENSION

    def __init__(self) -> None:
        self._server: Any = None

    def added(self, server: Any) -> None:
        """Keep the server, whose tools and resources say whether it serves apps."""
        self._server = server

    def settings(self) -> Mapping[str, Any] | None:
        """Declared (with no settings) while a tool or resource names an app."""
        server = self._server
        if server is None:
            return None
        entries = (*server.tools.values(), *server.resources.values())
        return {} if serves_apps(e.definition.meta for e in entries) else None

    def list_tools(self, ctx: Any, tools: Mapping[str, Any]) -> Mapping[str, Any]:
        """App-only tools (`visibility: ["app"]`) are listed to clients that render apps."""
        if declares_apps(ctx.client_capabilities):
            return tools
        return {k: e for k, e in tools.items() if not app_only(e.definition.meta)}


def _ui_in(meta: Any) -> Any:
    """The `ui` entry of a `_meta` (plain data, or a model keeping it as an extra member)."""
    if isinstance(meta, Mapping):
        return meta.get("ui")  # pyright: ignore[reportUnknownMemberType]
    return getattr(meta, "ui", None)


# ---------------------------------------------------------------------- reading


def tool_ui(tool: Any) -> ui.McpUiToolMeta | None:
    """Read the typed `_meta.ui` of a listed tool (a model or plain data).

    Returns:
        The tool's `McpUiToolMeta`; None when it has none.

    Raises:
        pydantic.ValidationError: When it breaks the extension's schema.
    """
    found = _ui_of(tool)
    return None if found is None else ui.McpUiToolMeta.model_validate(found)


def resource_ui(resource: Any) -> ui.McpUiResourceMeta | None:
    """The typed `_meta.ui` of a listed resource or a read resource's contents."""
    found = _ui_of(resource)
    return None if found is None else ui.McpUiResourceMeta.model_validate(found)


def _ui_of(item: Any) -> Any:
    meta = (
        item.get("_meta") if isinstance(item, Mapping) else getattr(item, "meta", None)
    )  # pyright: ignore
    return _ui_in(meta)
