"""Decode/peek/encode speed of the mcp_wire 2026-07-28 codec against the official `mcp_types`
package, on the official frames and on a malformed corpus built from them.

A benchmark, not a test: it prints figures (Markdown) and exits 0 whether or not the goals are
met. It exits non-zero only when the inputs are missing, when mcp_wire decodes (or peeks) a
frame wrongly, or when a malformed frame is not refused with the expected `ProtocolError` code
(a broken corpus or a broken codec: the frame is named).

Inputs: the complete JSON-RPC frames (objects with a "jsonrpc" member) among the official
examples, ``<spec>/examples/2026-07-28/<Type>/*.json``, read at run time from ``$MCP_SPEC_DIR``
or ``../shared/mcp-spec`` next to the repository (never copied into it), and the pinned
``schema/2026-07-28/schema.json`` of this repository (for the malformed corpus).

Everything below is measured in one process, on the same bytes:

* mcp_wire decode: ``codec.decode(raw)``; for a result response
  ``codec.decode_response(raw, method)``, the method known from the example's type
  (``CallToolResultResponse`` -> ``"tools/call"``, via ``codec.responses``).
* mcp_wire peek: ``codec.peek(raw)``, the envelope of a frame without validating its params or
  result (kind, id, method, routing name, protocol version). Left out, with a note, while the
  codec has no ``peek``. Its peer figure is the full mcp_types decode (below); the mcp_types
  envelope alone (``jsonrpc_message_adapter.validate_json(raw)``) is printed beside it.
* mcp_types decode, as its SDK does it: ``jsonrpc.jsonrpc_message_adapter.validate_json(raw)``
  (the generic envelope ``JSONRPCMessage``: request | notification | response | error, with
  ``params``/``result`` as ``dict[str, Any]``), then the specific type from ``mcp_types.methods``
  with version "2026-07-28": ``parse_client_request`` / ``parse_client_notification`` /
  ``parse_server_notification`` / ``parse_server_result(method, ...)`` for whichever direction's
  surface map (``CLIENT_REQUESTS``, ``CLIENT_NOTIFICATIONS``, ``SERVER_NOTIFICATIONS``,
  ``SERVER_RESULTS``) admits the method, chosen once per frame outside the timed loop as a
  receiving session knows its side. Each validates the body against the per-version surface
  model, then parses it into the version-free ``mcp_types`` model. An error response stops at
  the envelope: its ``ErrorData`` is the typed value the SDK hands over.
* mcp_wire encode: ``codec.encode(message)`` of the decoded message.
* mcp_types encode, as its SDK sends: ``model_dump(by_alias=True, mode="json",
  exclude_none=True)`` of the specific model, put into a new envelope model
  (``JSONRPCRequest(jsonrpc="2.0", id=..., **dump)``, ``JSONRPCNotification``,
  ``JSONRPCResponse(result=dump)``; an error response re-wraps its ``ErrorData`` as is:
  ``JSONRPCError(error=error_data)``), then
  ``jsonrpc_message_adapter.dump_json(envelope, by_alias=True, exclude_none=True)``.
* floors: ``json.loads(raw)`` and ``orjson.loads(raw)``.
* malformed frames: the same decode calls as for the valid frame the variant comes from (the
  same method for a result), in ``try``/``except ProtocolError`` (mcp_wire) or ``except
  Exception`` (mcp_types: pydantic's ValidationError, KeyError for an unknown method, ...); a
  refused frame counts as one call. The ``try`` is one extra Python call the valid figures do not
  pay (well under 0.1 µs).

The malformed corpus is built here, deterministically (``random.Random`` seeded with
``MCPGEN_BENCH_SEED``, default 2026, the frame and the kind), by editing the bytes of each official
frame in place so that the size stays the same (to the byte, but for a one-digit member given a
two-byte wrong value), the layout untouched:

* ``wrong_type``: a member of params / result / error whose schema type is definite (not "any
  JSON"; ``resultType``, ``ttlMs`` and ``cacheScope`` only when nothing else has one; ``_meta``
  only when nothing at all has one, then one of its members) gets a value of
  another JSON type of the same length (a string becomes a number or an array, anything else a
  string); -32602 inside a request's or notification's params, else -32600. The schema type is
  the frame's own (a result's: the one its method answers with), but for an error response the
  generic ``JSONRPCErrorResponse``, which any error frame may be read as.
* ``missing``: a member the schema requires (of params / result / error; the result members a
  modern codec may default, ``resultType``, ``ttlMs`` and ``cacheScope``, excepted; else of its
  ``_meta``; else of the frame: ``method`` or ``id``) is renamed to a junk member of the same
  length; code as for ``wrong_type``.
* ``garbled``: one structural character (``{}[]:,`` outside strings) becomes ``;``: -32700.
* ``unknown_method`` (requests and notifications): the method's last segment becomes junk
  letters of the same length: -32601.
* ``bad_jsonrpc``: ``"jsonrpc": "2.0"`` becomes "1.0", "2.1" or "3.0": -32600.

Before timing, mcp_wire must decode every valid frame to the model named like the example's
folder, re-encoding to the same JSON (type-strict; a result may gain the members the revision
requires and the example leaves out, with the values they read as: ``resultType`` "complete",
``ttlMs`` 0, ``cacheScope`` "private"); its peek must report the frame's kind, id,
method (and, where it reports them, the routing name and protocol version); every malformed
frame must raise ``ProtocolError`` with the code above. mcp_types must decode every valid frame
to its model of that name (the result's model for a response, ``ErrorData`` for an error),
re-encoding every member of the original (it may add defaults, and numbers compare as JSON
numbers: it reads a schema ``number`` as a float). A frame mcp_types cannot handle is left out
of every column and listed with why; the malformed frames mcp_types accepts are counted (their
time is what it spends on them all the same).

Method: after a warm-up, each round times every group of calls (an implementation over the
requests and notifications, or over the responses; a malformed kind over its frames)
(``time.perf_counter_ns``; per sample one untimed pass, so that each group runs with the caches
it uses rather than those of the one timed before it, then ``PASSES`` timed passes; the garbage
collector paused and the setup's objects frozen out of it; the order of the groups rotating
from round to round). A figure is the median over ``ROUNDS`` rounds of the time per message;
a figure over several groups adds up their medians: "all frames" those of
requests+notifications and of responses, the total of the malformed frames those of its kinds,
and the valid frames a malformed kind comes from those of its sources' groups, timed in the same
rounds (a median of round-by-round sums would let one preempted part spoil a round). Every
ratio is of two figures of the same run. This whole measurement is repeated ``RUNS`` times
(``MCPGEN_BENCH_RUNS``, default 5; ``MCPGEN_BENCH_ROUNDS`` rounds each, default 200): the
tables print each figure's median over the runs and its min–max, the goals are judged on that
median (and the runs that meet each are counted). The per-frame table times ``FRAME_CALLS``
calls of one frame in a row the same way (each malformed variant on its own, the column their
mean), median over ``FRAME_ROUNDS`` rounds (``MCPGEN_BENCH_FRAME_ROUNDS``, default 100), once.
``MCPGEN_BENCH_SHOW_CORPUS=1`` lists every malformed frame.

Large frames, built here (deterministic), are timed the same way as the per-frame table (decode
and encode, both sides, and the floors), since their costs are not those of small frames: a
tools/list result of 100 tools whose input schemas have properties (JSON values), a tools/call
result whose ``structuredContent`` holds 200 rows, and a resources/read result of 64 KiB of
text. They check mcp_wire's costs that grow with the size of a frame (reading and checking its
JSON values, `mcp_wire_runtime._numbers`).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import random
import re
import statistics
import string
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from pathlib import Path
from time import perf_counter_ns
from typing import Any

import orjson
from mcp_types import methods as peer_methods
from mcp_types.jsonrpc import (
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import BaseModel

import mcp_wire
from mcp_wire import ProtocolError


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise SystemExit(f"{name} must be an integer, not {value!r}") from None
    if number < minimum:
        raise SystemExit(f"{name} must be at least {minimum}")
    return number


REVISION = "2026-07-28"
# Samples are kept short (about a millisecond at most) so that on a busy machine most of them
# run without being preempted; the median then ignores the ones that were.
RUNS = _env_int("MCPGEN_BENCH_RUNS", 5)  # repetitions of the totals, for the run-to-run spread
ROUNDS = _env_int("MCPGEN_BENCH_ROUNDS", 200)  # timed rounds of the totals, per run
PASSES = 1  # timed passes over a group's frames per sample of the totals (after an untimed one)
FRAME_ROUNDS = _env_int("MCPGEN_BENCH_FRAME_ROUNDS", 100)  # timed rounds of the per-frame table
FRAME_CALLS = 20  # calls of one frame in a row, per sample of the per-frame table
WARMUP_ROUNDS = 5
SEED = _env_int("MCPGEN_BENCH_SEED", 2026, minimum=0)  # of the malformed corpus
SHOW_CORPUS = os.environ.get("MCPGEN_BENCH_SHOW_CORPUS", "") not in ("", "0")

GOAL_DECODE_SPEEDUP = 4.5  # mcp_wire decode vs mcp_types decode, at least
GOAL_DECODE_VS_JSON = 1.25  # mcp_wire decode time / json.loads time, at most
GOAL_PEEK_SPEEDUP = 10.0  # mcp_wire peek vs mcp_types decode, at least
GOAL_PEEK_VS_JSON = 0.5  # mcp_wire peek time / json.loads time, at most
GOAL_ENCODE_SPEEDUP = 3.0  # mcp_wire encode vs mcp_types encode, at least
GOAL_MALFORMED_VS_VALID = 1.5  # mcp_wire decode of a malformed frame / of its valid source, at most

# JSON-RPC error codes, spelled out here rather than taken from the codec under test.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schema" / REVISION / "schema.json"
CODEC = mcp_wire.codec(REVISION)
# The codec's peek, once it has one (the column is left out until then).
PEEK: Callable[[bytes], Any] | None = getattr(CODEC, "peek", None)

Call = Callable[[], object]
PeerParse = Callable[[str, str, Any], BaseModel]

SUBSETS: tuple[tuple[str, str], ...] = (
    ("calls", "requests + notifications"),
    ("responses", "responses (results + errors)"),
)
KINDS: tuple[tuple[str, str], ...] = (
    ("wrong_type", "member of the wrong type"),
    ("missing", "required member renamed"),
    ("garbled", "not JSON (garbled)"),
    ("unknown_method", "unknown method"),
    ("bad_jsonrpc", "jsonrpc not 2.0"),
)


@dataclass(frozen=True, slots=True)
class Frame:
    """One official example that is a complete JSON-RPC frame."""

    label: str  # the example's type, plus its file stem when the type has several frames
    type_name: str  # the example's folder: the schema type of the frame
    raw: bytes
    data: dict[str, Any]
    method: str | None  # the request method a result response answers
    kind: str  # "request" | "notification" | "result" | "error"

    @property
    def subset(self) -> str:
        return "calls" if self.kind in ("request", "notification") else "responses"


@dataclass(frozen=True, slots=True)
class PeerRoute:
    """How the mcp_types side reads one frame: its parse function and, for a result, the method."""

    parse: PeerParse | None  # None: an error response (the envelope is all)
    method: str | None


@dataclass(frozen=True, slots=True)
class Malformed:
    """A malformed variant of an official frame."""

    source: Frame
    kind: str  # one of KINDS
    raw: bytes
    code: int  # the ProtocolError code mcp_wire must raise
    what: str  # the edit, for messages


@dataclass(frozen=True, slots=True)
class BadCase:
    """A malformed frame with the callables the timing loops run (both refuse quietly)."""

    bad: Malformed
    ours: Call
    peer: Call
    peer_outcome: str  # "accepted" or the exception mcp_types raises


@dataclass(slots=True)
class Case:
    """A frame both sides decode correctly, with the callables the timing loops run."""

    frame: Frame
    ours_decode: Call
    peer_decode: Call
    peer_envelope: Call
    json_loads: Call
    orjson_loads: Call
    ours_peek: Call | None
    ours_encode: Call
    peer_encode: Call
    bad: list[BadCase] = field(default_factory=list[BadCase])


# ---------------------------------------------------------------------------- inputs


def spec_dir() -> Path:
    env = os.environ.get("MCP_SPEC_DIR")
    return Path(env) if env else REPO.parent / "shared" / "mcp-spec"


def frame_kind(data: Mapping[str, Any]) -> str:
    if "method" in data:
        return "request" if "id" in data else "notification"
    return "result" if "result" in data else "error"


def load_frames(root: Path) -> list[Frame]:
    """The complete JSON-RPC frames among the examples, in a fixed order."""
    examples = root / "examples" / REVISION
    if not examples.is_dir():
        raise SystemExit(f"no official examples at {examples} (set MCP_SPEC_DIR)")
    method_of = {cls.__name__: method for method, cls in CODEC.responses.items()}
    found: list[tuple[str, str, bytes, dict[str, Any]]] = []
    for path in sorted(examples.glob("*/*.json")):
        raw = path.read_bytes()
        data = json.loads(raw)
        if isinstance(data, dict) and "jsonrpc" in data:
            found.append((path.parent.name, path.stem, raw, data))
    if not found:
        raise SystemExit(f"no JSON-RPC frames among the examples in {examples}")
    per_type: dict[str, int] = {}
    for type_name, _, _, _ in found:
        per_type[type_name] = per_type.get(type_name, 0) + 1
    frames = []
    for type_name, stem, raw, data in found:
        method = None
        if "result" in data:
            method = method_of.get(type_name)
            if method is None:
                raise SystemExit(f"{type_name}: no method of {REVISION} answers with this type")
        label = type_name if per_type[type_name] == 1 else f"{type_name} ({stem})"
        frames.append(Frame(label, type_name, raw, data, method, frame_kind(data)))
    return frames


CACHING = {"ttlMs": 0, "cacheScope": "private"}  # the caching hints of a cacheable result


def _result_frame(label: str, method: str, result: dict[str, Any]) -> Frame:
    result = {"resultType": "complete", **result}
    data = {"jsonrpc": "2.0", "id": 1, "result": result}
    type_name = CODEC.responses[method].__name__
    return Frame(label, type_name, json.dumps(data).encode(), data, method, "result")


def large_frames() -> list[Frame]:
    """Large result frames, the same every run (see the module's docstring)."""
    schema = {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "A city name or a postal code"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
        },
        "required": ["location"],
    }
    tools = [
        {"name": f"tool_{i}", "description": f"Tool number {i}.", "inputSchema": schema}
        for i in range(100)
    ]
    rows = [
        {"id": i, "name": f"row {i}", "score": i * 1.25, "tags": ["a", "b"], "at": {"x": i}}
        for i in range(200)
    ]
    text = "".join(string.ascii_letters[i % 52] for i in range(64 * 1024))
    return [
        _result_frame("tools/list, 100 tools", "tools/list", {"tools": tools, **CACHING}),
        _result_frame(
            "tools/call, 200 rows of structuredContent",
            "tools/call",
            {
                "content": [{"type": "text", "text": "200 rows"}],
                "structuredContent": {"rows": rows},
            },
        ),
        _result_frame(
            "resources/read, 64 KiB of text",
            "resources/read",
            {"contents": [{"uri": "file:///a.txt", "text": text}], **CACHING},
        ),
    ]


