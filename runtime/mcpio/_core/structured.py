"""Structured tool output: the `outputSchema` a tool's return annotation implies, its values
checked and written as `structuredContent` (server), and read back typed (client).

The rules are the official Python SDK's, so a tool declares the same schema on either (but
for FastMCP's marker on a wrapped one):

- a Pydantic model, a TypedDict or a dataclass: that object's schema, the value as it is;
- `dict[str, X]`: an object whose values are X;
- any other JSON-typed value (`str`, `int`, `float`, `bool`, `None`, `list[...]`,
  `tuple[...]`, unions, dicts with keys that are not `str`): wrapped as `{"result": value}`,
  the schema `{"type": "object", "properties": {"result": ...}, "required": ["result"]}`
  (titled `<tool>Output`), marked `"x-fastmcp-wrap-result": true` as FastMCP marks it (its
  client then reads the value, not the wrapper);
- no annotation, `Any`, a bare `dict` or `list`, a `CallToolResult` or `ToolResult`, content
  blocks (alone, in a list or in a union), or a type Pydantic cannot describe: no `outputSchema`.
"""

from __future__ import annotations

import functools
import sys
import types
from dataclasses import dataclass, is_dataclass
from typing import Any, NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

import pydantic
import pydantic_core
import typing_extensions
from pydantic import BaseModel, TypeAdapter

from mcp_wire_runtime.base import WireModel
from mcp_wire_runtime.codec import plain
from mcpio._core.content import Audio, File, Image
from mcpio._core.errors import InvalidOutput, ToolError
from mcpio._core.results import ToolResult
from mcpio.latest import public as pub

#: The member FastMCP's wrapped output schemas carry: its client unwraps `{"result": ...}` then.
WRAP_MARKER = "x-fastmcp-wrap-result"
_PRIMITIVES = (str, int, float, bool, type(None))
_NOT_DATA = (
    bytes,  # binary content: an embedded file (mcpio._core.content)
    Image,
    Audio,
    File,
    ToolResult,
    pub.CallToolResult,
    pub.TextContent,
    pub.ImageContent,
    pub.AudioContent,
    pub.EmbeddedResource,
    pub.ResourceLink,
)


@dataclass(frozen=True)
class Output:
    """What a tool returns, as structured content: `schema` is its `outputSchema`; `wrapped`
    says the value travels as `{"result": value}`."""

    adapter: TypeAdapter[Any]
    schema: dict[str, Any]
    wrapped: bool

    def structure(self, value: Any) -> dict[str, Any]:
        """The `structuredContent` for a tool's return value; `pydantic.ValidationError` if the
        value does not fit the annotation."""
        data = {"result": _wire_as_data(value)} if self.wrapped else _wire_as_data(value)
        dumped: dict[str, Any] = self.adapter.dump_python(
            self.adapter.validate_python(data), mode="json", by_alias=True
        )
        return dumped

    def check(self, structured: Any) -> None:
        """`pydantic.ValidationError` unless `structured` (wire data) fits the schema."""
        self.adapter.validate_python(structured)

    def read(self, structured: Any) -> Any:
        """The typed value of `structured` (wire data); `pydantic.ValidationError` if it does
        not fit."""
        value = self.adapter.validate_python(structured)
        return value.result if self.wrapped else value


def output_of(annotation: Any, name: str) -> Output | None:
    """The structured output a return annotation implies (see the module's rules), or None.
    `TypeError` if the annotation looks like data but Pydantic cannot describe it (the caller
    decides whether that is an error)."""
    if annotation is Any or _returns_content(annotation):
        return None
    wrapped = False
    target: Any
    origin = get_origin(annotation)
    if origin is typing_extensions.Annotated:
        origin = get_origin(get_args(annotation)[0])
    if isinstance(annotation, type) and origin is None:
        if issubclass(annotation, BaseModel):
            target = annotation
        elif is_typeddict(annotation):
            target = _readable_typeddict(annotation)
        elif is_dataclass(annotation):
            target = annotation
        elif annotation in _PRIMITIVES:
            target, wrapped = _wrapper(annotation, name), True
        else:
            return None  # a bare dict or list, or a class Pydantic has no schema for
    elif origin is dict and get_args(annotation)[:1] == (str,):
        target = annotation
    else:
        target, wrapped = _wrapper(annotation, name), True
    try:
        adapter = TypeAdapter[Any](target)
        schema = _inline_root(adapter.json_schema(by_alias=True))
    except (pydantic.PydanticUserError, pydantic_core.SchemaError, TypeError, ValueError) as exc:
        raise TypeError(f"no JSON schema for the return type {annotation!r}: {exc}") from exc
    if schema.get("type") != "object":
        return None
    if origin is dict:
        schema.setdefault("title", f"{name}DictOutput")
    if wrapped:
        schema[WRAP_MARKER] = True
    return Output(adapter, schema, wrapped)


