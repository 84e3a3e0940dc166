"""Tool transformation (`Server.add_transformed_tool`): a new tool made of one the server already
offers (its own, a mounted server's, a proxied one's), its arguments renamed, hidden with a
fixed value or given new defaults, its description and metadata changed, and an optional async
function around the call (`forward(**kwargs)` calls the source from it), as FastMCP's
`Tool.from_tool(tool, transform_args={...}, transform_fn=...)` makes one.

The new tool's input schema is the source's transformed: a hidden argument is gone (from
`properties` and `required`), a renamed one renamed, a new default set (the argument no longer
required). Its output schema is the source's, or the one the function's return annotation
implies. Its call reaches the source as a client's call of it would (through the mounted server
or the proxy), the source's visibility aside: hiding the source (`disable`) keeps the new tool
working.

A source the server can see at registration (its own, a mounted mcpio server's) is transformed
then, a misuse a `TypeError`; another one (a proxied server's, a server mounted later) at the
first listing or call, from the mounted server's registry or else from what its listing says.
A source hidden by this server's rules (or a parent's) stays hidden and the new tool listed; one
no server lists (none has it, or a proxied server's target hides it) leaves the new tool
unlisted, its listing otherwise as it is, and a call of it -32603 naming the source.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Collection, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import EllipsisType
from typing import TYPE_CHECKING, Any, get_type_hints

from mcp_wire_runtime.errors import INTERNAL_ERROR, ProtocolError
from mcpio._core.context import Context
from mcpio._core.errors import ToolError
from mcpio._core.ext_methods import CLIENT_CAPABILITIES
from mcpio._core.handlers import TextAnswer, is_async, signature, tool_entry, tool_result
from mcpio._core.jsonrpc import plain
from mcpio._core.negotiate import PROTOCOL_VERSION_KEY
from mcpio._core.options import ToolOptions
from mcpio._core.structured import output_of
from mcpio.latest import public as pub

if TYPE_CHECKING:
    from mcpio._core.context import MethodHandler

_UNSET: Any = ...  # "as the source has it" (None: none)
# the changes taken as the source has them unless given, and their members in a definition
_MEMBERS = {
    "title": "title",
    "description": "description",
    "annotations": "annotations",
    "meta": "_meta",
}


@dataclass(frozen=True, kw_only=True)
class ArgTransform:
    """How one argument of the source tool changes (FastMCP's `ArgTransform`).

    Args:
        name: Its new name.
        description: Its new description.
        default: Its new default (no longer required); with `hide`, the value always sent.
        default_factory: With `hide`: made anew for each call, the value sent.
        hide: Hidden from clients: the source gets `default` (or `default_factory()`), or its
            own default when there is none.
        required: True: required, its default dropped.
        examples: Its JSON Schema `examples`.
    """

    name: str | None = None
    description: str | None = None
    default: Any = _UNSET
    default_factory: Callable[[], Any] | None = None
    hide: bool = False
    required: bool = False
    examples: Any = _UNSET

    def __post_init__(self) -> None:
        if self.default is not _UNSET and self.default_factory is not None:
            raise TypeError("ArgTransform: default or default_factory, not both")
        if self.default_factory is not None and not self.hide:
            raise TypeError("ArgTransform: default_factory is for hidden arguments (hide=True)")
        if self.required and (self.hide or self.default is not _UNSET):
            raise TypeError("ArgTransform: a required argument has no default and is not hidden")


@dataclass
class Reshaped:
    """The transformed input schema, and how its arguments reach the source."""

    schema: dict[str, Any]
    to_source: dict[str, str]  # new name -> the source's
    defaults: dict[str, Any]  # new defaults, sent when the client leaves them out
    hidden: dict[str, ArgTransform]  # the source's name -> its fixed value


def reshape(tool: str, source: Mapping[str, Any], args: Mapping[str, ArgTransform]) -> Reshaped:
    """`source` (an input schema) as `args` transform it; `TypeError` naming the fix."""
    properties: dict[str, Any] = dict(source.get("properties") or {})
    required = set(source.get("required") or ())
    unknown = sorted(set(args) - set(properties))
    if unknown:
        raise TypeError(
            f"transformed tool {tool!r}: the source has no argument {', '.join(unknown)} "
            f"(it has {', '.join(sorted(properties)) or 'none'})"
        )
    shaped = Reshaped({**source, "properties": {}}, {}, {}, {})
    new_required: list[str] = []
    for old, prop in properties.items():
        change = args.get(old, ArgTransform())
        if change.hide:
            if old in required and change.default is _UNSET and change.default_factory is None:
                raise TypeError(
                    f"transformed tool {tool!r}: hidden argument {old!r} is required by the "
                    "source: give it a default (ArgTransform(hide=True, default=...))"
                )
            shaped.hidden[old] = change
            continue
        new = change.name or old
        if new in shaped.to_source:
            raise TypeError(f"transformed tool {tool!r}: two arguments named {new!r}")
        shaped.to_source[new] = old
        shaped.schema["properties"][new] = _property(dict(prop), change)
        if change.default is not _UNSET:
            shaped.defaults[new] = change.default
        elif change.required or (old in required and "default" not in prop):
            new_required.append(new)
    shaped.schema.pop("required", None)
    if new_required:
        shaped.schema["required"] = new_required
    return shaped


def _property(prop: dict[str, Any], change: ArgTransform) -> dict[str, Any]:
    if change.description is not None:
        prop["description"] = change.description
    if change.default is not _UNSET:
        prop["default"] = change.default
    elif change.required:
        prop.pop("default", None)
    if change.examples is not _UNSET:
        prop["examples"] = change.examples
    return prop


# The transformed tool whose function runs, and its request (for `forward`).
_CURRENT: ContextVar[tuple[Transformed, Context] | None] = ContextVar(
    "mcpio_transformed", default=None
)


async def forward(**kwargs: Any) -> pub.CallToolResult:
    """Call the source tool from a transformed tool's function, by the new argument names.

    Renamed arguments are sent under the source's names, hidden ones with their fixed values,
    left-out ones with their new defaults.

    Returns:
        The source's result.

    Raises:
        ToolError: The source's call failed (its message, for the model to read).
        RuntimeError: Called outside a transformed tool's function.
        TypeError: An argument the transformed tool does not have.
    """
    tool, ctx = _current("forward")
    return _succeeded(await tool.forward(ctx, kwargs))


async def forward_raw(**kwargs: Any) -> pub.CallToolResult:
    """Call the source tool from a transformed tool's function, by the source's own names.

    Returns:
        The source's result.

    Raises:
        ToolError: The source's call failed.
        RuntimeError: Called outside a transformed tool's function.
    """
    tool, ctx = _current("forward_raw")
    return _succeeded(await tool.call_source(ctx, kwargs))


def _current(what: str) -> tuple[Transformed, Context]:
    current = _CURRENT.get()
    if current is None:
        raise RuntimeError(f"{what}() is called from a transformed tool's transform_fn only")
    return current


def _succeeded(result: pub.CallToolResult) -> pub.CallToolResult:
    if result.isError:
        text = " ".join(b.text for b in result.content if isinstance(b, pub.TextContent))
        raise ToolError(text or "the source tool failed", structured=result.structuredContent)
    return result


@dataclass
class Transformed:
    """One transformed tool: what it is made of, and its calls of the source."""

    server: Any  # the `Server` it is registered on
    source: str
    name: str
    changes: dict[str, Any]  # title, description, tags, annotations, meta, output_schema
    args: dict[str, ArgTransform]
    fn: Callable[..., Awaitable[Any]] | None
    shaped: Reshaped | None = None
    fn_context: str | None = field(default=None, init=False)

    def entry(self, source: pub.Tool, options: Mapping[str, Any]) -> Any:
        """The new tool's `ToolEntry`, made of the source's definition (and options)."""
        self.shaped = reshape(self.name, plain(source.inputSchema), self.args)
        given = self.changes
        tool_options = ToolOptions(input_schema=self.shaped.schema)
        listed = plain(source)
        for key, member in _MEMBERS.items():
            value = given[key] if given[key] is not _UNSET else listed.get(member)
            if key == "title" and given[key] is _UNSET and value == _derived(self.source):
                value = None  # a title made of the source's name: one of the new name instead
            if key == "meta" and given[key] is _UNSET and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k != "fastmcp"} or None
            tool_options[key] = value  # type: ignore[literal-required]
        tags = given["tags"] if given["tags"] is not None else options.get("tags")
        if tags is not None:
            tool_options["tags"] = tags
        if options.get("auth") is not None:  # who may not call the source may not call it
            tool_options["auth"] = options["auth"]
        if given["output_schema"] is not _UNSET:
            tool_options["output_schema"] = given["output_schema"]
            tool_options["structured_output"] = given["output_schema"] is not None
        elif not self._fn_has_output():
            tool_options["output_schema"] = listed.get("outputSchema")
        if listed.get("icons"):
            tool_options["icons"] = listed["icons"]
        return tool_entry(self._run_fn(), Context, self.name, tool_options)

    def _fn_has_output(self) -> bool:
        """Whether `fn`'s return annotation implies an output schema of its own."""
        if self.fn is None:
            return False
        try:
            return output_of(_returns(self.fn), self.name) is not None
        except TypeError:
            return False

    def _run_fn(self) -> Callable[..., Awaitable[Any]]:
        """The new tool's function: the client's arguments to `fn`, or on to the source."""
        fn = self.fn
        if fn is not None:
            self._check_fn(fn)
        wrapped = self

        async def run(ctx: Context, **arguments: Any) -> Any:
            shaped = wrapped.shaped
            assert shaped is not None
            strays = sorted(set(arguments) - set(shaped.to_source))
            if strays:  # (a hidden one among them: never the client's to set)
                raise ToolError(
                    f"invalid arguments for {wrapped.name}: no argument {', '.join(strays)}"
                )
            if fn is None:
                return await wrapped.forward(ctx, arguments)
            kwargs = {**shaped.defaults, **arguments}
            if wrapped.fn_context is not None:
                kwargs[wrapped.fn_context] = ctx
            token = _CURRENT.set((wrapped, ctx))
            try:
                return await fn(**kwargs)
            finally:
                _CURRENT.reset(token)

        if fn is not None:  # its output schema is the function's
            run.__annotations__["return"] = _returns(fn)
        return run

    def _check_fn(self, fn: Callable[..., Any]) -> None:
        if not is_async(fn):
            raise TypeError(f"transformed tool {self.name!r}: transform_fn is an async function")
        fields, self.fn_context = signature(fn, Context)
        takes_any = any(
            p.kind is inspect.Parameter.VAR_KEYWORD
            for p in inspect.signature(fn).parameters.values()
        )
        assert self.shaped is not None
        missing = sorted(set(self.shaped.to_source) - set(fields))
        if missing and not takes_any:
            raise TypeError(
                f"transformed tool {self.name!r}: transform_fn takes no {', '.join(missing)}: "
                "add them as parameters, or **kwargs"
            )

    async def forward(self, ctx: Context, arguments: Mapping[str, Any]) -> pub.CallToolResult:
        """The source called with `arguments` (new names): renamed, defaults and hidden ones
        filled in."""
        shaped = self.shaped
        assert shaped is not None
        strays = sorted(set(arguments) - set(shaped.to_source))
        if strays:
            raise TypeError(f"transformed tool {self.name!r} has no argument {', '.join(strays)}")
        values = {**shaped.defaults, **arguments}
        sent = {shaped.to_source[new]: value for new, value in values.items()}
        for old, change in shaped.hidden.items():
            if change.default_factory is not None:
                sent[old] = change.default_factory()
            elif change.default is not _UNSET:
                sent[old] = change.default
        return await self.call_source(ctx, sent)

    async def call_source(self, ctx: Context, arguments: Mapping[str, Any]) -> pub.CallToolResult:
        """The source's result for `arguments` (its own names), as a client's call of it gets
        it, its visibility aside."""
        inner = copy.copy(ctx)
        inner._sees_all = True  # pyright: ignore[reportPrivateUsage]
        inner.task_offer = None
        meta: dict[str, Any] = {  # the request's, as the public model carries them
            PROTOCOL_VERSION_KEY: ctx.revision,
            CLIENT_CAPABILITIES: plain(ctx.client_capabilities),
        }
        if ctx.progress_token is not None:
            meta["progressToken"] = ctx.progress_token
        params = pub.CallToolRequestParams.model_validate(
            {"name": self.source, "arguments": dict(arguments), "_meta": meta}
        )
        handler: MethodHandler = self.server.handlers["tools/call"]
        result = await handler(inner, params)
        return tool_result(result.text) if isinstance(result, TextAnswer) else result


def _returns(fn: Callable[..., Any]) -> Any:
    """`fn`'s return annotation, evaluated (Any: none)."""
    return get_type_hints(fn, include_extras=True).get("return", Any)


def _derived(name: str) -> str:
    """The title a tool of `name` is given when none is (`mcpio._core.handlers`)."""
    return name.replace("_", " ").replace("-", " ").title()


def reachable(server: Any, name: str) -> tuple[pub.Tool, Mapping[str, Any]] | None:
    """The definition and options of the tool `server` offers as `name`, where it can be seen
    now: its own, or a mounted mcpio server's (at any depth); None: not known yet."""
    entry = server.tools.get(name)
    if entry is not None:
        return entry.definition, entry.options
    mounts = server.__dict__.get("_mounts")
    for mounted in mounts.mounted if mounts is not None else ():
        local = mounted.local_name(name)
        if local is not None and hasattr(mounted.server, "tools"):
            found = reachable(mounted.server, local)
            if found is not None:
                return found
    return None


async def every_tool(handler: MethodHandler, ctx: Context) -> dict[str, pub.Tool]:
    """Every tool a `tools/list` handler lists (its pages followed), by name."""
    tools: dict[str, pub.Tool] = {}
    cursor: str | None = None
    for _ in range(1000):
        params = pub.PaginatedRequestParams.model_construct(cursor=cursor) if cursor else None
        listed = await handler(ctx, params)
        tools.update((tool.name, tool) for tool in listed.tools)
        cursor = listed.nextCursor
        if cursor is None:
            return tools
    raise ProtocolError(INTERNAL_ERROR, "tools/list never ended")


class Transforms:
    """`Server.add_transformed_tool`, and the transformed tools waiting for their source."""

    if TYPE_CHECKING:  # what transformation uses of the rest of `Server`
        tools: dict[str, Any]
        handlers: dict[str, MethodHandler]
        pending_transforms: dict[str, Transformed]

        def _add(self, kind: Any, table: dict[str, Any], key: str, entry: Any) -> None: ...

    def add_transformed_tool(
        self,
        source: str,
        *,
        name: str,
        title: str | None | EllipsisType = ...,
        description: str | None | EllipsisType = ...,
        tags: Collection[str] | None = None,
        annotations: Mapping[str, Any] | None | EllipsisType = ...,
        meta: Mapping[str, Any] | None | EllipsisType = ...,
        output_schema: Mapping[str, Any] | None | EllipsisType = ...,
        transform_args: Mapping[str, ArgTransform] | None = None,
        transform_fn: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        """Register tool `name`, made of tool `source` (FastMCP's `Tool.from_tool`).

        `source` is a tool this server offers: its own, a mounted server's (`ns_search`), a
        proxied one's (see `mcpio.server._transform`). Each change left out (`...`) is as the
        source has it; None drops it.

        Args:
            source: The tool's name, as this server offers it.
            name: The new tool's name (not the source's: hide the source with `disable`).
            title: Its title.
            description: Its description.
            tags: Its tags (default: the source's).
            annotations: Its annotations.
            meta: Its `_meta`.
            output_schema: Its output schema (default: `transform_fn`'s return annotation's,
                else the source's).
            transform_args: Changes of the source's arguments, by the source's names.
            transform_fn: An async function taking the new arguments, around the call: it may
                check or change them, call `forward(**kwargs)` (or `forward_raw`) and change
                the result.

        Raises:
            TypeError: A misuse (an argument the source lacks, a hidden required one without a
                value, a function missing new arguments), found now for a source seen now.
        """
        if name == source:
            raise TypeError(
                f"transformed tool {name!r}: give it a name of its own "
                f"(hide the source with server.disable(names={{{source!r}}}))"
            )
        changes: dict[str, Any] = dict(title=title, description=description, tags=tags)
        changes.update(annotations=annotations, meta=meta, output_schema=output_schema)
        made = Transformed(self, source, name, changes, dict(transform_args or {}), transform_fn)
        found = reachable(self, source)
        if found is None:
            self.pending_transforms[name] = made
            return
        self._add("tool", self.tools, name, made.entry(*found))

    async def _resolve_transforms(self, ctx: Context, wanted: str | None = None) -> None:
        """The waiting transformed tools made, of their sources where this server sees them now
        (a mounted mcpio server's, with its options), else of what its listing says (a
        proxied one's). One whose source is in neither waits, unlisted; `wanted` (a call's
        name) among them: -32603 naming its source."""
        for name, made in list(self.pending_transforms.items()):
            found = reachable(self, made.source)
            if found is not None and self.pending_transforms.pop(name, None) is not None:
                self._add("tool", self.tools, name, made.entry(*found))
        if not self.pending_transforms:
            return
        inner = copy.copy(ctx)
        inner._sees_all = True  # pyright: ignore[reportPrivateUsage]
        listed = await every_tool(self.handlers["tools/list"], inner)
        for name, made in list(self.pending_transforms.items()):
            source = listed.get(made.source)
            if source is not None and self.pending_transforms.pop(name, None) is not None:
                self._add("tool", self.tools, name, made.entry(source, {}))
        missing = self.pending_transforms.get(wanted or "")
        if missing is not None:
            raise ProtocolError(
                INTERNAL_ERROR, f"transformed tool {wanted!r}: no tool {missing.source!r} here"
            )
