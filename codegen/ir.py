"""The intermediate representation: everything mcpgen knows about one revision, read from its schema.

This is the only place where schema knowledge lives. Methods come from the definitions that pin
`method` to a constant; their kind and direction from the Client*/Server* request and
notification unions (and the modern InputRequest union); their results from an explicit
`<Base>ResultResponse` link, else the `<Base>Result` naming convention, else `EmptyResult`; the
era from the schema's structure (see `derive_era`). Templates only format this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from codegen.errors import CodegenError
from codegen.normalize import DEPRECATED_MARK, definitions_of, ref_name

Schema = dict[str, Any]


class Era(StrEnum):
    LEGACY = "legacy"
    MODERN = "modern"


class Direction(StrEnum):
    CLIENT_TO_SERVER = "client->server"
    SERVER_TO_CLIENT = "server->client"
    BOTH = "both"
    INPUT = "server->client (embedded input request)"


class Kind(StrEnum):
    REQUEST = "request"
    NOTIFICATION = "notification"
    INPUT_REQUEST = "input request"


@dataclass(frozen=True)
class Field:
    name: str
    required: bool
    type: str
    deprecated: bool = False  # the schema marks the member `deprecated`


@dataclass(frozen=True)
class Definition:
    name: str
    type: str
    fields: tuple[Field, ...]
    open: bool  # declares additionalProperties itself: extra members are part of its contract
    hoisted_from: str | None = None

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class Method:
    name: str
    kind: Kind
    direction: Direction
    message: str
    params: str | None
    params_required: bool
    params_inline: bool
    results: tuple[str, ...]  # possible result definitions; () for notifications
    result_link: str  # "response" | "name" | "empty" | ""
    results_in_union: bool
    task_result: str | None = None  # a task-augmented request may answer with this instead
    task_result_type: str | None = None  # modern: the task result's own `resultType` value
    cacheable: bool = False
    input_required: bool = False
    list_field: str | None = None  # paginated list results: the one array of items
    list_item: str | None = None
    deprecated: bool = False  # the schema marks its message definition `deprecated`

    @property
    def result(self) -> str | None:
        """The specific (final) result definition: neither interim nor the task result."""
        finals = [
            r for r in self.results if r not in self.interim_results and r != self.task_result
        ]
        return finals[-1] if finals else None

    interim_results: tuple[str, ...] = ()


@dataclass(frozen=True)
class ErrorCode:
    name: str
    code: int
    data_fields: tuple[str, ...]


@dataclass(frozen=True)
class Frames:
    """The JSON-RPC envelope definitions of a revision, found by their shape."""

    request_id: str  # the id type definition
    message_has_envelope: bool  # request/notification definitions carry jsonrpc (and id) themselves
    request: str  # generic request (method not pinned)
    notification: str
    result_response: str  # generic result response (result is the base Result)
    error_response: str  # generic error response (code not pinned)
    error: str  # the error object definition


@dataclass(frozen=True)
class MetaKeyRule:
    """`_meta` key naming, as the revision's MetaObject definition states it."""

    label: str  # regular expression of one prefix label
    name: str  # regular expression of the name part
    reserved_labels: tuple[str, ...]  # a prefix whose second label is one of these is MCP's
    known_keys: tuple[str, ...]  # reserved keys this revision defines

    @property
    def pattern(self) -> str:
        """A whole key: optional `label(.label)*/` prefix, then the name."""
        return rf"(?:{self.label}(?:\.{self.label})*/)?{self.name}"


@dataclass(frozen=True)
class MetaEnvelope:
    """Modern era: the per-request `_meta` object and its reserved keys."""

    definition: str
    protocol_version_key: str
    client_capabilities_key: str  # its value is a CAPABILITIES_TYPE
    client_info_key: str | None  # its value is an INFO_TYPE
    required: tuple[str, ...]
    log_level_key: str | None = None  # its value is a LOG_LEVEL_TYPE

    CAPABILITIES_TYPE = "ClientCapabilities"
    INFO_TYPE = "Implementation"
    LOG_LEVEL_TYPE = "LoggingLevel"


