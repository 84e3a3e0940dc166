"""The server: what it offers (tools, resources, prompts, completions, any method of the dispatch
tables) and how each method is answered, in the public (latest revision's) models. One handler
serves every revision and both eras; `ServerConnection` does the per-connection lifecycle."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import anyio
import pydantic

from mcpio import apps
from mcpio._core.bus import Bus
from mcpio._core.context import (
    MAX_ANSWER_BYTES,
    Context,
    InputRequired,
    MethodHandler,
)
from mcpio._core.errors import ConnectionClosed, LifespanError, ToolError
from mcpio._core.extension import Extension, Extensions, ToolCall
from mcpio._core.extras import needs
from mcpio._core.handlers import (
    CompletionFn,
    PromptEntry,
    ResourceEntry,
    TextAnswer,
    ToolEntry,
    call,
    completion_result,
    prompt_entry,
    prompt_result,
    resource_entry,
    resource_result,
    structured_result,
    tool_entry,
    tool_result,
)
from mcpio._core.hints import CacheHint
from mcpio._core.hub import LIST_CHANGED, RESOURCE_UPDATED, Hub
from mcpio._core.jsonrpc import plain
from mcpio._core.negotiate import MODERN
from mcpio._core.options import ToolOptions
from mcpio._core.paging import page
from mcpio._core.routes import Route, RouteHandler
from mcpio._core.schema_check import violation
from mcpio._core.sealing import Sealer
from mcpio._core.structured import summary
from mcpio._core.transport import Transport
from mcpio.latest import public as pub
from mcpio.middleware._base import HOOKED_METHODS, Call, CallNext, MiddlewareFn, acts_on, chain
from mcpio.server._connection import ServerConnection
from mcpio.server._served import Identity, Limits
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._extension import TasksExtension, tasks_of
from mcpio.tasks._extension import task_required as task_required  # (mcpio.server's)
from mcpio.tasks._store import TaskStore
from mcpio.transports._http_rules import ParamHeaders, param_headers
from mcpio.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpio._core.options import ConnectionOptions
    from mcpio.http._app import HttpApp
    from mcpio.http._options import HttpAppOptions, HttpServeOptions
    from mcpio.skills import SkillsDirectory

log = logging.getLogger("mcpio")

F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E")
#: `Server(lifespan=...)`: called with the server, an async context manager whose value handlers
#: read as `ctx.lifespan`.
Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]


class Server:
    """An MCP server for every pinned revision, both eras.

    Args:
        name: The server's name (`serverInfo.name`).
        version: The server's version (`serverInfo.version`).
        title: A display name (`serverInfo.title`).
        instructions: What the model is told about using the server (`instructions`).
        state_key: The key that seals `requestState` and cursors (at least 16 bytes; random
            when None). Instances behind one load balancer share it.
        cache_ttl_ms: How long a cacheable result may be kept, in milliseconds (0: not kept).
        cache_scope: By whom: `"private"`, or `"public"` (the same for every caller).
        request_timeout: Seconds the server waits for its own requests (legacy inputs).
        max_answer_bytes: The largest answer a client may give to a question (`ctx.elicit`,
            `ctx.sample`, `ctx.list_roots`) in either era; a larger one is -32602.
        bus: Carries change notifications to every instance (default: `LocalBus`).
        tasks: The task engine, or the store of a default one (memory unless given).
        mask_error_details: A failing tool answers "Error calling tool 'x'"; False adds the
            exception's message.
        middleware: Wraps every request (see `add_middleware`).
        lifespan: Called with the server; its context manager's value is `ctx.lifespan` (see
            `running`).
        list_page_size: Lists in pages of this size (`mcpio._core.paging`); None: all at once.
        method_cache_hints: Cache hints of their own, per method.
        icons: The server's icons (`serverInfo.icons`).
        website_url: The server's website (`serverInfo.websiteUrl`).

    Examples:
        >>> server = Server("demo", "1.0")
        >>> @server.tool()
        ... async def add(a: int, b: int) -> str:
        ...     return str(a + b)
        >>> sorted(server.tools)
        ['add']
    """

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        state_key: bytes | None = None,
        cache_ttl_ms: int = 0,
        cache_scope: str = "private",
        request_timeout: float = 300.0,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        bus: Bus | None = None,
        tasks: TaskEngine | TaskStore | None = None,
        mask_error_details: bool = True,
        middleware: Sequence[MiddlewareFn] = (),
        lifespan: Lifespan | None = None,
        list_page_size: int | None = None,
        method_cache_hints: Mapping[str, CacheHint] | None = None,
        icons: Sequence[pub.Icon | Mapping[str, Any]] | None = None,
        website_url: str | None = None,
    ) -> None:
        if list_page_size is not None and list_page_size < 1:
            raise ValueError("list_page_size must be at least 1")
        self.identity = Identity(
            server_info(name, version, title, icons, website_url), instructions
        )
        self.sealer = Sealer(state_key)
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.method_cache_hints: dict[str, CacheHint] = dict(method_cache_hints or {})
        self.list_page_size = list_page_size
        self.limits = Limits(request_timeout, max_answer_bytes)
        self._registries()
        self.mask_error_details = mask_error_details
        self.middleware: list[MiddlewareFn] = list(middleware)
        # The middleware list they were made of, and the pipelines by method (`_pipeline`).
        self._pipelines: tuple[tuple[MiddlewareFn, ...], dict[str, CallNext | None]] = ((), {})
        self.lifespan = lifespan
        self.lifespan_state: Any = None  # what the lifespan yielded (`ctx.lifespan`)
        self._life = _Running()
        self._announcing: set[asyncio.Task[None]] = set()  # see `_announce`
        self.handlers: dict[str, MethodHandler] = self._built_in_handlers()
        self.hub = Hub(self.info.name, self.capabilities, bus)
        self.extensions = Extensions(self, self.extension_methods)
        # The extensions' `call_tool` hooks around the tool, made once per set of extensions.
        self._tool_chain: tuple[int, Callable[[ToolCall], Awaitable[Any]]] = (-1, self._call_entry)
        self.extensions.add(TasksExtension(tasks))
        self.extensions.add(apps.AppsExtension())

    def _registries(self) -> None:
        """What the decorators register, empty."""
        self.tools: dict[str, ToolEntry] = {}
        # The options of tools other handlers answer (a proxy's, mounted servers'), by name.
        self.tool_options: dict[str, ToolOptions] = {}
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

    def _built_in_handlers(self) -> dict[str, MethodHandler]:
        return {
            "server/discover": self._discover,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "completion/complete": self._complete,
        }

    @property
    def tasks(self) -> TaskEngine:
        """The task engine the server's task tools run on (`Server(tasks=...)`)."""
        return tasks_of(self).engine

    @tasks.setter
    def tasks(self, engine: TaskEngine) -> None:
        tasks_of(self).use(engine)

    def add_extension(self, extension: Extension) -> None:
        """Serve a protocol extension (see `mcpio.server.Extension`).

        Raises:
            ValueError: Its id is empty or served already, or it defines a method another
                extension defines.
        """
        self.extensions.add(extension)

    @property
    def bus(self) -> Bus:
        """The bus that carries change notifications to the listeners of every instance.

        `LocalBus`: this process only; `RedisBus(url)`: every instance subscribed to its
        channel. Set it before serving.
        """
        return self.hub.bus

    @bus.setter
    def bus(self, bus: Bus) -> None:
        self.hub.bus = bus

    # ------------------------------------------------------------------ registration

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
                `defer_task`, `run_in_thread`, `retry` ("safe": a queued task may run again).
        """
        if callable(name):
            return self.tool()(name)
        if app is not None:
            options["meta"] = {**(options.get("meta") or {}), "ui": app.meta()}

        def register(fn: F) -> F:
            entry = tool_entry(fn, Context, name, options)
            self.tools[entry.definition.name] = entry
            return fn

        return register

    def remove_tool(self, name: str, *, notify: bool = True) -> bool:
        """Unregister tool `name`, announcing the change; False when there is none.

        Listeners are told the tool list changed (see `_announce`); with `notify=False` you
        call `notify_tools_changed` yourself.
        """
        return self._remove(self.tools, name, "toolsListChanged", notify)

    def remove_resource(self, uri: str, *, notify: bool = True) -> bool:
        """Unregister the resource at `uri`, announcing the change; False when there is none."""
        return self._remove(self.resources, uri, "resourcesListChanged", notify)

    def remove_resource_template(self, uri_template: str, *, notify: bool = True) -> bool:
        """Unregister a resource template, announcing the change; False when there is none."""
        return self._remove(self.templates, uri_template, "resourcesListChanged", notify)

    def remove_prompt(self, name: str, *, notify: bool = True) -> bool:
        """Unregister prompt `name`, announcing the change; False when there is none."""
        return self._remove(self.prompts, name, "promptsListChanged", notify)

    def _remove(self, table: dict[str, Any], key: str, flag: str, notify: bool) -> bool:
        if table.pop(key, None) is None:
            return False
        if notify:
            self._announce(flag)
        return True

    def _announce(self, flag: str) -> None:
        """Publish a list change from synchronous code (a `remove_*`): on the event loop the
        server runs on, from it or from a worker thread (a sync handler); nowhere while the
        server is not started, when no one can be listening."""
        loop = self._life.loop
        if loop is None or loop.is_closed() or self._life.count == 0:
            return
        change = self._publish_list_change(flag)
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            task = loop.create_task(change)
            self._announcing.add(task)  # held until done (the loop keeps only weak references)
            task.add_done_callback(self._announcing.discard)
        else:
            asyncio.run_coroutine_threadsafe(change, loop)

    # ------------------------------------------------------------------ the request pipeline

    def add_middleware(self, middleware: MiddlewareFn) -> None:
        """Wrap every request of the handler table in `middleware`, inside those added before.

        `middleware` is a `mcpio.middleware.Middleware`, or any
        `async (call, call_next) -> result`.
        """
        self.middleware.append(middleware)

    async def dispatch(
        self, ctx: Context, method: str, params: Any, handler: MethodHandler | None = None
    ) -> Any:
        """Answer a request through the middlewares to its handler, and return its result.

        This is the one path every request takes, in both eras (what the middlewares see of
        each: `mcpio.middleware`).

        Args:
            ctx: The request's context.
            method: The request's method.
            params: Its params, in the public models.
            handler: The handler to answer with; None: the handler table's for `method`.
        """
        ctx.lifespan = self.lifespan_state
        pipeline = self._pipeline(method) if self.middleware else None
        if pipeline is None:
            if handler is None:
                handler = self.handlers.get(method) or _not_served(method)
            return await handler(ctx, params)
        call = Call(method, params, ctx, handler=handler)
        try:
            result = await pipeline(call)
        except ToolError as exc:  # a middleware's refusal of a tool call, for the model to read
            if method != "tools/call":
                raise
            return tool_result_error(str(exc), exc.structured)
        made = call.text_answer
        if made is not None and result is made[0] and _untouched(made[0], made[1]):
            return made[1]  # the middlewares passed the string answer on as it was
        return result

    def _pipeline(self, method: str) -> CallNext | None:
        """The middlewares that act on a request of `method` around its handler (`acts_on`: a
        middleware that overrides none of its hooks is left out); None: none does."""
        middleware = tuple(self.middleware)
        if self._pipelines[0] != middleware:
            self._pipelines = (middleware, {})
        pipelines = self._pipelines[1]
        key = method if method in HOOKED_METHODS else ""  # (bounded, as `acts_on`'s plans)
        if key not in pipelines:
            acting = [m for m in middleware if acts_on(m, method)]
            pipelines[key] = chain(acting, self._answer) if acting else None
        return pipelines[key]

    async def _answer(self, call: Call) -> Any:
        """The innermost step: the handler's result as the public model (a tool's string
        answer too, which the connection otherwise writes without one: see `dispatch`)."""
        handler = call.handler or self._handler(call.method)
        result = await handler(call.ctx, call.params)
        if type(result) is not TextAnswer:
            return result
        made = tool_result(result.text)
        call.text_answer = (made, result)
        return made

    def _handler(self, method: str) -> MethodHandler:
        handler = self.handlers.get(method)
        if handler is None:
            raise ProtocolError(
                METHOD_NOT_FOUND, f"method {method!r} is not served here", {"method": method}
            )
        return handler

    def param_headers(self, tool: str) -> ParamHeaders:
        """Return the `Mcp-Param-*` headers a 2026-07-28 HTTP call of `tool` must carry.

        They are read (SEP-2243) from its input schema's `x-mcp-header` annotations, once per
        registration.
        """
        entry = self.tools.get(tool)
        if entry is None:
            return ()
        known = self._param_headers.get(tool)
        if known is None or known[0] is not entry:
            known = (entry, param_headers(plain(entry.definition.inputSchema)))
            self._param_headers[tool] = known
        return known[1]

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        run_in_thread: bool = True,
        icons: Sequence[pub.Icon | Mapping[str, Any]] | None = None,
        cache: CacheHint | None = None,
    ) -> Callable[[F], F]:
        """Register a resource; the function returns text, bytes, or resource contents.

        Args:
            uri: The resource's URI.
            name: Its name (default: the function's).
            title: A display name.
            description: What it holds.
            mime_type: Its MIME type.
            run_in_thread: Whether a synchronous function runs in a worker thread.
            icons: Its icons.
            cache: Its cache hint (default: the server's for `resources/read`).
        """
        _needs_argument("resource", "its URI", uri)

        def register(fn: F) -> F:
            entry = resource_entry(
                fn,
                Context,
                uri=uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                icons=icons,
            )
            entry.threaded, entry.cache = run_in_thread, cache
            self.resources[uri] = entry
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
            )(served)
            entry = self.resources[uri]
            listed = entry.definition.model_dump(by_alias=True, exclude_unset=True)
            entry.definition = type(entry.definition).model_validate({**listed, "_meta": meta})
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        run_in_thread: bool = True,
        icons: Sequence[pub.Icon | Mapping[str, Any]] | None = None,
        cache: CacheHint | None = None,
    ) -> Callable[[F], F]:
        """Register a URI template (`test://item/{id}`); the function takes its variables.

        Args:
            uri_template: The URI template (RFC 6570).
            name: Its name (default: the function's).
            title: A display name.
            description: What its resources hold.
            mime_type: Its resources' MIME type.
            run_in_thread: Whether a synchronous function runs in a worker thread.
            icons: Its icons.
            cache: Its cache hint (default: the server's for `resources/read`).
        """
        _needs_argument("resource_template", "its URI template", uri_template)

        def register(fn: F) -> F:
            entry = resource_entry(
                fn,
                Context,
                uri_template=uri_template,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                icons=icons,
            )
            entry.threaded, entry.cache = run_in_thread, cache
            self.templates[uri_template] = entry
            return fn

        return register

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        run_in_thread: bool = True,
        icons: Sequence[pub.Icon | Mapping[str, Any]] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        run_in_thread: bool = True,
        icons: Sequence[pub.Icon | Mapping[str, Any]] | None = None,
    ) -> Callable[[F], F] | F:
        """Register a prompt (`@server.prompt` or `@server.prompt(...)`).

        Its arguments are the function's parameters (strings), described by its docstring.

        Args:
            name: The prompt's name (default: the function's), or the function itself (bare).
            title: A display name.
            description: What it is for (default: the function's docstring).
            run_in_thread: Whether a synchronous function runs in a worker thread.
            icons: Its icons.
        """
        if callable(name):
            return self.prompt()(name)

        def register(fn: F) -> F:
            entry = prompt_entry(
                fn, Context, name=name, title=title, description=description, icons=icons
            )
            entry.threaded = run_in_thread
            self.prompts[entry.definition.name] = entry
            return fn

        return register

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

    def skills(
        self,
        directory: str | os.PathLike[str],
        *,
        scheme: str = "skill",
        watch_interval: float | None = 1.0,
    ) -> SkillsDirectory:
        """Publish every skill under `directory`, and return its `SkillsDirectory`.

        They are served as SEP-2640 has it: `skill://` resources, `skills/list`, `skills/get`,
        `resources/directory/read` (see `mcpio.skills.SkillsDirectory`).

        Args:
            directory: The directory the skills are in.
            scheme: The URI scheme of their resources.
            watch_interval: Seconds between looks for changes while the server runs (None:
                see `SkillsDirectory`).
        """
        from mcpio.skills import SkillsDirectory

        provider = SkillsDirectory(directory, scheme=scheme, watch_interval=watch_interval)
        provider.attach(self)
        return provider

    def mount(self, other: Server, namespace: str) -> None:
        """Serve another server's tools, prompts and resources under `namespace`.

        `other`'s tools and prompts are served as `<namespace>_<name>` and its resources as
        `scheme://<namespace>/rest`, live, with its middleware, lifespan and task tools (see
        `mcpio.server._mount`). `other` belongs to this server from then on.
        """
        from mcpio.server._mount import Mounts

        mounts = self.__dict__.get("_mounts")
        if mounts is None:
            mounts = self.__dict__["_mounts"] = Mounts(self)
        mounts.add(other, namespace)

    # ------------------------------------------------------------------ capabilities

    def capabilities(self) -> pub.ServerCapabilities:
        """The capabilities the server declares, from what it has registered."""
        caps: dict[str, Any] = {"logging": {}}
        if self.tools or "tools/call" in self.handlers:
            caps["tools"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.completion is not None:
            caps["completions"] = {}
        extensions = {**self.extension_settings, **self.extensions.settings()}
        if extensions:
            caps["extensions"] = extensions
        return pub.ServerCapabilities.model_validate(caps)

    def capabilities_in(self, revision: str) -> dict[str, Any]:
        """The capabilities `initialize` or `server/discover` reports in `revision`.

        Plain data: `capabilities()` with each extension declared as it is in `revision`
        (`Extensions.declare`); `extensions` is kept whether the revision's schema has it.
        """
        caps = self.capabilities().model_dump(mode="json", by_alias=True, exclude_unset=True)
        self.extensions.declare(caps, revision)
        return caps

    @property
    def info(self) -> pub.Implementation:
        """The server's `Implementation` (`serverInfo`)."""
        return self.identity.info

    @info.setter
    def info(self, info: pub.Implementation) -> None:
        self.identity.info = info

    @property
    def instructions(self) -> str | None:
        """What the model is told about using the server (`instructions`)."""
        return self.identity.instructions

    @instructions.setter
    def instructions(self, instructions: str | None) -> None:
        self.identity.instructions = instructions

    @property
    def request_timeout(self) -> float:
        """Seconds the server waits for its own requests (legacy inputs)."""
        return self.limits.request_timeout

    @request_timeout.setter
    def request_timeout(self, seconds: float) -> None:
        self.limits.request_timeout = seconds

    @property
    def max_answer_bytes(self) -> int:
        """The largest answer a client may give to a question (`Server(max_answer_bytes=...)`)."""
        return self.limits.max_answer_bytes

    @max_answer_bytes.setter
    def max_answer_bytes(self, size: int) -> None:
        self.limits.max_answer_bytes = size

    @property
    def result_meta(self) -> pub.ResultMetaObject:
        """The `_meta` of a modern result that sets none: the server's info.

        It is made once and shared: never change it in place.
        """
        return self.identity.result_meta

    @property
    def result_meta_json(self) -> bytes:
        """`result_meta` as JSON (written into each modern result that sets no `_meta`)."""
        return self.identity.result_meta_json

    def cache_hints(self, method: str | None = None) -> dict[str, Any]:
        """Return a cacheable result's `ttlMs`, `cacheScope` and `resultType` members.

        The hint is `method`'s when it has its own, else the server's.
        """
        return {**self.cache_hint(method).fields(), "resultType": "complete"}

    def cache_hint(self, method: str | None = None) -> CacheHint:
        """Return the cache hint (`ttlMs`, `cacheScope`) of `method`'s results.

        That is its own, else the server's.
        """
        hint = self.method_cache_hints.get(method) if method is not None else None
        return hint or CacheHint(self.cache_ttl_ms, self.cache_scope)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ built-in methods

    async def _discover(self, ctx: Context, params: Any) -> pub.DiscoverResult:
        """`server/discover`: the revisions and capabilities served (each extension as it is
        declared in the request's revision)."""
        data: dict[str, Any] = {
            "supportedVersions": list(reversed(MODERN)),
            "capabilities": self.capabilities_in(ctx.revision),
            **self.cache_hints("server/discover"),
        }
        if self.instructions:
            data["instructions"] = self.instructions
        return pub.DiscoverResult.model_validate(data)

    async def _list_tools(self, ctx: Context, params: Any) -> pub.ListToolsResult:
        table = self.extensions.list_tools(ctx, self.tools)
        tools, cursor = self._page(ctx, params, "tools/list", table)
        return pub.ListToolsResult(
            tools=[entry.definition for entry in tools],
            nextCursor=cursor,
            **self.cache_hints("tools/list"),
        )

    async def _call_tool(self, ctx: Context, params: pub.CallToolRequestParams) -> Any:
        """`tools/call`: the tool's result, through the extensions' `call_tool` hooks."""
        entry = self.tools.get(params.name)
        if entry is None:
            raise ProtocolError(
                INVALID_PARAMS, f"unknown tool {params.name!r}", {"name": params.name}
            )
        chain = self._tool_chain
        if chain[0] != self.extensions.version:
            chain = self._tool_chain = (
                self.extensions.version,
                self.extensions.tool_chain(self._call_entry),
            )
        try:
            return await chain[1](ToolCall(ctx, params, entry))
        except ToolError as exc:  # its arguments do not fit, or a hook's refusal
            return tool_result_error(str(exc), exc.structured)

    async def _call_entry(self, call: ToolCall) -> Any:
        """The tool run in the request (a string answer kept as a `TextAnswer`)."""
        entry = call.entry
        try:  # (`call.arguments()` inline: every tool call's path)
            kwargs = entry.kwargs(call.params.arguments or {})
        except pydantic.ValidationError:
            kwargs = call.arguments()  # raises the tool error that says why
        if entry.arguments is None:  # a hand-written input schema: checked as JSON Schema
            kwargs = call.arguments()
        if entry.context_param:
            kwargs[entry.context_param] = call.ctx
        return await _run_tool(entry, kwargs, self.mask_error_details, text_answer=True)

    async def _run_entry(self, ctx: Context, entry: ToolEntry, kwargs: dict[str, Any]) -> Any:
        if entry.context_param:
            kwargs[entry.context_param] = ctx
        return await _run_tool(entry, kwargs, self.mask_error_details)

    async def run_tool(self, ctx: Context, params: pub.CallToolRequestParams) -> Any:
        """Run a registered tool's call in `ctx`, without the extensions' hooks.

        A queued task's call on a worker takes it (through the middlewares).

        Returns:
            The tool's result (`CallToolResult`), a tool error for arguments that do not fit.

        Raises:
            ProtocolError: No tool of that name is registered here.
        """
        entry = self.tools.get(params.name)
        if entry is None:
            raise ProtocolError(INTERNAL_ERROR, f"this worker has no tool {params.name!r}")
        call = ToolCall(ctx, params, entry)
        try:
            kwargs = call.arguments()
        except ToolError as exc:
            return tool_result_error(str(exc), exc.structured)
        result = await self._run_entry(ctx, entry, kwargs)
        return tool_result(result.text) if isinstance(result, TextAnswer) else result

    async def _list_resources(self, ctx: Context, params: Any) -> pub.ListResourcesResult:
        entries, cursor = self._page(ctx, params, "resources/list", self.resources)
        resources = [entry.definition for entry in entries]
        return pub.ListResourcesResult(resources=resources, nextCursor=cursor, **self.cache_hints("resources/list"))  # type: ignore[arg-type]

    async def _list_templates(self, ctx: Context, params: Any) -> pub.ListResourceTemplatesResult:
        entries, cursor = self._page(ctx, params, "resources/templates/list", self.templates)
        templates = [entry.definition for entry in entries]
        return pub.ListResourceTemplatesResult(resourceTemplates=templates, nextCursor=cursor, **self.cache_hints("resources/templates/list"))  # type: ignore[arg-type]

    def _page(
        self, ctx: Context, params: Any, method: str, table: Mapping[str, E]
    ) -> tuple[list[E], str | None]:
        """The page of a listing the request's cursor points to, and the next one's cursor
        (`mcpio._core.paging`)."""
        return page(
            list(table.values()),
            list(table),
            getattr(params, "cursor", None),
            size=self.list_page_size,
            method=method,
            sealer=self.sealer,
            subject=ctx.principal.subject if ctx.principal is not None else None,
        )

    async def _read_resource(self, ctx: Context, params: pub.ReadResourceRequestParams) -> Any:
        uri = params.uri
        entry, variables = self._resource_for(uri)
        if entry.context_param:
            variables[entry.context_param] = ctx
        value = await call(entry.fn, variables, entry.threaded)
        result = resource_result(value, uri, entry.definition.mimeType)
        hint = entry.cache or self.cache_hint("resources/read")
        result.ttlMs, result.cacheScope = hint.fields()["ttlMs"], hint.scope
        return result

    def _resource_for(self, uri: str) -> tuple[ResourceEntry, dict[str, Any]]:
        """The resource `uri` names and its handler's arguments: the resource itself, else the
        first template that matches it and whose values fit its handler; else the first misfit
        (-32602 naming the parameter), else -32602 "resource not found"."""
        entry = self.resources.get(uri)
        if entry is not None:
            return entry, {}
        misfit: ProtocolError | None = None
        for candidate in self.templates.values():
            try:
                found = candidate.match(uri)
            except ProtocolError as exc:
                misfit = misfit or exc
                continue
            if found is not None:
                return candidate, found
        raise misfit or ProtocolError(INVALID_PARAMS, f"resource not found: {uri}", {"uri": uri})

    async def _list_prompts(self, ctx: Context, params: Any) -> pub.ListPromptsResult:
        entries, cursor = self._page(ctx, params, "prompts/list", self.prompts)
        prompts = [entry.definition for entry in entries]
        return pub.ListPromptsResult(
            prompts=prompts, nextCursor=cursor, **self.cache_hints("prompts/list")
        )

    async def _get_prompt(self, ctx: Context, params: pub.GetPromptRequestParams) -> Any:
        entry = self.prompts.get(params.name)
        if entry is None:
            raise ProtocolError(
                INVALID_PARAMS, f"unknown prompt {params.name!r}", {"name": params.name}
            )
        arguments: dict[str, Any] = dict(params.arguments or {})
        declared = {a.name: a for a in entry.definition.arguments or []}
        missing = [n for n, a in declared.items() if a.required and n not in arguments]
        unknown = [n for n in arguments if n not in declared]
        if missing or unknown:
            raise ProtocolError(
                INVALID_PARAMS,
                f"invalid arguments for prompt {params.name!r}",
                {"missing": missing, "unknown": unknown},
            )
        kwargs = entry.kwargs(arguments)
        if entry.context_param:
            kwargs[entry.context_param] = ctx
        return prompt_result(await call(entry.fn, kwargs, entry.threaded))

    async def _complete(self, ctx: Context, params: pub.CompleteRequestParams) -> Any:
        if self.completion is None:
            return completion_result([])
        completion = await call(self.completion, {"params": params}, self.completion_threaded)
        return completion_result(completion)

    # ------------------------------------------------------------------ change notifications

    async def notify_tools_changed(self) -> None:
        """Tell every listener (every instance, through the bus) that the tool list changed."""
        await self._publish_list_change("toolsListChanged")

    async def notify_prompts_changed(self) -> None:
        """Tell every listener (every instance, through the bus) that the prompt list changed."""
        await self._publish_list_change("promptsListChanged")

    async def notify_resources_changed(self) -> None:
        """Tell every listener (every instance, through the bus) that the resource list changed."""
        await self._publish_list_change("resourcesListChanged")

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell the listeners subscribed to `uri` that it changed.

        Those of every instance are told, through the bus.
        """
        await self._publish(None, RESOURCE_UPDATED, {"uri": uri}, uri=uri)

    async def _publish_list_change(self, flag: str) -> None:
        await self._publish(flag, LIST_CHANGED[flag][0], {})

    async def _publish(
        self, flag: str | None, method: str, params: dict[str, Any], uri: str | None = None
    ) -> None:
        await self.hub.publish(flag, method, params, uri)

    def start_bus(self) -> None:
        """Run the bus in a task of the running (asyncio) event loop, once per loop.

        `start` does it, so `serve`, `serve_stdio` and the HTTP app do.
        """
        self.hub.start_bus()

    async def stop_bus(self) -> None:
        """Stop reading the notification bus."""
        await self.hub.stop_bus()

    async def drain_tasks(self) -> None:
        """Shut down the tasks running here gracefully (`TaskEngine.drain`).

        The HTTP app calls it when its host shuts down (uvicorn: at SIGTERM).
        """
        await self.tasks.drain()

    # ------------------------------------------------------------------ lifespan

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The server started (`start`) while inside, stopped (`stop`) on the way out."""
        await self.start()
        try:
            yield
        finally:
            await self.stop()

    async def start(self) -> None:
        """Enter the lifespan (`Server(lifespan=...)`) unless it is entered already; run the bus.

        Each `start` is paired with a `stop`; the last `stop` exits the lifespan, so it is
        entered once however many transports serve at a time: `serve` (stdio,
        `Client(server)`) and the HTTP app's lifespan events start and stop the server; an HTTP
        host that sends no lifespan events starts it at its first request and never stops it.

        Raises:
            LifespanError: The lifespan failed to start (nothing is served then).
        """
        loop = asyncio.get_running_loop()
        if self._life.lock is None or self._life.loop is not loop:  # a new event loop
            self._life.lock, self._life.loop, self._life.count = asyncio.Lock(), loop, 0
        async with self._life.lock:
            if self._life.count == 0:
                await self._enter_lifespan(loop)
            self._life.count += 1
        self.hub.start_bus()

    async def stop(self) -> None:
        """Undo one `start`: the last one exits the lifespan and stops the bus."""
        if self._life.lock is None or self._life.loop is not asyncio.get_running_loop():
            return
        async with self._life.lock:
            self._life.count -= 1
            if self._life.count > 0:
                return
            await self.stop_bus()
            task, stop = self._life.task, self._life.stop
            self._life.task = self._life.stop = None
            if task is not None and stop is not None:
                stop.set()
                await task

    async def ensure_started(self) -> None:
        """`start` once per event loop, never stopped (an HTTP host without lifespan events)."""
        if self._life.loop is not asyncio.get_running_loop() or self._life.count == 0:
            await self.start()

    async def _enter_lifespan(self, loop: asyncio.AbstractEventLoop) -> None:
        # The lifespan lives in a task of its own, entered and exited there: a task group or
        # cancel scope inside it belongs to that task, whichever transport starts or stops it.
        lifespan = self.lifespan
        if lifespan is None and not self.extensions.hooked("lifespan"):
            return
        ready, stop = asyncio.Event(), asyncio.Event()
        failed: list[BaseException] = []

        async def hold() -> None:
            try:
                async with self.extensions.running(), _entered(lifespan, self) as state:
                    self.lifespan_state = state
                    ready.set()
                    await stop.wait()
            except Exception as exc:
                if not ready.is_set():
                    failed.append(exc)
                else:
                    log.error("the server's lifespan failed on exit", exc_info=exc)
            finally:
                self.lifespan_state = None
                ready.set()

        task = loop.create_task(hold())
        await ready.wait()
        if failed:
            await task
            raise LifespanError(f"the server's lifespan failed to start: {failed[0]!r}")
        self._life.task, self._life.stop = task, stop

    # ------------------------------------------------------------------ serving

    def connect(
        self, transport: Transport, **options: Unpack[ConnectionOptions]
    ) -> ServerConnection:
        """Return a connection of this server over `transport`.

        `run()` it, or hand it frames (the HTTP app does). `options`: see `ServerConnection`.
        """
        return ServerConnection(self, transport, **options)

    async def serve(self, transport: Transport) -> None:
        """Serve one connection until it ends (the server started meanwhile: see `start`)."""
        async with self.running():
            await self.connect(transport).run()

    async def serve_stdio(self) -> None:
        """Serve stdin/stdout until stdin ends.

        Meanwhile stdout is for protocol frames only: `print()` (and anything else written to
        it) goes to stderr.
        """
        from mcpio.transports.stdio import protocol_stdout, stdio_server_transport

        with protocol_stdout() as stdout:
            await self.serve(await stdio_server_transport(stdout=stdout))

    def run_stdio(self) -> None:
        """Serve stdin/stdout until stdin ends, in an event loop of its own (blocking).

        Logs and prints go to stderr. It runs on uvloop's event loop where it is installed (the
        `http` extra brings it), else on asyncio's. A lifespan that fails to start is one line
        on stderr and exit status 1.
        """
        uvloop = importlib.util.find_spec("uvloop") is not None
        try:
            anyio.run(self.serve_stdio, backend_options={"use_uvloop": uvloop})
        except LifespanError as exc:
            print(f"{self.info.name}: {exc}", file=sys.stderr)
            sys.exit(1)

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        *,
        host: str | None = None,
        port: int | None = None,
        **options: Unpack[HttpServeOptions],
    ) -> None:
        """Serve until the end over `transport` (blocking).

        `host`, `port` and HTTP options with stdio, or another transport, are a `ValueError`.

        Args:
            transport: `"stdio"` serves as `run_stdio`, `"http"` as `run_http`.
            host: The address HTTP listens on (127.0.0.1 unless given).
            port: The port HTTP listens on (8000 unless given).
            **options: HTTP options, as `run_http`'s.
        """
        if transport == "stdio":
            given = [n for n, v in (("host", host), ("port", port)) if v is not None]
            if given or options:
                unused = ", ".join([*given, *options])
                raise ValueError(f"{unused}: options of transport='http', not of stdio")
            self.run_stdio()
        elif transport == "http":
            self.run_http(host or "127.0.0.1", 8000 if port is None else port, **options)
        else:
            raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")

    def http_app(self, **options: Unpack[HttpAppOptions]) -> HttpApp:
        """Return an ASGI app serving this server over Streamable HTTP, both eras.

        It serves at `path` (default `/mcp`); options: see `mcpio.http._app.HttpOptions`.
        """
        with needs("http", "mcpio's HTTP transport"):
            from mcpio.http._app import http_app

        options["routes"] = [*self.routes, *options.get("routes", ())]
        return http_app(self, **options)

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

    def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        header_timeout: float = 10.0,
        max_connections: int = 2000,
        max_header_bytes: int = 64 * 1024,
        max_headers: int = 100,
        **options: Unpack[HttpAppOptions],
    ) -> None:
        """Serve Streamable HTTP with uvicorn (blocking), on loopback unless `host` says otherwise.

        Once listening, one line on stderr gives the endpoint's URL
        (`http://127.0.0.1:8000/mcp`).

        Args:
            host: The address to listen on.
            port: The port to listen on.
            header_timeout: Seconds a connection has to send a request's headers (see
                `mcpio.http._serve`, as for the bounds below).
            max_connections: The most connections at once (503 past it).
            max_header_bytes: The largest request head, in bytes (431 past it).
            max_headers: The most header fields in a request (431 past it).
            **options: The app's options (see `HttpOptions`).
        """
        with needs("http", "mcpio's HTTP transport"):
            from mcpio.http._serve import AnnouncingServer, uvicorn_config

        app = self.http_app(**options)
        config = uvicorn_config(
            app,
            host,
            port,
            header_timeout=header_timeout,
            max_connections=max_connections,
            max_header_bytes=max_header_bytes,
            max_headers=max_headers,
        )
        AnnouncingServer(config, app.options.path).run()


async def _run_tool(
    entry: ToolEntry, kwargs: dict[str, Any], mask: bool, text_answer: bool = False
) -> pub.CallToolResult | TextAnswer:
    """The tool's result; with `text_answer`, a string as a `TextAnswer` (the connection
    writes it without a model). A failure is a result with `isError` (see `Server.tool`)."""
    try:
        value = await call(entry.fn, kwargs, entry.threaded)
    except ToolError as exc:
        return tool_result_error(str(exc), exc.structured)
    except Exception as exc:
        if _passes_through(exc):
            raise
        return tool_failure(entry.definition.name, exc, mask)
    name = entry.definition.name
    if entry.output is None:
        schema = entry.definition.outputSchema
        if schema is None:
            if text_answer and type(value) is str:
                return TextAnswer(value)
            return tool_result(value)
        result = tool_result(value)  # a hand-written output schema: checked as JSON Schema
        if not result.isError:
            broken = violation(plain(result.structuredContent), plain(schema))
            if result.structuredContent is None:
                broken = "no structuredContent"
            if broken is not None:
                log.error("tool %s: its result does not match its outputSchema: %s", name, broken)
                raise ProtocolError(
                    INTERNAL_ERROR,
                    f"tool {name!r} returned a result that does not match its outputSchema",
                )
        return result
    try:
        return structured_result(entry.output, value)
    except pydantic.ValidationError as exc:
        log.error("tool %s: its result does not match its outputSchema: %s", name, summary(exc))
        raise ProtocolError(
            INTERNAL_ERROR, f"tool {name!r} returned a result that does not match its outputSchema"
        ) from None


# What a tool's exception may be that is not the tool's failure: the JSON-RPC error it chose,
# its question for the client (2026-07-28), or the client gone while it waited on it.
_PASSING = (ProtocolError, InputRequired, ConnectionClosed)


def _passes_through(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):  # questions asked at once (a task group)
        group: BaseExceptionGroup[BaseException] = error
        return all(_passes_through(e) for e in group.exceptions)
    return isinstance(error, _PASSING)


def tool_failure(name: str, error: Exception, mask: bool) -> pub.CallToolResult:
    """An exception raised in a tool, as the failed result the model reads (logged once)."""
    log.error("tool %r failed", name, exc_info=error)
    text = f"Error calling tool {name!r}"
    return tool_result_error(text if mask else f"{text}: {error}")


@asynccontextmanager
async def _entered(lifespan: Lifespan | None, server: Server) -> AsyncIterator[Any]:
    """`lifespan(server)`'s value while inside (None without a lifespan)."""
    if lifespan is None:
        yield None
        return
    async with lifespan(server) as state:
        yield state


@dataclass
class _Running:
    """A server's starts (`Server.start`) on one event loop: how many are not stopped yet,
    and the task holding its lifespan."""

    lock: asyncio.Lock | None = None
    loop: asyncio.AbstractEventLoop | None = None
    count: int = 0
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event | None = None


def server_info(
    name: str,
    version: str,
    title: str | None,
    icons: Sequence[pub.Icon | Mapping[str, Any]] | None,
    website_url: str | None,
) -> pub.Implementation:
    """The server's `Implementation` (name, version, title, icons, website URL)."""
    info: dict[str, Any] = {"name": name, "version": version}
    if title:
        info["title"] = title
    if icons:
        info["icons"] = [plain(icon) for icon in icons]
    if website_url:
        info["websiteUrl"] = website_url
    return pub.Implementation.model_validate(info)


def _untouched(result: pub.CallToolResult, answer: TextAnswer) -> bool:
    """Whether the result made of a string answer is still just that (no member set since,
    its one text block the same), so the connection may write the answer without the model."""
    if result.__pydantic_fields_set__ != {"content", "resultType"} or len(result.content) != 1:
        return False
    block = result.content[0]
    return (
        type(block) is pub.TextContent
        and block.__pydantic_fields_set__ == {"type", "text"}
        and block.text == answer.text
        and result.resultType == "complete"
    )


def _needs_argument(decorator: str, what: str, given: Any) -> None:
    """A decorator that needs an argument, used bare: a clear TypeError at import time."""
    if callable(given):
        raise TypeError(f"@server.{decorator} needs {what}: @server.{decorator}(...)")


def _not_served(method: str) -> MethodHandler:
    raise ProtocolError(
        METHOD_NOT_FOUND, f"method {method!r} is not served here", {"method": method}
    )


def tool_result_error(text: str, structured: Any = None) -> pub.CallToolResult:
    """A tool result marked `isError` with `text` (and `structured` content, if given)."""
    result = pub.CallToolResult(
        content=[pub.TextContent(type="text", text=text)], isError=True, resultType="complete"
    )
    if structured is not None:
        result.structuredContent = structured
    return result
