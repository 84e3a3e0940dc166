"""The wire codec machinery every revision's codec shares: hand-written shared runtime code.

Each revision's generated `mcp_wire.<revision>.codec` subclasses `Codec` and supplies only its
tables (frames, methods, public mappings) and constants, which come from the IR; everything else
lives here (the modern era's rules: `mcp_wire_runtime.modern.ModernCodec`, a subclass).

A codec turns bytes into one typed, validated message of its revision (parse once, pick the
frame type structurally and by `method`, validate once) and back. Every failure to read is a
`ProtocolError` carrying the JSON-RPC code to answer with; nothing else escapes `decode`. The
builders (`request`, `notification`, `response`, `error`) raise `MessageBuildError` (a
`ValueError`) for arguments that make no valid message, and `ProtocolError` -32601 / -32600 for a
method this revision does not have as that kind of message (what a peer would answer).

Each generated codec declares, for type checkers only, what its methods return for its revision:
`decode` its `MessageFrame` union, `decode_response(raw, "tools/call")` that method's response,
the builders their frames. At run time the methods are these.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Self, TypeVar, cast

import pydantic_core
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator

from mcp_wire_runtime import _compose as compose
from mcp_wire_runtime import _failures as failures
from mcp_wire_runtime import _numbers as numbers
from mcp_wire_runtime import _peek as peeking
from mcp_wire_runtime import _schemas as schemas
from mcp_wire_runtime._peek import Peek
from mcp_wire_runtime._peek import envelope as envelope_of
from mcp_wire_runtime._peek import failure as peek_failure
from mcp_wire_runtime._public_reads import PublicReads
from mcp_wire_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    MessageBuildError,
    ProtocolError,
)

MAX_MESSAGE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One method of a revision, as its dispatch table lists it.

    Args:
        name: The method's name (`tools/call`).
        kind: "request", "notification" or "input request".
        direction: Who sends it: "client->server", "server->client", "both" or
            "server->client (embedded input request)".
        message: The message model.
        params: The params model (None: the method has no params).
        params_required: Whether its message requires `params`.
        results: The possible result models; () for notifications.
        result: The final (complete) result model.
        input_required: Whether it may answer with the interim "input required" result.
        cacheable: Whether its results carry `ttlMs` / `cacheScope`.
        task_result: What a task-augmented request may answer with instead (None: no task).
        list_field: A paginated list result's field of items (None: not a list).
        list_item: The model of those items (None: not a list).
    """

    name: str
    kind: str  # "request" | "notification" | "input request"
    direction: str
    message: Any  # the message model
    params: Any  # params model (None: the method has no params)
    params_required: bool
    results: tuple[Any, ...]  # possible result models; () for notifications
    result: Any  # the final (complete) result model
    input_required: bool  # may answer with the interim "input required" result
    cacheable: bool  # results carry ttlMs / cacheScope
    task_result: Any = None  # task-augmented requests may answer with this
    list_field: str | None = None  # paginated list results: the items' field
    list_item: Any = None


@dataclass(frozen=True, slots=True)
class InvalidItem:
    """An item that lenient list decoding left out, and why.

    Args:
        index: Its position in the list.
        name: Its `name`, when it has a string one.
        errors: Why it is invalid, as `ProtocolError.data["errors"]` lists errors.
    """

    index: int
    name: str | None
    errors: list[dict[str, Any]]


# Covariant: both dataclasses are frozen (a lenient page of one method is one of any method).
ResponseT = TypeVar("ResponseT", covariant=True)
CapabilitiesT = TypeVar("CapabilitiesT", covariant=True)
InfoT = TypeVar("InfoT", covariant=True)


@dataclass(frozen=True, slots=True)
class LenientResponse(Generic[ResponseT]):
    """A list result decoded leniently: the valid items, and each invalid one reported."""

    response: ResponseT
    invalid: tuple[InvalidItem, ...]


@dataclass(frozen=True, slots=True)
class Envelope(Generic[CapabilitiesT, InfoT]):
    """The per-request `_meta` envelope of a modern-era request, by plain names.

    The wire form is unchanged (`io.modelcontextprotocol/protocolVersion`, ...); this is a view
    of it: `codec.envelope(request)` or `mcp_wire.envelope(request)`.

    Args:
        protocol_version: The protocol version the request names.
        client_capabilities: The client's capabilities.
        client_info: The client's implementation info, if sent.
        log_level: The log level asked for, if any.
    """

    protocol_version: str
    client_capabilities: CapabilitiesT
    client_info: InfoT | None
    log_level: str | None


@dataclass(frozen=True, slots=True)
class PublicMapping:
    """How one method's params and result map to the public (latest revision's) models.

    Args:
        own_params: This revision's params model.
        public_params: The public params model.
        own_result: This revision's result model.
        public_result: The public result model.
        result_backfill: The public-required result fields this revision lacks, with the values
            they get.
    """

    own_params: Any
    public_params: Any
    own_result: Any
    public_result: Any
    result_backfill: Mapping[str, Any]  # public-required fields this revision lacks