@dataclass(frozen=True)
class Revision:
    name: str
    era: Era
    derived_era: Era | None
    sha256: str
    definitions: dict[str, Definition]
    methods: tuple[Method, ...]
    errors: tuple[ErrorCode, ...]
    batching: bool
    result_type_required: bool
    meta_envelope: MetaEnvelope | None
    interim_result: str | None  # modern: the InputRequiredResult-like definition
    frames: Frames
    result_types: tuple[str, str] | None  # modern: (complete, interim) values of resultType
    meta_rule: MetaKeyRule | None
    signals: dict[str, bool] = field(default_factory=dict)
    # Legacy: the handshake request, which is never part of a batch.
    handshake: str | None = None
    # Modern: the interim result's optional members other than `_meta` and `resultType`, of
    # which an interim result carries at least one (MRTR: input requests or request state).
    interim_one_of: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return "v" + self.name.replace("-", "_")

    def method(self, name: str) -> Method | None:
        return next((m for m in self.methods if m.name == name), None)


class _Schema:
    """Reference-resolving reads over one normalized definitions table."""

    def __init__(self, defs: dict[str, Schema]) -> None:
        self.defs = defs

    def resolve(self, node: Any) -> Schema:
        seen = 0
        while isinstance(node, dict) and (name := ref_name(node)) is not None:
            if name not in self.defs:
                raise CodegenError(f"$ref to missing definition {name}")
            node, seen = self.defs[name], seen + 1
            if seen > 64:
                raise CodegenError(f"$ref cycle at {name}")
        return node if isinstance(node, dict) else {}

    def properties(self, node: Any) -> dict[str, Schema]:
        node = self.resolve(node)
        props: dict[str, Schema] = {}
        for part in node.get("allOf", []):
            props.update(self.properties(part))
        props.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else {})
        return props

    def variant_properties(self, node: Any) -> dict[str, Schema]:
        """Properties of a definition or of any member of a union definition."""
        node = self.resolve(node)
        props = self.properties(node)
        for member in node.get("anyOf", node.get("oneOf", [])):
            props = self.variant_properties(member) | props
        return props

    def required(self, node: Any) -> set[str]:
        node = self.resolve(node)
        req = set(node.get("required", []))
        for part in node.get("allOf", []):
            req |= self.required(part)
        return req

    def const(self, node: Any) -> Any:
        return self.resolve(node).get("const") if isinstance(node, dict) else None

    def members(self, union: str) -> list[str]:
        """Definition names a union stands for (anyOf of refs, a single ref, or an inlined copy)."""
        node = self.defs.get(union)
        if node is None:
            return []
        if (name := ref_name(node)) is not None:
            return [name]
        if "anyOf" in node or "oneOf" in node:
            return [n for m in node.get("anyOf", node.get("oneOf", [])) if (n := ref_name(m))]
        method = self.const(node.get("properties", {}).get("method"))
        if method is not None:  # single-member union inlined by upstream's generator
            return [
                n
                for n, d in sorted(self.defs.items())
                if n != union and self.method_of(d) == method
            ][:1]
        return []

    def method_of(self, node: Schema) -> str | None:
        value = (
            self.const(node.get("properties", {}).get("method")) if isinstance(node, dict) else None
        )
        return value if isinstance(value, str) else None


def type_summary(node: Any, depth: int = 0) -> str:
    """A short, stable description of a property schema, for changelogs."""
    if not isinstance(node, dict) or depth > 3:
        return "?"
    if (name := ref_name(node)) is not None:
        return name
    if "const" in node:
        return f"const {node['const']!r}"
    if "enum" in node:
        return "enum[" + ", ".join(repr(v) for v in node["enum"]) + "]"
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return f"{key}[" + ", ".join(type_summary(m, depth + 1) for m in node[key]) + "]"
    typ = node.get("type")
    if isinstance(typ, list):
        return "|".join(typ)
    if typ == "array":
        return f"array[{type_summary(node.get('items', {}), depth + 1)}]"
    if (
        typ == "object"
        and isinstance(node.get("additionalProperties"), dict)
        and "properties" not in node
    ):
        return f"map[{type_summary(node['additionalProperties'], depth + 1)}]"
    return typ if isinstance(typ, str) else "any"


