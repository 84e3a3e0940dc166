"""Protocol extensions as one interface a server plugs into its request path.

An `Extension` names itself (its identifier, the key of `capabilities.extensions`), declares its
settings, adds methods (answered in either era, read with its own codec where it has a schema),
may change what the server offers (`offer`: a proxy offers its target's), and may hook the
request path at fixed points: when a request's context is made, around a
`tools/call`, over the `tools/list` listing, over a legacy result before it is written, over a
`subscriptions/listen` request, and a lifespan while the server runs. Tasks, Skills and Apps
are extensions; a user writes a fourth the same way (docs/servers/extensions.md).

`Extensions` is a server's set of them: the connection and the server call its hooks, and only
the extensions that override a hook are asked (a hook nobody overrides costs nothing).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pydantic

from mcpio._core.context import Context, MethodHandler
from mcpio._core.errors import ToolError
from mcpio._core.ext_methods import params_of
from mcpio._core.handlers import ToolEntry
from mcpio._core.jsonrpc import plain
from mcpio._core.schema_check import violation
from mcpio.latest import public as pub

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp_wire_runtime.codec import Codec

#: (header name, property path) of each `x-mcp-header` annotation of a tool's input schema (the
#: transports' `ParamHeaders`).
ToolParamHeaders = tuple[tuple[str, tuple[str, ...]], ...]

#: The next step of a `tools/call` (the next extension's hook, then the tool itself).
CallNextTool = Callable[["ToolCall"], Awaitable[Any]]


@dataclass(slots=True)
class ToolCall:
    """A `tools/call` of a registered tool, as an extension's `call_tool` hook sees it.

    Args:
        ctx: The request's context.
        params: The call's params (the public model).
        entry: The registered tool.

    A hook may pass on a copy in another context (`dataclasses.replace(call, ctx=...)`): the
    Tasks extension runs the rest of the chain inside the task it starts.
    """

    ctx: Context
    params: pub.CallToolRequestParams
    entry: ToolEntry

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.params.name

    def arguments(self) -> dict[str, Any]:
        """The tool's keyword arguments, validated.

        Raises:
            ToolError: They do not fit the tool's input schema (answered as a tool error).
        """
        entry, name = self.entry, self.params.name
        try:
            kwargs = entry.kwargs(self.params.arguments or {})
        except pydantic.ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ToolError(f"invalid arguments for {name}: {where}: {first['msg']}") from None
        if entry.arguments is None:  # a hand-written input schema: checked as JSON Schema
            broken = violation(plain(kwargs), plain(entry.definition.inputSchema))
            if broken is not None:
                raise ToolError(f"invalid arguments for {name}: {broken}")
        return kwargs


class Extension:
    """A protocol extension a `Server` serves (`Server.add_extension`).

    Subclass it, set `id`, and override the hooks you need; each default does nothing.

    Attributes:
        id: The extension's identifier, its key in `capabilities.extensions`
            (for example `"com.example/weather"`).

    Examples:
        >>> class Hello(Extension):
        ...     id = "com.example/hello"
        ...     def settings(self):
        ...         return {"greeting": "hi"}
        ...     def methods(self):
        ...         async def hello(ctx, params):
        ...             return {"text": f"hello {params.get('name', 'you')}"}
        ...         return {"hello/say": hello}
    """

    id: str = ""
    #: Notifications the extension sends (each written with its `codec`).
    notifications: frozenset[str] = frozenset()

    def added(self, server: Any) -> None:
        """Called once when the extension is added to `server` (keep it if you need it)."""

    def settings(self) -> Mapping[str, Any] | None:
        """The settings the server declares for the extension (None: not declared now)."""
        return None

    def offer(self, capabilities: dict[str, Any]) -> None:
        """Edit what the server offers, in every revision.

        It runs before extensions declare themselves (`declare`). `capabilities` is plain data in the public (2026-07-28) shape, made from what the server
        has registered; edit it in place. A proxy offers its target's; a server with mounted
        servers, theirs too.
        """

    async def prepare(self, ctx: Context) -> None:
        """Wait, if needed, until what the extension offers is known.

        Called before the server answers a request that reads what it offers (`initialize`,
        `server/discover`, `subscriptions/listen`): an extension that learns it asynchronously
        (a proxy, from its target) waits for it here.
        """

    def param_headers(self, tool: str) -> ToolParamHeaders | None:
        """Return the `Mcp-Param-*` headers a 2026-07-28 HTTP call of `tool` must carry.

        For a tool the extension answers but the server has not registered (None: not the
        extension's; a proxy knows its target's tools as last listed).
        """
        return None

    def declare(self, capabilities: dict[str, Any], revision: str) -> None:
        """Edit the capabilities `initialize` or `server/discover` reports in `revision`.

        `capabilities` is plain data in that revision's shape; the default adds
        `extensions[id]` with `settings()` when there are settings.
        """
        settings = self.settings()
        if settings is not None:
            capabilities.setdefault("extensions", {})[self.id] = dict(settings)

    def methods(self) -> Mapping[str, MethodHandler]:
        """The methods the extension adds, by name: `handler(ctx, params) -> result`.

        Their params are plain JSON data (checked by `codec` where it has the method); the
        result a plain mapping (or a `WireResult`): the server adds `resultType` and its info
        to a 2026-07-28 result.
        """
        return {}

    def serves(self, method: str, revision: str) -> bool:
        """Whether the extension answers `method` in `revision` (default: every revision)."""
        return True

    def codec(self, revision: str) -> Codec | None:
        """The codec that checks the extension's messages in `revision` (None: no schema)."""
        return None

    def read(self, method: str, revision: str, raw: bytes) -> dict[str, Any] | None:
        """Read the params of one of the extension's requests from its frame.

        Args:
            method: The request's method.
            revision: The revision it is served in.
            raw: The request's frame.

        Returns:
            The params as plain data; None: the default read (the params as they are, checked
            by `codec` where it has the method).
        """
        return None

    def open_request(self, ctx: Context, params: Any, session: Any) -> None:
        """Called as a request's context is made, before any middleware.

        Args:
            ctx: The request's context (the hook may set what it offers, e.g. `task_offer`).
            params: The request's own params: a legacy revision's model, the public model, or
                plain data (an extension's method).
            session: The legacy connection it came on (None: a 2026-07-28 request).
        """

    def call_tool(self, call: ToolCall, call_next: CallNextTool) -> Awaitable[Any]:
        """Answer a call of a registered tool, or pass it on (`return await call_next(call)`).

        Write it as an `async def`. It runs after the middlewares; the first extension added is
        the outermost.
        """
        return call_next(call)

    def list_tools(self, ctx: Context, tools: Mapping[str, ToolEntry]) -> Mapping[str, ToolEntry]:
        """The registered tools `tools/list` shows this request (default: all)."""
        return tools

    def written(self, method: str, result: Any, revision: str) -> None:
        """Edit a legacy result in its revision's own model before it is written.

        Args:
            method: The request's method.
            result: The result, the revision's own model (edit it in place).
            revision: The legacy revision.
        """

    async def listen(self, ctx: Context, params: Any, kept: dict[str, Any]) -> None:
        """Edit what a `subscriptions/listen` request is granted.

        Args:
            ctx: The request's context.
            params: Its params (the public model).
            kept: What it is granted so far, plain data (edit it in place).
        """

    def lifespan(self, server: Any) -> AbstractAsyncContextManager[None] | None:
        """What runs while the server runs (entered before the server's own lifespan)."""
        return None


