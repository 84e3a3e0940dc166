"""Reverse differential test: whatever the official schema rejects, the generated model rejects.

The other direction of `tests/codegen/test_differential.py`, with the same oracle (`jsonschema` over the
official schema) and the same drawing of valid instances. Each valid instance is mutated where
it is built (every member and item, and the instance itself): a member dropped, null put in,
the JSON type changed (string, integer, float, boolean, array, object), a string or number
changed (a const, an enum, a bound broken). A mutant the oracle rejects must be rejected by the
model, both as Python data and as JSON text.

Known exceptions live in `differential_exceptions.toml` beside the forward test's, as
kind = "model-accepts" with a reason each; an entry whose definition no longer accepts such a
mutant fails the test.

Valid instances per definition: 3, or `MCPGEN_REVERSE_EXAMPLES`; mutants per definition at most
150, or `MCPGEN_REVERSE_MUTANTS`. Derandomized like the forward test (`MCPGEN_DIFF_SEED` for a
random run). The counts of a run are printed at the end (`-s` shows them).
"""

from __future__ import annotations

import copy
import functools
import json
import multiprocessing
import os
import re
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, Phase, Verbosity, assume, given, seed, settings
from hypothesis.errors import HypothesisException
from hypothesis_jsonschema import from_schema
from hypothesis_jsonschema._canonicalise import HypothesisRefResolutionError

from codegen.normalize import definitions_of
from codegen.patches import apply_patches
from tests.support import official_schema
from tests.support.differential import (
    CASES,
    SEED,
    WORKERS,
    generation_schema,
    load_exceptions,
)
from tests.support.mutants import mutants
from tests.support.oracle import _validator_class, adapter, defs_key, oracle

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("MCPGEN_REVERSE_EXAMPLES", "3"))
MAX_MUTANTS = int(os.environ.get("MCPGEN_REVERSE_MUTANTS", "150"))
UNGENERABLE = {key: exc for key, exc in load_exceptions().items() if exc.kind == "ungenerable"}
EXCEPTIONS = {
    key: exc for key, exc in load_exceptions(reverse=True).items() if exc.kind == "model-accepts"
}


@functools.cache
def patched_oracle(revision: str, name: str) -> Any:
    """The official schema after the asserted patches (codegen/patches.py): what the models
    were generated from. A mutant it accepts is a widening the patches make on purpose (a float
    in a JSON value or a form answer, which upstream's TypeScript source allows), not a model
    defect; such mutants are counted, never failed."""
    schema = copy.deepcopy(official_schema(revision))
    apply_patches(definitions_of(schema), revision)
    key = defs_key(revision)
    return _validator_class(revision)(
        {"$schema": schema["$schema"], "$ref": f"#/{key}/{name}", key: schema[key]}
    )


@dataclass(frozen=True)
class Result:
    instances: int
    mutants: int  # mutants the oracle rejects
    accepted: list[str]  # those the model accepted (description, how, text)
    widened: int = 0  # accepted, and accepted by the patched schema too
    ungenerable: str | None = None


def _draw(revision: str, name: str) -> list[Any]:
    validator = oracle(revision, name)
    strategy = from_schema(generation_schema(revision, name, names_as_properties=False))
    drawn: list[Any] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=SEED is None,
        phases=(Phase.generate,),
        suppress_health_check=(HealthCheck.too_slow, HealthCheck.filter_too_much),
        verbosity=Verbosity.quiet,
    )
    @given(strategy)
    def draw(instance: Any) -> None:
        assume(validator.is_valid(instance))
        drawn.append(instance)

    if SEED is not None:
        draw = seed(int(SEED))(draw)
    draw()
    return drawn


