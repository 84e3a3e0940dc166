"""The keyword options that pass through one call to another (`Server.connect` ->
`ServerConnection`; `Context.sample`), typed for `Unpack`: a misspelled option is an error
pyright reports in the caller's code, not a `TypeError` at run time. Each mirrors what it
reaches; tests/test_consumer_typing.py keeps the two the same. The HTTP host's are in
`mcpio.http._options`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from mcpio._core.principal import Principal


class ConnectionOptions(TypedDict, total=False):
    """`ServerConnection`'s keyword options (see there)."""

    principal: Principal | None
    modern: bool
    listen_until: float
    listen_queue: int


class SamplingOptions(TypedDict, total=False):
    """`Context.sample`'s options beyond messages and max tokens: the fields of
    `sampling/createMessage`'s params, by their wire names (`tools` and `toolChoice` from
    2025-11-25 on)."""

    systemPrompt: str
    temperature: float
    stopSequences: Sequence[str]
    modelPreferences: Any  # a `ModelPreferences` model or its JSON object
    includeContext: Literal["none", "thisServer", "allServers"]
    metadata: dict[str, Any]
    tools: Sequence[Any]
    toolChoice: Any
