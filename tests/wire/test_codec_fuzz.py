"""Codec fuzzing: random and mutated frames for every revision (both eras), bounded and seeded.

Seeds are the golden exchanges (tests/golden: a request and each result response per method).
Each frame is mutated structurally (a member dropped, null put in, a type swapped, a value
changed: the reverse differential test's mutations) or as text (a byte flipped, cut short,
duplicated, a token inserted), and random JSON values are added. For every frame:

- `decode` and `decode_response` raise nothing but `ProtocolError`;
- the code matches the kind of fault: -32700 only for text that is not JSON, never for JSON;
- no frame takes more than linear time (a generous bound per byte);
- every accepted frame re-encodes to a frame that decodes to the same message.

Frames per revision: 2000, or `MCPGEN_FUZZ_FRAMES`; seed 0, or `MCPGEN_FUZZ_SEED`. The counts
are printed at the end (`-s` shows them).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

import mcp_wire
from mcp_wire import ProtocolError
from mcp_wire_runtime import _numbers as numbers
from tests.support import REVISIONS
from tests.support.mutants import mutants
from tests.support.wire_samples import GOLDEN

FRAMES = int(os.environ.get("MCPGEN_FUZZ_FRAMES", "2000"))
SEED = int(os.environ.get("MCPGEN_FUZZ_SEED", "0"))
PARSE_ERROR = -32700
CODES = {-32700, -32600, -32601, -32602}
# Linear time: at most this much per frame plus per byte (generous: a loaded CI machine).
BASE_SECONDS, PER_BYTE_SECONDS = 0.05, 2e-6
TOTALS: dict[str, int] = {"frames": 0, "accepted": 0, "rejected": 0, "crashes": 0, "wrong": 0}


def seeds(rev: str) -> list[tuple[dict[str, Any], str]]:
    """(frame, method) pairs of the golden exchanges of one revision."""
    out = []
    for path in sorted((GOLDEN / rev).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        method = data["method"]
        out.append((data["message"], method))
        for result in data.get("results", {}).values():
            out.append(({"jsonrpc": "2.0", "id": 1, "result": result}, method))
    return out


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 7, 2**53, -(2**63), 10**30])
    if kind == 3:
        return rng.choice([0.5, -1.25, 1e300, 1e-300])
    if kind == 4:
        return rng.choice(["", "x", "tools/call", "2.0", "\u0394", "io.modelcontextprotocol/x"])
    if kind == 5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(3))]
    keys = ["jsonrpc", "id", "method", "params", "result", "error", "_meta", "x"]
    return {rng.choice(keys): _random_json(rng, depth + 1) for _ in range(rng.randrange(4))}


_EDGE_NUMBERS = [b"1e400", b"-1E+999", b"9" * 310 + b".5", b"1.7976931348623157e308", b"1e-400"]
_EDGE_NUMBERS += [b"NaN", b"-Infinity"]


def _text_mutation(rng: random.Random, raw: bytes) -> bytes:
    if not raw:
        return raw
    at = rng.randrange(len(raw))
    kind = rng.randrange(6)
    if kind == 5:  # a number JSON cannot carry, or one at the edge of a float's range
        digits = [i for i, byte in enumerate(raw) if 48 <= byte <= 57]
        if digits:
            at = rng.choice(digits)
            return raw[:at] + rng.choice(_EDGE_NUMBERS) + raw[at + 1 :]
    if kind == 0:
        return raw[:at] + bytes([rng.randrange(256)]) + raw[at + 1 :]
    if kind == 1:
        return raw[:at]
    if kind == 2:
        return raw[:at] + raw[at : at + rng.randrange(1, 16)] + raw[at:]
    token = rng.choice([b"null", b"[", b"{", b'"', b",", b"1e5", b"-0", b"\\u0000", b"]"])
    return raw[:at] + token + raw[at:]


def frames(rev: str) -> Iterator[tuple[bytes, str]]:
    rng = random.Random(f"{SEED}/{rev}")
    pool = seeds(rev)
    structural = [
        (json.dumps(m).encode(), method) for frame, method in pool for _, m in mutants(frame)
    ]
    rng.shuffle(structural)
    count = 0
    while count < FRAMES:
        choice = rng.randrange(10)
        frame, method = rng.choice(pool)
        if choice < 5 and structural:
            raw, method = structural[count % len(structural)]
        elif choice < 8:
            if rng.randrange(4) == 0:  # a large frame (read by `numbers.read_large`)
                frame = {**frame, "padding": {"text": "p" * numbers.LARGE, "rows": [[1.5, 2]] * 20}}
            raw = _text_mutation(rng, json.dumps(frame).encode())
        elif choice < 9:
            raw = json.dumps(_random_json(rng)).encode()
        else:
            raw = json.dumps([frame, frame] if rng.randrange(2) else frame).encode()
        count += 1
        yield raw, method


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw, parse_constant=_not_json)
    except ValueError:
        return False
    return True


def _same(codec: Any, first: Any, raw: bytes, method: str | None) -> None:
    """An accepted frame re-encodes to a frame that decodes to the same message."""
    again_raw = codec.encode(first)
    again = codec.decode(again_raw) if method is None else codec.decode_response(again_raw, method)
    dump = (  # Python values, every member (a default the encoder writes out is the same value)
        (lambda m: [x.model_dump(exclude_unset=False) for x in m])
        if isinstance(first, list)
        else (lambda m: m.model_dump(exclude_unset=False))
    )
    assert dump(again) == dump(first), f"re-encoding changed {raw[:300]!r} into {again_raw[:300]!r}"


def _run(codec: Any, raw: bytes, method: str | None) -> None:
    TOTALS["frames"] += 1
    started = time.perf_counter()
    try:
        message = codec.decode(raw) if method is None else codec.decode_response(raw, method)
    except ProtocolError as exc:
        TOTALS["rejected"] += 1
        assert exc.code in CODES, f"code {exc.code} for {raw[:300]!r}"
        if exc.code == PARSE_ERROR:
            assert not _is_json(raw), f"-32700 for valid JSON {raw[:300]!r}: {exc.message}"
        else:
            assert _is_json(raw) or b"\\ud" in raw.lower(), f"{exc.code} for non-JSON {raw[:300]!r}"
    except Exception as exc:  # noqa: BLE001 (what the test looks for)
        TOTALS["crashes"] += 1
        raise AssertionError(f"{type(exc).__name__} escaped for {raw[:300]!r}: {exc}") from None
    else:
        TOTALS["accepted"] += 1
        _same(codec, message, raw, method)
    elapsed = time.perf_counter() - started
    limit = BASE_SECONDS + PER_BYTE_SECONDS * len(raw)
    if elapsed >= limit:  # a model's first use builds its validator: time the frame again
        started = time.perf_counter()
        try:
            codec.decode(raw) if method is None else codec.decode_response(raw, method)
        except ProtocolError:
            pass
        elapsed = time.perf_counter() - started
    assert elapsed < limit, f"{elapsed:.3f}s for {len(raw)} bytes: {raw[:300]!r}"


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    print(
        "\ncodec fuzz: {frames} frames (decode and decode_response), {accepted} accepted, "
        "{rejected} rejected with a ProtocolError, {crashes} crashes".format(**TOTALS)
    )


@pytest.mark.parametrize("rev", REVISIONS)
def test_codec_fuzz(rev: str):
    codec = mcp_wire.codec(rev)
    for raw, method in frames(rev):
        _run(codec, raw, None)
        _run(codec, raw, method)
