"""Every method of every pinned revision's dispatch table has a typed path in the runtime, on the
server's side and on the client's (a `Server` registration or built-in answer, a `Context` call,
a `Client` method or callback), or a documented reason why not: `COVERAGE` below is that table,
the one place it is kept. A method a pinned revision adds without an entry fails the test; so
does an entry naming something the runtime does not have, or a method no revision has.

Beyond the names, every client->server request the table says the server answers is sent, in
every revision that has it, by a `Client` to a `Server` with one of each registration, and must
come back with a result.

`python scripts/coverage_table.py` (or `pytest -s tests/codegen/test_coverage.py`) prints the table.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import mcp_wire
from mcpio import Client, Context, Server
from mcpio.server._connection import ServerConnection
from mcpio.tasks._client import TaskHandle
from tests.support.coverage import COVERAGE, Path, Why, methods, render

# method -> (the server's side, the client's side): sending it, answering or taking it.

OWNERS: dict[str, type] = {
    "Server": Server,
    "Client": Client,
    "Context": Context,
    "ServerConnection": ServerConnection,
    "TaskHandle": TaskHandle,
}


def resolves(ref: str) -> bool:
    """Whether `Class.attribute` or `Class(parameter=)` names something the runtime has."""
    if ref.endswith("=)"):
        owner, _, parameter = ref[:-2].partition("(")
        cls = OWNERS.get(owner)
        return cls is not None and parameter in inspect.signature(cls.__init__).parameters
    owner, _, attribute = ref.partition(".")
    cls = OWNERS.get(owner)
    return cls is not None and callable(getattr(cls, attribute, None))


def test_every_method_of_every_revision_has_an_entry() -> None:
    print("\n" + render())
    missing = {
        f"{revision} {method}"
        for revision, table in methods().items()
        for method in table
        if method not in COVERAGE
    }
    assert not missing, f"methods with neither a runtime path nor a reason: {sorted(missing)}"


def test_the_table_names_only_what_exists() -> None:
    known = {m for table in methods().values() for m in table}
    assert not set(COVERAGE) - known, "entries for methods no pinned revision has"
    broken = [
        (method, side.ref)
        for method, sides in COVERAGE.items()
        for side in sides
        if isinstance(side, Path) and not resolves(side.ref)
    ]
    assert not broken, f"paths the runtime does not have: {broken}"
    assert not resolves("Client.no_such_method") and not resolves("Client(no_such=)")


def test_the_reasons_are_few_and_named() -> None:
    """Only roots' change notification lacks a path."""
    reasons = {m for m, sides in COVERAGE.items() if any(isinstance(s, Why) for s in sides)}
    assert reasons == {"notifications/roots/list_changed"}


# ---------------------------------------------------------------------- the answers themselves


def equipped() -> Server:
    """A server with one of each registration."""
    server = Server("coverage")

    @server.tool()
    def echo(text: str = "") -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    @server.resource("test://r")
    def r() -> str:  # pyright: ignore[reportUnusedFunction]
        return "r"

    @server.resource_template("test://items/{id}")
    def item(id: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return id

    @server.prompt()
    def p(topic: str = "") -> str:  # pyright: ignore[reportUnusedFunction]
        return topic

    @server.completer()
    def complete(params: Any) -> list[str]:  # pyright: ignore[reportUnusedFunction]
        return ["a"]

    return server


PARAMS: dict[str, dict[str, Any] | None] = {
    "ping": None,
    "logging/setLevel": {"level": "info"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "topic", "value": ""},
    },
    "tools/list": {},
    "tools/call": {"name": "echo", "arguments": {"text": "x"}},
    "resources/list": {},
    "resources/templates/list": {},
    "resources/read": {"uri": "test://r"},
    "resources/subscribe": {"uri": "test://r"},
    "resources/unsubscribe": {"uri": "test://r"},
    "prompts/list": {},
    "prompts/get": {"name": "p"},
    "server/discover": {},
}
# Answered as part of something larger, tested where that is: the handshake, a listen stream,
# a task (tests/tasks/test_tasks.py: a task must exist first).
NOT_SENT_ALONE = {
    "initialize",
    "subscriptions/listen",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
}


@pytest.mark.anyio
@pytest.mark.parametrize("revision", mcp_wire.REVISIONS)
async def test_the_server_answers_what_the_table_says(revision: str) -> None:
    table = methods()[revision]
    expected = {
        name
        for name, spec in table.items()
        if spec.kind == "request"
        and spec.direction in ("client->server", "both")
        and isinstance(COVERAGE[name][0], Path)
        and name not in NOT_SENT_ALONE
    }
    assert expected <= set(PARAMS), f"no sample params for {sorted(expected - set(PARAMS))}"
    async with Client(equipped(), mode=revision) as client:
        for name in sorted(expected):
            result = await client.request(name, PARAMS[name])
            assert result is not None, name


def test_a_method_without_an_entry_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(COVERAGE, "tools/call")
    assert "| `tools/call` | 2024-11-05 .. 2026-07-28 | MISSING | MISSING |" in render()
    with pytest.raises(AssertionError, match="2026-07-28 tools/call"):
        test_every_method_of_every_revision_has_an_entry()