def derive_era(s: _Schema, methods: set[str]) -> tuple[Era | None, dict[str, bool]]:
    """Modern: a per-request protocol version is required and there is no initialize; legacy: the reverse."""
    per_request_version = any(
        any(str(k).endswith("/protocolVersion") for k in d.get("required", []))
        for d in s.defs.values()
    )
    has_initialize = "initialize" in methods
    signals = {"per_request_version": per_request_version, "initialize": has_initialize}
    if per_request_version and not has_initialize:
        return Era.MODERN, signals
    if has_initialize and not per_request_version:
        return Era.LEGACY, signals
    return None, signals


def _definitions(s: _Schema, hoisted: dict[str, str]) -> dict[str, Definition]:
    out = {}
    for name, node in sorted(s.defs.items()):
        props = node.get("properties", {}) if isinstance(node.get("properties"), dict) else {}
        required = set(node.get("required", []))
        fields = tuple(
            Field(p, p in required, type_summary(v), bool(v.get(DEPRECATED_MARK)))
            for p, v in sorted(props.items())
        )
        typ = "object" if props or node.get("type") == "object" else type_summary(node)
        out[name] = Definition(name, typ, fields, "additionalProperties" in node, hoisted.get(name))
    return out


def _frames(s: _Schema, messages: list[str]) -> Frames:
    def shaped(has: set[str], lacks: set[str], pinned: str | None) -> list[str]:
        out = []
        for name, node in sorted(s.defs.items()):
            props = s.properties(node)
            if has <= props.keys() and not (lacks & props.keys()) and has <= s.required(node):
                if pinned is None or s.const(props.get(pinned)) is None:
                    out.append(name)
        return out

    def only(found: list[str], what: str) -> str:
        if not found:
            raise CodegenError(f"no {what} definition found")
        return min(found, key=len)  # the plain one, when typed variants share the shape

    request = only(shaped({"jsonrpc", "id", "method"}, set(), "method"), "generic JSON-RPC request")
    notification = only(
        shaped({"jsonrpc", "method"}, {"id"}, "method"), "generic JSON-RPC notification"
    )
    # The generic one: its result is `Result` (or inline), not one method's result or a union
    # of them (2026-07-28's `CallToolResultResponse`, whose name may well be the shorter).
    results = [
        n for n in shaped({"jsonrpc", "id", "result"}, set(), None)
        if ref_name(r := s.properties(s.defs[n])["result"]) == "Result"
        or (ref_name(r) is None and not ({"anyOf", "oneOf"} & r.keys()))
    ]  # fmt: skip
    error_responses = [
        n for n in shaped({"jsonrpc", "error"}, {"result"}, None)
        if s.const(s.properties(s.properties(s.defs[n])["error"]).get("code")) is None
    ]  # fmt: skip
    error_response = only(error_responses, "generic JSON-RPC error response")
    error = ref_name(s.properties(s.defs[error_response])["error"]) or ""
    request_id = ref_name(s.properties(s.defs[request])["id"]) or ""
    envelope = bool(messages) and all("jsonrpc" in s.properties(s.defs[m]) for m in messages)
    return Frames(
        request_id=request_id,
        message_has_envelope=envelope,
        request=request,
        notification=notification,
        result_response=only(results, "generic JSON-RPC result response"),
        error_response=error_response,
        error=error,
    )


def _list_field(s: _Schema, result: str | None) -> tuple[str | None, str | None]:
    """A paginated result's one array of items (`tools`, `prompts`, ...), if it has exactly one."""
    if result is None:
        return None, None
    props = s.properties(s.defs[result])
    if "nextCursor" not in props:
        return None, None
    arrays = [
        (name, ref_name(v.get("items", {})))
        for name, v in sorted(props.items())
        if v.get("type") == "array" and ref_name(v.get("items", {}))
    ]
    return arrays[0] if len(arrays) == 1 else (None, None)


