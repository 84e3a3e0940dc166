"""What every generated model shares: the base class and the one JSON value type.

Hand-written shared runtime code: every revision's generated `models.py` imports it.

Validation is strict, as JSON Schema is: "1" is not an integer, 1.0 is not a request id.

Unknown fields: every model keeps members it does not know (``extra="allow"``), typed as JSON
values, and writes them back out unchanged. A message from a newer peer, or an open object such
as ``_meta`` or a tool's ``inputSchema``, therefore passes through a decode/encode cycle losslessly.
A codec's strict decoding reports such members instead of keeping them silently.

Optional members are absent, never null, unless the schema allows null there: `model_dump()` and
`model_dump_json()` leave out members that were never set (`exclude_unset=True` by default). An absent member
reads as None in Python (`X | None = None`), but JSON null (or Python None in data being
validated) is rejected where the schema does not allow it, and `WireModel(member=None)` means
"leave it out": a model never writes null for such a member. The schema's own nullable members
(a type that includes null, any JSON value) keep null. Generation marks an optional member whose
schema allows null with `json_schema_extra={"x-nullable": True}`; members typed as any JSON value
allow it by their type.
"""

import types
import typing
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, JsonValue
from pydantic.fields import FieldInfo
from pydantic_core import core_schema

from mcp_wire_runtime._deprecation import DEPRECATED_MARK, warn_once
from mcp_wire_runtime._numbers import finite_json

__all__ = ["JSONValue", "WireModel"]

NULLABLE_MARK = "x-nullable"  # generation's mark of an optional member whose schema allows null


