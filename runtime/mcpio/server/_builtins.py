"""The methods a server answers itself (`server/discover`, the listings, `tools/call`,
`resources/read`, `prompts/get`, `completion/complete`) from what is registered, and how a
tool's call becomes its result."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import pydantic

from mcp_wire_runtime.errors import INTERNAL_ERROR, INVALID_PARAMS, ProtocolError
from mcpio._core.context import Context, MethodHandler
from mcpio._core.errors import ToolError
from mcpio._core.extension import ToolCall
from mcpio._core.handlers import (
    TextAnswer,
    ToolEntry,
    call,
    completion_result,
    prompt_result,
    resource_result,
    structured_result,
    tool_result,
)
from mcpio._core.jsonrpc import plain
from mcpio._core.negotiate import MODERN
from mcpio._core.paging import page
from mcpio._core.schema_check import violation
from mcpio._core.structured import summary
from mcpio.latest import public as pub
from mcpio.server._failures import passes_through, tool_failure, tool_result_error

if TYPE_CHECKING:
    from mcpio._core.extension import Extensions
    from mcpio._core.handlers import CompletionFn, PromptEntry, ResourceEntry
    from mcpio._core.hints import CacheHint
    from mcpio._core.sealing import Sealer
    from mcpio._core.visibility import Kind

log = logging.getLogger("mcpio")

E = TypeVar("E")


class BuiltIns:
    """`Server`'s own handlers of the methods it serves (`Server.handlers` starts with them)."""

    if TYPE_CHECKING:  # what the built-in methods use of the rest of `Server`
        tools: dict[str, ToolEntry]
        resources: dict[str, ResourceEntry]
        templates: dict[str, ResourceEntry]
        prompts: dict[str, PromptEntry]
        completion: CompletionFn | None
        completion_threaded: bool
        extensions: Extensions
        _tool_chain: tuple[int, Callable[[ToolCall], Awaitable[Any]]]
        sealer: Sealer
        list_page_size: int | None
        mask_error_details: bool
        pending_transforms: dict[str, Any]

        async def _resolve_transforms(self, ctx: Context, wanted: str | None = None) -> None: ...
        def _shown(self, ctx: Context, kind: Kind, table: Mapping[str, E]) -> Mapping[str, E]: ...
        def _find(
            self, ctx: Context, kind: Kind, table: Mapping[str, E], key: str, params: Any = None
        ) -> E | None: ...

        @property
        def instructions(self) -> str | None: ...
        def capabilities_in(self, revision: str) -> dict[str, Any]: ...
        def cache_hints(self, method: str | None = None) -> dict[str, Any]: ...
        def cache_hint(self, method: str | None = None) -> CacheHint: ...

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
        if self.pending_transforms and not ctx._sees_all:  # pyright: ignore[reportPrivateUsage]
            await self._resolve_transforms(ctx)
        table = self.extensions.list_tools(ctx, self._shown(ctx, "tool", self.tools))
        tools, cursor = self._page(ctx, params, "tools/list", table)
        return pub.ListToolsResult(
            tools=[entry.definition for entry in tools],
            nextCursor=cursor,
            **self.cache_hints("tools/list"),
        )

    async def _call_tool(self, ctx: Context, params: pub.CallToolRequestParams) -> Any:
        """`tools/call`: the tool's result, through the extensions' `call_tool` hooks."""
        entry = self._find(ctx, "tool", self.tools, params.name, params)
        if entry is None and params.name in self.pending_transforms:
            await self._resolve_transforms(ctx, params.name)
            entry = self._find(ctx, "tool", self.tools, params.name, params)
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

    def _call_entry(self, call: ToolCall) -> Awaitable[Any]:
        """The tool run in the request (a string answer kept as a `TextAnswer`): its arguments
        read here (a `ToolError` if they do not fit), the run awaited by the caller."""
        entry = call.entry
        try:  # (`call.arguments()` inline: every tool call's path)
            kwargs = entry.kwargs(call.params.arguments or {})
        except pydantic.ValidationError:
            kwargs = call.arguments()  # raises the tool error that says why
        if entry.arguments is None:  # a hand-written input schema: checked as JSON Schema
            kwargs = call.arguments()
        if entry.context_param:
            kwargs[entry.context_param] = call.ctx
        return _run_tool(entry, kwargs, self.mask_error_details, text_answer=True)

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
        table = self._shown(ctx, "resource", self.resources)
        entries, cursor = self._page(ctx, params, "resources/list", table)
        resources = [entry.definition for entry in entries]
        return pub.ListResourcesResult(resources=resources, nextCursor=cursor, **self.cache_hints("resources/list"))  # type: ignore[arg-type]

    async def _list_templates(self, ctx: Context, params: Any) -> pub.ListResourceTemplatesResult:
        table = self._shown(ctx, "template", self.templates)
        entries, cursor = self._page(ctx, params, "resources/templates/list", table)
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
        entry, variables = self._resource_for(ctx, uri, params)
        if entry.context_param:
            variables[entry.context_param] = ctx
        value = await call(entry.fn, variables, entry.threaded)
        result = resource_result(value, uri, entry.definition.mimeType)
        hint = entry.cache or self.cache_hint("resources/read")
        result.ttlMs, result.cacheScope = hint.fields()["ttlMs"], hint.scope
        return result

    def _resource_for(
        self, ctx: Context, uri: str, params: Any = None
    ) -> tuple[ResourceEntry, dict[str, Any]]:
        """The resource `uri` names and its handler's arguments: the resource itself, else the
        first template that matches it and whose values fit its handler; else the first misfit
        (-32602 naming the parameter), else -32602 "resource not found"."""
        entry = self._find(ctx, "resource", self.resources, uri, params)
        if entry is not None:
            return entry, {}
        misfit: ProtocolError | None = None
        for candidate in self._shown(ctx, "template", self.templates).values():
            try:
                found = candidate.match(uri)
            except ProtocolError as exc:
                misfit = misfit or exc
                continue
            if found is not None:
                return candidate, found
        raise misfit or ProtocolError(INVALID_PARAMS, f"resource not found: {uri}", {"uri": uri})

    async def _list_prompts(self, ctx: Context, params: Any) -> pub.ListPromptsResult:
        entries, cursor = self._page(
            ctx, params, "prompts/list", self._shown(ctx, "prompt", self.prompts)
        )
        prompts = [entry.definition for entry in entries]
        return pub.ListPromptsResult(
            prompts=prompts, nextCursor=cursor, **self.cache_hints("prompts/list")
        )

    async def _get_prompt(self, ctx: Context, params: pub.GetPromptRequestParams) -> Any:
        entry = self._find(ctx, "prompt", self.prompts, params.name, params)
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


