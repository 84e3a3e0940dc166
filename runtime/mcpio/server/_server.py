"""The server, `Server`: a small facade over one module per concern, each a mixin (registration
in `_registry`, the built-in methods in `_builtins`, starting and stopping in `_lifecycle`, the
ways to run it in `_launch`), and what ties them together here: its construction, its extensions,
the request pipeline every request takes (`dispatch`), its capabilities and identity, and change
notifications. One handler serves every revision and both eras; `ServerConnection` does the
per-connection lifecycle."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from mcp_wire_runtime.errors import METHOD_NOT_FOUND, ProtocolError
from mcpio import apps
from mcpio._core.bus import Bus
from mcpio._core.context import (
    CURRENT_CONTEXT,
    MAX_ANSWER_BYTES,
    CallerStates,
    Context,
    MethodHandler,
)
from mcpio._core.errors import ToolError
from mcpio._core.extension import Extension, Extensions, ToolCall
from mcpio._core.extras import needs
from mcpio._core.handlers import TextAnswer, is_async, tool_result
from mcpio._core.hints import CacheHint
from mcpio._core.hub import LIST_CHANGED, RESOURCE_UPDATED, Hub
from mcpio._core.jsonrpc import plain
from mcpio._core.results import ToolResult
from mcpio._core.sealing import Sealer
from mcpio._core.transport import Transport
from mcpio.latest import public as pub
from mcpio.middleware._base import (
    HOOKED_METHODS,
    Call,
    CallNext,
    Middleware,
    MiddlewareFn,
    acts_on,
    chain,
)
from mcpio.server._builtins import BuiltIns
from mcpio.server._connection import ServerConnection
from mcpio.server._failures import passes_through, request_failure, tool_result_error
from mcpio.server._launch import Launchers
from mcpio.server._lifecycle import Lifecycle
from mcpio.server._registry import OnDuplicate, Registry
from mcpio.server._served import Identity, Limits
from mcpio.server._transform import Transforms
from mcpio.server._visibility import Visibility
from mcpio.tasks._engine import TaskEngine
from mcpio.tasks._extension import TasksExtension, tasks_of
from mcpio.tasks._extension import task_required as task_required  # (mcpio.server's)
from mcpio.tasks._store import TaskStore

if TYPE_CHECKING:
    import httpx
    from typing_extensions import Unpack

    from mcpio._core.options import ConnectionOptions
    from mcpio.http._app import HttpApp
    from mcpio.http._options import HttpAppOptions
    from mcpio.openapi import RouteMap
    from mcpio.openapi._document import Source as OpenApiSource
    from mcpio.skills import SkillsDirectory

#: The requests that read what the server offers (its extensions' `prepare` runs before them).
OFFERING = frozenset({"initialize", "server/discover", "subscriptions/listen"})

#: `Server(lifespan=...)`: called with the server, an async context manager whose value handlers
#: read as `ctx.lifespan`.
Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]


class Server(Registry, Visibility, Transforms, BuiltIns, Lifecycle, Launchers):
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
        mask_error_details: True: a handler's or a middleware's exception is reported without
            its message ("Error calling tool 'x'"); False (FastMCP's default too): with it
            ("Error calling tool 'x': <message>"); `ToolError` and `ResourceError` always
            with theirs (see docs/servers/errors.md).
        middleware: Wraps every request (see `add_middleware`).
        lifespan: Called with the server; its context manager's value is `ctx.lifespan` (see
            `running`).
        list_page_size: Lists in pages of this size (`mcpio._core.paging`); None: all at once.
        method_cache_hints: Cache hints of their own, per method.
        icons: The server's icons (`serverInfo.icons`).
        website_url: The server's website (`serverInfo.websiteUrl`).
        on_duplicate: A component registered again under a name: "warn" (replaced, with a
            warning), "error" (`TypeError`), "replace", "ignore" (the first kept).

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
        mask_error_details: bool = False,
        middleware: Sequence[MiddlewareFn] = (),
        lifespan: Lifespan | None = None,
        list_page_size: int | None = None,
        method_cache_hints: Mapping[str, CacheHint] | None = None,
        icons: Sequence[pub.Icon | Mapping[str, Any]] | None = None,
        website_url: str | None = None,
        on_duplicate: OnDuplicate = "warn",
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
        self._registries(on_duplicate)
        self.mask_error_details = mask_error_details
        self.caller_states = CallerStates()  # `ctx.set_state` on 2026-07-28
        self.middleware: list[MiddlewareFn] = [checked_middleware(m) for m in middleware]
        # The middleware list they were made of, and the pipelines by method (`_pipeline`).
        self._pipelines: tuple[tuple[MiddlewareFn, ...], dict[str, CallNext | None]] = ((), {})
        self._lifecycle(lifespan)
        self._announcing: set[asyncio.Task[None]] = set()  # see `_announce`
        self.handlers = self._built_in_handlers()
        self.hub = Hub(self.info.name, self.capabilities, bus)
        self.extensions = Extensions(self, self.extension_methods)
        # The extensions' `call_tool` hooks around the tool, made once per set of extensions.
        self._tool_chain: tuple[int, Callable[[ToolCall], Awaitable[Any]]] = (-1, self._call_entry)
        self.extensions.add(TasksExtension(tasks))
        self.extensions.add(apps.AppsExtension())

    # ------------------------------------------------------------------ from an HTTP API

    @classmethod
    def from_openapi(
        cls,
        document: OpenApiSource,
        client: httpx.AsyncClient | None = None,
        *,
        route_maps: Sequence[RouteMap] = (),
        names: Mapping[str, str] | None = None,
        forward_headers: Collection[str] = (),
        validate_output: bool = True,
        name: str | None = None,
        version: str | None = None,
        **settings: Any,
    ) -> Server:
        """A server whose tools (resources, templates) are the operations of an OpenAPI API.

        Every operation is a tool unless a route map says otherwise; its calls go through
        `client` (see `mcpio.openapi` and docs/servers/openapi.md).

        Args:
            document: The OpenAPI 3.0 or 3.1 document: a mapping, JSON or YAML text, or a path.
            client: The client of the API (None: one for the document's first server URL).
            route_maps: The first that matches an operation decides what it becomes.
            names: Component names by operationId.
            forward_headers: The MCP request's HTTP header fields passed on (`Authorization`).
            validate_output: False: no output schemas (an API that answers outside its own).
            name: The server's name (default: the document's title).
            version: The server's version (default: the document's).
            **settings: The other arguments of `Server`.
        """
        with needs("openapi", "Server.from_openapi"):
            import httpx

            from mcpio.openapi import read_document
            from mcpio.openapi._owned import OwnedClient

        spec = read_document(document)
        client_of: Callable[[], httpx.AsyncClient]
        if client is not None:
            given = client
            client_of = lambda: given  # noqa: E731  (the caller's, as it is)
        else:
            servers = spec.get("servers") or [{}]
            if not servers[0].get("url"):
                raise ValueError("the document names no server URL: pass client=")
            url = servers[0]["url"]
            client_of = OwnedClient(lambda: httpx.AsyncClient(base_url=url))
        return cls._from_api(
            spec,
            client_of,
            route_maps=route_maps,
            names=names,
            forward_headers=forward_headers,
            validate_output=validate_output,
            name=name,
            version=version,
            **settings,
        )

    @classmethod
    def _from_api(
        cls,
        spec: dict[str, Any],
        client: Callable[[], httpx.AsyncClient],
        *,
        route_maps: Sequence[RouteMap] = (),
        names: Mapping[str, str] | None = None,
        forward_headers: Collection[str] = (),
        validate_output: bool = True,
        name: str | None = None,
        version: str | None = None,
        **settings: Any,
    ) -> Server:
        """`from_openapi` of a document read, each call through `client()` (an `OwnedClient`:
        the server's own, closed when it stops)."""
        from mcpio.openapi import operations
        from mcpio.openapi._owned import OwnedClient
        from mcpio.openapi._serve import serve_through

        info = spec.get("info") or {}
        server = cls(
            name or str(info.get("title") or "OpenAPI"),
            version or str(info.get("version") or "0.0.0"),
            **settings,
        )
        if isinstance(client, OwnedClient):
            server.add_extension(client)
        settings_of_api = (route_maps, names or {}, forward_headers, validate_output)
        serve_through(server, operations(spec), client, *settings_of_api)
        return server

    @classmethod
    def from_fastapi(
        cls,
        app: Any,
        *,
        headers: Mapping[str, str] | None = None,
        **options: Any,
    ) -> Server:
        """A server of a FastAPI app's operations, called in process (ASGI, no socket).

        The app's own `app.openapi()` document, as `from_openapi` maps it; its dependencies
        and security run on every call. `headers`: sent with every call (an API key);
        `options`: those of `from_openapi` (`forward_headers`, `route_maps`, ...).
        """
        with needs("openapi", "Server.from_fastapi"):
            import httpx

            from mcpio.openapi import read_document
            from mcpio.openapi._owned import OwnedClient

        def made() -> httpx.AsyncClient:
            transport = httpx.ASGITransport(app=app)
            return httpx.AsyncClient(
                transport=transport, base_url="http://fastapi", headers=headers
            )

        return cls._from_api(read_document(app.openapi()), OwnedClient(made), **options)

    # ------------------------------------------------------------------ extensions

    @property
    def tasks(self) -> TaskEngine:
        """The task engine the server's task tools run on (`Server(tasks=...)`)."""
        return tasks_of(self).engine

    @tasks.setter
    def tasks(self, engine: TaskEngine) -> None:
        tasks_of(self).use(engine)

    async def drain_tasks(self) -> None:
        """Shut down the tasks running here gracefully (`TaskEngine.drain`).

        The HTTP app calls it when its host shuts down (uvicorn: at SIGTERM).
        """
        await self.tasks.drain()

    def add_extension(self, extension: Extension) -> None:
        """Serve a protocol extension (see `mcpio.server.Extension`).

        Raises:
            ValueError: Its id is empty or served already, or it defines a method another
                extension defines.
        """
        self.extensions.add(extension)

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

    def mount(self, other: Server, namespace: str | None = None) -> None:
        """Serve another server's tools, prompts and resources, under `namespace` or as they are.

        With a namespace, `other`'s tools and prompts are served as `<namespace>_<name>` and its
        resources as `scheme://<namespace>/rest`; without one, under their own names (a name
        this server or another mount has too: as `on_duplicate` says). Live, with its
        middleware, lifespan and task tools (see `mcpio.server._mount`). `other` belongs to
        this server from then on. A merged listing leaves out a mounted server that does not
        offer the feature, or whose listing fails (see `unavailable`).

        Raises:
            ValueError: A bad or taken namespace, `other` mounted already, or (with
                `on_duplicate="error"`, no namespace) a name both servers have.
        """
        from mcpio.server._mount import Mounts

        mounts = self.__dict__.get("_mounts")
        if mounts is None:
            mounts = self.__dict__["_mounts"] = Mounts(self)
        mounts.add(other, namespace)

    @property
    def unavailable(self) -> dict[str, str]:
        """The mounted servers whose last listing failed, by namespace (else name): the error.

        Such a server (a proxy whose target did not start) is left out of the merged listings,
        logged as a warning when it fails; it leaves this once it answers again.
        """
        mounts = self.__dict__.get("_mounts")
        return dict(mounts.unavailable) if mounts is not None else {}

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

    # ------------------------------------------------------------------ the request pipeline

    def add_middleware(self, middleware: MiddlewareFn) -> None:
        """Wrap every request of the handler table in `middleware`, inside those added before.

        `middleware` is a `mcpio.middleware.Middleware`, or any
        `async (call, call_next) -> result`.

        Raises:
            TypeError: It is neither (a FastMCP middleware, say).
        """
        self.middleware.append(checked_middleware(middleware))

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
        ctx.lifespan, ctx.callers = self.lifespan_state, self.caller_states
        if method in OFFERING and self.extensions.hooked("prepare"):
            await self.extensions.prepare(ctx)  # (what it offers, learned: a proxy's)
        current = CURRENT_CONTEXT.set(ctx)  # `get_context()`
        try:
            pipeline = self._pipeline(method) if self.middleware else None
            if pipeline is None:
                if handler is None:
                    handler = self.handlers.get(method) or _not_served(method)
                return await handler(ctx, params)
            call = Call(method, params, ctx, handler=handler)
            result = await pipeline(call)
            if isinstance(result, ToolResult):  # a middleware's answer, as FastMCP's return it
                result = result.result()
        except ToolError as exc:  # a middleware's refusal of a tool call, for the model to read
            if method != "tools/call":
                raise request_failure(method, params, exc, self.mask_error_details) from exc
            return tool_result_error(str(exc), exc.structured)
        except Exception as exc:  # a handler's or a middleware's (a tool's own: a failed result)
            if passes_through(exc):
                raise
            raise request_failure(method, params, exc, self.mask_error_details) from exc
        finally:
            CURRENT_CONTEXT.reset(current)
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

    # ------------------------------------------------------------------ what a connection and the HTTP app are handed

    def connect(
        self, transport: Transport, **options: Unpack[ConnectionOptions]
    ) -> ServerConnection:
        """Return a connection of this server over `transport`.

        `run()` it, or hand it frames (the HTTP app does). `options`: see `ServerConnection`.
        """
        return ServerConnection(self, transport, **options)

    def http_app(self, **options: Unpack[HttpAppOptions]) -> HttpApp:
        """Return an ASGI app serving this server over Streamable HTTP, both eras.

        It serves at `path` (default `/mcp`); options: see `mcpio.http._app.HttpOptions`.
        """
        with needs("http", "mcpio's HTTP transport"):
            from mcpio.http._app import http_app

        options["routes"] = [*self.routes, *options.get("routes", ())]
        return http_app(self, **options)

    # ------------------------------------------------------------------ capabilities and identity

    def capabilities(self) -> pub.ServerCapabilities:
        """The capabilities the server declares.

        They are made from what it has registered, then as its extensions offer
        (`Extension.offer`: a proxy's target's, a mount's servers').
        """
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
        self.extensions.offer(caps)  # (a proxy's: its target's; a mount's: its servers' too)
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


def checked_middleware(middleware: Any) -> MiddlewareFn:
    """`middleware` if it is a `Middleware` or an async function; else the `TypeError` that
    says what is (every request would fail with it)."""
    if isinstance(middleware, Middleware) or is_async(middleware):
        return middleware
    kind = type(middleware)
    raise TypeError(
        f"middleware must be a mcpio.middleware.Middleware or an async (call, call_next) function,"
        f" not {kind.__module__}.{kind.__qualname__}: subclass mcpio.middleware.Middleware and"
        " override its hooks (on_call_tool, on_request, ...)"
    )


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


def _not_served(method: str) -> MethodHandler:
    raise ProtocolError(
        METHOD_NOT_FOUND, f"method {method!r} is not served here", {"method": method}
    )