_SECOND_LABEL = re.compile(r"second label is `([A-Za-z0-9-]+)` or `([A-Za-z0-9-]+)`")
_LABEL_RULE = "Labels MUST start with a letter and end with a letter or digit"
_NAME_RULE = "Unless empty, MUST start and end with an alphanumeric character"


def _meta_rule(s: _Schema) -> MetaKeyRule | None:
    """Read the key grammar from the MetaObject description, where the schema states it."""
    node = s.defs.get("MetaObject", {})
    text = node.get("description", "") if isinstance(node.get("description"), str) else ""
    reserved = _SECOND_LABEL.search(text)
    if not (reserved and _LABEL_RULE in text and _NAME_RULE in text):
        return None
    known = sorted(
        key
        for name, d in s.defs.items()
        if name.endswith("MetaObject")
        for key in s.properties(d)
        if "/" in key
    )
    return MetaKeyRule(
        label=r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?",
        name=r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?",
        reserved_labels=tuple(reserved.groups()),
        known_keys=tuple(dict.fromkeys(known)),
    )


_RESULT_TYPE_LINE = re.compile(r"^([a-z_]+) - (.*)$", re.MULTILINE)


def _result_types(s: _Schema, interim: str | None) -> tuple[str, str] | None:
    """(complete, interim) `resultType` values, as the ResultType definition describes them."""
    text = s.defs.get("ResultType", {}).get("description", "")
    if interim is None or not isinstance(text, str):
        return None
    values = _RESULT_TYPE_LINE.findall(text)
    interim_values = [v for v, line in values if interim in line]
    complete_values = [v for v, line in values if interim not in line]
    if len(interim_values) != 1 or len(complete_values) != 1:
        raise CodegenError(f"cannot read the resultType values from ResultType: {values}")
    return complete_values[0], interim_values[0]


def _meta_envelope(s: _Schema) -> MetaEnvelope | None:
    for name, node in sorted(s.defs.items()):
        required = [k for k in node.get("required", []) if str(k).endswith("/protocolVersion")]
        if not required:
            continue
        props = node.get("properties", {})
        by_ref = {ref_name(v): k for k, v in props.items() if ref_name(v)}
        caps = next(
            (
                k
                for k in node.get("required", [])
                if ref_name(props.get(k, {})) == MetaEnvelope.CAPABILITIES_TYPE
            ),
            None,
        )
        if caps is None:
            raise CodegenError(
                f"{name}: per-request meta without a required ClientCapabilities key"
            )
        return MetaEnvelope(
            name,
            required[0],
            caps,
            by_ref.get(MetaEnvelope.INFO_TYPE),
            tuple(node.get("required", [])),
            by_ref.get(MetaEnvelope.LOG_LEVEL_TYPE),
        )
    return None


def _errors(s: _Schema, hoisted: dict[str, str]) -> tuple[ErrorCode, ...]:
    found = []
    for name, node in sorted(s.defs.items()):
        if name in hoisted:
            continue
        props = s.properties(node)
        target = (
            props
            if isinstance(s.const(props.get("code")), int)
            else s.properties(props.get("error", {}))
        )
        code = s.const(target.get("code")) if target else None
        if (
            isinstance(code, int)
            and not isinstance(code, bool)
            and (name.endswith("Error") or "error" in props)
        ):
            data = tuple(sorted(s.properties(target.get("data", {}))))
            found.append(ErrorCode(name, code, data))
    return tuple(sorted(found, key=lambda e: (e.code, e.name)))


@dataclass(frozen=True)
class _ResultFacts:
    """What a revision's results say, read once for all its methods."""

    unions: dict[str, set[str]]  # "client", "server", "input" -> the results that side sends
    interim: str | None  # the interim (input-required) result, if the revision has one
    result_types: Any
    tagged: dict[str, str]  # an extension's result -> its own `resultType` value
    task_results: list[str]


