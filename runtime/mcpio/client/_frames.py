"""The bytes of the client's request frames: the general builder (the codec's, from the public
params) and its fast path, a plain `tools/call` (a name, JSON arguments, maybe a progress token)
built without a model. tests/wire/test_fastpaths.py holds the two equal."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

import pydantic_core

from mcp_wire_runtime.codec import Codec
from mcpio._core.jsonrpc import plain
from mcpio._core.protocol_rules import TASKS_EXTENSION
from mcpio.latest import REVISION as PUBLIC_REVISION

LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
#: The client capabilities the 2026-07-28 requests sent from this task declare in place of the
#: client's own (a proxy: those of the client whose request it forwards); None: the client's.
DECLARING: ContextVar[dict[str, Any] | None] = ContextVar("mcpio_declaring", default=None)


class RequestFrames:
    """Builds a client's requests. `envelope(codec)`: the keyword arguments of a modern request's
    `_meta` envelope (nothing, legacy); `log_level`: the level asked for on modern requests."""

    def __init__(self, envelope: Callable[[Codec], dict[str, Any]]) -> None:
        self.envelope = envelope
        self.log_level: str | None = None
        self._metas: dict[tuple[str, str | None], dict[str, Any]] = {}  # see `meta_of`

    def build(
        self,
        codec: Codec,
        method: str,
        data: Any,
        id: int,
        progress: bool,
        task: Mapping[str, Any] | None,
    ) -> bytes:
        """A request's bytes: a plain `tools/call` by the fast builder, else by `general`."""
        if method == "tools/call" and task is None and type(data) is dict:
            frame = self.fast(codec, id, data, progress)
            if frame is not None:
                return frame
        return self.general(codec, method, data, id, progress, task)

    def general(
        self,
        codec: Codec,
        method: str,
        data: Any,
        id: int,
        progress: bool,
        task: Mapping[str, Any] | None,
    ) -> bytes:
        """A request's bytes, built and checked by the codec (from the public params)."""
        meta = dict(data.get("_meta") or {})
        if progress:
            meta["progressToken"] = id
        if self.log_level is not None and codec.era == "modern":
            meta[LOG_LEVEL_KEY] = self.log_level
        payload = {**data, "_meta": meta} if meta else data
        envelope = self.envelope(codec)
        if codec.revision != PUBLIC_REVISION and method in codec.public:
            payload = plain(codec.from_public(method, payload, "params", envelope=envelope))
        if task is not None and codec.era != "modern":
            payload = {**payload, "task": dict(task)}
        elif task is not None:  # 2026-07-28: this request takes a task (the extension declared)
            envelope = {**envelope, "client_capabilities": with_tasks(envelope)}
        built = codec.request(method, payload or None, id=id, **envelope)
        return codec.encode(built)

    def fast(self, codec: Codec, id: int, data: Mapping[str, Any], progress: bool) -> bytes | None:
        """The bytes of a plain `tools/call` request, built without a model: its `_meta`
        envelope was built and checked once, and such params are valid in every revision. None
        for anything else (the general path)."""
        name = data.get("name")
        arguments = data.get("arguments")
        if (
            DECLARING.get() is not None  # (the envelope of another client's capabilities)
            or type(name) is not str
            or len(data) > (2 if "arguments" in data else 1)
            or not (arguments is None or (type(arguments) is dict and json_plain(arguments)))
            or not (codec.era == "legacy" or codec.revision == PUBLIC_REVISION)
        ):
            return None
        meta = self.meta_of(codec)
        if progress:
            meta = {**meta, "progressToken": id}
        params = {**data, "_meta": meta} if meta else data
        frame = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
        return pydantic_core.to_json(frame)

    def meta_of(self, codec: Codec) -> dict[str, Any]:
        """The `_meta` a request carries in `codec`'s revision (the modern envelope, with the
        log level asked for), as the codec writes it: built once per revision and level."""
        key = (codec.revision, self.log_level)
        meta = self._metas.get(key)
        if meta is None:
            meta = {}
            if codec.era == "modern":
                params: dict[str, Any] = {"name": ""}
                if self.log_level is not None:
                    params["_meta"] = {LOG_LEVEL_KEY: self.log_level}
                frame = codec.request("tools/call", params, id=0, **self.envelope(codec))
                meta = plain(frame)["params"]["_meta"]
            self._metas[key] = meta
        return meta


def with_tasks(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """A modern envelope's client capabilities, with the Tasks extension declared."""
    caps = dict(envelope.get("client_capabilities") or {})
    caps["extensions"] = {**(caps.get("extensions") or {}), TASKS_EXTENSION: {}}
    return caps


def json_plain(value: Any, depth: int = 0) -> bool:
    """Whether `value` is JSON data as it is: built-in types only, finite numbers, string keys
    (what a request may carry unvalidated; anything else takes the validating path)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth > 32:
        return False
    if kind is dict:
        for k, v in value.items():  # (a loop, not all() of a generator: every call's path)
            if type(k) is not str:
                return False
            if type(v) is not str and not json_plain(v, depth + 1):
                return False
        return True
    if kind is list:
        for v in value:
            if type(v) is not str and not json_plain(v, depth + 1):
                return False
        return True
    return False
