"""What every generated model shares: the base class and the one JSON value type.

Hand-written shared runtime code: every revision's generated `models.py` imports it.

Validation is strict, as JSON Schema is: "1" is not an integer, 1.0 is not a request id.

Unknown fields: every model keeps members it does not know (``extra="allow"``), typed as JSON
values, and writes them back out unchanged. A message from a newer peer, or an open object such
as ``_meta`` or a tool's ``inputSchema``, therefore passes through a decode/encode cycle losslessly.
A codec's strict decoding reports such members instead of keeping them silently.
"""

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field
from pydantic import JsonValue as JSONValue

__all__ = ["JSONValue", "WireModel"]


class WireModel(BaseModel):
    """Base of all generated models: wire names (aliases) in and out, unknown members kept."""

    model_config = ConfigDict(
        extra="allow",
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        defer_build=True,
        strict=True,
    )
    # Extra members are typed JSON values. For type checkers the declaration carries
    # `init=False`, which keeps it out of the constructor's signature (otherwise every caller is
    # asked for it); at run time it stays a bare annotation: a `Field` there changes how pydantic
    # serializes unions (False inside a union with int dumped as 0).
    if TYPE_CHECKING:
        __pydantic_extra__: dict[str, JSONValue] = Field(init=False)  # pyright: ignore[reportIncompatibleVariableOverride]  # fmt: skip
    else:
        __pydantic_extra__: dict[str, JSONValue]