# ---------------------------------------------------------------------------- the two sides


def ours_decoder(frame: Frame, raw: bytes) -> Call:
    """mcp_wire's decode of `raw` as a receiver of `frame` would call it."""
    if frame.method is not None:
        return partial(CODEC.decode_response, raw, frame.method)
    return partial(CODEC.decode, raw)


def _ours_refuse(raw: bytes) -> None:
    try:
        CODEC.decode(raw)
    except ProtocolError:
        pass


def _ours_refuse_response(raw: bytes, method: str) -> None:
    try:
        CODEC.decode_response(raw, method)
    except ProtocolError:
        pass


def peer_route(frame: Frame) -> PeerRoute:
    """The mcp_types parse function a receiving session would use for this frame."""
    data = frame.data
    m = peer_methods
    if "method" in data:
        key = (data["method"], REVISION)
        options: tuple[tuple[Mapping[tuple[str, str], Any], PeerParse], ...] = (
            (
                (m.CLIENT_REQUESTS, m.parse_client_request),
                (m.SERVER_REQUESTS, m.parse_server_request),
            )
            if "id" in data
            else (
                (m.CLIENT_NOTIFICATIONS, m.parse_client_notification),
                (m.SERVER_NOTIFICATIONS, m.parse_server_notification),
            )
        )
        for surface, parse in options:
            if key in surface:
                return PeerRoute(parse, None)
        raise LookupError(f"no mcp_types surface admits {data['method']!r} at {REVISION}")
    if "result" in data:
        assert frame.method is not None
        key = (frame.method, REVISION)
        if key in m.SERVER_RESULTS:
            return PeerRoute(m.parse_server_result, frame.method)
        if key in m.CLIENT_RESULTS:
            return PeerRoute(m.parse_client_result, frame.method)
        raise LookupError(f"no mcp_types surface admits a {frame.method!r} result at {REVISION}")
    return PeerRoute(None, None)


