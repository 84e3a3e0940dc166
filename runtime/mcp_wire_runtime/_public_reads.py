"""The public layer read straight from a frame's bytes: the fast path beside `Codec.to_public`.

A legacy revision's params or result, just decoded from a frame, is projected to the public
(latest revision's) model by `to_public`: its model dumped, the members the public one requires
added, the dump validated. When the frame's bytes are at hand, the public model can instead be
read from them: one validation, the same members with the same values (the revision's models
keep every member they read, extras too). What the bytes cannot give alone (params that carry a
`_meta` of their own, to be merged with the session's envelope), and every failure, take
`to_public`'s path (each method here returns None for it), which says why as it always has.
tests/wire/test_fastpaths.py holds the two equal.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined, SchemaValidator
from pydantic_core import core_schema as cs

from mcp_wire_runtime import _numbers as numbers
from mcp_wire_runtime._schemas import SchemaSet, defaulted

T = TypeVar("T")


class PublicReads:
    """One codec's readers of public models from frames' bytes, made per method on first use.

    `public`: the codec's table (method -> `PublicMapping`); `envelope(capabilities)`: the
    `_meta` a request's public params get from a session with those client capabilities.
    """

    def __init__(
        self, public: Mapping[str, Any], envelope: Callable[[Any], dict[str, Any]]
    ) -> None:
        self._public = public
        self._envelope = envelope
        # method -> (this revision's model, the reader, backfill) or None where there is none
        self._results: dict[str, tuple[type, SchemaValidator, Mapping[str, Any]] | None] = {}
        self._params: dict[str, tuple[type, SchemaValidator, type[BaseModel]] | None] = {}
        # the last envelope made, by the type of `_meta`: (the capabilities it is of, the model)
        self._envelopes: dict[type[BaseModel], tuple[Any, BaseModel]] = {}

    def result(self, method: str, result: Any, data: bytes) -> BaseModel | None:
        """Read the public model of `result` from `data`; None: `to_public`'s to give.

        Args:
            method: The method the response answers.
            result: The result as this revision's model, decoded from `data`.
            data: The response it was decoded from.
        """
        plan = _planned(self._results, method, self._result_plan)
        if plan is None or type(result) is not plan[0] or type(data) is not bytes:
            return None
        _, reader, backfill = plan
        public = _read(reader, data, "result")
        if public is not None:
            public.__pydantic_fields_set__.update(backfill)  # (set, as `to_public` sets them)
        return public

    def params(
        self, method: str, params: Any, data: bytes, client_capabilities: Any
    ) -> BaseModel | None:
        """Read the public model of a request's `params` from `data`; None: `to_public`'s to give.

        The model gets the `_meta` envelope of a session with `client_capabilities`.

        Args:
            method: The request's method.
            params: The params as this revision's model, decoded from `data`.
            data: The request they were decoded from.
            client_capabilities: The session's client capabilities, for the envelope.
        """
        plan = _planned(self._params, method, self._params_plan)
        if plan is None or type(params) is not plan[0] or type(data) is not bytes:
            return None
        _, reader, meta_type = plan
        public = _read(reader, data, "params")
        if public is None or public.__dict__["meta"] is not None:
            return None  # (a `_meta` of its own: merged with the envelope there)
        kept = self._envelopes.get(meta_type)
        if kept is None or kept[0] != client_capabilities:
            try:
                meta = meta_type.model_validate(self._envelope(client_capabilities))
            except ValidationError:
                return None
            kept = (copy.deepcopy(client_capabilities), meta)  # (a caller's dict may change)
            self._envelopes[meta_type] = kept
        public.__dict__["meta"] = _copied(kept[1])  # (each request its own, as in general)
        public.__pydantic_fields_set__.add("meta")
        return public

    def _result_plan(self, method: str) -> tuple[type, SchemaValidator, Mapping[str, Any]] | None:
        mapping = self._public.get(method)
        if mapping is None or not _projected(mapping.own_result, mapping.public_result):
            return None
        backfill = mapping.result_backfill
        changes = {member: defaulted(value) for member, value in backfill.items()}
        return mapping.own_result, _reader(mapping.public_result, "result", changes), backfill

    def _params_plan(self, method: str) -> tuple[type, SchemaValidator, type[BaseModel]] | None:
        mapping = self._public.get(method)
        if mapping is None or not _projected(mapping.own_params, mapping.public_params):
            return None
        target: type[BaseModel] = mapping.public_params
        meta = target.model_fields.get("meta")
        if meta is None or not meta.is_required() or meta.alias != "_meta":
            return None  # (not the envelope this reading fills)
        meta_type = meta.annotation
        if not (isinstance(meta_type, type) and issubclass(meta_type, BaseModel)):
            return None
        reader = _reader(target, "params", {"_meta": defaulted(None)})
        return mapping.own_params, reader, meta_type


M = TypeVar("M", bound=BaseModel)


def _copied(model: M) -> M:
    """A shallow copy of `model`, as its `__copy__` makes one, without `copy.copy`'s dispatch
    for each of its three parts (every legacy request's `_meta` is one)."""
    copied = model.__class__.__new__(model.__class__)
    put = object.__setattr__
    put(copied, "__dict__", model.__dict__.copy())
    extra = model.__pydantic_extra__
    put(copied, "__pydantic_extra__", None if extra is None else extra.copy())
    put(copied, "__pydantic_fields_set__", model.__pydantic_fields_set__.copy())
    private = getattr(model, "__pydantic_private__", None)
    if private is not None:  # (its unset private attributes left out, as `__copy__` does)
        private = {k: v for k, v in private.items() if v is not PydanticUndefined}
    put(copied, "__pydantic_private__", private)
    return copied


def _planned(plans: dict[str, T | None], method: str, make: Callable[[str], T | None]) -> T | None:
    """`method`'s plan, made on first use (None: the general path's method)."""
    if method in plans:
        return plans[method]
    plan = plans[method] = make(method)
    return plan


def _projected(own: Any, target: Any) -> bool:
    """Whether `to_public` projects this revision's model `own` to another, `target`."""
    return (
        isinstance(own, type)
        and isinstance(target, type)
        and issubclass(target, BaseModel)
        and own is not target
    )


def _reader(target: type[BaseModel], member: str, changes: Mapping[str, Any]) -> SchemaValidator:
    """A validator of a frame's bytes that reads its `member` alone, as `target` with `changes`
    made to its fields (see `SchemaSet.with_fields`); the rest of the frame is not read (the
    codec has judged it). It returns a dict: `{member: <target>}`."""
    models = SchemaSet([target])
    model = models.with_fields(models.of(target), changes)
    frame = cs.typed_dict_schema({member: cs.typed_dict_field(model)}, extra_behavior="ignore")
    return models.validator(frame)


def _read(reader: SchemaValidator, data: bytes, member: str) -> Any:
    """`member` of the frame `data` as `reader` reads it; None if it cannot (not expressible)."""
    try:
        if len(data) < numbers.LARGE:
            return reader.validate_json(data)[member]
        return numbers.read_large(reader.validate_json, data)[member]
    except ValidationError:
        return None