def _era_of(s: _Schema, name: str, era_override: str | None) -> tuple[Era, Era | None, Any]:
    """The revision's era (derived from the schema, or set), the derived one, and its signals."""
    methods = {m for node in s.defs.values() if (m := s.method_of(node)) is not None}
    derived, signals = derive_era(s, methods)
    era = Era(era_override) if era_override else derived
    if era is None:
        raise CodegenError(
            f"{name}: cannot tell the era from the schema ({signals}); set era in schema/revisions.toml"
        )
    return era, derived, signals


def _message_sides(s: _Schema) -> dict[str, dict[Kind, set[str]]]:
    """Message definition -> kind -> the sides that send it (from the schema's unions)."""
    sides: dict[str, dict[Kind, set[str]]] = {}
    unions: tuple[tuple[str, Kind, str], ...] = (
        ("ClientRequest", Kind.REQUEST, "client"),
        ("ServerRequest", Kind.REQUEST, "server"),
        ("ClientNotification", Kind.NOTIFICATION, "client"),
        ("ServerNotification", Kind.NOTIFICATION, "server"),
        ("InputRequest", Kind.INPUT_REQUEST, "server"),
    )
    for union, kind, side in unions:
        for member in s.members(union):
            sides.setdefault(member, {}).setdefault(kind, set()).add(side)
    return sides


def _result_facts(s: _Schema) -> _ResultFacts:
    defs = s.defs
    unions = {
        "client": set(s.members("ClientResult")),
        "server": set(s.members("ServerResult")),
        "input": set(s.members("InputResponse")),
    }
    interim = next(
        (
            n
            for n in sorted(defs)
            if n.endswith("Result") and "inputRequests" in s.properties(defs[n])
        ),
        None,
    )
    result_types = _result_types(s, interim)
    # An extension's result tagged by a `resultType` of its own (a task), by that value.
    tagged = {
        n: kind
        for n, d in defs.items()
        if n.endswith("Result")
        and result_types is not None
        and isinstance(kind := s.const(s.properties(d).get("resultType", {})), str)
        and kind not in result_types
    }
    task_results = sorted(
        n
        for n, d in defs.items()
        if n.endswith("Result")
        and (("task" in s.required(d) and "task" in s.properties(d)) or n in tagged)
    )
    return _ResultFacts(unions, interim, result_types, tagged, task_results)


def _direction(kind: Kind, side_set: set[str]) -> Direction:
    if kind is Kind.INPUT_REQUEST:
        return Direction.INPUT
    if side_set == {"client", "server"}:
        return Direction.BOTH
    return Direction.CLIENT_TO_SERVER if side_set == {"client"} else Direction.SERVER_TO_CLIENT


def _answers(
    s: _Schema,
    message: str,
    kind: Kind,
    side_set: set[str],
    params: str | None,
    facts: _ResultFacts,
) -> tuple[tuple[str, ...], str, bool, str | None]:
    """A request's results, their link, whether the answering side's union holds them all, and
    its task result."""
    results, link = _results_of(s, message)
    answering = {"client": "server", "server": "client"}
    pool: set[str] = set()
    if kind is Kind.INPUT_REQUEST:
        pool = facts.unions["input"]
    else:
        for side in side_set:
            pool |= facts.unions[answering[side]]
    in_union = all(r in pool or r in ("EmptyResult", "Result") for r in results)
    # A task result the response definition lists is the method's task result, not its final
    # result (that stays the other one, see `Method.result`).
    task_result = None
    listed = [r for r in results if r in facts.task_results]
    if listed and len(listed) < len(results):
        task_result = listed[0]
    elif params and "task" in s.variant_properties(s.defs[params]) and facts.task_results:
        task_result = facts.task_results[0]
    return results, link, in_union, task_result


