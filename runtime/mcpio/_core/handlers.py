"""What a server registers: tools, resources, resource templates and prompts, each a plain
function. Their wire definitions come from the function (name, docstring, type hints), their
return values become the public result models."""

from __future__ import annotations

import base64
import collections.abc
import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from inspect import CO_COROUTINE
from types import FunctionType
from typing import TYPE_CHECKING, Any, NamedTuple, get_origin, get_type_hints

import anyio.to_thread
import pydantic
from pydantic import BaseModel
from pydantic_core import to_json

from mcp_wire_runtime.codec import validator
from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError
from mcpio._core.authorization import checks_of
from mcpio._core.content import CONTENT_BLOCKS, content_block, media_block
from mcpio._core.dependencies import Dependency, resolving
from mcpio._core.docstrings import Docstring, parse
from mcpio._core.hints import CacheHint
from mcpio._core.jsonrpc import plain
from mcpio._core.options import PromptOptions, ResourceOptions, ToolOptions, check_names
from mcpio._core.path_screen import unsafe_path
from mcpio._core.results import Message, ToolResult
from mcpio._core.structured import Output, output_of
from mcpio._core.uritemplate import UriTemplate
from mcpio.latest import public as pub

if TYPE_CHECKING:
    from typing_extensions import Unpack

Fn = Callable[..., Any]


def call(
    fn: Fn, kwargs: Mapping[str, Any], threaded: bool = True, abandon: bool = False
) -> Awaitable[Any]:
    """Call a handler (await what this returns): a coroutine function on the event loop; any
    other function, when `threaded`, in one of anyio's worker threads, so a blocking `def`
    stalls no other request (on the loop itself otherwise). `abandon`: a cancelled call of a
    thread returns at once, the thread left to finish (a tool's `timeout`)."""
    if type(fn) is FunctionType and fn.__code__.co_flags & CO_COROUTINE:
        return fn(**kwargs)  # an `async def`: its own coroutine (every call's path)
    return _call_other(fn, kwargs, threaded, abandon)


async def _call_other(fn: Fn, kwargs: Mapping[str, Any], threaded: bool, abandon: bool) -> Any:
    if threaded and not is_async(fn):
        result = await anyio.to_thread.run_sync(
            functools.partial(fn, **kwargs), abandon_on_cancel=abandon
        )
    else:
        result = fn(**kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


def is_async(fn: Fn) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    if type(fn) is FunctionType and fn.__code__.co_flags & CO_COROUTINE:
        return True  # an `async def` (every call's path: `inspect`'s checks cost ten times more)
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (the method, not callability)
    )


def signature(fn: Fn, context_type: type) -> tuple[dict[str, tuple[Any, Any]], str | None]:
    """The function's parameters as (type, default) fields, and the one that takes the context;
    one whose default is a `Dependency` (`Depends`, `CurrentContext`) is no field."""
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, tuple[Any, Any]] = {}
    context_param = None
    for name, param in inspect.signature(fn).parameters.items():
        hint = hints.get(name, Any)
        if isinstance(hint, type) and issubclass(hint, context_type):
            context_param = name
            continue
        if isinstance(param.default, Dependency):
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (hint, default)
    return fields, context_param


def _doc(fn: Fn) -> Docstring:
    """The function's docstring: its description and its parameters' (`mcpio._core.docstrings`)."""
    return parse(inspect.getdoc(fn))


def _model(name: str, fields: dict[str, tuple[Any, Any]]) -> type[BaseModel]:
    model: type[BaseModel] = pydantic.create_model(  # pyright: ignore[reportCallIssue]
        name, **fields  # pyright: ignore[reportArgumentType]
    )
    return model


def _icons(icons: Sequence[Any] | None) -> list[Any] | None:
    """Icons (`Icon` models or mappings) as a definition's `icons` (None: none given)."""
    return [plain(icon) for icon in icons] if icons else None


def _misfit(exc: pydantic.ValidationError) -> tuple[str, str]:
    """The parameter a validation error is about, and what is wrong."""
    first = exc.errors(include_url=False)[0]
    return (str(first["loc"][0]) if first["loc"] else ""), first["msg"]