def peer_decode(raw: bytes, route: PeerRoute) -> tuple[JSONRPCMessage, BaseModel]:
    """The envelope, then the specific model (the ErrorData of an error response)."""
    envelope = jsonrpc_message_adapter.validate_json(raw)
    if isinstance(envelope, JSONRPCError):
        return envelope, envelope.error
    if route.parse is None:  # an error's route, and a malformed error that reads as another kind
        raise ValueError(f"not an error response: {type(envelope).__name__}")
    if isinstance(envelope, JSONRPCResponse):
        if route.method is None:
            raise ValueError("a response where a request or notification was expected")
        return envelope, route.parse(route.method, REVISION, envelope.result)
    return envelope, route.parse(envelope.method, REVISION, envelope.params)


def _peer_refuse(raw: bytes, route: PeerRoute) -> None:
    try:
        peer_decode(raw, route)
    except Exception:  # whatever mcp_types raises on a bad frame
        pass


def peer_envelope(raw: bytes) -> JSONRPCMessage:
    """mcp_types' own reading of the envelope alone (params/result as plain dicts)."""
    return jsonrpc_message_adapter.validate_json(raw)


def peer_encode(envelope: JSONRPCMessage, body: BaseModel) -> bytes:
    out: JSONRPCMessage
    if isinstance(envelope, JSONRPCError):
        assert isinstance(body, ErrorData)
        out = JSONRPCError(jsonrpc="2.0", id=envelope.id, error=body)
        return jsonrpc_message_adapter.dump_json(out, by_alias=True, exclude_none=True)
    dump = body.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(envelope, JSONRPCRequest):
        out = JSONRPCRequest(jsonrpc="2.0", id=envelope.id, **dump)
    elif isinstance(envelope, JSONRPCNotification):
        out = JSONRPCNotification(jsonrpc="2.0", **dump)
    else:
        out = JSONRPCResponse(jsonrpc="2.0", id=envelope.id, result=dump)
    return jsonrpc_message_adapter.dump_json(out, by_alias=True, exclude_none=True)


# ---------------------------------------------------------------------------- the malformed corpus


class CorpusError(Exception):
    """A malformed variant cannot be built from a frame."""


@dataclass(slots=True)
class Node:
    """Where a JSON value lies in the bytes, and an object's members (key span, value)."""

    start: int
    end: int
    members: dict[str, tuple[int, int, Node]] | None = None


_WHITESPACE = b" \t\n\r"
_SCALAR = re.compile(rb"-?[0-9][0-9.eE+-]*|true|false|null")


