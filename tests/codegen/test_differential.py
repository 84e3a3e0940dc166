"""Differential test: whatever the official schema accepts, the generated model accepts and keeps.

For every definition of every pinned revision, hypothesis-jsonschema draws instances from the
official definition; those that `jsonschema` (the oracle) accepts must validate with the model
of the same name, both as Python data and as JSON text, and dump back (by alias, unset fields
left out) to exactly the input, type-strict (1 stays 1, never 1.0).

Known exceptions live in one file, `differential_exceptions.toml`, each with its reason and the
kind of failure it excuses; an entry whose definition no longer fails that way fails the test.

Examples per definition: 20, or `MCPGEN_DIFF_EXAMPLES`. Every definition is still drawn (each
distinct schema once, the others replay its instances); 20 rather than the 50 of earlier
releases because drawing is nearly all of the suite's time, and `make test` (where this suite
shares two cores with pytest's process tests) has a 25-minute budget: 50 took about 1.9 times
the CPU time (the 2025-06-18 definitions: 166 s against 87 s). `MCPGEN_DIFF_EXAMPLES=50` (or
500) for a deeper run. Runs are derandomized (the same instances every run) unless
`MCPGEN_DIFF_SEED` is set (a random run prints its seed to reproduce it).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis_jsonschema._from_schema as _hjs
import pydantic
import pytest
from hypothesis import HealthCheck, Phase, Verbosity, assume, given, seed, settings
from hypothesis.errors import HypothesisException
from hypothesis_jsonschema import from_schema
from hypothesis_jsonschema._canonicalise import HypothesisRefResolutionError

from tests.support import official_schema
from tests.support import oracle as oracle_module
from tests.support.differential import (
    _ANNOTATIONS,
    _LITERAL_KEYS,
    CASES,
    EXCEPTIONS_FILE,
    KINDS,
    SEED,
    WORKERS,
    KnownFailure,
    generation_schema,
    load_exceptions,
)
from tests.support.oracle import (
    adapter,
    dump,
    first_difference,
    json_equal,
    oracle,
)

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("MCPGEN_DIFF_EXAMPLES", "20"))
# How often a recursive definition (JSONValue inside JSONValue ...) may nest in one instance.


# --- the instances -------------------------------------------------------------------------


def _strategy_cache() -> None:
    """Memoize hypothesis-jsonschema's schema -> strategy conversion.

    It converts the schema of every object member again on every draw (canonicalising it from
    scratch), which makes nested MCP messages take seconds each. The conversion is a pure
    function of the schema and the alphabet, so caching it by their canonical JSON changes no
    drawn value, only the time.
    """
    namespace = vars(_hjs)
    original = namespace["__from_schema"]
    if getattr(original, "_mcpgen_cached", False):
        return
    cache: dict[tuple[Any, ...], Any] = {}

    def cached(schema: Any, *, alphabet: Any, custom_formats: Any) -> Any:
        if custom_formats is not None:
            return original(schema, alphabet=alphabet, custom_formats=custom_formats)
        key = (json.dumps(schema, sort_keys=True), alphabet.allow_x00, alphabet.codec)
        if key not in cache:
            cache[key] = original(schema, alphabet=alphabet, custom_formats=None)
        return cache[key]

    cached._mcpgen_cached = True  # type: ignore[attr-defined]
    namespace["__from_schema"] = cached


_strategy_cache()


# --- the exceptions ------------------------------------------------------------------------


EXCEPTIONS = load_exceptions()


class Disagreement(AssertionError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


def test_exceptions_name_real_definitions():
    cases = set(CASES)
    assert not [key for key in EXCEPTIONS if key not in cases]


# --- one definition ------------------------------------------------------------------------


def check_instance(revision: str, name: str, instance: Any) -> None:
    """The model's verdict on one oracle-valid instance; raises Disagreement."""
    ta = adapter(revision, name)
    text = json.dumps(instance)
    for how, validate, data in (
        ("python", ta.validate_python, instance),
        ("json", ta.validate_json, text),
    ):
        try:
            value = validate(data)
        except pydantic.ValidationError as err:
            raise Disagreement("model-rejects", f"{how} input {text[:2000]}\n{err}") from None
        out = dump(revision, name, value)
        if not json_equal(out, instance):
            where = first_difference(out, instance)
            raise Disagreement("round-trip", f"{how} input {text[:2000]}\n{where}")