def _overrides(extension: Extension, hook: str) -> bool:
    return getattr(type(extension), hook) is not getattr(Extension, hook)


class Extensions:
    """A server's extensions, by identifier, and the hooks they override."""

    def __init__(self, server: Any, methods: dict[str, MethodHandler]) -> None:
        self._server = server
        # Every extension method's handler (the server's `extension_methods`): those the
        # extensions added, and any set there directly (served as plain data in every revision).
        self.methods = methods
        self.installed: dict[str, Extension] = {}
        self._owners: dict[str, Extension] = {}  # each added method's extension
        self._hooks: dict[str, tuple[Extension, ...]] = {}
        # Each `open_request` hook, bound (called for every request: no lookup on the way).
        self.openers: tuple[Callable[[Context, Any, Any], None], ...] = ()
        self.version = 0  # how many extensions were added: a chain made at one stands till the next

    def add(self, extension: Extension) -> None:
        """Serve `extension`; ValueError when its id is empty or served already, or one of
        its methods is another extension's."""
        key = extension.id
        if not key:
            raise ValueError(f"{type(extension).__name__}.id is empty")
        if key in self.installed:
            raise ValueError(f"extension {key!r} is served already")
        methods = extension.methods()
        for method in methods:
            owner = self._owners.get(method)
            if owner is not None:
                raise ValueError(f"{key!r} and {owner.id!r} both define {method!r}")
        extension.added(self._server)
        self.installed[key] = extension
        for method, handler in methods.items():
            self.methods[method] = handler
            self._owners[method] = extension
        for method in extension.notifications:
            self._owners.setdefault(method, extension)
        self._hooks = {}
        self.openers = tuple(e.open_request for e in self.hooked("open_request"))
        self.version += 1

    def get(self, key: str) -> Extension | None:
        """The extension served under identifier `key`, if any."""
        return self.installed.get(key)

    def hooked(self, hook: str) -> tuple[Extension, ...]:
        """The extensions that override `hook`, in the order they were added."""
        found = self._hooks.get(hook)
        if found is None:
            found = self._hooks[hook] = tuple(
                e for e in self.installed.values() if _overrides(e, hook)
            )
        return found

    # ------------------------------------------------------------------ methods

    def serves(self, method: str, revision: str) -> bool:
        """Whether an extension method is answered in `revision` (one that no extension
        owns, set in `extension_methods` directly: in every revision)."""
        owner = self._owners.get(method)
        return owner is None or owner.serves(method, revision)

    def codec(self, method: str, revision: str) -> Codec | None:
        """The codec of the extension whose request or notification `method` is, in
        `revision`, with every other extension served here that the revision has (one codec
        reads them all); None: no extension owns it, or it has no schema."""
        owner = self._owners.get(method)
        own = owner.codec(revision) if owner is not None else None
        if own is None:
            return None
        return own.with_extensions(*(key for key in self.installed if key in own.extensions))

    def read(self, method: str, revision: str, raw: bytes) -> dict[str, Any]:
        """An extension request's params: as its extension reads them, else as plain data
        (checked first by the extension's codec where it has the method)."""
        owner = self._owners.get(method)
        if owner is not None:
            found = owner.read(method, revision, raw)
            if found is not None:
                return found
            codec = self.codec(method, revision)
            if codec is not None and method in codec.methods:
                codec.decode(raw)
        return params_of(raw)

    # ------------------------------------------------------------------ hooks

    def declare(self, capabilities: dict[str, Any], revision: str) -> None:
        """Each extension that has settings declares itself as it is in `revision`
        (`Extension.declare`), in place of its entry in `capabilities["extensions"]`; an entry
        of an extension without settings here (a mounted server's) is left as it is."""
        declared = capabilities.pop("extensions", None) or {}
        speaking = [e for e in self.installed.values() if e.settings() is not None]
        for extension in speaking:
            declared.pop(extension.id, None)
        if declared:
            capabilities["extensions"] = declared
        for extension in speaking:
            extension.declare(capabilities, revision)

    def offer(self, capabilities: dict[str, Any]) -> None:
        """Every extension's `offer`, in the order they were added."""
        for extension in self.hooked("offer"):
            extension.offer(capabilities)

    async def prepare(self, ctx: Context) -> None:
        """Every extension's `prepare`."""
        for extension in self.hooked("prepare"):
            await extension.prepare(ctx)

    def param_headers(self, tool: str) -> ToolParamHeaders | None:
        """The first extension's `param_headers` that knows `tool` (None: none does)."""
        for extension in self.hooked("param_headers"):
            found = extension.param_headers(tool)
            if found is not None:
                return found
        return None

    def settings(self) -> dict[str, Any]:
        """The declared settings of every extension, by identifier."""
        found: dict[str, Any] = {}
        for key, extension in self.installed.items():
            settings = extension.settings()
            if settings is not None:
                found[key] = dict(settings)
        return found

    def tool_chain(self, last: CallNextTool) -> CallNextTool:
        """The `call_tool` hooks around `last`, the first added outermost (made once per set of
        extensions: `chained`)."""
        step = last
        for extension in reversed(self.hooked("call_tool")):
            step = functools.partial(extension.call_tool, call_next=step)
        return step

    def list_tools(self, ctx: Context, tools: Mapping[str, ToolEntry]) -> Mapping[str, ToolEntry]:
        """The tools every extension's `list_tools` leaves."""
        for extension in self.hooked("list_tools"):
            tools = extension.list_tools(ctx, tools)
        return tools

    def written(self, method: str, result: Any, revision: str) -> None:
        """Every extension's `written`."""
        for extension in self.hooked("written"):
            extension.written(method, result, revision)

    async def listen(self, ctx: Context, params: Any, kept: dict[str, Any]) -> None:
        """Every extension's `listen`."""
        for extension in self.hooked("listen"):
            await extension.listen(ctx, params, kept)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Every extension's lifespan, entered in order and left in reverse."""
        async with AsyncExitStack() as stack:
            for extension in self.hooked("lifespan"):
                entered = extension.lifespan(self._server)
                if entered is not None:
                    await stack.enter_async_context(entered)
            yield