def _error_list(exc: ValidationError) -> list[dict[str, Any]]:
    errors: Any = exc.errors(include_url=False, include_context=False, include_input=False)
    return failures.listed(errors, 0)


_LEAVES = frozenset({str, int, float, bool, type(None)})


def _clear_extras(value: Any, open_models: frozenset[str]) -> None:
    """Drop, in place, every member a model of this revision does not declare (an open model's
    extra members are part of its contract: they stay)."""
    kind = type(value)
    if kind is list:  # exact types first: no isinstance (an ABC check for models)
        items: Iterable[Any] = cast("list[Any]", value)
    elif kind is dict:
        items = cast("dict[Any, Any]", value).values()
    elif isinstance(value, BaseModel):
        if value.__pydantic_extra__ and kind.__name__ not in open_models:
            value.__pydantic_extra__.clear()
        fields = value.__dict__
        items = [fields.get(name) for name in value.__pydantic_fields_set__]
    elif isinstance(value, list | tuple):
        items = cast("list[Any]", value)
    elif isinstance(value, dict):
        items = cast("dict[Any, Any]", value).values()
    else:
        return
    for item in items:
        if type(item) not in _LEAVES:  # most members: no call, no isinstance (an ABC check)
            _clear_extras(item, open_models)


@functools.cache
def _wire_names(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> wire name. A model validated only inside another one (deferred build) still
    has unresolved fields, without their aliases, until it is rebuilt."""
    if not model.__pydantic_complete__:
        model.model_rebuild()
    return {name: f.alias or name for name, f in model.model_fields.items()}


def _meta_of(message: Any) -> Any:
    """The `_meta` object of a request, of its params, or `message` itself."""
    for name in ("params", "meta"):
        if isinstance(message, BaseModel) and name in type(message).model_fields:
            message = getattr(message, name)
    return message


@functools.cache
def _adapter(target: Any) -> TypeAdapter[Any]:
    return TypeAdapter(target)


@functools.cache
def validator(target: Any) -> Callable[[Any], Any]:
    """`validate_python` of `target`: a model's own validator (what its TypeAdapter runs, without
    the adapter's Python layer), else the adapter's."""
    if isinstance(target, type) and issubclass(target, BaseModel):
        if not target.__pydantic_complete__:
            target.model_rebuild()
        return target.__pydantic_validator__.validate_python
    return _adapter(target).validate_python


@functools.cache
def _needs_envelope(target: Any) -> bool:
    """Whether public params of this type carry a required `_meta` (a modern request's)."""
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        return False
    meta = target.model_fields.get("meta")
    return meta is not None and meta.is_required()


def plain(value: Any) -> Any:
    """A model as the JSON data it stands for (wire names, unset members left out)."""
    if isinstance(value, BaseModel):  # model_dump's own call, without its Python layers
        return type(value).__pydantic_serializer__.to_python(
            value, mode="json", by_alias=True, exclude_unset=True
        )
    return value


class Codec:
    """Encode/decode the JSON-RPC frames of one MCP revision. Subclassed per revision."""

    revision: ClassVar[str]
    era: ClassVar[str]
    batching: ClassVar[bool]
    methods: ClassVar[Mapping[str, MethodSpec]]
    requests: ClassVar[Mapping[str, type[BaseModel]]]  # method -> request frame
    notifications: ClassVar[Mapping[str, type[BaseModel]]]
    responses: ClassVar[Mapping[str, type[BaseModel]]]  # method -> result response frame
    result_response: ClassVar[type[BaseModel]]  # a result response whose method is unknown
    error_response: ClassVar[type[BaseModel]]
    error_frames: ClassVar[Mapping[int, type[BaseModel]]]  # typed error responses by code
    open_models: ClassVar[frozenset[str]]  # models whose schema declares extra members
    own_modules: ClassVar[frozenset[str]]
    public: ClassVar[Mapping[str, PublicMapping]]
    # Modern era: Envelope field -> its `_meta` key (none: the revision has no envelope);
    # the resultType of a final result and of an "input required" one (none: results untagged).
    envelope_keys: ClassVar[Mapping[str, str | None]] = {}
    # Modern era: the model of that `_meta` object (what an extension's request whose params do
    # not declare `_meta` carries as an extra member is read as).
    envelope_model: ClassVar[type[BaseModel] | None] = None
    result_tags: ClassVar[tuple[str, ...]] = ()
    # Methods that are never part of a JSON-RPC batch (the legacy handshake).
    unbatchable: ClassVar[frozenset[str]] = frozenset()
    # A revision without a per-request envelope, where the public one has it: that envelope's
    # keys ("protocol_version", "client_capabilities"), and those this revision's `_meta` lacks.
    public_envelope_keys: ClassVar[Mapping[str, str]] = {}
    public_only_meta_keys: ClassVar[frozenset[str]] = frozenset()
    # Extensions generated for this revision: id -> the module of the codec with it; and the
    # ones this codec has (an extension's codec), with the resultType values they add -> the
    # methods that may answer them.
    extensions: ClassVar[Mapping[str, str]] = {}
    extension_ids: ClassVar[frozenset[str]] = frozenset()
    extension_result_tags: ClassVar[Mapping[str, frozenset[str]]] = {}

    def __init__(
        self, max_bytes: int = MAX_MESSAGE_BYTES, *, result_types: Iterable[str] = ()
    ) -> None:
        self.max_bytes = max_bytes
        # resultType values of negotiated extensions, recognised beside the revision's own.
        self.extra_result_types: frozenset[str] = frozenset(result_types)
        self._item_adapters: dict[str, TypeAdapter[Any]] = {}
        self._built_readers: schemas.Readers | None = None
        self._read_message: Callable[[bytes], Any] = self._first_read
        self._read_responses: dict[str, SchemaValidator] = {}
        self._peek_json: Callable[[bytes], dict[str, Any]] = self._first_peek
        # method -> (this revision's result model, the public one's validator, backfill): the
        # result path of `to_public`, per method, once it has gone the general way
        self._public_results: dict[str, tuple[type, Callable[[Any], Any], Mapping[str, Any]]] = {}
        self._public_reads = PublicReads(self.public, self._envelope_of)

    def __repr__(self) -> str:
        return f"<mcp_wire codec {self.revision} ({self.era} era)>"

    def with_result_types(self, *values: str) -> Self:
        """Return a codec of this revision that also recognises these `resultType` values.

        They are recognised on every result, untyped; every other value the revision does not
        define is refused.

        Deprecated: `with_extensions(id)` reads a negotiated extension's results typed, and
        only on the methods that may answer them.
        """
        warnings.warn(
            "Codec.with_result_types is deprecated: use with_extensions(id), which reads a"
            " negotiated extension's results typed",
            DeprecationWarning,
            stacklevel=2,
        )
        if not all(isinstance(v, str) for v in values):
            raise TypeError("resultType values are strings")
        return type(self)(self.max_bytes, result_types=self.extra_result_types | set(values))

    def with_extensions(self, *extensions: str) -> Codec:
        """Return the codec of this revision with these negotiated extensions (by id).

        An id is like "io.modelcontextprotocol/tasks". The codec also decodes, encodes, builds
        and types the extensions' messages and results. Any set of the revision's extensions
        composes, in any order (the same set gives the same codec); `LookupError` for an
        extension this revision has not been generated with, `ValueError` for two that define
        one method or member differently.
        """
        if not all(isinstance(e, str) for e in extensions):
            raise TypeError("extension ids are strings")
        wanted = self.extension_ids | set(extensions)
        unknown = sorted(wanted - self.extensions.keys())
        if unknown:
            known = ", ".join(sorted(self.extensions)) or "none"
            raise LookupError(
                f"unknown extension {unknown[0]!r} for revision {self.revision} (known: {known})"
            )
        core = compose.core_of(type(self))
        return _extended(core, frozenset(wanted), self.max_bytes, self.extra_result_types)

    # ------------------------------------------------------------------ decoding

    def peek(self, data: bytes | str) -> Peek:
        """Read the envelope of a frame without validating its params or result.

        The envelope is its kind, id, method, routing name and protocol version: for routing
        and transport header checks.
        """
        if type(data) is not bytes or len(data) > self.max_bytes:
            data = self._as_bytes(data)
        try:
            frame = self._peek_json(data)
        except ValidationError as exc:
            raise peek_failure(exc) from None
        return envelope_of(frame)

    def _first_peek(self, data: bytes) -> dict[str, Any]:
        """`_peek_json` until its validator is built (on first use)."""
        key = self.envelope_keys.get("protocol_version")
        self._peek_json = peeking.peek_validator(key).validate_json
        return self._peek_json(data)

    def decode(self, data: bytes | str, *, strict: bool = False) -> Any:
        """The typed message in `data`: a request, notification, result or error response.

        With `strict`, members this revision does not define are an error instead of being kept.
        """
        if type(data) is not bytes or len(data) > self.max_bytes:
            data = self._as_bytes(data)
        try:
            if len(data) < numbers.LARGE:
                message = self._read_message(data)
            else:
                message = numbers.read_large(self._read_message, data)
        except ValidationError as exc:
            raise self._read_failure(exc, data, None) from None
        if type(message) is list:
            return self._checked_batch(message, data, strict)
        # What validation cannot say (`_check_read`, inlined: this is every frame's path).
        if message.__pydantic_extra__:
            self._check_members(message)
        self._check_message(message)
        if strict:
            self._check_strict(message, message.__dict__.get("method"))
        return message

    def _first_read(self, data: bytes) -> Any:
        """`_read_message` until the readers are built (on first use: building them costs)."""
        self._read_message = self._readers().message
        return self._read_message(data)

    def decode_response(
        self, data: bytes | str, method: str, *, lenient: bool = False, strict: bool = False
    ) -> Any:
        """A response to a `method` request, its result typed by the method.

        With `lenient` (list methods), invalid items are left out and reported in a
        `LenientResponse` instead of failing the whole page.

        Args:
            data: The frame.
            method: The method of the request it answers.
            lenient: Leave invalid items of a list result out (reported) instead of failing.
            strict: Members this revision does not define are an error instead of being kept.
        """
        if type(data) is not bytes or len(data) > self.max_bytes:
            data = self._as_bytes(data)
        reader = self._read_responses.get(method) if type(method) is str else None
        if reader is None:
            reader = self._response_reader(method, data)
        invalid: tuple[InvalidItem, ...] = ()
        try:
            if lenient and self.methods[method].list_field:
                obj = self._parse(data)
                invalid = self._drop_invalid_items(obj, self.methods[method])
                message = reader.validate_python(obj)
            elif len(data) < numbers.LARGE:
                message = reader.validate_json(data)
            else:
                message = numbers.read_large(reader.validate_json, data)
        except ValidationError as exc:
            raise self._read_failure(exc, data, method) from None
        self._check_read(message)
        if strict:
            self._check_strict(message, None)
        if lenient and "result" in message.__dict__:
            return LenientResponse(message, invalid)
        return message  # an error response is not a page: it comes back as the error

    def _response_reader(self, method: Any, data: bytes) -> SchemaValidator:
        if not isinstance(method, str):
            raise TypeError(f"method must be a str naming the request, not {type(method).__name__}")
        if method not in self.responses:
            self._parse(data)  # what is not JSON is a parse error first
            raise self._unknown_method(method, "request")
        reader = self._read_responses[method] = self._readers().response(method)
        return reader

    def _readers(self) -> schemas.Readers:
        readers = self._built_readers
        if readers is None:
            readers = self._built_readers = schemas.Readers(self, self._result_changes)
        return readers

    def _check_members(self, message: Any) -> None:
        """A message's unknown members must not make it another kind of message."""
        extra = message.__pydantic_extra__
        fields = message.__dict__
        if "id" in extra and "method" in fields:
            raise self._unknown_method(fields["method"], "request")
        if ("error" in extra and "result" in fields) or ("result" in extra and "error" in fields):
            raise ProtocolError(INVALID_REQUEST, "a response has a result or an error, not both")

    def _check_read(self, message: Any) -> None:
        """What a message's validation cannot say: members of another kind of message."""
        if message.__pydantic_extra__:
            self._check_members(message)
        self._check_message(message)

    def _checked_batch(self, items: list[Any], data: bytes, strict: bool) -> list[Any]:
        if not items:
            raise ProtocolError(INVALID_REQUEST, "an empty batch is not a valid message")
        calls = None  # a batch holds requests and notifications, or responses: never a mix
        for index, item in enumerate(items):
            try:
                method = item.__dict__.get("method")
                is_call = method is not None
                if calls is not None and is_call is not calls:
                    raise ProtocolError(
                        INVALID_REQUEST,
                        "a batch holds requests and notifications, or responses, not both",
                    )
                calls = is_call
                if is_call and method in self.unbatchable:
                    raise ProtocolError(
                        INVALID_REQUEST, f"{method} must not be part of a batch", {"method": method}
                    )
                self._check_read(item)
                if strict:
                    self._check_strict(item, method)
            except ProtocolError as exc:
                raise ProtocolError(
                    exc.code,
                    f"batch item {index}: {exc.message}",
                    {"index": index, "error": exc.data},
                ) from None
        return items

    def _read_failure(self, exc: ValidationError, data: bytes, method: str | None) -> ProtocolError:
        return failures.protocol_error(self, exc, data, method)

    def _as_bytes(self, data: Any) -> bytes:
        """`data` as UTF-8 bytes within the size limit (which counts bytes, whatever the input
        type)."""
        if type(data) is bytes:
            pass
        elif isinstance(data, str):
            if len(data) > self.max_bytes:  # a character is at least one byte
                raise ProtocolError(
                    INVALID_REQUEST,
                    f"message of {len(data)} characters exceeds the {self.max_bytes}-byte limit",
                )
            try:
                data = data.encode()
            except UnicodeEncodeError:
                raise ProtocolError(
                    PARSE_ERROR,
                    "not valid JSON: the text holds a lone surrogate, which UTF-8 cannot encode",
                ) from None
        elif isinstance(data, bytes | bytearray | memoryview):
            data = bytes(data)
        else:
            raise ProtocolError(
                PARSE_ERROR, f"cannot decode a {type(data).__name__}; expected bytes or str"
            )
        if len(data) > self.max_bytes:
            raise ProtocolError(
                INVALID_REQUEST,
                f"message of {len(data)} bytes exceeds the {self.max_bytes}-byte limit",
            )
        return data

    def _parse(self, data: bytes) -> Any:
        """The JSON value in `data` (bytes from `_as_bytes`: type and size already checked)."""
        try:
            return pydantic_core.from_json(data, allow_inf_nan=False)
        except ValueError as exc:
            raise failures.unreadable(str(exc)) from None

    def _raise_unknown(self, method: str, kind: str) -> Any:
        raise self._unknown_method(method, kind)

    def _unknown_method(self, method: str, kind: str) -> ProtocolError:
        spec = self.methods.get(method)
        if spec is not None and spec.kind != kind and spec.kind in ("request", "notification"):
            return ProtocolError(
                INVALID_REQUEST,
                f"{method} is a {spec.kind} in revision {self.revision}, not a {kind}",
                {"method": method},
            )
        return ProtocolError(
            METHOD_NOT_FOUND,
            f"method {method!r} is not part of revision {self.revision}",
            {"method": method},
        )

    def _check_strict(self, message: BaseModel, method: str | None) -> None:
        unknown: list[str] = []
        self._collect_extras(message, "", unknown)
        if self.envelope_model is not None and "params._meta" in unknown:
            # An extension's request whose params do not declare `_meta` still carries the
            # per-request envelope every request of this revision carries.
            unknown.remove("params._meta")
        if unknown:
            in_params = method is not None and all(u.startswith("params.") for u in unknown)
            code = INVALID_PARAMS if in_params else INVALID_REQUEST
            shown = ", ".join(unknown[: failures.MAX_REPORTED_ERRORS])
            raise ProtocolError(
                code,
                f"members not defined in revision {self.revision}: {shown}",
                {"unknown": unknown},
            )

    def _collect_extras(self, value: Any, path: str, out: list[str]) -> None:
        if isinstance(value, BaseModel):
            if value.__pydantic_extra__ and type(value).__name__ not in self.open_models:
                out.extend(f"{path}{key}" for key in value.__pydantic_extra__)
            names = _wire_names(type(value))
            for name in value.model_fields_set:
                self._collect_extras(
                    getattr(value, name, None), f"{path}{names.get(name, name)}.", out
                )
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                self._collect_extras(item, f"{path}{index}.", out)
        elif isinstance(value, dict):
            for key, item in value.items():
                self._collect_extras(item, f"{path}{key}.", out)

    def _drop_invalid_items(self, obj: dict[str, Any], spec: MethodSpec) -> tuple[InvalidItem, ...]:
        result = obj.get("result")
        field = spec.list_field or ""
        if type(result) is not dict or type(result.get(field)) is not list:
            return ()
        adapter = self._item_adapters.get(spec.name)
        if adapter is None:
            adapter = self._item_adapters[spec.name] = TypeAdapter(spec.list_item)
        keep, invalid = [], []
        for index, item in enumerate(result[field]):
            try:
                adapter.validate_python(item)
            except ValidationError as exc:
                name = item.get("name") if type(item) is dict else None
                invalid.append(
                    InvalidItem(index, name if isinstance(name, str) else None, _error_list(exc))
                )
            else:
                keep.append(item)
        obj["result"] = {**result, field: keep}
        return tuple(invalid)

    # Era hooks (the modern codec overrides them).

    def _check_message(self, message: Any) -> None:
        """Era checks of a read message beyond what its model validates."""

    def _result_changes(self, spec: MethodSpec | None, tag: str | None) -> Mapping[str, Any]:
        """How reading relaxes a result model of this era: `schemas` field changes by wire name.
        `spec`: the method answered (None: unknown); `tag`: the result's `resultType` branch
        when the method's results are tagged by it."""
        return {}

    def _prepare_result(self, obj: dict[str, Any], spec: MethodSpec | None) -> tuple[str, ...]:
        """Adjust a result response before validation; returns the result members it defaulted."""
        return ()

    def _outgoing(self, message: Any) -> Any:
        """The message as it is to be written (an era may fill what its revision requires)."""
        return message

    def _outgoing_result(self, result: Any) -> Any:
        """A result as it is to be written (what `_outgoing` does to a response's result)."""
        return result

    def _check_built(self, message: Any) -> None:
        """Checks of a message a builder made, beyond its model (what a peer's may hold)."""

    def _stamp(
        self, params: dict[str, Any] | None, method: str, envelope: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """Fill what this era requires in outgoing request params."""
        return params

    def _unrecognised_result_type(self, kind: Any) -> ProtocolError:
        """The error of a result whose `resultType` (`kind`) this codec does not recognise."""
        extra = self.extra_result_types | self.extension_result_tags.keys()
        recognised = [*self.result_tags, *sorted(extra)]
        text = "resultType must be a string"
        if type(kind) is str:
            text = f"unrecognised resultType {kind!r}"
        where = {"field": "result.resultType", "recognised": recognised}
        return ProtocolError(INVALID_REQUEST, text, where)

    # ------------------------------------------------------------------ encoding

    def encode(self, message: BaseModel | list[BaseModel]) -> bytes:
        """JSON bytes of a message of this revision (wire names, unset members omitted)."""
        cls = type(message)
        if cls is list:
            if not self.batching:
                raise ProtocolError(
                    INVALID_REQUEST, f"JSON-RPC batches are not part of revision {self.revision}"
                )
            if not message:
                raise ProtocolError(INVALID_REQUEST, "an empty batch is not a valid message")
            return b"[" + b",".join(self.encode(m) for m in message) + b"]"  # type: ignore[union-attr]
        # The module names the revision; the serializer, that the object is a model.
        serializer = cls.__dict__.get("__pydantic_serializer__")
        if cls.__module__ not in self.own_modules or serializer is None:
            raise ProtocolError(
                INTERNAL_ERROR, f"{cls.__qualname__} is not a message of revision {self.revision}"
            )
        message = self._outgoing(message)
        return serializer.to_json(message, by_alias=True, exclude_unset=True)

    def encode_result(self, id: str | int, result: BaseModel, meta: bytes | None = None) -> bytes:
        """Encode the result response `{"jsonrpc": "2.0", "id": id, "result": result}` to JSON.

        It is what `encode` writes of that response, without building the frame around the
        result (the server's path for every answer).

        Args:
            id: The id of the request it answers.
            result: A result model of this revision.
            meta: The JSON of a `_meta` object to write as that of the result (whose own is
                unset).
        """
        cls = type(result)
        serializer = cls.__dict__.get("__pydantic_serializer__")
        if cls.__module__ not in self.own_modules or serializer is None:
            raise ProtocolError(
                INTERNAL_ERROR, f"{cls.__qualname__} is not a result of revision {self.revision}"
            )
        body = serializer.to_json(self._outgoing_result(result), by_alias=True, exclude_unset=True)
        return self.result_frame(id, body, meta)

    def result_frame(self, id: str | int, body: bytes, meta: bytes | None = None) -> bytes:
        """Write the result response around `body`, a result's JSON object.

        Args:
            id: The id of the request it answers.
            body: The result's JSON object.
            meta: The JSON of the result's `_meta` (written first, as its model declares it
                first).
        """
        if meta is not None:
            body = b'{"_meta":%b%b%b' % (meta, b"," if len(body) > 2 else b"", body[1:])
        if type(id) is int:
            return b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (id, body)
        if type(id) is not str:
            raise MessageBuildError(f"a request id is a string or an integer, not {id!r}")
        return b'{"jsonrpc":"2.0","id":%b,"result":%b}' % (pydantic_core.to_json(id), body)

    # ------------------------------------------------------------------ building messages

    # A method the revision lacks (or has as the other kind) is the ProtocolError a peer would
    # answer (the runtime refuses such calls locally with it); arguments that make no valid
    # message are the caller's mistake: MessageBuildError, a ValueError.

    def request(self, method: str, params: Any = None, *, id: str | int, **envelope: Any) -> Any:
        """Build a validated request frame.

        Args:
            method: The request's method.
            params: Its params, a model or a mapping (None: none).
            id: Its JSON-RPC id.
            **envelope: The modern era stamps its `_meta` envelope from these
                (client_capabilities=..., client_info=..., protocol_version=...).
        """
        frame = self.requests.get(method) or self._raise_unknown(method, "request")
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        stamped = self._stamp(self._params_data(params, method), method, envelope)
        if stamped is not None:
            body["params"] = stamped
        return self._build(frame, body, f"a {method} request")

    def notification(self, method: str, params: Any = None) -> Any:
        """A validated notification frame."""
        frame = self.notifications.get(method) or self._raise_unknown(method, "notification")
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = self._params_data(params, method)
        return self._build(frame, body, f"a {method} notification")

    def response(self, id: str | int, method: str, result: Any) -> Any:
        """A validated result response to a `method` request.

        Args:
            id: The id of the request it answers.
            method: That request's method.
            result: The result, a model or a mapping.
        """
        frame = self.responses.get(method) or self._raise_unknown(method, "request")
        data = self._as_data(result)
        if not isinstance(data, Mapping):
            raise MessageBuildError(
                f"the result of {method} must be a model or a mapping, not {type(data).__name__}",
                method=method,
            )
        body = {"jsonrpc": "2.0", "id": id, "result": dict(data)}
        try:
            self._prepare_result(body, self.methods[method])
        except ProtocolError as exc:
            raise MessageBuildError(
                f"cannot build a {method} response of revision {self.revision}: {exc.message}",
                method=method,
            ) from None
        return self._build(frame, body, f"a {method} response")

    def error(self, id: str | int | None, code: int, message: str, data: Any = None) -> Any:
        """A validated error response (typed by `code` where the schema pins one).

        Args:
            id: The id of the request it answers (None: the id could not be read).
            code: The JSON-RPC error code.
            message: One line.
            data: What failed (None: nothing said).
        """
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        body: dict[str, Any] = {"jsonrpc": "2.0", "error": error, "id": 0 if id is None else id}
        frame = self.error_frames.get(code, self.error_response)
        built = self._build(frame, body, "an error response")
        if id is None:  # the id could not be read: null where the schema requires an id
            built.__dict__["id"] = None
            if not frame.model_fields["id"].is_required():
                built.__pydantic_fields_set__.discard("id")
        return built

    def _params_data(self, params: Any, method: str) -> dict[str, Any] | None:
        data = self._as_data(params)
        if data is None:
            return None
        if not isinstance(data, Mapping):
            raise MessageBuildError(
                f"the params of {method} must be a model or a mapping, not {type(data).__name__}",
                method=method,
            )
        return dict(data)

    def _build(self, frame: type[BaseModel], body: dict[str, Any], what: str) -> Any:
        try:
            built = frame.model_validate(body)
        except ValidationError as exc:
            errors = _error_list(exc)
            first = errors[0] if errors else {"field": "", "message": str(exc)}
            where = f"{first['field']}: " if first["field"] else ""
            method = body.get("method")
            raise MessageBuildError(
                f"cannot build {what} of revision {self.revision}: {where}{first['message']}",
                method=method if isinstance(method, str) else None,
                errors=errors,
            ) from None
        self._check_built(built)
        return built

    # ------------------------------------------------------------------ the request envelope

    def envelope(self, message: Any) -> Envelope[Any, Any]:
        """Return the per-request `_meta` envelope of a modern request, by plain names.

        `message` is the request, its params or its `_meta`; the names are protocol_version,
        client_capabilities, client_info, log_level. `ValueError` if the revision has no
        envelope (legacy era) or `message` carries none.
        """
        keys = self.envelope_keys
        if not keys:
            raise ValueError(f"revision {self.revision} has no per-request _meta envelope")
        meta = _meta_of(message)
        if isinstance(meta, BaseModel) and "meta" not in type(meta).model_fields:
            meta = self._extra_meta(meta) or meta
        if not isinstance(meta, BaseModel):
            raise ValueError(f"{type(message).__name__} carries no _meta envelope")
        by_key = {wire: name for name, wire in _wire_names(type(meta)).items()}
        extra = meta.__pydantic_extra__ or {}

        def value(field: str) -> Any:
            key = keys.get(field)
            if key is None:
                return None
            name = by_key.get(key)
            return getattr(meta, name) if name is not None else extra.get(key)

        version = value("protocol_version")
        if not isinstance(version, str):
            raise ValueError(f"{type(message).__name__} carries no _meta envelope")
        return Envelope(
            protocol_version=version,
            client_capabilities=value("client_capabilities"),
            client_info=value("client_info"),
            log_level=value("log_level"),
        )

    def _extra_meta(self, params: BaseModel) -> BaseModel | None:
        """The envelope of params that do not declare `_meta` but carry it (an extension's
        request), as the envelope model; None if there is none."""
        raw = (params.__pydantic_extra__ or {}).get("_meta")
        model = self.envelope_model
        if model is None or not isinstance(raw, dict):
            return None
        try:
            return model.model_validate(raw)
        except ValidationError:
            raise ValueError(f"{type(params).__name__} carries an invalid _meta envelope") from None

    _as_data = staticmethod(plain)

    # ------------------------------------------------------------------ the public layer

    def to_public(
        self, method: str, payload: Any, kind: str, *, client_capabilities: Any = None
    ) -> Any:
        """This revision's params or result (`kind`) of `method`, as the latest revision's model.

        Methods the latest revision does not have (e.g. the legacy handshake) keep their own types.

        Args:
            method: The method.
            payload: The params or result, this revision's model or its data.
            kind: "params" or "result".
            client_capabilities: The session's client capabilities, for the `_meta` envelope a
                modern request's public params carry.
        """
        plan = self._public_results.get(method) if kind == "result" else None
        if plan is not None and type(payload) is plan[0]:
            own, validate, backfill = plan  # the general path below, without its choices
            data = own.__pydantic_serializer__.to_python(
                payload, mode="json", by_alias=True, exclude_unset=True
            )
            try:
                return validate({**backfill, **data})
            except ValidationError as exc:
                raise self._inexpressible(method, kind, exc) from None
        mapping = self.public.get(method)
        if mapping is None:
            return payload
        if kind == "params":
            target = mapping.public_params
        elif kind == "result":
            target = mapping.public_result
        else:
            raise ValueError(f"kind must be 'params' or 'result', not {kind!r}")
        if target is None:
            return None
        if isinstance(target, type) and isinstance(payload, target):
            return payload  # already public: the latest revision's own model
        data = self._as_data(payload)
        if kind == "params":
            data = data or {}
            if _needs_envelope(target):  # a request's params: the envelope its session implies
                data = self._public_params(data, self._as_data(client_capabilities))
        else:
            data = {**mapping.result_backfill, **(data or {})}
        try:
            public = validator(target)(data)
        except ValidationError as exc:
            raise self._inexpressible(method, kind, exc) from None
        if (
            kind == "result"
            and isinstance(payload, BaseModel)
            and isinstance(mapping.own_result, type)
            and type(payload) is mapping.own_result
            and isinstance(target, type)
        ):
            # this revision's own result model: the next one of `method` takes the short path
            plan = (type(payload), validator(target), mapping.result_backfill)
            self._public_results[method] = plan
        return public

    def public_result(self, method: str, result: Any, data: bytes) -> Any:
        """`to_public` of a result just read from `data`: the public model read from the bytes.

        One validation instead of a dump and a validation (`mcp_wire_runtime._public_reads`).

        Args:
            method: The method the response answers.
            result: The result as this revision's model.
            data: Its response's bytes, as `decode_response` read them.
        """
        public = self._public_reads.result(method, result, data)
        return self.to_public(method, result, "result") if public is None else public

    def public_params(
        self, method: str, params: Any, data: bytes, *, client_capabilities: Any = None
    ) -> Any:
        """`to_public` of a request's params just read from `data`: the model read from the bytes.

        The public model gets the `_meta` envelope of a session with `client_capabilities`
        (`mcp_wire_runtime._public_reads`).

        Args:
            method: The request's method.
            params: Its params as this revision's model.
            data: The request's bytes, as `decode` read them.
            client_capabilities: The session's client capabilities, for the envelope.
        """
        public = self._public_reads.params(method, params, data, client_capabilities)
        if public is None:
            caps = client_capabilities
            return self.to_public(method, params, "params", client_capabilities=caps)
        return public

    def _envelope_of(self, client_capabilities: Any) -> dict[str, Any]:
        """The `_meta` of a request's public params without one (see `to_public`)."""
        return self._public_params({}, self._as_data(client_capabilities)).get("_meta", {})

    def _inexpressible(self, method: str, kind: str, exc: ValidationError) -> ProtocolError:
        return ProtocolError(
            INTERNAL_ERROR,
            f"cannot express {method} {kind} of {self.revision} in the public models",
            {"errors": _error_list(exc)},
        )

    def from_public(
        self, method: str, payload: Any, kind: str, envelope: Mapping[str, Any] | None = None
    ) -> Any:
        """Put public (latest revision) params or result of `method` in this revision's shape.

        Members this revision does not define are dropped. A modern request's params get their
        `_meta` envelope stamped from `envelope` (as `request` does) before they are checked.

        Args:
            method: The method.
            payload: The public params or result, a model or its data.
            kind: "params" or "result".
            envelope: The envelope's values by plain names (client_capabilities=...,
                client_info=..., protocol_version=...); None: none stamped.
        """
        mapping = self.public.get(method)
        if mapping is None:
            return payload
        data = self._as_data(payload)
        if kind == "params":
            if envelope is not None:
                data = self._stamp(data or {}, method, envelope)
            target, data = mapping.own_params, self._own_params(data or {})
        elif kind == "result":
            target = mapping.own_result
        else:
            raise ValueError(f"kind must be 'params' or 'result', not {kind!r}")
        if target is None:
            return None
        try:
            own = validator(target)(data)
        except ValidationError as exc:
            raise ProtocolError(
                INTERNAL_ERROR,
                f"cannot express {method} {kind} in revision {self.revision}",
                {"errors": _error_list(exc)},
            ) from None
        _clear_extras(own, self.open_models)
        meta = data.get("_meta") if kind == "params" and isinstance(data, dict) else None
        extra = own.__pydantic_extra__ if isinstance(own, BaseModel) else None
        if meta and extra is not None and "meta" not in type(own).model_fields:
            # Revisions whose request params do not spell out `_meta` still let every request
            # carry it (JSON-RPC's Request.params._meta: the progress token, for one).
            extra["_meta"] = meta
        return own

    def _public_params(self, data: dict[str, Any], client_capabilities: Any) -> dict[str, Any]:
        keys = self.public_envelope_keys
        if not keys:
            return data
        meta = dict(data.get("_meta") or {})
        meta.setdefault(keys["protocol_version"], self.revision)
        meta.setdefault(keys["client_capabilities"], client_capabilities or {})
        return {**data, "_meta": meta}

    def _own_params(self, data: dict[str, Any]) -> dict[str, Any]:
        if not self.public_envelope_keys:
            return data
        dropped = self.public_only_meta_keys
        meta = {k: v for k, v in (data.get("_meta") or {}).items() if k not in dropped}
        out = {k: v for k, v in data.items() if k != "_meta"}
        if meta:
            out["_meta"] = meta
        return out


@functools.cache
def _extended(
    core: type[Codec], ids: frozenset[str], max_bytes: int, result_types: frozenset[str]
) -> Codec:
    """The codec of `core`'s revision with the extensions `ids`: one per set and settings."""
    classes = [type(importlib.import_module(core.extensions[i]).CODEC) for i in sorted(ids)]
    return compose.composed(core, tuple(classes))(max_bytes, result_types=result_types)
