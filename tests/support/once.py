"""Scenarios that drive expensive peers (servers on loopback ports, node processes), run once per
module: each test checks one behaviour of what the scenario saw, and the peers start once.

    @pytest.fixture(scope="module")
    def once() -> Once:
        return Once()

    async def test_a_behaviour(once: Once) -> None:
        seen = await once(scenario, "an argument")
        assert seen.something == ...

The first test that asks runs `scenario("an argument")`; the others get what it returned, or the
exception it raised (raised again, so each test fails naming it, without running it again)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class Once:
    def __init__(self) -> None:
        self._outcomes: dict[tuple[Hashable, ...], tuple[bool, Any]] = {}

    async def __call__(self, scenario: Callable[..., Awaitable[T]], *args: Hashable) -> T:
        key = (scenario, *args)
        if key not in self._outcomes:
            try:
                self._outcomes[key] = (True, await scenario(*args))
            except Exception as error:  # noqa: BLE001 - raised again, below and in later tests
                self._outcomes[key] = (False, error)
        ok, outcome = self._outcomes[key]
        if not ok:
            raise outcome
        return outcome  # type: ignore[no-any-return]
