"""The wire codec machinery every revision's codec shares: hand-written shared runtime code.

Each revision's generated `mcp_wire.<revision>.codec` subclasses `Codec` and supplies only its
tables (frames, methods, public mappings), which come from the IR; everything else lives here.

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
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, Self, TypeVar, Union

import pydantic_core
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from mcpio.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    MessageBuildError,
    ProtocolError,
)

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
MAX_REPORTED_ERRORS = 8
_ERROR_CODE = re.compile(rb'"code"\s*:\s*(-?[0-9]+)([.eE]?)')


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One method of a revision, as its dispatch table lists it."""

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
    """An item that lenient list decoding left out, and why."""

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
    """

    protocol_version: str
    client_capabilities: CapabilitiesT
    client_info: InfoT | None
    log_level: str | None


@dataclass(frozen=True, slots=True)
class PublicMapping:
    """How one method's params and result map to the public (latest revision's) models."""

    own_params: Any
    public_params: Any
    own_result: Any
    public_result: Any
    result_backfill: Mapping[str, Any]  # public-required fields this revision lacks


def _error_list(exc: ValidationError) -> list[dict[str, Any]]:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    return [
        {"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"], "type": e["type"]}
        for e in errors[:MAX_REPORTED_ERRORS]
    ]


def _clear_extras(value: Any, open_models: frozenset[str]) -> None:
    """Drop, in place, every member a model of this revision does not declare (an open model's
    extra members are part of its contract: they stay)."""
    if isinstance(value, BaseModel):
        if value.__pydantic_extra__ and type(value).__name__ not in open_models:
            value.__pydantic_extra__.clear()
        for name in value.model_fields_set:
            _clear_extras(getattr(value, name, None), open_models)
    elif isinstance(value, list | tuple):
        for item in value:
            _clear_extras(item, open_models)
    elif isinstance(value, dict):
        for item in value.values():
            _clear_extras(item, open_models)


def _may_hold_inf_nan(data: bytes) -> bool:
    """NaN and Infinity are not JSON, but the one-pass validator reads them as numbers: a message
    that may hold them takes the careful path, which refuses them. (A byte first: `int in bytes`
    is a memchr, ten times cheaper than a substring search.)"""
    return (78 in data and b"NaN" in data) or (73 in data and b"Infinity" in data)  # N, I


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
def _needs_envelope(target: Any) -> bool:
    """Whether public params of this type carry a required `_meta` (a modern request's)."""
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        return False
    meta = target.model_fields.get("meta")
    return meta is not None and meta.is_required()


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
    # Modern era: Envelope field -> its `_meta` key (none: the revision has no envelope).
    envelope_keys: ClassVar[Mapping[str, str | None]] = {}
    # Methods that are never part of a JSON-RPC batch (the legacy handshake).
    unbatchable: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self, max_bytes: int = MAX_MESSAGE_BYTES, *, result_types: Iterable[str] = ()
    ) -> None:
        self.max_bytes = max_bytes
        # resultType values of negotiated extensions, recognised beside the revision's own.
        self.extra_result_types: frozenset[str] = frozenset(result_types)
        self._item_adapters: dict[str, TypeAdapter[Any]] = {}
        self._messages: TypeAdapter[Any] | None = None

    def __repr__(self) -> str:
        return f"<mcp_wire codec {self.revision} ({self.era} era)>"

    def with_result_types(self, *values: str) -> Self:
        """A codec of this revision that also recognises these `resultType` values (those of
        negotiated extensions); every other value the revision does not define is refused."""
        if not all(isinstance(v, str) for v in values):
            raise TypeError("resultType values are strings")
        return type(self)(self.max_bytes, result_types=self.extra_result_types | set(values))

    # ------------------------------------------------------------------ decoding

    def decode(self, data: bytes | str, *, strict: bool = False) -> Any:
        """The typed message in `data`: a request, notification, result or error response.

        With `strict`, members this revision does not define are an error instead of being kept.
        """
        data = self._as_bytes(data)
        message = self._decode_fast(data)
        if message is not None:
            if strict:
                self._check_strict(message, message.__dict__.get("method"))
            return message
        obj = self._parse(data)
        if isinstance(obj, list):
            return self._decode_batch(obj, strict)
        return self._decode_object(obj, strict)

    def _decode_fast(self, data: bytes) -> Any:
        """One validation pass from bytes (size already checked), for a well-formed request,
        notification or error response.

        Anything else (result responses without a known method, batches, every kind of invalid
        message) returns None and takes the step-by-step path, which also names the exact failure.
        """
        if _may_hold_inf_nan(data):
            return None
        if b'"method"' in data:
            return self._decode_message_fast(data)
        if b'"error"' in data:
            return self._decode_error_fast(data)
        return None

    def _decode_message_fast(self, data: bytes) -> Any:
        adapter = self._messages
        if adapter is None:
            frames = [*self.requests.values(), *self.notifications.values()]
            if not frames:
                return None
            union: Any = Union[tuple(frames)]  # noqa: UP007 (a union built at run time)
            tagged: Any = Annotated[union, Field(discriminator="method")]
            adapter = self._messages = TypeAdapter[Any](tagged)
        try:
            message = adapter.validator.validate_json(data)
        except ValueError:
            return None
        extra = message.__pydantic_extra__
        if extra and "id" in extra or not self._accept_fast(message):
            return None
        return message

    def _decode_error_fast(self, data: bytes) -> Any:
        """The frame is guessed from the first `"code": <int>` in the bytes, then confirmed from
        the validated message: a wrong guess (a `code` inside `data`, say) only costs the careful
        path."""
        codes = _ERROR_CODE.findall(data)
        if any(fraction for _, fraction in codes):
            return None  # pydantic reads -32020.0 as the literal -32020: let the careful path judge
        frame = (
            self.error_frames.get(int(codes[0][0]), self.error_response)
            if codes
            else self.error_response
        )
        try:
            message = frame.__pydantic_validator__.validate_json(data)
        except ValueError:
            return None
        code: Any = getattr(message.__dict__.get("error"), "code", None)
        extra = message.__pydantic_extra__
        if self.error_frames.get(code, self.error_response) is not frame or (
            extra and "result" in extra
        ):
            return None
        return message

    def _decode_response_fast(self, data: bytes, method: str) -> Any:
        """One validation pass from bytes, for a well-formed result or error response."""
        if b'"result"' not in data:
            return self._decode_error_fast(data)
        frame = self.responses.get(method)
        if frame is None or self._needs_preparing(self.methods[method], data):
            return None
        try:
            message = frame.__pydantic_validator__.validate_json(data)
        except ValueError:
            return None
        extra = message.__pydantic_extra__
        if extra and "error" in extra or not self._accept_response(message):
            return None
        return message

    def _accept_fast(self, message: Any) -> bool:
        """Era checks a fast-decoded message must also pass (else the careful path decides)."""
        return True

    def _accept_response(self, message: Any) -> bool:
        """Era checks a fast-decoded result response must also pass (else the careful path
        decides and names the failure)."""
        return True

    def decode_response(
        self, data: bytes | str, method: str, *, lenient: bool = False, strict: bool = False
    ) -> Any:
        """A response to a `method` request, its result typed by the method.

        With `lenient` (list methods), invalid items are left out and reported in a
        `LenientResponse` instead of failing the whole page.
        """
        if not isinstance(method, str):
            raise TypeError(f"method must be a str naming the request, not {type(method).__name__}")
        data = self._as_bytes(data)
        if not lenient and not _may_hold_inf_nan(data):
            message = self._decode_response_fast(data, method)
            if message is not None:
                if strict:
                    self._check_strict(message, None)
                return message
        obj = self._parse(data)
        self._check_envelope(obj)
        if "error" in obj and "result" in obj:
            raise ProtocolError(INVALID_REQUEST, "a response has a result or an error, not both")
        if "error" in obj:
            return self._decode_error(obj, strict)
        frame = self.responses.get(method)
        if frame is None:
            raise self._unknown_method(method, "request")
        if "result" not in obj:
            raise ProtocolError(INVALID_REQUEST, "a response needs a result or an error")
        self._check_id(obj.get("id"))
        spec = self.methods[method]
        defaulted = self._prepare_result(obj, spec)
        invalid: tuple[InvalidItem, ...] = ()
        if lenient and spec.list_field:
            invalid = self._drop_invalid_items(obj, spec)
        message = self._validate(frame, obj, strict, None)
        if defaulted:  # read as their defaults, but still absent when encoded again
            message.result.__pydantic_fields_set__.difference_update(defaulted)
        return LenientResponse(message, invalid) if lenient else message

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
            raise ProtocolError(PARSE_ERROR, f"not valid JSON: {exc}") from None

    def _decode_batch(self, items: list[Any], strict: bool) -> list[Any]:
        if not self.batching:
            raise ProtocolError(
                INVALID_REQUEST, f"JSON-RPC batches are not part of revision {self.revision}"
            )
        if not items:
            raise ProtocolError(INVALID_REQUEST, "an empty batch is not a valid message")
        out = []
        calls = None  # a batch holds requests and notifications, or responses: never a mix
        for index, item in enumerate(items):
            try:
                is_call = type(item) is dict and "method" in item
                if calls is not None and is_call is not calls:
                    raise ProtocolError(
                        INVALID_REQUEST,
                        "a batch holds requests and notifications, or responses, not both",
                    )
                calls = is_call
                if is_call and item["method"] in self.unbatchable:
                    raise ProtocolError(
                        INVALID_REQUEST,
                        f"{item['method']} must not be part of a batch",
                        {"method": item["method"]},
                    )
                out.append(self._decode_object(item, strict))
            except ProtocolError as exc:
                raise ProtocolError(
                    exc.code,
                    f"batch item {index}: {exc.message}",
                    {"index": index, "error": exc.data},
                ) from None
        return out

    def _check_envelope(self, obj: Any) -> None:
        if type(obj) is not dict:
            raise ProtocolError(INVALID_REQUEST, "a JSON-RPC message must be an object")
        if obj.get("jsonrpc") != "2.0":
            raise ProtocolError(INVALID_REQUEST, 'jsonrpc must be "2.0"', {"field": "jsonrpc"})

    @staticmethod
    def _check_id(value: Any) -> None:
        if type(value) is not str and type(value) is not int:
            raise ProtocolError(
                INVALID_REQUEST, "id must be a string or an integer", {"field": "id"}
            )

    def _decode_object(self, obj: Any, strict: bool) -> Any:
        self._check_envelope(obj)
        if "method" in obj:
            method = obj["method"]
            if type(method) is not str:
                raise ProtocolError(INVALID_REQUEST, "method must be a string", {"field": "method"})
            if "id" in obj:
                self._check_id(obj["id"])
                frame = self.requests.get(method) or self._raise_unknown(method, "request")
            else:
                frame = self.notifications.get(method) or self._raise_unknown(
                    method, "notification"
                )
            self._check_request(obj, method)
            return self._validate(frame, obj, strict, method)
        if "result" in obj:
            if "error" in obj:
                raise ProtocolError(
                    INVALID_REQUEST, "a response has a result or an error, not both"
                )
            self._check_id(obj.get("id"))
            self._prepare_result(obj, None)
            return self._validate(self.result_response, obj, strict, None)
        if "error" in obj:
            return self._decode_error(obj, strict)
        raise ProtocolError(INVALID_REQUEST, "not a request, notification or response")

    def _decode_error(self, obj: dict[str, Any], strict: bool) -> Any:
        error = obj.get("error")
        code = error.get("code") if type(error) is dict else None
        frame = (
            self.error_frames.get(code, self.error_response)
            if type(code) is int
            else self.error_response
        )
        if obj.get("id") is None:
            return self._unread_id(frame, obj, strict, "id" in obj)
        return self._validate(frame, obj, strict, None)

    def _unread_id(
        self, frame: type[BaseModel], obj: dict[str, Any], strict: bool, null: bool
    ) -> Any:
        """An error response whose request id could not be read: JSON-RPC 2.0 answers it with
        `"id": null`, and peers also omit the id. Every revision decodes both forms (whatever its
        schema says of the id), reads `id` as None, and writes the id back as it came."""
        message = self._validate(frame, {**obj, "id": 0}, strict, None)
        message.__dict__["id"] = None
        if not null:
            message.__pydantic_fields_set__.discard("id")
        return message

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

    def _validate(self, frame: type[BaseModel], obj: Any, strict: bool, method: str | None) -> Any:
        try:
            message = frame.model_validate(obj)
        except ValidationError as exc:
            raise self._invalid(exc, method) from None
        if strict:
            self._check_strict(message, method)
        return message

    def _invalid(self, exc: ValidationError, method: str | None) -> ProtocolError:
        errors = _error_list(exc)
        in_params = method is not None and all(e["field"].split(".")[0] == "params" for e in errors)
        first = errors[0] if errors else {"field": "", "message": str(exc)}
        where = f"{first['field']}: " if first["field"] else ""
        if in_params:
            return ProtocolError(
                INVALID_PARAMS,
                f"invalid params for {method}: {where}{first['message']}",
                {"errors": errors},
            )
        return ProtocolError(
            INVALID_REQUEST, f"invalid message: {where}{first['message']}", {"errors": errors}
        )

    def _check_strict(self, message: BaseModel, method: str | None) -> None:
        unknown: list[str] = []
        self._collect_extras(message, "", unknown)
        if unknown:
            in_params = method is not None and all(u.startswith("params.") for u in unknown)
            code = INVALID_PARAMS if in_params else INVALID_REQUEST
            shown = ", ".join(unknown[:MAX_REPORTED_ERRORS])
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

    def _check_request(self, obj: dict[str, Any], method: str) -> None:
        """Checks of a request or notification beyond its model."""

    def _needs_preparing(self, spec: MethodSpec, data: bytes) -> bool:
        """Whether a result may lack members `_prepare_result` fills (then one pass would fail)."""
        return False

    def _prepare_result(self, obj: dict[str, Any], spec: MethodSpec | None) -> tuple[str, ...]:
        """Adjust a result response before validation; returns the result members it defaulted."""
        return ()

    def _check_outgoing(self, message: BaseModel) -> None:
        """Checks of a message about to be encoded."""

    def _stamp(
        self, params: dict[str, Any] | None, method: str, envelope: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """Fill what this era requires in outgoing request params."""
        return params

    # ------------------------------------------------------------------ encoding

    def encode(self, message: BaseModel | list[BaseModel]) -> bytes:
        """JSON bytes of a message of this revision (wire names, unset members omitted)."""
        if isinstance(message, list):
            if not self.batching:
                raise ProtocolError(
                    INVALID_REQUEST, f"JSON-RPC batches are not part of revision {self.revision}"
                )
            if not message:
                raise ProtocolError(INVALID_REQUEST, "an empty batch is not a valid message")
            return b"[" + b",".join(self._encode_one(m) for m in message) + b"]"
        return self._encode_one(message)

    def _encode_one(self, message: Any) -> bytes:
        if not isinstance(message, BaseModel) or type(message).__module__ not in self.own_modules:
            raise ProtocolError(
                INTERNAL_ERROR,
                f"{type(message).__qualname__} is not a message of revision {self.revision}",
            )
        self._check_outgoing(message)
        return message.__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)

    # ------------------------------------------------------------------ building messages

    # A method the revision lacks (or has as the other kind) is the ProtocolError a peer would
    # answer (the runtime refuses such calls locally with it); arguments that make no valid
    # message are the caller's mistake: MessageBuildError, a ValueError.

    def request(self, method: str, params: Any = None, *, id: str | int, **envelope: Any) -> Any:
        """A validated request frame; the modern era stamps its `_meta` envelope from `envelope`
        (client_capabilities=..., client_info=..., protocol_version=...)."""
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
        """A validated result response to a `method` request."""
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
        """A validated error response (typed by `code` where the schema pins one)."""
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
            return frame.model_validate(body)
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

    # ------------------------------------------------------------------ the request envelope

    def envelope(self, message: Any) -> Envelope[Any, Any]:
        """The per-request `_meta` envelope of a modern request (the request, its params or its
        `_meta`), by plain names: protocol_version, client_capabilities, client_info, log_level.

        `ValueError` if the revision has no envelope (legacy era) or `message` carries none.
        """
        keys = self.envelope_keys
        if not keys:
            raise ValueError(f"revision {self.revision} has no per-request _meta envelope")
        meta = _meta_of(message)
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

    @staticmethod
    def _as_data(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return value

    # ------------------------------------------------------------------ the public layer

    def to_public(
        self, method: str, payload: Any, kind: str, *, client_capabilities: Any = None
    ) -> Any:
        """This revision's params or result (`kind`) of `method`, as the latest revision's model.

        Methods the latest revision does not have (e.g. the legacy handshake) keep their own types.
        """
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
            return _adapter(target).validate_python(data)
        except ValidationError as exc:
            raise ProtocolError(
                INTERNAL_ERROR,
                f"cannot express {method} {kind} of {self.revision} in the public models",
                {"errors": _error_list(exc)},
            ) from None

    def from_public(self, method: str, payload: Any, kind: str) -> Any:
        """Public (latest revision) params or result (`kind`) of `method`, in this revision's
        shape: members this revision does not define are dropped."""
        mapping = self.public.get(method)
        if mapping is None:
            return payload
        data = self._as_data(payload)
        if kind == "params":
            target, data = mapping.own_params, self._own_params(data or {})
        elif kind == "result":
            target = mapping.own_result
        else:
            raise ValueError(f"kind must be 'params' or 'result', not {kind!r}")
        if target is None:
            return None
        try:
            own = _adapter(target).validate_python(data)
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
        return data

    def _own_params(self, data: dict[str, Any]) -> dict[str, Any]:
        return data