def draw_and_check(revision: str, name: str, *, shrink: bool) -> list[Any]:
    """Draw instances, keep what the oracle accepts, check the model on each; returns them."""
    validator = oracle(revision, name)
    adapter(revision, name)  # a model that cannot even be built fails here, not as a draw error
    strategy = from_schema(generation_schema(revision, name))  # its errors surface on a draw
    drawn: list[Any] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=SEED is None,
        phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,),
        suppress_health_check=(HealthCheck.too_slow, HealthCheck.filter_too_much),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,  # the failure message names the (shrunk) instance itself
    )
    @given(strategy)
    def differential(instance: Any) -> None:
        assume(validator.is_valid(instance))  # only what the official schema accepts counts
        check_instance(revision, name, instance)
        drawn.append(instance)

    if SEED is not None:
        differential = seed(int(SEED))(differential)
    try:
        differential()
    except (HypothesisException, HypothesisRefResolutionError) as err:
        # hypothesis-jsonschema could not convert the schema, or hypothesis could not draw
        # enough instances (unsatisfiable, health check): the model was never asked.
        raise Disagreement("ungenerable", f"{type(err).__name__}: {err}") from None
    return drawn


def drawing_key(revision: str, name: str) -> str:
    """Definitions that draw the same instances: equal schemas up to annotations, same dialect.

    Draws are a function of the schema's structure alone (derandomized or seeded: one seed for
    all definitions), so a definition unchanged between revisions (many are) gets the very
    instances drawn for its first occurrence, replayed through its own oracle and model.
    """

    def strip(node: Any, in_map: bool = False) -> Any:
        if isinstance(node, list):
            return [strip(v) for v in node]
        if not isinstance(node, dict):
            return node
        if in_map:  # property names, not keywords
            return {k: strip(v) for k, v in node.items()}
        return {
            k: v if k in _LITERAL_KEYS else strip(v, k in ("properties", "patternProperties"))
            for k, v in node.items()
            if k not in _ANNOTATIONS or k in _LITERAL_KEYS
        }

    schema = strip(generation_schema(revision, name))
    return json.dumps([official_schema(revision)["$schema"], schema], sort_keys=True)


@dataclass(frozen=True)
class Verdict:
    instances: list[Any] | None  # the instances checked; None when it failed
    failure: tuple[str, str] | None = None  # (kind, message) of a Disagreement


def verdict(revision: str, name: str) -> Verdict:
    """Run one definition (in a worker process or in this one)."""
    shrink = (revision, name) not in EXCEPTIONS  # an expected failure needs no minimal example
    try:
        return Verdict(draw_and_check(revision, name, shrink=shrink))
    except Disagreement as failure:
        return Verdict(None, (failure.kind, failure.message))


def replay(revision: str, name: str, instances: list[Any]) -> Verdict:
    validator = oracle(revision, name)
    try:
        for instance in instances:
            assert validator.is_valid(instance), "replayed an invalid instance: bad drawing key"
            check_instance(revision, name, instance)
    except Disagreement as failure:
        return Verdict(None, (failure.kind, failure.message))
    return Verdict(instances)


# --- all definitions, on every core --------------------------------------------------------


