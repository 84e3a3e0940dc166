"""Typed elicitation: `ctx.elicit(message, response_type=T)` asks with the schema `T` implies and
answers `Accepted(data)` (the user's content, validated as a `T`), `Declined()` or
`Cancelled()`.

`T` is a model (a Pydantic model, a dataclass, a TypedDict) whose fields are what the
specification lets a form ask for (strings, numbers, integers, booleans, enumerations), or one
such value (`str`, `int`, `float`, `bool`, a `Literal` of strings, an `Enum`), asked as an object
with one member `value` and answered unwrapped, or `None` (a confirmation: `Accepted(None)`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, is_dataclass
from typing import Any, Generic, Literal, TypeVar, get_origin, is_typeddict

import pydantic
from pydantic import BaseModel, TypeAdapter

from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError
from mcpio.latest import public as pub

T = TypeVar("T")
_PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean"})


@dataclass(frozen=True)
class Accepted(Generic[T]):
    """The user accepted: `data` is their answer as the requested type."""

    data: T
    action: Literal["accept"] = "accept"


@dataclass(frozen=True)
class Declined:
    """The user declined to answer."""

    action: Literal["decline"] = "decline"


@dataclass(frozen=True)
class Cancelled:
    """The user dismissed the question without choosing (cancelled)."""

    action: Literal["cancel"] = "cancel"


@dataclass(frozen=True)
class Form:
    """What a response type asks for: the `requestedSchema`, and whether the answer is the
    member `value` of the content (a single value) rather than the content itself."""

    schema: dict[str, Any]
    wrapped: bool


def form_of(response_type: Any) -> Form:
    """The form a response type asks for (`TypeError` for one a form cannot ask for)."""
    if response_type is None:
        return Form({"type": "object", "properties": {}}, False)
    if _is_model(response_type):
        schema = _inline(TypeAdapter(response_type).json_schema())
        schema.pop("title", None)
        for name, member in (schema.get("properties") or {}).items():
            _check_member(name, member, response_type)
        return Form(schema, False)
    member = _inline(TypeAdapter(response_type).json_schema())
    _check_member("value", member, response_type)
    return Form({"type": "object", "properties": {"value": member}, "required": ["value"]}, True)


def answer_of(result: pub.ElicitResult, response_type: Any, form: Form) -> Any:
    """The client's answer as `Accepted(data)`, `Declined()` or `Cancelled()`; content that does
    not fit the type is -32602."""
    if result.action == "decline":
        return Declined()
    if result.action == "cancel":
        return Cancelled()
    if response_type is None:
        return Accepted(None)
    content: Any = dict(result.content or {})
    if form.wrapped:
        content = content.get("value")
    try:
        return Accepted(TypeAdapter(response_type).validate_python(content))
    except pydantic.ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "value"
        raise ProtocolError(
            INVALID_PARAMS,
            f"the client's elicitation answer does not fit the requested type: {where}: "
            f"{first['msg']}",
        ) from None


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and (
        issubclass(kind, BaseModel) or is_dataclass(kind) or is_typeddict(kind)
    )


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its local `$defs` references replaced by the definitions (enums of a
    model's members)."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = copy.deepcopy(defs[ref.removeprefix("#/$defs/")])
                target.pop("title", None)
                return resolve({**target, **{k: v for k, v in node.items() if k != "$ref"}})
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


def _check_member(name: str, member: dict[str, Any], response_type: Any) -> None:
    member.pop("title", None)
    kind = member.get("type")
    if kind in _PRIMITIVE_TYPES or (kind is None and "enum" in member):
        return
    origin = get_origin(response_type)
    what = getattr(response_type, "__name__", None) or str(origin or response_type)
    raise TypeError(
        f"elicitation cannot ask for {what}: member {name!r} is not a string, number, integer, "
        "boolean or enumeration"
    )
