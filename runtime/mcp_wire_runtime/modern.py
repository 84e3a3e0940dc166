"""The modern era's codec behaviour: hand-written, shared by every modern revision.

A modern revision's generated codec subclasses `ModernCodec`, supplies the tables `Codec`
declares and the constants below (values from its schema), and nothing else.

- The builders stamp every request's `_meta` envelope (`envelope_keys`).
- A result carries `resultType`: `result_tags` holds the final one and the interim one ("input
  required"), which needs at least one of `interim_one_of`. A result without one (from a peer of
  an earlier revision) reads as final; a cacheable one without caching hints reads with
  `cache_defaults`; both stay unset.
- A read `_meta` key must match `meta_key` (-32602); the builders refuse an extra key under an
  MCP-reserved label (`reserved_labels`) that the revision does not define (`known_reserved_keys`).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, Discriminator

from mcp_wire_runtime import _schemas as schemas
from mcp_wire_runtime.codec import Codec, MethodSpec
from mcp_wire_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MessageBuildError,
    ProtocolError,
)


def result_discriminator(complete: str, interim: str, *own: str) -> Discriminator:
    """Make the discriminator of a result tagged by `resultType`.

    The branch is `interim`, one of an extension's `own` values (a task), or `complete`.
    Another string is a value of `with_result_types` or one the codec refuses before or after
    the model (`_check_result_type`): a final result either way. Not a string: no branch.
    """
    tagged = frozenset((interim, *own))

    def tag(v: Any) -> str | None:
        kind = v.get("resultType") if isinstance(v, dict) else getattr(v, "resultType", None)
        return kind if kind in tagged else complete if type(kind) is str else None

    return Discriminator(
        tag, custom_error_type="result_type", custom_error_message="unrecognised resultType"
    )


# The keys each `meta_key` pattern matched; bounded, for the hot path.
_GOOD_META_KEYS: defaultdict[str, set[str]] = defaultdict(set)


@functools.cache
def _required_names(model: type[Any]) -> frozenset[str]:
    fields = getattr(model, "model_fields", {})
    return frozenset(name for name, field in fields.items() if field.is_required())


class ModernCodec(Codec):
    """A codec of the modern era. Subclassed per revision."""

    interim_one_of: ClassVar[tuple[str, ...]]
    cache_defaults: ClassVar[Mapping[str, Any]]
    meta_key: ClassVar[re.Pattern[str] | None] = None
    reserved_labels: ClassVar[frozenset[str]] = frozenset()
    known_reserved_keys: ClassVar[frozenset[str]] = frozenset()

    def _check_message(self, message: Any) -> None:
        # Every frame's path: attribute reads only (isinstance on a model class is an ABC check).
        fields = message.__dict__
        params = fields.get("params")
        if params is not None:
            extra = getattr(getattr(params, "meta", None), "__pydantic_extra__", None)
            bad = self._bad_meta_keys(extra) if extra else None
            if bad:
                text = f"invalid _meta key {bad[0]!r} in {fields.get('method')}"
                raise ProtocolError(INVALID_PARAMS, text, {"field": "params._meta", "keys": bad})
            return
        result = fields.get("result")
        interim = self.result_tags[1]
        if result is not None and getattr(result, "resultType", None) == interim:
            self._check_result_type(interim, result)

    def _bad_meta_keys(self, meta: dict[str, Any]) -> list[str]:
        pattern = self.meta_key
        if pattern is None:
            return []
        good = _GOOD_META_KEYS[pattern.pattern]
        bad = []
        for key in meta:
            if key in good:
                continue
            if pattern.fullmatch(key):
                if len(good) < 4096:
                    good.add(key)
            else:
                bad.append(key)
        return bad

    # A result from a peer of an earlier revision has no resultType: it reads as complete.
    # Absent caching hints read as their defaults (ttlMs 0: stale at once) and stay unset.

    def _result_changes(self, spec: MethodSpec | None, tag: str | None) -> Mapping[str, Any]:
        complete, interim = self.result_tags
        if tag == interim or tag in self.extension_result_tags:
            return {"resultType": schemas.only([tag])}
        extra = sorted(self.extra_result_types)
        own = sorted(self.extension_result_tags) if spec is None else []
        recognised = [complete, *([interim] if spec is None else []), *own, *extra]
        changes = {"resultType": schemas.defaulted(complete, recognised)}
        if spec is not None and spec.cacheable:
            changes.update({k: schemas.defaulted(v) for k, v in self.cache_defaults.items()})
        return changes

    def _prepare_result(self, obj: dict[str, Any], spec: MethodSpec | None) -> tuple[str, ...]:
        result = obj.get("result")
        if type(result) is not dict:
            return ()
        if "resultType" not in result:
            result = obj["result"] = {**result, "resultType": self.result_tags[0]}
        kind = result.get("resultType")
        methods = self.extension_result_tags.get(kind) if type(kind) is str else None
        if methods is not None and (spec is None or spec.name in methods):
            return ()  # an extension's result (a task): not the method's own, no caching hints
        self._check_result_type(kind, result)
        if spec is None or not spec.cacheable or result["resultType"] == self.result_tags[1]:
            return ()
        defaults = self.cache_defaults
        missing = tuple(k for k in defaults if k not in result)
        if missing:
            obj["result"] = {**{k: defaults[k] for k in missing}, **result}
        return missing

    def _check_result_type(self, kind: Any, result: Any) -> None:
        (complete, interim), one_of = self.result_tags, self.interim_one_of
        if kind == complete or (type(kind) is str and kind in self.extra_result_types):
            return
        if kind != interim:
            raise self._unrecognised_result_type(kind)
        get = result.get if type(result) is dict else result.__dict__.get
        if one_of and all(get(k) is None for k in one_of):
            text = f"an {interim} result needs at least one of {', '.join(one_of)}"
            raise ProtocolError(INVALID_REQUEST, text, {"field": "result", "one_of": list(one_of)})

    def _outgoing(self, message: Any) -> Any:
        result = message.__dict__.get("result")
        filled = self._outgoing_result(result)
        return message if filled is result else message.model_copy(update={"result": filled})

    def _outgoing_result(self, result: Any) -> Any:
        # A result read without the members earlier revisions lacked holds them as defaults:
        # they are written, so that what is sent is a valid frame of this revision.
        required = _required_names(type(result))
        if not required or required <= result.__pydantic_fields_set__:
            return result
        unset = required - result.__pydantic_fields_set__
        missing = [name for name in unset if name not in result.__dict__]
        if missing:
            raise ProtocolError(
                INTERNAL_ERROR, f"a result of this revision must carry {missing[0]}"
            )
        filled = result.model_copy()
        filled.__pydantic_fields_set__.update(unset)
        return filled

    def _check_built(self, message: Any) -> None:
        params = message.__dict__.get("params")
        meta = params.__dict__.get("meta") if isinstance(params, BaseModel) else None
        if isinstance(meta, BaseModel) and meta.__pydantic_extra__:
            # Declared keys are this revision's own; only extra ones can be minted. (A message
            # read from a peer is written back as it came: only the builders refuse them.)
            minted = self._minted_reserved_keys(meta.__pydantic_extra__)
            if minted:
                raise MessageBuildError(
                    f"_meta key {minted[0]!r} is reserved for MCP and not defined in {self.revision}"
                )

    def _minted_reserved_keys(self, meta: dict[str, Any]) -> list[str]:
        """Keys under an MCP-reserved prefix that this revision does not define."""
        reserved, known = self.reserved_labels, self.known_reserved_keys
        out = []
        for key in meta:
            prefix, _, _ = key.rpartition("/")
            labels = prefix.lower().split(".") if prefix else []
            if len(labels) >= 2 and labels[1] in reserved and key not in known:
                out.append(key)
        return out

    def _stamp(
        self, params: dict[str, Any] | None, method: str, envelope: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """Fill the per-request `_meta` envelope: protocol version, client capabilities, client info."""
        if self.methods[method].params is None:
            return params
        keys, as_data = self.envelope_keys, self._as_data
        data = dict(params or {})
        meta = dict(data.get("_meta") or {})
        meta.setdefault(keys["protocol_version"], envelope.get("protocol_version", self.revision))
        meta.setdefault(
            keys["client_capabilities"], as_data(envelope.get("client_capabilities")) or {}
        )
        if keys["client_info"] and envelope.get("client_info") is not None:
            meta.setdefault(keys["client_info"], as_data(envelope["client_info"]))
        data["_meta"] = meta
        return data
