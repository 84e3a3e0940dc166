"""Decode/encode speed of the mcp_wire 2026-07-28 codec against the official `mcp_types` package.

A benchmark, not a test: it prints figures (Markdown) and exits 0 whether or not the goals are
met. It exits non-zero only when the inputs are missing or mcp_wire decodes a frame wrongly.

Inputs: the complete JSON-RPC frames (objects with a "jsonrpc" member) among the official
examples, ``<spec>/examples/2026-07-28/<Type>/*.json``, read at run time from ``$MCP_SPEC_DIR``
or ``../shared/mcp-spec`` next to the repository (never copied into it).

Everything below is measured in one run, on the same bytes:

* mcp_wire decode: ``codec.decode(raw)``; for a result response
  ``codec.decode_response(raw, method)``, the method known from the example's type
  (``CallToolResultResponse`` -> ``"tools/call"``, via ``codec.responses``).
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

Before timing, both sides must decode every frame: mcp_wire to the model named like the
example's folder, re-encoding to the same JSON (type-strict); mcp_types to its model of that
name (the result's model for a response, ``ErrorData`` for an error), re-encoding every member
of the original (it may add defaults, and numbers compare as JSON numbers: it reads a schema
``number`` as a float). A frame mcp_types cannot handle is left out of every column and listed
with why.

Method: after a warm-up, each round times every implementation over all frames
(``time.perf_counter_ns``; per sample one untimed pass, so that each implementation runs with
the caches it uses rather than those of the one timed before it, then ``PASSES`` timed passes;
the garbage collector paused and the setup's objects frozen out of it; the order of the
implementations rotating from round to round). The figure is the median over ``ROUNDS`` rounds
of the time per message. The per-frame table times ``FRAME_CALLS`` calls of one frame in a row
the same way, median over ``FRAME_ROUNDS`` rounds.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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

REVISION = "2026-07-28"
# Samples are kept short (about a millisecond at most) so that on a busy machine most of them
# run without being preempted; the median then ignores the ones that were.
ROUNDS = 300  # timed rounds of the totals
PASSES = 1  # timed passes over all frames per sample of the totals (after an untimed one)
FRAME_ROUNDS = 100  # timed rounds of the per-frame table
FRAME_CALLS = 20  # calls of one frame in a row, per sample of the per-frame table
WARMUP_ROUNDS = 5
GOAL_DECODE_SPEEDUP = 5.0  # mcp_wire decode vs mcp_types decode, at least
GOAL_DECODE_VS_JSON = 1.5  # mcp_wire decode time / json.loads time, at most
GOAL_ENCODE_SPEEDUP = 3.0  # mcp_wire encode vs mcp_types encode, at least

REPO = Path(__file__).resolve().parents[1]
CODEC = mcp_wire.codec(REVISION)

Call = Callable[[], object]
PeerParse = Callable[[str, str, Any], BaseModel]


@dataclass(frozen=True, slots=True)
class Frame:
    """One official example that is a complete JSON-RPC frame."""

    label: str  # the example's type, plus its file stem when the type has several frames
    type_name: str  # the example's folder: the schema type of the frame
    raw: bytes
    data: dict[str, Any]
    method: str | None  # the request method a result response answers


@dataclass(frozen=True, slots=True)
class PeerRoute:
    """How the mcp_types side reads one frame: its parse function and, for a result, the method."""

    parse: PeerParse | None  # None: an error response (the envelope is all)
    method: str | None


@dataclass(frozen=True, slots=True)
class Case:
    """A frame both sides decode correctly, with the callables the timing loops run."""

    frame: Frame
    ours_decode: Call
    peer_decode: Call
    json_loads: Call
    orjson_loads: Call
    ours_encode: Call
    peer_encode: Call


# ---------------------------------------------------------------------------- inputs


def spec_dir() -> Path:
    env = os.environ.get("MCP_SPEC_DIR")
    return Path(env) if env else REPO.parent / "shared" / "mcp-spec"


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
        frames.append(Frame(label, type_name, raw, data, method))
    return frames


# ---------------------------------------------------------------------------- the two sides


def ours_decode(frame: Frame) -> Call:
    if frame.method is not None:
        return partial(CODEC.decode_response, frame.raw, frame.method)
    return partial(CODEC.decode, frame.raw)


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
    if isinstance(envelope, JSONRPCResponse):
        assert route.parse is not None and route.method is not None
        return envelope, route.parse(route.method, REVISION, envelope.result)
    if isinstance(envelope, JSONRPCError):
        return envelope, envelope.error
    assert route.parse is not None
    return envelope, route.parse(envelope.method, REVISION, envelope.params)


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
        message = ours_decode(frame)()
    except Exception as exc:  # mcp_wire must decode every official frame
        raise SystemExit(f"mcp_wire cannot decode {frame.label}: {exc}") from exc
    if not isinstance(message, BaseModel) or type(message).__name__ != frame.type_name:
        raise SystemExit(
            f"mcp_wire decodes {frame.label} as {type(message).__name__}, not {frame.type_name}"
        )
    if not same_json(json.loads(CODEC.encode(message)), frame.data):
        raise SystemExit(f"mcp_wire does not re-encode {frame.label} to the same JSON")
    return message


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


def build_cases(frames: Sequence[Frame]) -> tuple[list[Case], list[tuple[str, str]]]:
    cases: list[Case] = []
    excluded: list[tuple[str, str]] = []
    for frame in frames:
        message = check_ours(frame)
        try:
            route, envelope, body = check_peer(frame)
        except ValueError as exc:
            excluded.append((frame.label, str(exc)))
            continue
        cases.append(
            Case(
                frame=frame,
                ours_decode=ours_decode(frame),
                peer_decode=partial(peer_decode, frame.raw, route),
                json_loads=partial(json.loads, frame.raw),
                orjson_loads=partial(orjson.loads, frame.raw),
                ours_encode=partial(CODEC.encode, message),
                peer_encode=partial(peer_encode, envelope, body),
            )
        )
    return cases, excluded


# ---------------------------------------------------------------------------- timing

IMPLEMENTATIONS: tuple[tuple[str, str], ...] = (
    ("ours_decode", "mcp_wire decode"),
    ("peer_decode", "mcp_types decode"),
    ("json_loads", "json.loads"),
    ("orjson_loads", "orjson.loads"),
    ("ours_encode", "mcp_wire encode"),
    ("peer_encode", "mcp_types encode"),
)


def sample(calls: Sequence[Call], repeat: int) -> int:
    """Nanoseconds for `repeat` passes over `calls`, after one untimed pass.

    The untimed pass refills the caches the previous implementation evicted, so every
    implementation is timed in the same warm state.
    """
    for call in calls:
        call()
    start = perf_counter_ns()
    for _ in range(repeat):
        for call in calls:
            call()
    return perf_counter_ns() - start


def median_us(samples: Sequence[int], calls: int) -> float:
    return statistics.median(samples) / calls / 1000


def time_all(cases: Sequence[Case]) -> dict[str, float]:
    """Median µs per message of each implementation, cycling through all frames."""
    keys = [key for key, _ in IMPLEMENTATIONS]
    calls = {key: [getattr(case, key) for case in cases] for key in keys}
    samples: dict[str, list[int]] = {key: [] for key in keys}
    for round_ in range(WARMUP_ROUNDS + ROUNDS):
        gc.collect()
        shift = round_ % len(keys)
        for key in keys[shift:] + keys[:shift]:
            elapsed = sample(calls[key], PASSES)
            if round_ >= WARMUP_ROUNDS:
                samples[key].append(elapsed)
    return {key: median_us(samples[key], PASSES * len(cases)) for key in keys}


def time_frames(cases: Sequence[Case], keys: Sequence[str]) -> list[dict[str, float]]:
    """Median µs per call of each implementation in `keys`, frame by frame."""
    samples: list[dict[str, list[int]]] = [{key: [] for key in keys} for _ in cases]
    for round_ in range(WARMUP_ROUNDS + FRAME_ROUNDS):
        gc.collect()
        shift = round_ % len(keys)
        order = [*keys[shift:], *keys[:shift]]
        for case, per_key in zip(cases, samples, strict=True):
            for key in order:
                elapsed = sample([getattr(case, key)], FRAME_CALLS)
                if round_ >= WARMUP_ROUNDS:
                    per_key[key].append(elapsed)
    return [{key: median_us(per_key[key], FRAME_CALLS) for key in keys} for per_key in samples]


# ---------------------------------------------------------------------------- report


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def print_report(
    frames: Sequence[Frame],
    cases: Sequence[Case],
    excluded: Sequence[tuple[str, str]],
    overall: dict[str, float],
    per_frame: Sequence[dict[str, float]],
) -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"## mcp_wire {REVISION} codec vs mcp_types {version('mcp-types')}: "
        f"{len(cases)} of {len(frames)} official frames\n"
    )
    print(
        f"Python {platform.python_version()}, pydantic {version('pydantic')} "
        f"(pydantic-core {version('pydantic-core')}), orjson {version('orjson')}; "
        f"totals: median of {ROUNDS} rounds of {PASSES} timed pass(es) over all frames; "
        f"per frame: median of {FRAME_ROUNDS} rounds of {FRAME_CALLS} calls; "
        f"load average {load:.2f} "
        f"on {os.cpu_count()} CPUs.\n"
    )
    if excluded:
        print("Left out (mcp_types cannot decode them):\n")
        for label, why in excluded:
            print(f"- {label}: {why}")
        print()

    floor = overall["json_loads"]
    print("| implementation | µs/msg | msg/s | x json.loads |")
    print("|---|---:|---:|---:|")
    for key, name in IMPLEMENTATIONS:
        us = overall[key]
        print(f"| {name} | {us:.2f} | {1e6 / us:,.0f} | {us / floor:.2f} |")
    print()

    decode_speedup = overall["peer_decode"] / overall["ours_decode"]
    decode_vs_json = overall["ours_decode"] / floor
    encode_speedup = overall["peer_encode"] / overall["ours_encode"]
    print("| ratio | measured | goal | |")
    print("|---|---:|---:|---|")
    rows = (
        (
            "decode speedup vs mcp_types",
            decode_speedup,
            f">= {GOAL_DECODE_SPEEDUP:g}x",
            decode_speedup >= GOAL_DECODE_SPEEDUP,
        ),
        (
            "decode time / json.loads",
            decode_vs_json,
            f"<= {GOAL_DECODE_VS_JSON:g}x",
            decode_vs_json <= GOAL_DECODE_VS_JSON,
        ),
        (
            "encode speedup vs mcp_types",
            encode_speedup,
            f">= {GOAL_ENCODE_SPEEDUP:g}x",
            encode_speedup >= GOAL_ENCODE_SPEEDUP,
        ),
    )
    for name, value, goal, ok in rows:
        print(f"| {name} | {value:.2f}x | {goal} | {verdict(ok)} |")
    print()

    print(
        "Per frame (µs per message; speedup = mcp_types / mcp_wire). The same frame is called "
        "over and over, so its caches are warmer than in the totals, which cycle through all "
        "frames.\n"
    )
    print(
        "| frame | bytes | decode ours | decode peer | speedup | json.loads | ours / json "
        "| encode ours | encode peer | speedup |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case, t in zip(cases, per_frame, strict=True):
        print(
            f"| {case.frame.label} | {len(case.frame.raw)} "
            f"| {t['ours_decode']:.2f} | {t['peer_decode']:.2f} "
            f"| {t['peer_decode'] / t['ours_decode']:.2f}x "
            f"| {t['json_loads']:.2f} | {t['ours_decode'] / t['json_loads']:.2f}x "
            f"| {t['ours_encode']:.2f} | {t['peer_encode']:.2f} "
            f"| {t['peer_encode'] / t['ours_encode']:.2f}x |"
        )


def main() -> int:
    frames = load_frames(spec_dir())
    cases, excluded = build_cases(frames)
    if not cases:
        raise SystemExit("mcp_types decodes none of the frames: nothing to compare")
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.freeze()  # the models, schemas and frames: a collection between rounds skips them
    gc.disable()
    try:
        overall = time_all(cases)
        per_frame = time_frames(
            cases, ("ours_decode", "peer_decode", "json_loads", "ours_encode", "peer_encode")
        )
    finally:
        gc.unfreeze()
        if gc_was_enabled:
            gc.enable()
    print_report(frames, cases, excluded, overall, per_frame)
    return 0


if __name__ == "__main__":
    sys.exit(main())