async def _run_tool(
    entry: ToolEntry, kwargs: dict[str, Any], mask: bool, text_answer: bool = False
) -> pub.CallToolResult | TextAnswer:
    """The tool's result; with `text_answer`, a string as a `TextAnswer` (the connection
    writes it without a model). A failure is a result with `isError` (see `Server.tool`)."""
    timeout = entry.options.get("timeout")
    try:
        if timeout is None:
            value = await call(entry.fn, kwargs, entry.threaded)
        else:
            value = await _timed(entry, kwargs, timeout)
    except ToolError as exc:
        return tool_result_error(str(exc), exc.structured)
    except Exception as exc:
        if passes_through(exc):
            raise
        return tool_failure(entry.definition.name, exc, mask)
    definition = entry.definition
    if text_answer and type(value) is str and entry.output is None:
        if definition.outputSchema is None:  # (a string answer: every echo's path)
            return TextAnswer(value)
    name = definition.name
    if value is _OVERRAN:
        log.warning("tool %r timed out after %gs", name, timeout)
        return tool_result_error(f"Tool {name!r} timed out after {timeout:g}s")
    if entry.output is None:
        schema = definition.outputSchema
        if schema is None:
            result = tool_result(value)
            if entry.options.get("structured_output") is False and result.structuredContent:
                return result.model_copy(update={"structuredContent": None})  # text alone
            return result
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


_OVERRAN = object()  # what `_timed` answers for a tool still running at its timeout


async def _timed(entry: ToolEntry, kwargs: dict[str, Any], timeout: float) -> Any:
    """The tool's value, or `_OVERRAN` when it runs past `timeout` seconds: cancelled then (a
    sync tool's thread is left to finish on its own, its value dropped)."""
    with anyio.move_on_after(timeout):
        return await call(entry.fn, kwargs, entry.threaded, abandon=True)
    return _OVERRAN