def _wire_as_data(value: Any) -> Any:
    """MCP's own models (content blocks, say) and the content helpers (`Image`, `Audio`,
    `File`) inside a value, as the data they stand for: what a Pydantic dump of them would give
    has nulls where their members are absent (and a helper's bytes are no JSON)."""
    if isinstance(value, Image | Audio | File):  # a content helper: the block it makes
        value = value.block()
    if isinstance(value, WireModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list | tuple):
        return [_wire_as_data(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {
            k: _wire_as_data(v) for k, v in value.items()
        }  # pyright: ignore[reportUnknownVariableType]
    return value


@functools.lru_cache(maxsize=256)
def reader(annotation: Any) -> Output | None:
    """`output_of` for a client's `result_type`, kept (a TypeAdapter costs a schema build)."""
    return output_of(annotation, "tool")


def _wrapper(annotation: Any, name: str) -> type[BaseModel]:
    model: type[BaseModel] = pydantic.create_model(  # pyright: ignore[reportCallIssue]
        f"{name}Output", result=(annotation, ...)  # pyright: ignore[reportArgumentType]
    )
    return model


def _returns_content(annotation: Any) -> bool:
    """Whether the annotation is (or holds, as list items or union arms) a content block or a
    `CallToolResult`: values for the model to read, not data."""
    if isinstance(annotation, type) and get_origin(annotation) is None:
        return issubclass(annotation, _NOT_DATA)
    if isinstance(annotation, typing_extensions.TypeAliasType):
        return _returns_content(annotation.__value__)
    origin = get_origin(annotation)
    if origin is typing_extensions.Annotated:
        return _returns_content(get_args(annotation)[0])
    if origin in (list, tuple, Union, types.UnionType) or str(origin).endswith("Sequence"):
        return any(_returns_content(arg) for arg in get_args(annotation) if arg is not Ellipsis)
    return False


def _readable_typeddict(cls: type[Any]) -> type[Any]:
    """Pydantic reads `typing.TypedDict` only from Python 3.12 on: below, the same keys as a
    `typing_extensions.TypedDict`."""
    if sys.version_info >= (3, 12) or type(cls).__module__ != "typing":
        return cls
    required: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    items: dict[str, Any] = {
        key: hint if key in required else NotRequired[hint]
        for key, hint in get_type_hints(cls, include_extras=True).items()
    }
    rebuilt: type[Any] = typing_extensions.TypedDict(cls.__name__, items)  # type: ignore[operator]
    rebuilt.__doc__ = cls.__doc__
    return rebuilt


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema whose root is a `$ref` (a recursive model) with that definition at the root,
    as `outputSchema` must be an object schema."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    defs = schema.get("$defs", {})
    return {**defs[ref.removeprefix("#/$defs/")], "$defs": defs}


def summary(exc: pydantic.ValidationError) -> str:
    """A validation error in one line: where and what, for the first few failures."""
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
        for err in exc.errors(include_url=False)[:3]
    ]
    return "; ".join(parts)


__all__ = ["Output", "output_of", "reader", "summary"]


def checked_result(
    name: str, result: pub.CallToolResult, schema: dict[str, Any] | None, result_type: Any
) -> Any:
    """What a client's `call_tool` returns for a tool's result: the result itself, checked
    against the `outputSchema` `tools/list` gave (`schema`), or with `result_type` the typed
    value of its structured content (a failed call raising `ToolError`)."""
    if result.isError:
        if result_type is None:
            return result
        text = " ".join(b.text for b in result.content if isinstance(b, pub.TextContent))
        raise ToolError(text or f"tool {name} failed", structured=result.structuredContent)
    if schema is None and result_type is None:
        return result
    structured = plain(result.structuredContent)
    if schema is not None:
        missing = [k for k in schema.get("required", ()) if k not in (structured or {})]
        if not isinstance(structured, dict) or missing:
            raise InvalidOutput(
                f"tool {name}: the structured content its outputSchema promises is missing "
                f"({', '.join(missing) or 'structuredContent'})"
            )
    if result_type is None:
        return result
    try:
        output = reader(result_type)
    except TypeError:  # unhashable (an Annotated with a dict in it, say)
        output = output_of(result_type, name)
    if output is None:
        raise TypeError(f"result_type {result_type!r} is not structured output")
    try:
        return output.read(structured)
    except pydantic.ValidationError as exc:
        raise InvalidOutput(f"tool {name}: {summary(exc)}") from None