def _method(
    s: _Schema,
    name: str,
    message: str,
    kind: Kind,
    side_set: set[str],
    hoisted: dict[str, str],
    facts: _ResultFacts,
) -> Method:
    node = s.defs[message]
    method = s.method_of(node)
    if method is None:
        raise CodegenError(f"{name}: union member {message} has no constant method")
    params_node = node.get("properties", {}).get("params")
    params = ref_name(params_node) if params_node else None
    if params_node and params is None:
        raise CodegenError(f"{name}: {message}.params is neither a definition nor hoisted")
    results: tuple[str, ...] = ()
    link, in_union, task_result = "", True, None
    if kind is not Kind.NOTIFICATION:
        results, link, in_union, task_result = _answers(s, message, kind, side_set, params, facts)
    interim = facts.interim
    final = [r for r in results if r != interim and r != task_result]
    list_field, list_item = _list_field(s, final[-1] if final else None)
    cacheable = bool(results) and all(
        {"ttlMs", "cacheScope"} <= set(s.properties(s.defs[r])) for r in final
    )
    return Method(
        name=method,
        kind=kind,
        direction=_direction(kind, side_set),
        message=message,
        params=params,
        params_required="params" in node.get("required", []),
        params_inline=params in hoisted,
        results=results,
        result_link=link,
        results_in_union=in_union,
        task_result=task_result,
        task_result_type=facts.tagged.get(task_result or ""),
        cacheable=cacheable,
        input_required=interim is not None and interim in results,
        interim_results=((interim,) if interim is not None and interim in results else ()),
        list_field=list_field,
        list_item=list_item,
        deprecated=bool(node.get(DEPRECATED_MARK)),
    )


def build_revision(
    name: str,
    normalized: Schema,
    hoisted: dict[str, str],
    sha256: str,
    era_override: str | None = None,
) -> Revision:
    s = _Schema(definitions_of(normalized))
    defs = s.defs
    era, derived, signals = _era_of(s, name, era_override)
    facts = _result_facts(s)
    interim = facts.interim
    methods = [
        _method(s, name, message, kind, side_set, hoisted, facts)
        for message, kinds in sorted(_message_sides(s).items())
        for kind, side_set in kinds.items()
    ]
    methods.sort(key=lambda m: m.name)
    seen: set[str] = set()
    for m in methods:
        if m.name in seen:
            raise CodegenError(f"{name}: method {m.name} is defined twice")
        seen.add(m.name)

    batching = any(
        s.resolve(member).get("type") == "array"
        for member in defs.get("JSONRPCMessage", {}).get("anyOf", [])
    )
    result_required = "resultType" in s.required(defs.get("Result", {}))
    signals |= {
        "batching": batching,
        "result_type_required": result_required,
        "interim_result": interim is not None,
    }
    return Revision(
        name=name,
        era=era,
        derived_era=derived,
        sha256=sha256,
        definitions=_definitions(s, hoisted),
        methods=tuple(methods),
        errors=_errors(s, hoisted),
        batching=batching,
        result_type_required=result_required,
        meta_envelope=_meta_envelope(s),
        interim_result=interim,
        meta_rule=_meta_rule(s),
        result_types=facts.result_types,
        frames=_frames(s, [m.message for m in methods if m.kind is not Kind.INPUT_REQUEST]),
        signals=signals,
        handshake="initialize" if "initialize" in seen else None,
        interim_one_of=_interim_one_of(s, interim),
    )


def _interim_one_of(s: _Schema, interim: str | None) -> tuple[str, ...]:
    if interim is None:
        return ()
    node = s.resolve(s.defs.get(interim, {}))
    required = set(s.required(node))
    return tuple(
        sorted(
            p for p in s.properties(node) if p not in required and p not in ("_meta", "resultType")
        )
    )


def _results_of(s: _Schema, message: str) -> tuple[tuple[str, ...], str]:
    base = message.removesuffix("Request")
    response = s.defs.get(f"{base}ResultResponse")
    if response is not None:
        result = response.get("properties", {}).get("result", {})
        if (single := ref_name(result)) is not None:
            return (single,), "response"
        members = tuple(n for m in result.get("anyOf", []) if (n := ref_name(m)))
        if members:
            return members, "response"
    if f"{base}Result" in s.defs:
        return (f"{base}Result",), "name"
    return ("EmptyResult" if "EmptyResult" in s.defs else "Result",), "empty"