def check_definition(revision: str, name: str) -> Result:
    """Every oracle-rejected mutant of drawn valid instances, put to the model."""
    try:
        instances = _draw(revision, name)
    except (HypothesisException, HypothesisRefResolutionError) as err:
        return Result(0, 0, [], ungenerable=f"{type(err).__name__}: {err}")
    validator = oracle(revision, name)
    ta = adapter(revision, name)
    seen: set[str] = set()
    rejected = widened = 0
    accepted: list[str] = []
    for instance in instances:
        for how, mutant in mutants(instance):
            if rejected >= MAX_MUTANTS:
                break
            text = json.dumps(mutant)
            if text in seen:
                continue
            seen.add(text)
            if validator.is_valid(mutant):
                continue
            rejected += 1
            if patched_oracle(revision, name).is_valid(mutant):
                widened += 1
                continue
            for kind, validate, data in (
                ("python", ta.validate_python, mutant),
                ("json", ta.validate_json, text),
            ):
                try:
                    validate(data)
                except pydantic.ValidationError:
                    continue
                accepted.append(f"{kind} accepts {how}: {text[:300]}")
    return Result(len(instances), rejected, accepted, widened)


# --- all definitions, on every core --------------------------------------------------------

_TEST_NAME = "test_model_rejects_what_the_schema_rejects"
TOTALS = {
    "definitions": 0,
    "instances": 0,
    "mutants": 0,
    "widened": 0,
    "accepted": 0,
    "excused": 0,
}


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest) -> Iterator[dict[tuple[str, str], Future[Result]]]:
    selected = [
        (item.callspec.params["revision"], item.callspec.params["name"])
        for item in request.session.items
        if getattr(item, "originalname", None) == _TEST_NAME and hasattr(item, "callspec")
    ]
    pool = ProcessPoolExecutor(max(WORKERS, 1), mp_context=multiprocessing.get_context("spawn"))
    futures = {case: pool.submit(check_definition, *case) for case in selected}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)
    print(
        "\nreverse differential: {definitions} definitions, {instances} valid instances, "
        "{mutants} mutants the schema rejects ({widened} of them accepted by the patched "
        "schema, so by the models too), {accepted} other mutants accepted by a model "
        "({excused} of them in excused definitions)".format(**TOTALS)
    )


@pytest.mark.parametrize(("revision", "name"), CASES, ids=[f"{r}/{n}" for r, n in CASES])
def test_model_rejects_what_the_schema_rejects(
    revision: str, name: str, results: dict[tuple[str, str], Future[Result]]
):
    result = results[(revision, name)].result()
    known = EXCEPTIONS.get((revision, name))
    TOTALS["definitions"] += 1
    TOTALS["instances"] += result.instances
    TOTALS["mutants"] += result.mutants
    TOTALS["accepted"] += len(result.accepted)
    TOTALS["widened"] += result.widened
    # A definition with no valid instance to mutate checks nothing: that is a failure, not a pass,
    # unless the forward test's exceptions list it as ungenerable for that very reason (its
    # model then has a test of its own, which the entry names).
    undrawable = UNGENERABLE.get((revision, name))
    if result.ungenerable is not None and undrawable is not None:
        assert re.search(undrawable.match, result.ungenerable), result.ungenerable
        return
    assert (
        result.ungenerable is None
    ), f"no valid instances to mutate (the forward test lists why): {result.ungenerable}"
    if known is None:
        assert not result.accepted, (
            f"{len(result.accepted)} of {result.mutants} mutants the schema rejects are accepted:\n"
            + "\n".join(result.accepted[:10])
        )
        return
    TOTALS["excused"] += len(result.accepted)
    if known.intermittent and not result.accepted:
        return  # it did not fail this time (see the entry's `intermittent`)
    assert result.accepted, (
        f"stale exception: {revision}/{name} (model-accepts) accepts no rejected mutant "
        f"({result.mutants} checked); remove the entry"
    )
    unexplained = [a for a in result.accepted if not re.search(known.match, a)]
    assert not unexplained, "accepted beyond the listed reason:\n" + "\n".join(unexplained[:10])


def test_mutants_are_one_change_away():
    found = dict(mutants({"a": 1, "b": ["x"]}))
    assert found["dropped at $.a"] == {"b": ["x"]}
    assert found["null at $.b[0]"] == {"a": 1, "b": [None]}
    assert found["float-for-int at $.a"] == {"a": 1.5, "b": ["x"]}