class Scheduler:
    """Draws the selected definitions in worker processes, in test order, one per drawing key.

    The tests then only collect their verdicts (the model checks run where the instances are
    drawn). A definition whose drawing key was drawn before replays those instances here.
    With MCPGEN_DIFF_WORKERS=1 everything runs in this process, one test at a time.
    """

    def __init__(self, cases: list[tuple[str, str]], workers: int) -> None:
        self.key = {case: drawing_key(*case) for case in cases}
        self.owner: dict[str, tuple[str, str]] = {}
        for case in cases:
            self.owner.setdefault(self.key[case], case)
        self.pool: ProcessPoolExecutor | None = None
        self.futures: dict[tuple[str, str], Future[Verdict]] = {}
        if workers > 1 and len(self.owner) > 1:
            self.pool = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("spawn")
            )
            for case in self.owner.values():
                self.futures[case] = self.pool.submit(verdict, *case)

    def verdict(self, revision: str, name: str) -> Verdict:
        case = (revision, name)
        key = self.key[case] if case in self.key else drawing_key(*case)
        owner = self.owner.setdefault(key, case)
        first = self.futures[owner].result() if owner in self.futures else verdict(*owner)
        if owner == case:
            return first
        if first.instances is None:  # the first one failed: nothing to replay, draw anew
            return verdict(*case)
        return replay(revision, name, first.instances)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


_TEST_NAME = "test_model_accepts_and_round_trips_what_the_schema_accepts"


@pytest.fixture(scope="module")
def scheduler(request: pytest.FixtureRequest) -> Iterator[Scheduler]:
    selected = [
        (item.callspec.params["revision"], item.callspec.params["name"])
        for item in request.session.items
        if getattr(item, "originalname", None) == _TEST_NAME and hasattr(item, "callspec")
    ]
    sched = Scheduler(selected, WORKERS)
    yield sched
    sched.close()


def finite_values(schema: Any) -> list[Any] | None:
    """Every value a schema accepts, when they are few by its form: an `enum`, a `const`, an
    `anyOf` of such (an extension's enumerations), an object that admits no member at all."""
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("anyOf"), list):
        parts = [finite_values(part) for part in schema["anyOf"]]
        return None if any(p is None for p in parts) else [v for p in parts if p for v in p]
    closed = schema.get("additionalProperties") in (False, {"not": {}})
    if schema.get("type") == "object" and closed:
        return _finite_objects(schema)
    return None


def _finite_objects(schema: dict[str, Any]) -> list[Any] | None:
    """Every instance of a closed object whose members each have few values (absent too when
    optional): an extension's notification with a constant method and empty params, say."""
    out: list[dict[str, Any]] = [{}]
    required = set(schema.get("required") or ())
    for name, member in (schema.get("properties") or {}).items():
        values = finite_values(member)
        if values is None:
            return None
        choices: list[Any] = values if name in required else [_ABSENT, *values]
        out = [o | ({} if v is _ABSENT else {name: v}) for o in out for v in choices]
    return out


_ABSENT = object()


def assert_enough(revision: str, name: str, instances: list[Any]) -> None:
    """EXAMPLES instances, or fewer only because the definition has no more values (an enum)."""
    if len(instances) >= EXAMPLES:
        return
    values = finite_values(generation_schema(revision, name))
    drawn = {json.dumps(v, sort_keys=True) for v in instances}
    assert values is not None and len(drawn) == len(
        values
    ), f"only {len(instances)} of {EXAMPLES} instances drawn ({len(drawn)} distinct)"


def judge(revision: str, name: str, result: Verdict) -> None:
    """Pass or fail one definition's verdict against the exceptions file."""
    known = EXCEPTIONS.get((revision, name))
    if known is not None and known.intermittent and result.failure is None:
        known = None  # it did not fail this time: judged as any other definition
    if known is None:
        if result.failure is not None:
            kind, message = result.failure
            pytest.fail(f"{KINDS[kind]} ({kind}):\n{message}", pytrace=False)
        assert result.instances, "the official schema rejected every instance drawn from it"
        assert_enough(revision, name, result.instances)
        return
    if result.failure is None:
        pytest.fail(
            f"stale exception in {EXCEPTIONS_FILE.name}: {revision}/{name} ({known.kind}) no "
            f"longer fails ({len(result.instances or [])} instances checked); remove the entry"
        )
    kind, message = result.failure
    assert kind == known.kind, f"listed as {known.kind}, but fails as {kind}: {message}"
    assert re.search(known.match, message), f"the listed failure changed: {kind}: {message}"