class _FiniteNumbers:
    """Reading JSON text, a JSON value is taken as it comes, then its numbers are checked
    (`mcp_wire_runtime._numbers`): pydantic's own `JsonValue` reads 1e400 as infinity there. Data from
    Python goes through `JsonValue`'s typed union, which refuses infinity by itself. Writing, a
    JSON value is serialized by pydantic-core's type inference, in Rust: `JsonValue`'s union
    calls a Python discriminator for every value (2.3x slower on 200 rows of JSON)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler, /
    ) -> core_schema.CoreSchema:
        return core_schema.json_or_python_schema(
            json_schema=core_schema.no_info_after_validator_function(
                finite_json, core_schema.any_schema()
            ),
            python_schema=handler(source),
            serialization=core_schema.simple_ser_schema("any"),
        )


# Any JSON value: pydantic's `JsonValue`, its numbers finite.
JSONValue = Annotated[JsonValue, _FiniteNumbers()]


def _admits_none(annotation: Any) -> bool:
    """Whether a type accepts None by itself (None, a union with None, any JSON value)."""
    if annotation is None or annotation is type(None) or annotation is Any:
        return True
    if annotation is JsonValue:
        return True
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return any(_admits_none(a) for a in get_args(annotation))
    value = getattr(annotation, "__value__", None)  # a type alias
    if value is not None:
        return _admits_none(value)
    if hasattr(annotation, "__metadata__"):  # Annotated[X, ...]
        return _admits_none(get_args(annotation)[0])
    return False


def _not_null(field: FieldInfo, annotation: Any) -> bool:
    """An optional member read as None when absent, whose schema does not allow null.

    `annotation` is the member's resolved type: a model whose schema is built as part of another
    one can still hold unresolved annotations in its `model_fields`."""
    if field.is_required() or field.default is not None:
        return False
    extra = field.json_schema_extra
    if isinstance(extra, dict) and extra.get(NULLABLE_MARK):
        return False
    if hasattr(annotation, "__metadata__"):  # Annotated[X | None, Field(...)]
        annotation = get_args(annotation)[0]
    members = get_args(annotation)
    if get_origin(annotation) not in (Union, types.UnionType) or type(None) not in members:
        return False
    return not any(_admits_none(a) for a in members if a is not type(None))


def _not_null_fields(cls: type[BaseModel]) -> dict[str, FieldInfo]:
    hints = typing.get_type_hints(cls, include_extras=True)
    return {
        name: field
        for name, field in cls.model_fields.items()
        if _not_null(field, hints.get(name, field.annotation))
    }


def _deprecated_fields(cls: type[BaseModel]) -> dict[str, str]:
    """{name or wire name: member name} of the members the schema deprecates."""
    out: dict[str, str] = {}
    for name, field in cls.model_fields.items():
        extra = field.json_schema_extra
        if isinstance(extra, dict) and extra.get(DEPRECATED_MARK):
            out[name] = name
            if field.alias:
                out[field.alias] = name
    return out


_Extras = dict[str, JSONValue]  # extra members: typed JSON values


class WireModel(BaseModel):
    """Base of all generated models: wire names (aliases) in and out, unknown members kept.

    Data is read by wire name only: a member named `meta` beside `_meta` is an unknown member,
    as the schema sees it. A constructor call takes the Python names (`meta=`), nested dicts
    included.
    """

    model_config = ConfigDict(
        extra="allow",
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        defer_build=True,
        strict=True,
        # A number too large for a float (1e400) reads as infinity, which JSON cannot write back:
        # refused where a member is typed as a number, never rewritten as null.
        allow_inf_nan=False,
    )
    # Extra members are typed JSON values. For type checkers the declaration carries
    # `init=False`, which keeps it out of the constructor's signature (otherwise every caller is
    # asked for it); at run time it stays a bare annotation: a `Field` there changes how pydantic
    # serializes unions (False inside a union with int dumped as 0).
    if TYPE_CHECKING:
        __pydantic_extra__: _Extras = (  # pyright: ignore[reportIncompatibleVariableOverride]
            Field(init=False)
        )
    else:
        __pydantic_extra__: dict[str, JSONValue]

        # Per class (`_init_plan`): the names and wire names of the members that are absent or
        # set, never null; whether a constructor call may leave `resultType` out; and the
        # members the schema deprecates, by name and wire name.
        # Not annotated: pydantic evaluates the annotations of every base for each new model.
        __wire_init__ = None

        def __init__(self, /, **data: Any) -> None:
            cls = type(self)
            plan = cls.__dict__.get("__wire_init__")
            if plan is None:
                plan = cls._init_plan()
            not_null, tagged, deprecated = plan
            if not_null:  # `member=None` leaves it out (it reads as None, and is not written)
                data = {k: v for k, v in data.items() if v is not None or k not in not_null}
            if tagged and "resultType" not in data:
                # A result built by hand is complete unless it says otherwise: what the
                # protocol reads an absent `resultType` as (decoding still requires it).
                data["resultType"] = "complete"
            if deprecated:  # the user sets a deprecated member (decoding never calls this)
                for key in sorted(deprecated.keys() & data.keys()):
                    where = f"{cls.__module__}.{cls.__qualname__}"
                    warn_once(where, deprecated[key], "member", stacklevel=2)
            cls.__pydantic_validator__.validate_python(data, self_instance=self, by_name=True)

        # Not a custom __init__ to pydantic: validation from data (model_validate) never calls it.
        __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

        # Members never set are left out by default, so that what a model writes is valid for
        # the same model and for the schema (pydantic's default writes them as null). The
        # codecs serialize with exclude_unset themselves; these only change the defaults.
        def model_dump(self, /, **options: Any) -> dict[str, Any]:
            """Dump the model as Python data, leaving out members never set by default.

            `options` are pydantic's `BaseModel.model_dump` options; `exclude_unset` defaults to
            True here.
            """
            options.setdefault("exclude_unset", True)
            return super().model_dump(**options)

        def model_dump_json(self, /, **options: Any) -> str:
            """Dump the model as JSON text, leaving out members never set by default.

            `options` are pydantic's `BaseModel.model_dump_json` options; `exclude_unset`
            defaults to True here.
            """
            options.setdefault("exclude_unset", True)
            return super().model_dump_json(**options)

    @classmethod
    def _init_plan(cls) -> tuple[frozenset[str], bool, dict[str, str]]:
        names: set[str] = set()
        for name, field in _not_null_fields(cls).items():
            names.add(name)
            if field.alias:
                names.add(field.alias)
        result_type = cls.model_fields.get("resultType")  # a result's: required, a string
        tagged = (
            result_type is not None and result_type.is_required() and result_type.annotation is str
        )
        plan = (frozenset(names), tagged, _deprecated_fields(cls))
        cls.__wire_init__ = plan
        return plan

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> core_schema.CoreSchema:
        schema = handler(source)
        if source is not cls or schema.get("type") != "model":
            return schema
        fields_schema: Any = schema.get("schema")
        if not isinstance(fields_schema, dict) or fields_schema.get("type") != "model-fields":
            return schema
        for name in _not_null_fields(cls):
            entry = fields_schema["fields"].get(name)
            if entry is None:
                continue
            default = entry["schema"]
            if default.get("type") != "default" or default["schema"].get("type") != "nullable":
                continue
            inner = default["schema"]["schema"]
            # Validation: the member's own type, so null is refused (in Rust, no Python call).
            # A union around it keeps serializing an unset member (None) without warnings.
            default["schema"] = (
                inner if inner.get("type") != "tagged-union" else core_schema.union_schema([inner])
            )
        return schema
