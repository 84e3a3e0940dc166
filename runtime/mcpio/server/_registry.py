"""What a server offers, registered: tools, resources and their templates, prompts, the
completion handler, handlers of any method, and HTTP routes beside the MCP endpoint (the
decorators of `Server`, and `remove_*`).

A name (a resource's URI, a template's) registered again is a duplicate, handled as
`Server(on_duplicate=...)` says: "warn" (the default: a warning, the new one replaces the
first), "error" (`TypeError`), "replace", "ignore" (the first is kept). Components of one name
with different `version=`s are not duplicates: each is kept, the highest in the table (see
`mcpio._core.visibility`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from mcpio import apps
from mcpio._core.context import Context, MethodHandler
from mcpio._core.handlers import (
    CompletionFn,
    PromptEntry,
    ResourceEntry,
    ToolEntry,
    prompt_entry,
    resource_entry,
    tool_entry,
)
from mcpio._core.hints import CacheHint
from mcpio._core.jsonrpc import plain
from mcpio._core.options import PromptOptions, ResourceOptions, ToolOptions
from mcpio._core.routes import Route, RouteHandler
from mcpio._core.uritemplate import is_template
from mcpio._core.visibility import Kind, Rule, version_key, version_of
from mcpio.transports._http_rules import ParamHeaders, param_headers

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpio._core.extension import Extensions

F = TypeVar("F", bound=Callable[..., Any])
OnDuplicate = Literal["warn", "error", "replace", "ignore"]
DUPLICATE_POLICIES = ("warn", "error", "replace", "ignore")


class Registry:
    """`Server`'s registration: the tables its decorators fill, and `remove_*`."""

    if TYPE_CHECKING:  # what registration uses of the rest of `Server`
        handlers: dict[str, MethodHandler]  # the method table, which `method` sets
        extensions: Extensions  # (a tool an extension answers: its `param_headers`)

        def _announce(self, flag: str) -> None: ...

    def _registries(self, on_duplicate: OnDuplicate = "warn") -> None:
        """What the decorators register, empty."""
        if on_duplicate not in DUPLICATE_POLICIES:
            raise TypeError(f"on_duplicate is one of {DUPLICATE_POLICIES}, not {on_duplicate!r}")
        self.on_duplicate: OnDuplicate = on_duplicate
        # Every version of a versioned component, by kind, then name (or URI), then version.
        self.versions: dict[str, dict[str, dict[str, Any]]] = {
            kind: {} for kind in ("tool", "resource", "template", "prompt")
        }
        self.visibility_rules: list[Rule] = []  # `enable`/`disable`'s, in order
        self.filtered = False  # whether any rule, version or `enabled=False` may hide one
        self.tools: dict[str, ToolEntry] = {}
        # The options of tools other handlers answer (a proxy's, mounted servers'), by name.
        self.tool_options: dict[str, ToolOptions] = {}
        # Transformed tools whose source is not known yet (`add_transformed_tool`), by name.
        self.pending_transforms: dict[str, Any] = {}
        self._param_headers: dict[str, tuple[ToolEntry, ParamHeaders]] = {}
        self.resources: dict[str, ResourceEntry] = {}
        self.templates: dict[str, ResourceEntry] = {}
        self.prompts: dict[str, PromptEntry] = {}
        self.completion: CompletionFn | None = None
        self.completion_threaded = True
        self.routes: list[Route] = []  # `custom_route`: served by `http_app` beside /mcp
        # Methods of extensions outside the revisions' schemas (`mcpio._core.ext_methods`): plain
        # params in, a plain result out; and what `capabilities.extensions` declares of them.
        self.extension_methods: dict[str, MethodHandler] = {}
        self.extension_settings: dict[str, dict[str, Any]] = {}

    @overload
    def tool(self, name: F, /) -> F: ...

    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        app: apps.UiApp | None = None,
        **options: Unpack[ToolOptions],
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name: str | F | None = None,
        *,
        app: apps.UiApp | None = None,
        **options: Unpack[ToolOptions],
    ) -> Callable[[F], F] | F:
        """Register a tool, bare (`@server.tool`) or called (`@server.tool(...)`).

        Args:
            name: The tool's name (default: the function's), or the function when bare.
            app: The MCP App it shows (`mcpio.apps`): its `ui` entry in `_meta`.
            **options: The tool's options (`ToolOptions`): `title`, `description`,
                `input_schema`, `output_schema`, `annotations`, `meta`, `structured_output`,
                `icons`; how it runs: `task` ("forbidden", "optional", "required"),
                `defer_task`, `run_in_thread`, `retry` ("safe": a queued task may run again);
                FastMCP's `tags`, `timeout`, `version`, `enabled`.
        """
        if callable(name):
            return self.tool()(name)
        if app is not None:
            options["meta"] = {**(options.get("meta") or {}), "ui": app.meta()}

        def register(fn: F) -> F:
            entry = tool_entry(fn, Context, name, options)
            self._add("tool", self.tools, entry.definition.name, entry)
            return fn

        return register

    def remove_tool(self, name: str, *, notify: bool = True) -> bool:
        """Unregister tool `name`, announcing the change; False when there is none.

        Listeners are told the tool list changed (see `_announce`); with `notify=False` you
        call `notify_tools_changed` yourself.
        """
        return self._remove("tool", self.tools, name, "toolsListChanged", notify)

    def remove_resource(self, uri: str, *, notify: bool = True) -> bool:
        """Unregister the resource at `uri`, announcing the change; False when there is none."""
        return self._remove("resource", self.resources, uri, "resourcesListChanged", notify)

    def remove_resource_template(self, uri_template: str, *, notify: bool = True) -> bool:
        """Unregister a resource template, announcing the change; False when there is none."""
        return self._remove(
            "template", self.templates, uri_template, "resourcesListChanged", notify
        )

    def remove_prompt(self, name: str, *, notify: bool = True) -> bool:
        """Unregister prompt `name`, announcing the change; False when there is none."""
        return self._remove("prompt", self.prompts, name, "promptsListChanged", notify)

    def _remove(self, kind: str, table: dict[str, Any], key: str, flag: str, notify: bool) -> bool:
        """Every version of it gone (`notify`: announced)."""
        self.versions[kind].pop(key, None)
        if table.pop(key, None) is None:
            return False
        if notify:
            self._announce(flag)
        return True

    def param_headers(self, tool: str) -> ParamHeaders:
        """Return the `Mcp-Param-*` headers a 2026-07-28 HTTP call of `tool` must carry.

        They are read (SEP-2243) from its input schema's `x-mcp-header` annotations, once per
        registration.
        """
        entry = self.tools.get(tool)
        if entry is None:  # a tool an extension answers (a proxy's), or none
            return self.extensions.param_headers(tool) or ()
        known = self._param_headers.get(tool)
        if known is None or known[0] is not entry:
            known = (entry, param_headers(plain(entry.definition.inputSchema)))
            self._param_headers[tool] = known
        return known[1]

    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register a resource; the function returns text, bytes, or resource contents.

        A URI with `{variables}` registers a resource template (`resource_template`), as
        FastMCP's `@resource` does.

        Args:
            uri: The resource's URI.
            **options: Its options (`ResourceOptions`): `name`, `title`, `description`,
                `mime_type`, `icons`, `annotations`, `meta`, `run_in_thread`, `cache`,
                `tags`, `version`, `enabled`.
        """
        _needs_argument("resource", "its URI", uri)
        if is_template(uri):
            return self.resource_template(uri, **options)

        def register(fn: F) -> F:
            entry = resource_entry(fn, Context, uri=uri, **options)
            self._add("resource", self.resources, uri, entry)
            return fn

        return register

    def app_resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: Mapping[str, Any] | Any = None,
        permissions: Mapping[str, Any] | Any = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        run_in_thread: bool = True,
        cache: CacheHint | None = None,
    ) -> Callable[[F], F]:
        """Register the HTML page of an MCP App at a `ui://` URI; the function returns the HTML.

        It is served as `text/html;profile=mcp-app` with `_meta.ui` (CSP, permissions, domain,
        border: `mcpio.apps.ui_resource_meta`) on the listed resource and on the read contents.

        Args:
            uri: The page's `ui://` URI (`ValueError` for another).
            name: Its name (default: the function's).
            title: A display name.
            description: What it shows.
            csp: The origins its content security policy allows.
            permissions: The sandbox permissions it asks for.
            domain: Its dedicated origin.
            prefers_border: Whether it wants a border.
            run_in_thread: Whether a synchronous function runs in a worker thread.
            cache: Its cache hint (default: the server's for `resources/read`).
        """
        if not uri.startswith(apps.UI_SCHEME):
            raise ValueError(f"an app resource's URI must be a ui:// URI, not {uri!r}")
        meta = {"ui": apps.ui_resource_meta(csp, permissions, domain, prefers_border)}

        def register(fn: F) -> F:
            served = apps.with_meta(fn, uri, meta)
            self.resource(
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=apps.UI_MIME_TYPE,
                run_in_thread=run_in_thread,
                cache=cache,
                meta=meta,
            )(served)
            return fn

        return register

    def resource_template(
        self, uri_template: str, **options: Unpack[ResourceOptions]
    ) -> Callable[[F], F]:
        """Register a URI template (`test://item/{id}`); the function takes its variables.

        Each value is screened before the function sees it: one holding `..` above its start,
        an absolute path or NUL is -32602, but for the parameters `unscreened` names.

        Args:
            uri_template: The URI template (RFC 6570; FastMCP's `{path*}` too).
            **options: Its options (`ResourceOptions`): those of `resource`, and `unscreened`.
        """
        _needs_argument("resource_template", "its URI template", uri_template)

        def register(fn: F) -> F:
            entry = resource_entry(fn, Context, uri_template=uri_template, **options)
            self._add("template", self.templates, uri_template, entry)
            return fn

        return register

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(
        self, name: str | None = None, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...

    def prompt(
        self, name: str | F | None = None, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F] | F:
        """Register a prompt (`@server.prompt` or `@server.prompt(...)`).

        Its arguments are the function's parameters (strings), described by its docstring.

        Args:
            name: The prompt's name (default: the function's), or the function itself (bare).
            **options: Its options (`PromptOptions`): `title`, `description` (default: the
                function's docstring), `icons`, `meta`, `run_in_thread`, `tags`, `version`,
                `enabled`.
        """
        if callable(name):
            return self.prompt()(name)

        def register(fn: F) -> F:
            entry = prompt_entry(fn, Context, name=name, **options)
            self._add("prompt", self.prompts, entry.definition.name, entry)
            return fn

        return register

    def _add(self, kind: Kind, table: dict[str, Any], key: str, entry: Any) -> None:
        """Put `entry` in `table` at `key`, as its version and the duplicate policy say."""
        version = version_of(entry)
        options = entry.options
        if version is not None or options.get("enabled") is False or options.get("auth"):
            self.filtered = True  # (an `auth=` check: hidden from whom it denies)
        present = table.get(key)
        if present is not None and (version is None) != (version_of(present) is None):
            raise TypeError(
                f"{kind} {key!r}: a versioned and an unversioned one cannot share it: "
                "give each a version=, or none"
            )
        kept = None if version is None else self.versions[kind].setdefault(key, {})
        again = present is not None if kept is None else version in kept
        if again and not self._replaces(kind, key, version):
            return
        if kept is None:
            table[key] = entry
            return
        kept[str(version)] = entry
        _list_versions(kept)
        table[key] = kept[max(kept, key=version_key)]

    def _replaces(self, kind: str, key: str, version: str | None) -> bool:
        """Whether a duplicate replaces the first (`on_duplicate`); "error": `TypeError`."""
        what = f"{kind} {key!r}" + (f" version {version!r}" if version is not None else "")
        if self.on_duplicate == "error":
            raise TypeError(
                f"{what} is registered already: give it another name, remove the first, "
                "or Server(on_duplicate='replace')"
            )
        if self.on_duplicate == "warn":
            warnings.warn(
                f"{what} is registered again: the new one replaces the first "
                "(Server(on_duplicate=...): 'error', 'replace' or 'ignore' to choose)",
                UserWarning,
                stacklevel=4,
            )
        return self.on_duplicate != "ignore"

    @overload
    def completer(self, fn: F, /) -> F: ...

    @overload
    def completer(self, *, run_in_thread: bool = True) -> Callable[[F], F]: ...

    def completer(self, fn: F | None = None, *, run_in_thread: bool = True) -> Callable[[F], F] | F:
        """Register the completion handler (`@server.completer` or `@server.completer()`).

        It takes `CompleteRequestParams` and returns a list of values (or a `CompleteResult`).
        """
        if fn is not None:
            return self.completer()(fn)

        def register(fn: F) -> F:
            self.completion = fn
            self.completion_threaded = run_in_thread
            return fn

        return register

    def method(self, name: str) -> Callable[[F], F]:
        """Answer method `name` with the decorated handler: the low-level hook.

        Any client->server method of the dispatch tables can be answered with
        `handler(ctx, params) -> result` in the public models (it replaces a built-in handler).
        """
        _needs_argument("method", "the method's name", name)

        def register(fn: F) -> F:
            self.handlers[name] = fn
            return fn

        return register

    def custom_route(
        self, path: str, methods: Sequence[str] = ("GET",), *, check_host: bool = True
    ) -> Callable[[RouteHandler], RouteHandler]:
        """Serve `path` with the decorated handler in `http_app`, beside the MCP endpoint.

        For a health probe, say; see `mcpio._core.routes`.

        Args:
            path: The path it serves.
            methods: The HTTP methods it serves.
            check_host: False skips the Host and Origin checks (a probe naming the pod's
                address).
        """

        def register(handler: RouteHandler) -> RouteHandler:
            self.routes.append(Route(path, handler, tuple(methods), check_host))
            return handler

        return register


def _list_versions(kept: dict[str, Any]) -> None:
    """Each version's definition lists its version and all of them, highest first, as FastMCP
    lists them (`_meta.fastmcp`)."""
    ordered = sorted(kept, key=version_key, reverse=True)
    for version, entry in kept.items():
        listed = entry.definition.model_dump(by_alias=True, exclude_unset=True)
        meta = {**listed.get("_meta", {}), "fastmcp": {"version": version, "versions": ordered}}
        entry.definition = type(entry.definition).model_validate({**listed, "_meta": meta})


def _needs_argument(decorator: str, what: str, given: Any) -> None:
    """A decorator that needs an argument, used bare: a clear TypeError at import time."""
    if callable(given):
        raise TypeError(f"@server.{decorator} needs {what}: @server.{decorator}(...)")