@pytest.mark.parametrize(("revision", "name"), CASES, ids=[f"{r}/{n}" for r, n in CASES])
def test_model_accepts_and_round_trips_what_the_schema_accepts(
    revision: str, name: str, scheduler: Scheduler
):
    judge(revision, name, scheduler.verdict(revision, name))


# --- the harness itself --------------------------------------------------------------------


def test_a_model_that_turns_ints_into_floats_is_caught(monkeypatch: pytest.MonkeyPatch):
    class NumberSchema(pydantic.BaseModel):  # the defect _keep_ints once had: default: float
        model_config = pydantic.ConfigDict(extra="allow")
        default: float | None = None
        type: str

    real = oracle_module.adapter

    def lossy(revision: str, name: str) -> pydantic.TypeAdapter[Any]:
        return (
            pydantic.TypeAdapter(NumberSchema) if name == "NumberSchema" else real(revision, name)
        )

    monkeypatch.setattr(oracle_module, "adapter", lossy)
    monkeypatch.setattr(sys.modules[__name__], "adapter", lossy)
    result = verdict("2026-07-28", "NumberSchema")
    assert result.failure is not None
    kind, message = result.failure
    assert kind == "round-trip" and "(float) != 0 (int)" in message, message


def test_a_stale_exception_fails(monkeypatch: pytest.MonkeyPatch):
    entry = KnownFailure("2026-07-28", "Root", "model-rejects", "for the test", "x")
    monkeypatch.setitem(EXCEPTIONS, ("2026-07-28", "Root"), entry)
    with pytest.raises(pytest.fail.Exception, match="stale exception"):
        judge("2026-07-28", "Root", Verdict([{"uri": "file:///x"}]))


def test_an_exception_excuses_only_its_own_failure(monkeypatch: pytest.MonkeyPatch):
    entry = KnownFailure("2026-07-28", "Root", "round-trip", "for the test", r"\$\.uri")
    monkeypatch.setitem(EXCEPTIONS, ("2026-07-28", "Root"), entry)
    judge("2026-07-28", "Root", Verdict(None, ("round-trip", "$.uri: 'a' != 'b'")))
    with pytest.raises(AssertionError, match="listed as round-trip"):
        judge("2026-07-28", "Root", Verdict(None, ("model-rejects", "$.uri")))
    with pytest.raises(AssertionError, match="listed failure changed"):
        judge("2026-07-28", "Root", Verdict(None, ("round-trip", "$.name: 1 != 2")))


def test_an_unlisted_failure_fails():
    assert ("2026-07-28", "Root") not in EXCEPTIONS
    with pytest.raises(pytest.fail.Exception, match="model rejects"):
        judge("2026-07-28", "Root", Verdict(None, ("model-rejects", "boom")))
    with pytest.raises(AssertionError, match="rejected every instance"):
        judge("2026-07-28", "Root", Verdict([]))
    with pytest.raises(AssertionError, match=f"only 1 of {EXAMPLES} instances"):
        judge("2026-07-28", "Root", Verdict([{"uri": "file:///x"}]))


def test_exceptions_file_entries_are_complete(tmp_path: Path):
    bad = tmp_path / "x.toml"
    bad.write_text('[[exception]]\nrevision = "2026-07-28"\ndefinition = "Root"\n')
    with pytest.raises(KeyError):
        load_exceptions(bad)
    bad.write_text(
        '[[exception]]\nrevision = "2026-07-28"\ndefinition = "Root"\nkind = "round-trip"\n'
        'reason = " "\nmatch = "x"\n'
    )
    with pytest.raises(AssertionError, match="needs a reason"):
        load_exceptions(bad)