@dataclass
class ToolEntry:
    definition: pub.Tool
    fn: Fn
    arguments: type[BaseModel] | None  # None: an explicit input schema, arguments passed as-is
    context_param: str | None
    output: Output | None = None  # derived from the return annotation: checked structured content
    threaded: bool = True  # a `def` runs in a worker thread (see `call`)
    options: ToolOptions = field(default_factory=lambda: ToolOptions())  # as registered

    def kwargs(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The handler's keyword arguments; `pydantic.ValidationError` if they do not fit."""
        if self.arguments is None:
            return dict(arguments)
        return dict(validator(self.arguments)(arguments).__dict__)  # its fields' values


def tool_entry(
    fn: Fn, context_type: type, name: str | None, options: ToolOptions | None = None
) -> ToolEntry:
    """A tool, with its options. Without `output_schema`, one is derived from the return
    annotation (see `mcpio._core.structured`) unless `structured_output` is False; True makes a
    return annotation without a schema an error (`TypeError`)."""
    options = options or ToolOptions()
    input_schema, output_schema = options.get("input_schema"), options.get("output_schema")
    structured_output = options.get("structured_output")
    fields, context_param = signature(fn, context_type)
    tool_name = name or fn.__name__
    check_shared_options(f"tool {tool_name!r}", options, ToolOptions)
    _check_timeout(tool_name, fn, options)
    doc = _doc(fn)
    output = None
    if output_schema is None and structured_output is not False:
        output = _output(fn, tool_name, required=structured_output is True)
        output_schema = None if output is None else output.schema
    arguments: type[BaseModel] | None = None
    if input_schema is None:
        arguments = _model(f"{tool_name}_arguments", fields)
        schema = arguments.model_json_schema()
        schema.pop("title", None)
        for param, prop in schema.get("properties", {}).items():
            prop.pop("title", None)
            if param in doc.params and "description" not in prop:
                prop["description"] = doc.params[param]
        input_schema = schema
    definition: dict[str, Any] = {"name": tool_name, "inputSchema": dict(input_schema)}
    for key, value in (
        ("title", options.get("title") or _title(tool_name, options.get("annotations"))),
        ("description", options.get("description") or doc.description),
        ("outputSchema", output_schema),
        ("annotations", options.get("annotations")),
        ("_meta", options.get("meta")),
        ("icons", _icons(options.get("icons"))),
    ):
        if value is not None:
            definition[key] = value
    tool = pub.Tool.model_validate(definition)
    threaded = options.get("run_in_thread", True) and not is_async(fn)  # (not asked per call)
    fn = resolving(fn, is_async(fn), threaded, context_param)
    return ToolEntry(tool, fn, arguments, context_param, output, threaded, options)


def _check_timeout(tool_name: str, fn: Fn, options: ToolOptions) -> None:
    timeout = options.get("timeout")
    if timeout is None:
        return
    if type(timeout) is bool or not isinstance(timeout, int | float) or timeout <= 0:
        raise TypeError(f"tool {tool_name!r}: timeout is seconds above 0 (timeout=2.0)")
    if options.get("run_in_thread") is False and not is_async(fn):
        raise TypeError(
            f"tool {tool_name!r}: no timeout stops a sync function on the event loop: "
            "drop run_in_thread=False, or make it async"
        )


def _title(tool_name: str, annotations: Any) -> str:
    """A tool's title when none is given: its annotations' `title`, else its name in words
    (`list_open_orders` -> "List Open Orders"), as FastMCP derives it (some clients show no tool
    without a title)."""
    given = plain(annotations).get("title") if annotations is not None else None
    if isinstance(given, str) and given:
        return given
    return tool_name.replace("_", " ").replace("-", " ").title()


def _output(fn: Fn, tool_name: str, *, required: bool) -> Output | None:
    annotation = get_type_hints(fn, include_extras=True).get("return", Any)
    try:
        output = output_of(annotation, tool_name)
    except TypeError:
        if required:
            raise
        return None
    if output is None and required:
        raise TypeError(f"tool {tool_name}: its return annotation gives no structured output")
    return output


class TextAnswer(NamedTuple):
    """A tool's string answer, not made a result model: the connection writes it as JSON
    directly (`json`), byte for byte what `tool_result(text)` is written as in each revision
    (tests/server/test_dispatch_core.py compares them)."""

    text: str

    def json(self, tagged: bool) -> bytes:
        """The result's JSON; `tagged`: with the modern era's `resultType`."""
        return (_TAGGED_TEXT if tagged else _TEXT) % to_json(self.text)


_TEXT = b'{"content":[{"text":%b,"type":"text"}]}'
_TAGGED_TEXT = b'{"content":[{"text":%b,"type":"text"}],"resultType":"complete"}'


class WireResult(NamedTuple):
    """A result already in the request's revision's own shape (plain JSON data), written as it
    is: what the handlers of methods outside the public models return (`initialize` and the
    session's lifecycle, the task methods)."""

    data: dict[str, Any]
    codec: Any = None  # the `Codec` that checks it (an extension's); None: the request's


class SelfWritten:
    """A result that writes itself in its request's era (a request that became a task)."""

    def wire(self, revision: str, modern: bool) -> WireResult:
        """The result in `revision`'s own shape."""
        raise NotImplementedError


def tool_result(value: Any) -> pub.CallToolResult:
    """A tool's return value as a tool result: text for strings, content blocks as they are,
    structured content (and its JSON text) for mappings and models."""
    if type(value) is str:  # the common case, validated in one step
        return validator(pub.CallToolResult)(
            {"content": [{"type": "text", "text": value}], "resultType": "complete"}
        )
    if isinstance(value, pub.CallToolResult):
        return value
    if isinstance(value, ToolResult):
        return value.result()
    if value is None:
        return pub.CallToolResult(content=[], resultType="complete")
    if isinstance(value, list | tuple):
        blocks = [content_block(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return pub.CallToolResult(content=blocks, resultType="complete")
    if isinstance(value, dict) or (
        isinstance(value, BaseModel) and not isinstance(value, CONTENT_BLOCKS)
    ):
        data = plain(value)
        return pub.CallToolResult(
            content=[pub.TextContent(type="text", text=json.dumps(data))],
            structuredContent=data,
            resultType="complete",
        )
    return pub.CallToolResult(content=[content_block(value)], resultType="complete")


def structured_result(output: Output, value: Any) -> pub.CallToolResult:
    """A tool's return value as checked structured content, its content blocks what they would
    be without (as `tool_result` makes them: a string's text, one block per list item, else
    the JSON text); a
    `CallToolResult` as it is, its structured content checked unless it is an error.
    `pydantic.ValidationError` when the value does not fit."""
    if isinstance(value, ToolResult):
        value = value.result()
    if isinstance(value, pub.CallToolResult):
        if not value.isError:
            output.check(plain(value.structuredContent))
        return value
    structured = output.structure(value)
    data: Any = structured["result"] if output.wrapped else structured
    content: list[Any] = []
    if isinstance(value, list | tuple):
        for item, dumped in zip(
            value, data, strict=True
        ):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            media = media_block(item) if not isinstance(item, bytes | bytearray) else None
            content.append(
                item if isinstance(item, CONTENT_BLOCKS) else media or content_block(dumped)
            )
    elif value is not None:
        content.append(content_block(value if isinstance(value, str) else data))
    return pub.CallToolResult(content=content, structuredContent=structured, resultType="complete")


@dataclass
class ResourceEntry:
    definition: pub.Resource | pub.ResourceTemplate
    fn: Fn
    context_param: str | None
    template: UriTemplate | None = None  # templates: matches a URI, gives the variables
    arguments: type[BaseModel] | None = None  # templates: the variables as the handler takes them
    cache: CacheHint | None = None  # its reads' cache hint (None: the server's)
    threaded: bool = True  # a `def` runs in a worker thread (see `call`)
    options: ResourceOptions = field(default_factory=lambda: ResourceOptions())  # as registered

    def match(self, uri: str) -> dict[str, Any] | None:
        """The handler's keyword arguments for `uri` (None: it is not this resource's), the
        template's values screened (`mcpio._core.path_screen`, but for `unscreened` ones) and
        coerced to the parameters' annotations; -32602 naming the parameter whose value does
        not fit."""
        if self.template is None or self.arguments is None:
            return {} if uri == getattr(self.definition, "uri", None) else None
        values = self.template.match(uri)
        if values is None:
            return None
        _screen(values, frozenset(self.options.get("unscreened", ())), uri)
        try:
            return dict(validator(self.arguments)(values).__dict__)
        except pydantic.ValidationError as exc:
            param, why = _misfit(exc)
            raise ProtocolError(
                INVALID_PARAMS,
                f"invalid value for {param!r} in {uri}: {why}",
                {"uri": uri, "parameter": param},
            ) from None


def _screen(values: Mapping[str, str | list[str]], unscreened: frozenset[str], uri: str) -> None:
    """-32602 naming the first value that is unsafe as a path (`unsafe_path`)."""
    for param, value in values.items():
        if param in unscreened:
            continue
        for item in value if isinstance(value, list) else (value,):
            why = unsafe_path(item)
            if why is not None:
                raise ProtocolError(
                    INVALID_PARAMS,
                    f"invalid value for {param!r} in {uri}: {why}",
                    {"uri": uri, "parameter": param},
                )


def check_shared_options(what: str, options: Mapping[str, Any], known: type) -> None:
    """A component's options, checked as it is registered: each one of `known` (a TypedDict),
    and those every component takes (`tags`, `version`) well written; else `TypeError` saying
    how to write them."""
    check_names(what, options, known)
    checks_of(what, options.get("auth"))
    tags = options.get("tags")
    if isinstance(tags, str):
        raise TypeError(f"{what}: tags is a set of strings: tags={{{tags!r}}}, not tags={tags!r}")
    if tags is not None and not all(isinstance(tag, str) for tag in tags):
        raise TypeError(f"{what}: each tag is a string (tags={{'admin'}})")
    version = options.get("version")
    if version is not None and (type(version) is bool or not isinstance(version, str | int)):
        raise TypeError(f"{what}: version is a string or an int (version='2.0')")


def _check_static(what: str, fields: Mapping[str, tuple[Any, Any]], unscreened: set[str]) -> None:
    """A resource's function takes no argument without a default: its URI gives none."""
    needed = sorted(n for n, (_, default) in fields.items() if default is ...)
    if needed:
        raise TypeError(
            f"{what}: its URI has no {{variables}} for {', '.join(needed)}: "
            f"add them ({{{needed[0]}}}) or give defaults"
        )
    if unscreened:
        raise TypeError(f"{what}: unscreened names template variables only")


def resource_entry(
    fn: Fn,
    context_type: type,
    *,
    uri: str | None = None,
    uri_template: str | None = None,
    **options: Unpack[ResourceOptions],
) -> ResourceEntry:
    """A resource (`uri`) or a resource template (`uri_template`, RFC 6570: its variables the
    function's parameters, their values coerced to the annotations; FastMCP's `{path*}` a path
    of several segments). `TypeError` for a template variable that is no parameter, a parameter
    without a default that is no variable, an `unscreened` name that is no variable."""
    what = f"resource {uri or uri_template!r}"
    check_shared_options(what, options, ResourceOptions)
    data: dict[str, Any] = {"name": options.get("name") or fn.__name__}
    mime_type = options.get("mime_type")
    if mime_type is None and get_type_hints(fn).get("return") is str:
        mime_type = "text/plain"
    for key, value in (
        ("title", options.get("title")),
        ("description", options.get("description") or _doc(fn).description),
        ("mimeType", mime_type),
        ("icons", _icons(options.get("icons"))),
        ("annotations", options.get("annotations")),
        ("_meta", options.get("meta")),
    ):
        if value is not None:
            data[key] = value
    fields, context_param = signature(fn, context_type)
    threaded, cache = options.get("run_in_thread", True), options.get("cache")
    fn = resolving(fn, is_async(fn), threaded, context_param)
    unscreened = set(options.get("unscreened", ()))
    if uri_template is None:
        _check_static(what, fields, unscreened)
        definition = pub.Resource.model_validate({**data, "uri": uri})
        return ResourceEntry(definition, fn, context_param, None, None, cache, threaded, options)
    definition = pub.ResourceTemplate.model_validate({**data, "uriTemplate": uri_template})
    optional = {n for n, (_, default) in fields.items() if default is not ...}
    lists = {n for n, (hint, _) in fields.items() if get_origin(hint) in _LISTS}
    template = UriTemplate(uri_template, optional, lists, wildcard=True)
    unknown = sorted(set(template.variables) - set(fields))
    missing = sorted(set(fields) - optional - set(template.variables))
    if unknown or missing:
        raise TypeError(
            f"resource template {uri_template!r}: "
            + (f"no parameter for {', '.join(unknown)}" if unknown else "")
            + ("; " if unknown and missing else "")
            + (f"no variable for {', '.join(missing)}" if missing else "")
        )
    if unscreened - set(template.variables):
        strays = ", ".join(sorted(unscreened - set(template.variables)))
        raise TypeError(
            f"resource template {uri_template!r}: unscreened names no variable: {strays}"
        )
    model = _model(f"{definition.name}_variables", fields)
    return ResourceEntry(definition, fn, context_param, template, model, cache, threaded, options)


_LISTS = (list, tuple, set, frozenset, collections.abc.Sequence)


def resource_result(value: Any, uri: str, mime_type: str | None) -> pub.ReadResourceResult:
    """Text for strings (`text/plain` unless `mime_type` says otherwise), JSON text for other
    values (`application/json`), a base64 blob for bytes, contents as they are."""
    if isinstance(value, pub.ReadResourceResult):
        return value
    items = value if isinstance(value, list | tuple) else [value]
    contents: list[pub.TextResourceContents | pub.BlobResourceContents] = []
    for item in items:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(item, pub.TextResourceContents | pub.BlobResourceContents):
            contents.append(item)
            continue
        data: dict[str, Any] = {"uri": uri}
        if mime_type:
            data["mimeType"] = mime_type
        if isinstance(item, bytes | bytearray):
            data["blob"] = base64.b64encode(item).decode()
            contents.append(pub.BlobResourceContents.model_validate(data))
        elif isinstance(item, str):
            data["text"] = item
            data.setdefault("mimeType", "text/plain")
            contents.append(pub.TextResourceContents.model_validate(data))
        else:
            data["text"] = json.dumps(plain(item))
            data.setdefault("mimeType", "application/json")
            contents.append(pub.TextResourceContents.model_validate(data))
    return pub.ReadResourceResult(
        contents=contents, resultType="complete", ttlMs=0, cacheScope="private"
    )


@dataclass
class PromptEntry:
    definition: pub.Prompt
    fn: Fn
    context_param: str | None
    arguments: type[BaseModel] | None = None  # the arguments as the handler takes them
    parsed: frozenset[str] = frozenset()  # arguments whose string is JSON (lists, objects...)
    threaded: bool = True  # a `def` runs in a worker thread (see `call`)
    options: PromptOptions = field(default_factory=lambda: PromptOptions())  # as registered

    def kwargs(self, arguments: Mapping[str, str]) -> dict[str, Any]:
        """The handler's keyword arguments: each string coerced to the parameter's annotation
        (JSON read for a list or an object); -32602 naming the argument that does not fit."""
        if self.arguments is None:
            return dict(arguments)
        values: dict[str, Any] = dict(arguments)
        for name in self.parsed & values.keys():
            try:
                values[name] = json.loads(values[name])
            except (TypeError, ValueError):
                pass  # left as it is: the validation says what is wrong
        try:
            return dict(validator(self.arguments)(values).__dict__)
        except pydantic.ValidationError as exc:
            argument, why = _misfit(exc)
            prompt = self.definition.name
            raise ProtocolError(
                INVALID_PARAMS,
                f"invalid value for argument {argument!r} of prompt {prompt!r}: {why}",
                {"name": prompt, "argument": argument},
            ) from None


def prompt_entry(
    fn: Fn,
    context_type: type,
    *,
    name: str | None = None,
    **options: Unpack[PromptOptions],
) -> PromptEntry:
    """A prompt: its arguments are the function's parameters, described by the docstring; one
    that is not a string has its type in its description (arguments are strings on the wire,
    in every revision), its value coerced to it."""
    fields, context_param = signature(fn, context_type)
    doc = _doc(fn)
    prompt_name = name or fn.__name__
    check_shared_options(f"prompt {prompt_name!r}", options, PromptOptions)
    title, description = options.get("title"), options.get("description")
    model = _model(f"{prompt_name}_arguments", fields)
    schema = model.model_json_schema()
    arguments: list[dict[str, Any]] = []
    parsed: set[str] = set()
    for arg, (_, default) in fields.items():
        expects, read_json = _expects(schema, schema.get("properties", {}).get(arg, {}))
        if read_json:
            parsed.add(arg)
        said = [text for text in (doc.params.get(arg), expects and f"({expects})") if text]
        argument: dict[str, Any] = {"name": arg, "required": default is ...}
        if said:
            argument["description"] = " ".join(said)
        arguments.append(argument)
    definition: dict[str, Any] = {"name": prompt_name}
    if arguments:
        definition["arguments"] = arguments
    if title:
        definition["title"] = title
    if options.get("icons"):
        definition["icons"] = _icons(options.get("icons"))
    if description or doc.description:
        definition["description"] = description or doc.description
    if options.get("meta") is not None:
        definition["_meta"] = options.get("meta")
    threaded = options.get("run_in_thread", True)
    prompt = pub.Prompt.model_validate(definition)
    fn = resolving(fn, is_async(fn), threaded, context_param)
    return PromptEntry(prompt, fn, context_param, model, frozenset(parsed), threaded, options)


_SCALARS = {"integer": "an integer", "number": "a number", "boolean": "true or false"}


def _expects(schema: Mapping[str, Any], prop: Mapping[str, Any]) -> tuple[str | None, bool]:
    """What a prompt argument's string must hold (None: any text), and whether it is read as
    JSON (a list, an object, a union)."""
    if not prop:  # unannotated (Any): the text as it is
        return None, False
    ref = prop.get("$ref")
    if isinstance(ref, str):  # an enumeration or a model, among the schema's definitions
        prop = schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
    options = [p for p in prop.get("anyOf", ()) if p.get("type") != "null"]
    if len(options) == 1:  # an optional value: what it is when given
        return _expects(schema, options[0])
    if "enum" in prop and all(isinstance(v, str) for v in prop["enum"]):
        return "one of: " + ", ".join(prop["enum"]), False
    kind = prop.get("type")
    if kind == "string":
        return None, False
    if kind in _SCALARS:
        return _SCALARS[kind], False
    if kind in ("array", "object"):
        return f"a JSON {kind}", True
    return "a JSON value", True


def prompt_result(value: Any) -> pub.GetPromptResult:
    """Strings become user messages, content blocks user messages holding them; a `Message`
    the message it stands for."""
    if isinstance(value, pub.GetPromptResult):
        return value
    items = value if isinstance(value, list | tuple) else [value]
    messages = [
        _prompt_message(item) for item in items
    ]  # pyright: ignore[reportUnknownVariableType]
    return pub.GetPromptResult(messages=messages, resultType="complete")


def _prompt_message(item: Any) -> pub.PromptMessage:
    if isinstance(item, pub.PromptMessage):
        return item
    if isinstance(item, Message):
        return item.message()
    return pub.PromptMessage(role="user", content=content_block(item))


CompletionFn = Callable[[pub.CompleteRequestParams], Awaitable[Any] | Any]


def completion_result(value: Any) -> pub.CompleteResult:
    """A completer's return value as a `CompleteResult` (a list of values: the first 100)."""
    if isinstance(value, pub.CompleteResult):
        return value
    values = list(value or [])[:100]  # pyright: ignore[reportUnknownArgumentType]
    return pub.CompleteResult(
        completion=pub.CompleteResultCompletion(values=values, total=len(values), hasMore=False),
        resultType="complete",
    )