class Spans:
    """A small JSON reader that keeps the byte span of every value and of every object key, and
    where the structural characters outside strings are (the corpus edits bytes in place)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.structural: list[int] = []
        self.root, end = self._value(0)
        if self._skip(end) != len(raw):
            raise CorpusError("trailing bytes after the JSON value")

    def _skip(self, i: int) -> int:
        while i < len(self.raw) and self.raw[i] in _WHITESPACE:
            i += 1
        return i

    def _string_end(self, i: int) -> int:
        raw = self.raw
        if raw[i] != 0x22:
            raise CorpusError(f"a string expected at byte {i}")
        i += 1
        while raw[i] != 0x22:
            i += 2 if raw[i] == 0x5C else 1
        return i + 1

    def _expect(self, i: int, chars: bytes) -> int:
        if self.raw[i] not in chars:
            raise CorpusError(f"one of {chars!r} expected at byte {i}")
        self.structural.append(i)
        return self.raw[i]

    def _value(self, i: int) -> tuple[Node, int]:
        raw = self.raw
        i = self._skip(i)
        c = raw[i]
        if c == 0x22:
            end = self._string_end(i)
            return Node(i, end), end
        if c == 0x7B or c == 0x5B:  # { or [
            self.structural.append(i)
            closing = 0x7D if c == 0x7B else 0x5D
            members: dict[str, tuple[int, int, Node]] = {}
            j = self._skip(i + 1)
            if raw[j] == closing:
                self.structural.append(j)
                return Node(i, j + 1, members if c == 0x7B else None), j + 1
            while True:
                if c == 0x7B:
                    key_start = self._skip(j)
                    key_end = self._string_end(key_start)
                    j = self._skip(key_end)
                    self._expect(j, b":")
                    node, j = self._value(j + 1)
                    members[json.loads(raw[key_start:key_end])] = (key_start, key_end, node)
                else:
                    _, j = self._value(j)
                j = self._skip(j)
                if self._expect(j, b"," + bytes([closing])) == closing:
                    return Node(i, j + 1, members if c == 0x7B else None), j + 1
                j += 1
        match = _SCALAR.match(raw, i)
        if match is None:
            raise CorpusError(f"no JSON value at byte {i}")
        return Node(i, match.end()), match.end()

    def member(self, path: Sequence[str]) -> tuple[int, int, Node]:
        """Key span and value of the member at `path` (object keys from the root)."""
        node = self.root
        found: tuple[int, int, Node] | None = None
        for key in path:
            if node.members is None or key not in node.members:
                raise CorpusError(f"no member {'.'.join(path)}")
            found = node.members[key]
            node = found[2]
        if found is None:
            raise CorpusError("an empty path")
        return found


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


class Schema:
    """What the pinned schema says of a member: its JSON types, an object's members."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise SystemExit(f"no pinned schema at {path} (make fetch)")
        self.defs: dict[str, Any] = json.loads(path.read_bytes())["$defs"]

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def object(self, schema: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
        """An object schema's properties and required members (allOf parts merged)."""
        schema = self.resolve(schema)
        properties: dict[str, Any] = dict(schema.get("properties", {}))
        required = set(schema.get("required", ()))
        for part in schema.get("allOf", ()):
            more, also = self.object(part)
            for key, value in more.items():
                properties[key] = (
                    {"allOf": [properties[key], value]} if key in properties else value
                )
            required |= also
        return properties, required

    def branch(self, schema: Mapping[str, Any], value: Any) -> Mapping[str, Any]:
        """The anyOf branch a result takes: its resultType picks InputRequiredResult or not."""
        schema = self.resolve(schema)
        branches = schema.get("anyOf")
        if not branches:
            return schema
        interim = isinstance(value, dict) and value.get("resultType") == "input_required"
        for option in branches:
            is_interim = option.get("$ref", "").endswith("/InputRequiredResult")
            if is_interim == interim:
                return option
        raise CorpusError("no anyOf branch for this result")

    def types(self, schema: Mapping[str, Any]) -> set[str] | None:
        """The JSON types a member may have; None: any JSON."""
        schema = self.resolve(schema)
        if "const" in schema:
            return {_json_type(schema["const"])}
        if "enum" in schema:
            return {_json_type(v) for v in schema["enum"]}
        declared = schema.get("type")
        if declared is not None:
            found = {declared} if isinstance(declared, str) else set(declared)
            if "number" in found:
                found.add("integer")
            return found
        branches = schema.get("anyOf") or schema.get("oneOf")
        if branches:
            union: set[str] = set()
            for option in branches:
                types = self.types(option)
                if types is None:
                    return None
                union |= types
            return union
        for part in schema.get("allOf", ()):
            types = self.types(part)
            if types is not None:
                return types
        return None


# Result members a modern codec reads as these values when absent, and writes (documented):
# never "missing".
RESULT_DEFAULTS: dict[str, Any] = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
DEFAULTED_RESULT_MEMBERS = frozenset(RESULT_DEFAULTS)
BODIES = ("params", "result", "error")


def _junk(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(length))


def _wrong_value(allowed: set[str], length: int, rng: random.Random) -> tuple[bytes, str]:
    """A JSON value of none of the `allowed` types, `length` bytes long (2 at least)."""
    for kind in ("integer", "string", "array", "object"):
        if kind in allowed:
            continue
        if kind == "integer" and "string" in allowed and length <= 15:
            low = 10 ** (length - 1) if length > 1 else 0
            return str(rng.randint(low, 10**length - 1)).encode(), "a number"
        if kind == "string":
            return b'"' + _junk(rng, max(length - 2, 0)).encode() + b'"', "a string"
        if kind == "array":
            zeros = max((length - 1) // 2, 0)
            text = "[" + ",".join("0" * zeros) + "]"
            return text[:-1].encode() + b" " * max(length - len(text), 0) + b"]", "an array"
        if kind == "object":
            return b"{" + b" " * max(length - 2, 0) + b"}", "an object"
    raise CorpusError(f"no wrong type for a member of type {sorted(allowed)}")


def _edit(raw: bytes, start: int, end: int, new: bytes) -> bytes:
    return raw[:start] + new + raw[end:]


class CorpusBuilder:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def _levels(
        self, frame: Frame
    ) -> list[tuple[tuple[str, ...], dict[str, Any], set[str], dict[str, Any]]]:
        """(path, properties, required, value) of the frame's body, then of the body's `_meta`."""
        frame_props, _ = self.schema.object(self.schema.defs[self._frame_type(frame)])
        body = next(b for b in BODIES if b in frame.data)
        value = frame.data[body]
        body_schema = self.schema.branch(frame_props[body], value)
        props, required = self.schema.object(body_schema)
        levels: list[tuple[tuple[str, ...], dict[str, Any], set[str], dict[str, Any]]] = [
            ((body,), props, required, value)
        ]
        meta = value.get("_meta") if isinstance(value, dict) else None
        if isinstance(meta, dict) and "_meta" in props:
            meta_props, meta_required = self.schema.object(props["_meta"])
            levels.append(((body, "_meta"), meta_props, meta_required, meta))
        return levels

    @staticmethod
    def _frame_type(frame: Frame) -> str:
        """The schema type the frame must match: its own, but for an error response the generic
        one (a typed error, -32022 say, whose `data` is not its own is still a valid
        JSONRPCErrorResponse, which a receiver reads as such)."""
        return "JSONRPCErrorResponse" if frame.kind == "error" else frame.type_name

    def _code(self, frame: Frame, path: Sequence[str]) -> int:
        calls = frame.kind in ("request", "notification")
        return INVALID_PARAMS if calls and path[0] == "params" else INVALID_REQUEST

    def wrong_type(self, frame: Frame, spans: Spans, rng: random.Random) -> tuple[bytes, int, str]:
        for path, props, _, value in self._levels(frame):
            typed = {
                key: types
                for key in value
                if key != "_meta"
                and key in props
                and (types := self.schema.types(props[key])) is not None
            }
            # The members a modern codec defaults are tried last: they take a path of their own.
            keys = sorted(typed.keys() - DEFAULTED_RESULT_MEMBERS) or sorted(typed)
            if keys:
                key = rng.choice(keys)
                _, _, node = spans.member((*path, key))
                new, what = _wrong_value(typed[key], node.end - node.start, rng)
                raw = _edit(frame.raw, node.start, node.end, new)
                where = (*path, key)
                return raw, self._code(frame, where), f"{'.'.join(where)} is {what}"
        raise CorpusError("no member of a definite type in the body or its _meta")

    def missing(self, frame: Frame, spans: Spans, rng: random.Random) -> tuple[bytes, int, str]:
        candidates: list[tuple[str, ...]] = []
        for path, _, required, value in self._levels(frame):
            present = required & set(value)
            if path[0] == "result":
                present -= DEFAULTED_RESULT_MEMBERS
            keys = sorted(present - {"_meta"}) or sorted(present & {"_meta"})
            if keys:
                candidates = [(*path, key) for key in keys]
                break
        if not candidates:
            _, required = self.schema.object(self.schema.defs[self._frame_type(frame)])
            keys = sorted((required & set(frame.data)) - {"jsonrpc", *BODIES})
            candidates = [(key,) for key in keys]
        if not candidates:
            raise CorpusError("no required member to drop")
        where = rng.choice(candidates)
        key_start, key_end, _ = spans.member(where)
        parent = spans.member(where[:-1])[2] if len(where) > 1 else spans.root
        siblings = parent.members or {}
        junk = _junk(rng, key_end - key_start - 2)
        while junk in siblings:
            junk = _junk(rng, key_end - key_start - 2)
        raw = _edit(frame.raw, key_start + 1, key_end - 1, junk.encode())
        return raw, self._code(frame, where), f"{'.'.join(where)} renamed {junk!r}"

    def garbled(self, frame: Frame, spans: Spans, rng: random.Random) -> tuple[bytes, int, str]:
        at = rng.choice(spans.structural)
        char = chr(frame.raw[at])
        return _edit(frame.raw, at, at + 1, b";"), PARSE_ERROR, f"{char!r} at byte {at} is ';'"

    def unknown_method(
        self, frame: Frame, spans: Spans, rng: random.Random
    ) -> tuple[bytes, int, str]:
        _, _, node = spans.member(("method",))
        method = frame.data["method"]
        head, slash, tail = method.rpartition("/")
        name = method
        while name in CODEC.methods:
            name = head + slash + _junk(rng, len(tail))
        raw = _edit(frame.raw, node.start + 1, node.end - 1, name.encode())
        return raw, METHOD_NOT_FOUND, f"method {name!r}"

    def bad_jsonrpc(self, frame: Frame, spans: Spans, rng: random.Random) -> tuple[bytes, int, str]:
        _, _, node = spans.member(("jsonrpc",))
        value = rng.choice(("1.0", "2.1", "3.0"))
        raw = _edit(frame.raw, node.start, node.end, f'"{value}"'.encode())
        return raw, INVALID_REQUEST, f"jsonrpc {value!r}"

    def variants(self, frame: Frame) -> list[Malformed]:
        try:
            spans = Spans(frame.raw)
        except (CorpusError, IndexError) as exc:
            raise SystemExit(f"malformed corpus: cannot read {frame.label}: {exc}") from None
        out: list[Malformed] = []
        for kind, _ in KINDS:
            if kind == "unknown_method" and frame.subset != "calls":
                continue
            rng = random.Random(f"{SEED}:{frame.label}:{kind}")
            try:
                raw, code, what = getattr(self, kind)(frame, spans, rng)
            except CorpusError as exc:
                raise SystemExit(
                    f"malformed corpus: no {kind} variant of {frame.label}: {exc}"
                ) from None
            out.append(Malformed(frame, kind, raw, code, what))
        return out


# ---------------------------------------------------------------------------- correctness


def same_json(a: Any, b: Any) -> bool:
    """Equal JSON values, type-strict (1 and 1.0 differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def keeps_json(original: Any, copy: Any) -> bool:
    """Every member of `original` is in `copy` with an equal value (`copy` may add members).

    Numbers compare as JSON numbers (50 and 50.0 are equal): mcp_types reads a schema `number`
    as a float, which is the same value on the wire.
    """
    if isinstance(original, int | float) and not isinstance(original, bool):
        return isinstance(copy, int | float) and not isinstance(copy, bool) and original == copy
    if isinstance(original, dict):
        return isinstance(copy, dict) and all(
            k in copy and keeps_json(v, copy[k]) for k, v in original.items()
        )
    if isinstance(original, list):
        return (
            isinstance(copy, list)
            and len(original) == len(copy)
            and all(keeps_json(x, y) for x, y in zip(original, copy, strict=True))
        )
    return type(original) is type(copy) and bool(original == copy)


def check_ours(frame: Frame) -> BaseModel:
    """mcp_wire's message of `frame`; exits when it is not the right model or not lossless."""
    try:
        message = ours_decoder(frame, frame.raw)()
    except Exception as exc:  # mcp_wire must decode every official frame
        raise SystemExit(f"mcp_wire cannot decode {frame.label}: {exc}") from exc
    if not isinstance(message, BaseModel) or type(message).__name__ != frame.type_name:
        raise SystemExit(
            f"mcp_wire decodes {frame.label} as {type(message).__name__}, not {frame.type_name}"
        )
    written = json.loads(CODEC.encode(message))
    expected = frame.data
    if isinstance(written.get("result"), dict) and isinstance(expected.get("result"), dict):
        # Encode writes a valid frame of its revision: the result members the example leaves
        # out and the revision requires are written with the values they were read as.
        added = {k: v for k, v in written["result"].items() if k not in expected["result"]}
        if all(k in RESULT_DEFAULTS and same_json(v, RESULT_DEFAULTS[k]) for k, v in added.items()):
            expected = {**expected, "result": {**expected["result"], **added}}
    if not same_json(written, expected):
        raise SystemExit(f"mcp_wire does not re-encode {frame.label} to the same JSON")
    return message


def _peeked(answer: Any, name: str) -> Any:
    if isinstance(answer, Mapping):
        return answer.get(name)  # pyright: ignore[reportUnknownMemberType]
    return getattr(answer, name, None)


def _has(answer: Any, name: str) -> bool:
    return name in answer if isinstance(answer, Mapping) else hasattr(answer, name)


ROUTING_NAMES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def check_peek(frame: Frame, peek: Callable[[bytes], Any]) -> None:
    """Exits when peek's answer does not match the frame (kind, id, method, routing name,
    protocol version: the last two where the answer has them)."""
    try:
        answer = peek(frame.raw)
    except Exception as exc:  # peek must read every official frame
        raise SystemExit(f"mcp_wire cannot peek {frame.label}: {exc!r}") from exc
    data = frame.data
    params: dict[str, Any] = data.get("params") or {}
    meta: dict[str, Any] = params.get("_meta") or {}
    kind = _peeked(answer, "kind")
    wrong: list[str] = []
    if kind != frame.kind:
        wrong.append(f"kind {kind!r}, not {frame.kind!r}")
    for name, expected in (("id", data.get("id")), ("method", data.get("method"))):
        got = _peeked(answer, name)
        if got != expected or type(got) is not type(expected):
            wrong.append(f"{name} {got!r}, not {expected!r}")
    routing = ROUTING_NAMES.get(data.get("method", ""))
    if routing is not None:
        holder = routing if _has(answer, routing) else "name"
        if _has(answer, holder) and _peeked(answer, holder) != params.get(routing):
            wrong.append(f"{holder} {_peeked(answer, holder)!r}, not {params.get(routing)!r}")
    if _has(answer, "protocol_version"):
        got = _peeked(answer, "protocol_version")
        if got != meta.get(PROTOCOL_VERSION_KEY):
            wrong.append(f"protocol_version {got!r}, not {meta.get(PROTOCOL_VERSION_KEY)!r}")
    if wrong:
        raise SystemExit(f"mcp_wire peeks {frame.label} wrongly: {'; '.join(wrong)}")


def check_peer(frame: Frame) -> tuple[PeerRoute, JSONRPCMessage, BaseModel]:
    """mcp_types' reading of `frame`; raises ValueError (why) when it cannot decode it."""
    try:
        route = peer_route(frame)
        envelope, body = peer_decode(frame.raw, route)
        encoded = peer_encode(envelope, body)
    except Exception as exc:  # the reason is reported, the frame left out
        first_line = (str(exc).splitlines() or [""])[0]
        raise ValueError(f"{type(exc).__name__}: {first_line}") from None
    expected = frame.type_name.removesuffix("Response") if frame.method else frame.type_name
    if isinstance(envelope, JSONRPCError):
        expected = "ErrorData"
    if type(body).__name__ != expected:
        raise ValueError(f"decodes as {type(body).__name__}, not {expected}")
    if not keeps_json(frame.data, json.loads(encoded)):
        raise ValueError("loses or changes members of the frame")
    return route, envelope, body


def check_malformed(bad: Malformed) -> str | None:
    """Why mcp_wire's answer to a malformed frame is wrong (None: the expected ProtocolError)."""
    try:
        ours_decoder(bad.source, bad.raw)()
    except ProtocolError as exc:
        if exc.code == bad.code:
            return None
        return f"ProtocolError {exc.code} ({exc.message}), not {bad.code}"
    except Exception as exc:  # nothing else may escape decode
        return f"raises {type(exc).__name__}: {exc}"
    return f"accepted, not refused with {bad.code}"


def check_peek_refuses(bad: Malformed, peek: Callable[[bytes], Any]) -> str | None:
    """Why peek's answer to a frame that is not JSON, or not JSON-RPC 2.0, is wrong (None: the
    ProtocolError a decode raises). Peek does not judge params, so other kinds are not asked."""
    if bad.kind not in ("garbled", "bad_jsonrpc"):
        return None
    try:
        peek(bad.raw)
    except ProtocolError as exc:
        return None if exc.code == bad.code else f"peek: ProtocolError {exc.code}, not {bad.code}"
    except Exception as exc:  # nothing else may escape peek
        return f"peek raises {type(exc).__name__}: {exc}"
    return f"peek accepts it, not refused with {bad.code}"


def peer_outcome(raw: bytes, route: PeerRoute) -> str:
    try:
        peer_decode(raw, route)
    except Exception as exc:  # what mcp_types raises, reported
        return type(exc).__name__
    return "accepted"


def build_cases(
    frames: Sequence[Frame],
) -> tuple[list[Case], list[tuple[str, str]], list[str]]:
    builder = CorpusBuilder(Schema(SCHEMA))
    cases: list[Case] = []
    excluded: list[tuple[str, str]] = []
    corpus_errors: list[str] = []
    for frame in frames:
        message = check_ours(frame)
        if PEEK is not None:
            check_peek(frame, PEEK)
        variants = builder.variants(frame)
        for bad in variants:
            why = check_malformed(bad)
            if why is None and PEEK is not None:
                why = check_peek_refuses(bad, PEEK)
            if why is not None:
                corpus_errors.append(f"{frame.label} [{bad.kind}: {bad.what}]: {why}")
        try:
            route, envelope, body = check_peer(frame)
        except ValueError as exc:
            excluded.append((frame.label, str(exc)))
            continue
        case = _case(frame, message, route, envelope, body)
        for bad in variants:
            ours: Call = (
                partial(_ours_refuse_response, bad.raw, frame.method)
                if frame.method is not None
                else partial(_ours_refuse, bad.raw)
            )
            peer = partial(_peer_refuse, bad.raw, route)
            case.bad.append(BadCase(bad, ours, peer, peer_outcome(bad.raw, route)))
        cases.append(case)
    return cases, excluded, corpus_errors


def _case(
    frame: Frame, message: BaseModel, route: PeerRoute, envelope: JSONRPCMessage, body: BaseModel
) -> Case:
    return Case(
        frame=frame,
        ours_decode=ours_decoder(frame, frame.raw),
        peer_decode=partial(peer_decode, frame.raw, route),
        peer_envelope=partial(peer_envelope, frame.raw),
        json_loads=partial(json.loads, frame.raw),
        orjson_loads=partial(orjson.loads, frame.raw),
        ours_peek=partial(PEEK, frame.raw) if PEEK is not None else None,
        ours_encode=partial(CODEC.encode, message),
        peer_encode=partial(peer_encode, envelope, body),
    )


def large_cases(frames: Sequence[Frame]) -> list[Case]:
    """The large frames' cases (no malformed variants); both sides must read each."""
    cases = []
    for frame in frames:
        message = check_ours(frame)
        try:
            route, envelope, body = check_peer(frame)
        except ValueError as exc:
            raise SystemExit(f"mcp_types cannot decode {frame.label}: {exc}") from None
        cases.append(_case(frame, message, route, envelope, body))
    return cases


# ---------------------------------------------------------------------------- timing

IMPLEMENTATIONS: tuple[tuple[str, str], ...] = (
    ("ours_decode", "mcp_wire decode"),
    ("peer_decode", "mcp_types decode"),
    ("ours_peek", "mcp_wire peek"),
    ("peer_envelope", "mcp_types envelope only"),
    ("json_loads", "json.loads"),
    ("orjson_loads", "orjson.loads"),
    ("ours_encode", "mcp_wire encode"),
    ("peer_encode", "mcp_types encode"),
)


def sample(calls: Sequence[Call], repeat: int) -> int:
    """Nanoseconds for `repeat` passes over `calls`, after one untimed pass.

    The untimed pass refills the caches the previous group evicted, so every group is timed in
    the same warm state.
    """
    for call in calls:
        call()
    start = perf_counter_ns()
    for _ in range(repeat):
        for call in calls:
            call()
    return perf_counter_ns() - start


def time_groups(groups: Mapping[str, Sequence[Call]], rounds: int) -> dict[str, list[int]]:
    """Per group, the nanoseconds of each round's sample (a pass over the group's calls)."""
    keys = list(groups)
    samples: dict[str, list[int]] = {key: [] for key in keys}
    for round_ in range(WARMUP_ROUNDS + rounds):
        gc.collect()
        shift = round_ % len(keys)
        for key in keys[shift:] + keys[:shift]:
            elapsed = sample(groups[key], PASSES)
            if round_ >= WARMUP_ROUNDS:
                samples[key].append(elapsed)
    return samples


def _us(ns_per_pass: float, calls: int) -> float:
    return ns_per_pass / calls / 1000


Figures = dict[tuple[str, ...], float]


@dataclass(frozen=True, slots=True)
class Plan:
    """What one run of the totals times, and how the figures are put together."""

    groups: dict[str, list[Call]]
    counts: dict[str, int]  # calls per pass of each group
    impls: tuple[str, ...]  # the implementations timed (peek only when there is one)
    subsets: tuple[str, ...]  # the subsets that have frames
    kinds: tuple[str, ...]  # the malformed kinds
    kind_subsets: dict[str, tuple[str, ...]]  # the subsets whose frames a kind comes from


def make_plan(cases: Sequence[Case]) -> Plan:
    impls = tuple(
        key for key, _ in IMPLEMENTATIONS if key != "ours_peek" or cases[0].ours_peek is not None
    )
    subsets = tuple(s for s, _ in SUBSETS if any(c.frame.subset == s for c in cases))
    groups: dict[str, list[Call]] = {}
    for impl in impls:
        for subset in subsets:
            calls = [getattr(c, impl) for c in cases if c.frame.subset == subset]
            groups[f"{impl}:{subset}"] = calls
    kinds = tuple(k for k, _ in KINDS if any(b.bad.kind == k for c in cases for b in c.bad))
    kind_subsets: dict[str, tuple[str, ...]] = {}
    for kind in kinds:
        bads = [b for c in cases for b in c.bad if b.bad.kind == kind]
        covered = tuple(s for s in subsets if any(b.bad.source.subset == s for b in bads))
        expected = [c.frame for c in cases if c.frame.subset in covered]
        if [b.bad.source for b in bads] != expected:
            raise SystemExit(f"malformed corpus: {kind} does not cover its subsets frame by frame")
        kind_subsets[kind] = covered
        groups[f"bad_ours:{kind}"] = [b.ours for b in bads]
        groups[f"bad_peer:{kind}"] = [b.peer for b in bads]
    counts = {key: len(calls) for key, calls in groups.items()}
    return Plan(groups, counts, impls, subsets, kinds, kind_subsets)


def run_figures(plan: Plan, samples: Mapping[str, list[int]]) -> Figures:
    """µs per message and ratios of one run of the totals.

    A group's figure is the median of its samples; a figure over several groups (all frames,
    all malformed kinds, the valid sources of a kind) adds up their medians: a sum of samples
    taken round by round would let one preempted sample of any part spoil the round, and on a
    busy machine the median of such sums drifts up with the number of parts.
    """
    med = {key: statistics.median(values) for key, values in samples.items()}
    fig: Figures = {}
    whole = (*plan.subsets, "all")
    for impl in plan.impls:
        for subset in plan.subsets:
            key = f"{impl}:{subset}"
            fig["us", impl, subset] = _us(med[key], plan.counts[key])
        keys = [f"{impl}:{s}" for s in plan.subsets]
        fig["us", impl, "all"] = _us(sum(med[k] for k in keys), sum(plan.counts[k] for k in keys))
    for subset in whole:

        def us(impl: str, subset: str = subset) -> float:
            return fig["us", impl, subset]

        fig["ratio", "decode_speedup", subset] = us("peer_decode") / us("ours_decode")
        fig["ratio", "decode_vs_json", subset] = us("ours_decode") / us("json_loads")
        fig["ratio", "peer_decode_vs_json", subset] = us("peer_decode") / us("json_loads")
        if "ours_peek" in plan.impls:
            fig["ratio", "peek_speedup", subset] = us("peer_decode") / us("ours_peek")
            fig["ratio", "peek_vs_json", subset] = us("ours_peek") / us("json_loads")
            fig["ratio", "peek_vs_envelope", subset] = us("peer_envelope") / us("ours_peek")
        fig["ratio", "encode_speedup", subset] = us("peer_encode") / us("ours_encode")
        fig["ratio", "encode_vs_json", subset] = us("ours_encode") / us("json_loads")
    totals = {"ours": 0.0, "peer": 0.0, "ours_valid": 0.0, "peer_valid": 0.0}
    for kind in plan.kinds:
        n = plan.counts[f"bad_ours:{kind}"]
        covered = plan.kind_subsets[kind]
        ns_per_pass = {
            "ours": med[f"bad_ours:{kind}"],
            "peer": med[f"bad_peer:{kind}"],
            "ours_valid": sum(med[f"ours_decode:{s}"] for s in covered),
            "peer_valid": sum(med[f"peer_decode:{s}"] for s in covered),
        }
        for side, ns in ns_per_pass.items():
            fig["bad", side, kind] = _us(ns, n)
            totals[side] += ns
    n_all = sum(plan.counts[f"bad_ours:{kind}"] for kind in plan.kinds)
    for side, ns in totals.items():
        fig["bad", side, "total"] = _us(ns, n_all)
    for kind in (*plan.kinds, "total"):
        ours, peer = fig["bad", "ours", kind], fig["bad", "peer", kind]
        fig["ratio", "bad_vs_valid", kind] = ours / fig["bad", "ours_valid", kind]
        fig["ratio", "peer_bad_vs_valid", kind] = peer / fig["bad", "peer_valid", kind]
        fig["ratio", "bad_speedup", kind] = peer / ours
    return fig


def time_frames(cases: Sequence[Case], keys: Sequence[str]) -> list[dict[str, float]]:
    """Median µs per call of each implementation in `keys` and of each malformed variant
    (``bad:<index>``), frame by frame."""
    units: list[list[tuple[str, Call]]] = []
    for case in cases:
        calls: list[tuple[str, Call]] = [(key, getattr(case, key)) for key in keys]
        calls += [(f"bad:{i}", b.ours) for i, b in enumerate(case.bad)]
        units.append(calls)
    samples: list[dict[str, list[int]]] = [{key: [] for key, _ in unit} for unit in units]
    for round_ in range(WARMUP_ROUNDS + FRAME_ROUNDS):
        gc.collect()
        for unit, per_key in zip(units, samples, strict=True):
            shift = round_ % len(unit)
            for key, call in unit[shift:] + unit[:shift]:
                elapsed = sample([call], FRAME_CALLS)
                if round_ >= WARMUP_ROUNDS:
                    per_key[key].append(elapsed)
    return [
        {key: _us(statistics.median(values), FRAME_CALLS) for key, values in s.items()}
        for s in samples
    ]


# ---------------------------------------------------------------------------- report


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


class Spread:
    """One figure over the runs: median, min, max."""

    def __init__(self, runs: Sequence[Figures], key: tuple[str, ...]) -> None:
        self.values = [run[key] for run in runs]
        self.median = statistics.median(self.values)
        self.low = min(self.values)
        self.high = max(self.values)

    def show(self, unit: str = "") -> str:
        if len(self.values) == 1:
            return f"{self.median:.2f}{unit}"
        return f"{self.median:.2f}{unit} ({self.low:.2f}–{self.high:.2f})"

    @property
    def relative(self) -> float:
        return (self.high - self.low) / self.median if self.median else 0.0


def print_report(
    frames: Sequence[Frame],
    cases: Sequence[Case],
    excluded: Sequence[tuple[str, str]],
    plan: Plan,
    runs: Sequence[Figures],
    per_frame: Sequence[dict[str, float]],
) -> None:
    def spread(*key: str) -> Spread:
        return Spread(runs, key)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    n_subset = {s: sum(1 for c in cases if c.frame.subset == s) for s in plan.subsets}
    n_subset["all"] = len(cases)
    bads = [b for c in cases for b in c.bad]
    print(
        f"## mcp_wire {REVISION} codec vs mcp_types {version('mcp-types')}: "
        f"{len(cases)} of {len(frames)} official frames, {len(bads)} malformed\n"
    )
    print(
        f"Python {platform.python_version()}, pydantic {version('pydantic')} "
        f"(pydantic-core {version('pydantic-core')}), orjson {version('orjson')}; "
        f"totals: {RUNS} run(s), each the median of {ROUNDS} rounds of {PASSES} timed pass(es) "
        f"over the frames; figures: median of the runs (min–max); "
        f"per frame: median of {FRAME_ROUNDS} rounds of {FRAME_CALLS} calls; "
        f"load average {load:.2f} on {os.cpu_count()} CPUs.\n"
    )
    if excluded:
        print("Left out (mcp_types cannot decode them):\n")
        for label, why in excluded:
            print(f"- {label}: {why}")
        print()
    if "ours_peek" not in plan.impls:
        print("mcp_wire peek: this codec has no `peek` yet; its rows and goals are left out.\n")

    subset_names = dict(SUBSETS) | {"all": "all frames"}
    columns = (*plan.subsets, "all")
    head = " | ".join(f"{subset_names[s]} ({n_subset[s]})" for s in columns)
    print("Totals, µs per message:\n")
    print(f"| implementation | {head} | msg/s (all) | x json.loads (all) |")
    print("|---|" + "---:|" * (len(columns) + 2))
    for impl, name in IMPLEMENTATIONS:
        if impl not in plan.impls:
            continue
        cells = " | ".join(spread("us", impl, s).show() for s in columns)
        us_all = spread("us", impl, "all").median
        floor = spread("us", "json_loads", "all").median
        print(f"| {name} | {cells} | {1e6 / us_all:,.0f} | {us_all / floor:.2f} |")
    print()

    ratios = [
        ("decode_speedup", "decode speedup vs mcp_types"),
        ("decode_vs_json", "decode time / json.loads"),
        ("peer_decode_vs_json", "mcp_types decode time / json.loads"),
        ("peek_speedup", "peek speedup vs mcp_types decode"),
        ("peek_vs_json", "peek time / json.loads"),
        ("peek_vs_envelope", "peek speedup vs mcp_types envelope only"),
        ("encode_speedup", "encode speedup vs mcp_types"),
        ("encode_vs_json", "encode time / json.loads"),
    ]
    print("Ratios (each within one run; median of the runs, min–max):\n")
    print(f"| ratio | {' | '.join(subset_names[s] for s in columns)} | spread (all) |")
    print("|---|" + "---:|" * (len(columns) + 1))
    for key, name in ratios:
        if ("ratio", key, "all") not in runs[0]:
            continue
        cells = " | ".join(spread("ratio", key, s).show("x") for s in columns)
        print(f"| {name} | {cells} | {spread('ratio', key, 'all').relative:.0%} |")
    print()

    kind_names = dict(KINDS) | {"total": "all malformed"}
    print(
        "Malformed frames, µs per message (a refused frame is one call; 'valid' is the decode of "
        "the valid frames they come from, timed in the same rounds):\n"
    )
    print(
        "| kind | frames | mcp_wire | valid | malformed / valid | mcp_types | mcp_types valid "
        "| mcp_types malformed / valid | speedup vs mcp_types | mcp_types refuses |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in (*plan.kinds, "total"):
        mine = [b for b in bads if kind in ("total", b.bad.kind)]
        refused = sum(1 for b in mine if b.peer_outcome != "accepted")
        print(
            f"| {kind_names[kind]} | {len(mine)} | {spread('bad', 'ours', kind).show()} "
            f"| {spread('bad', 'ours_valid', kind).show()} "
            f"| {spread('ratio', 'bad_vs_valid', kind).show('x')} "
            f"| {spread('bad', 'peer', kind).show()} | {spread('bad', 'peer_valid', kind).show()} "
            f"| {spread('ratio', 'peer_bad_vs_valid', kind).show('x')} "
            f"| {spread('ratio', 'bad_speedup', kind).show('x')} | {refused}/{len(mine)} |"
        )
    print()
    accepted = [b for b in bads if b.peer_outcome == "accepted"]
    if accepted:
        print(
            f"mcp_types accepts {len(accepted)} malformed frame(s) "
            "(their time counts all the same):\n"
        )
        for b in accepted:
            print(f"- {b.bad.source.label} [{b.bad.kind}: {b.bad.what}]")
        print()
    size_delta = sum(len(b.bad.raw) - len(b.bad.source.raw) for b in bads)
    print(
        f"Corpus (seed {SEED}): {len(bads)} frames, {size_delta:+d} bytes against their sources "
        "in all; for example:\n"
    )
    for kind in plan.kinds:
        first = next(b for b in bads if b.bad.kind == kind)
        print(f"- {kind}: {first.bad.source.label}: {first.bad.what} ({first.bad.code})")
    print()
    if SHOW_CORPUS:
        for b in bads:
            print(
                f"- {b.bad.source.label} [{b.bad.kind}]: {b.bad.what}; "
                f"mcp_wire {b.bad.code}, mcp_types {b.peer_outcome}"
            )
        print()

    worst = max(plan.kinds, key=lambda k: spread("ratio", "bad_vs_valid", k).median)
    goals: list[tuple[str, tuple[str, ...], str, Callable[[float], bool]]] = [
        (
            "decode speedup vs mcp_types",
            ("ratio", "decode_speedup", "all"),
            f">= {GOAL_DECODE_SPEEDUP:g}x",
            lambda v: v >= GOAL_DECODE_SPEEDUP,
        ),
        (
            "decode time / json.loads",
            ("ratio", "decode_vs_json", "all"),
            f"<= {GOAL_DECODE_VS_JSON:g}x",
            lambda v: v <= GOAL_DECODE_VS_JSON,
        ),
        (
            "peek speedup vs mcp_types decode",
            ("ratio", "peek_speedup", "all"),
            f">= {GOAL_PEEK_SPEEDUP:g}x",
            lambda v: v >= GOAL_PEEK_SPEEDUP,
        ),
        (
            "peek time / json.loads",
            ("ratio", "peek_vs_json", "all"),
            f"<= {GOAL_PEEK_VS_JSON:g}x",
            lambda v: v <= GOAL_PEEK_VS_JSON,
        ),
        (
            "encode speedup vs mcp_types",
            ("ratio", "encode_speedup", "all"),
            f">= {GOAL_ENCODE_SPEEDUP:g}x",
            lambda v: v >= GOAL_ENCODE_SPEEDUP,
        ),
        (
            "malformed / valid, all malformed frames",
            ("ratio", "bad_vs_valid", "total"),
            f"<= {GOAL_MALFORMED_VS_VALID:g}x",
            lambda v: v <= GOAL_MALFORMED_VS_VALID,
        ),
        (
            f"malformed / valid, worst kind ({worst})",
            ("ratio", "bad_vs_valid", worst),
            f"<= {GOAL_MALFORMED_VS_VALID:g}x",
            lambda v: v <= GOAL_MALFORMED_VS_VALID,
        ),
    ]
    print("Goals (issue 8), on all frames, judged on the median of the runs:\n")
    print("| goal | measured | min–max | goal | | runs meeting it |")
    print("|---|---:|---:|---:|---|---:|")
    for name, key, goal, ok in goals:
        if key not in runs[0]:
            print(f"| {name} | — | — | {goal} | not measured (no peek) | |")
            continue
        s = Spread(runs, key)
        met = sum(1 for v in s.values if ok(v))
        print(
            f"| {name} | {s.median:.2f}x | {s.low:.2f}–{s.high:.2f}x | {goal} "
            f"| {verdict(ok(s.median))} | {met}/{len(s.values)} |"
        )
    print()

    has_peek = "ours_peek" in plan.impls
    print(
        "Per frame (µs per message; speedup = mcp_types / mcp_wire; malformed: the mean of the "
        "frame's malformed variants, and that mean / the valid decode). The same frame is "
        "called over and over, so its caches are warmer than in the totals, which cycle through "
        "the frames.\n"
    )
    peek_head = " peek | peek / json |" if has_peek else ""
    print(
        "| frame | bytes | decode ours | decode peer | speedup | json.loads | ours / json |"
        f"{peek_head} encode ours | encode peer | speedup | malformed | malformed / valid |"
    )
    print("|---|" + "---:|" * (11 + (2 if has_peek else 0)))
    for case, t in zip(cases, per_frame, strict=True):
        bad_us = statistics.fmean(t[f"bad:{i}"] for i in range(len(case.bad)))
        peek_cells = (
            f" {t['ours_peek']:.2f} | {t['ours_peek'] / t['json_loads']:.2f}x |" if has_peek else ""
        )
        print(
            f"| {case.frame.label} | {len(case.frame.raw)} "
            f"| {t['ours_decode']:.2f} | {t['peer_decode']:.2f} "
            f"| {t['peer_decode'] / t['ours_decode']:.2f}x "
            f"| {t['json_loads']:.2f} | {t['ours_decode'] / t['json_loads']:.2f}x |{peek_cells}"
            f" {t['ours_encode']:.2f} | {t['peer_encode']:.2f} "
            f"| {t['peer_encode'] / t['ours_encode']:.2f}x "
            f"| {bad_us:.2f} | {bad_us / t['ours_decode']:.2f}x |"
        )


def print_large(cases: Sequence[Case], per_frame: Sequence[dict[str, float]]) -> None:
    print(
        "\nLarge frames, built here (µs per message, timed as the per-frame table; speedup = "
        "mcp_types / mcp_wire):\n"
    )
    print(
        "| frame | bytes | decode ours | decode peer | speedup | json.loads | ours / json "
        "| encode ours | encode peer | speedup |"
    )
    print("|---|" + "---:|" * 9)
    for case, t in zip(cases, per_frame, strict=True):
        print(
            f"| {case.frame.label} | {len(case.frame.raw)} "
            f"| {t['ours_decode']:.1f} | {t['peer_decode']:.1f} "
            f"| {t['peer_decode'] / t['ours_decode']:.2f}x "
            f"| {t['json_loads']:.1f} | {t['ours_decode'] / t['json_loads']:.2f}x "
            f"| {t['ours_encode']:.1f} | {t['peer_encode']:.1f} "
            f"| {t['peer_encode'] / t['ours_encode']:.2f}x |"
        )


def main() -> int:
    frames = load_frames(spec_dir())
    cases, excluded, corpus_errors = build_cases(frames)
    if corpus_errors:
        print("Malformed frames mcp_wire does not refuse as expected:", file=sys.stderr)
        for line in corpus_errors:
            print(f"- {line}", file=sys.stderr)
        return 1
    if not cases:
        raise SystemExit("mcp_types decodes none of the frames: nothing to compare")
    large = large_cases(large_frames())
    plan = make_plan(cases)
    keys = [
        k
        for k in ("ours_decode", "peer_decode", "json_loads", "ours_peek", "ours_encode")
        if k in plan.impls
    ] + ["peer_encode"]
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.freeze()  # the models, schemas and frames: a collection between rounds skips them
    gc.disable()
    try:
        runs = [run_figures(plan, time_groups(plan.groups, ROUNDS)) for _ in range(RUNS)]
        per_frame = time_frames(cases, keys)
        per_large = time_frames(large, keys)
    finally:
        gc.unfreeze()
        if gc_was_enabled:
            gc.enable()
    print_report(frames, cases, excluded, plan, runs, per_frame)
    print_large(large, per_large)
    return 0


if __name__ == "__main__":
    sys.exit(main())
