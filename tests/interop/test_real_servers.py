"""Published MCP servers nobody here wrote (issue 50), pinned (npm: tests/realservers; PyPI:
the dev extra), through mcpio's `Client` on each path (`PATHS`): straight to the server, through
`mcpio inspect` (which must pass everything on unchanged and find nothing to flag) and through
`proxy_server` (which must pass on what the server says); the same through the TypeScript SDK
client (tests/peers/ts_real_tour.mjs, one node process per tour); and all of them at once
through `from_config`. Each server's tour: initialize, every listing it
offers (every page), calls of harmless tools with arguments checked against their schemas, a
read of each listed resource, its prompts (tests/support/real_servers.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio.client import from_config
from tests.support import free_port
from tests.support.real_servers import (
    CONNECTORS,
    MODERN,
    SERVERS,
    Naming,
    Places,
    Tour,
    findings,
    handshake,
    listening_hosts,
    listings,
    make_places,
    owned,
    running,
    tour,
    ts_reach,
    ts_tour,
)

pytestmark = [pytest.mark.anyio, pytest.mark.peers]

# The ways to the server: straight, through `mcpio inspect`, through `mcpio proxy`.
PATHS = ("direct", "inspect", "proxy")
RELAYS = frozenset({"inspect", "proxy"})  # each must pass on what the server says, unchanged
CASES = [
    (name, transport, mode)
    for name, server in SERVERS.items()
    for transport in server.transports
    for mode in server.modes
]  # fmt: skip
DEADLINE = 60
direct_tours: dict[tuple[str, str, str], Tour] = {}  # each case's tour on the direct path


@pytest.fixture(scope="module")
def places(npm_realservers: Path, tmp_path_factory: pytest.TempPathFactory) -> Places:
    return make_places(tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module")
def http_urls(places: Places) -> Iterator[dict[str, str]]:
    """Each server that speaks Streamable HTTP serving on a port of its own, for the module:
    its endpoint's URL by name."""
    with ExitStack() as stack:
        urls: dict[str, str] = {}
        for name, server in SERVERS.items():
            if server.http_command is not None:
                port = free_port()
                stack.enter_context(running(server.http_command(places, port), port))
                urls[name] = f"http://127.0.0.1:{port}/mcp"
        yield urls


def test_the_http_servers_listen_on_loopback_only(http_urls: dict[str, str]) -> None:
    # left alone they bind every interface; tests/realservers/loopback.cjs binds them to 127.0.0.1
    loopback = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it
    for name, url in http_urls.items():
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert listening_hosts(port) == {loopback}, name


async def run_tour(
    path: str, case: tuple[str, str, str], places: Places, url: str | None
) -> tuple[Tour, Path | None]:
    """`case`'s tour along `path`, and the inspector's transcript (None: no inspector)."""
    name, transport, mode = case
    server = SERVERS[name]
    target = server.command(places) if server.command and transport == "stdio" else str(url)
    done = Tour()
    with anyio.fail_after(DEADLINE):
        async with CONNECTORS[path](target, mode, places.scratch) as session:
            await handshake(session.client, done)
            found = await listings(session.client, done)
            await tour(session.client, server, places, found, done)
    return done, session.transcript


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
async def test_every_operation_passes(
    path: str, case: tuple[str, str, str], places: Places, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("http_urls")[case[0]] if case[1] == "http" else None
    await check_path(path, lambda way: run_tour(way, case, places, url), direct_tours, case)


async def check_path(
    path: str,
    run: Callable[[str], Awaitable[tuple[Tour, Path | None]]],
    directs: dict[Any, Tour],
    case: Any,
) -> None:
    """The tour along `path` (`run`) passes every operation; a relay's is the direct tour's
    (kept in `directs` by case, else toured now), and the inspector found nothing to flag."""
    done, transcript = await run(path)
    assert done.failures == {}
    if path == "direct":
        directs[case] = done
    if path in RELAYS:
        expected = directs.get(case) or (await run("direct"))[0]
        assert relayed(path, done.outcomes) == relayed(path, expected.outcomes)  # transparent
    if transcript is not None:
        assert findings(transcript) == []


# The TypeScript SDK client (v1: the legacy era) on the same paths, where it adds something
# mcpio's Client does not: each kind of server once, over HTTP where the server speaks it (the
# memory server is a stdio server of the filesystem server's SDK, git and fetch of the time
# server's; the everything server over stdio is mcpio's Client's).
TS_CASES = [
    ("filesystem", "stdio"),
    ("everything", "http"),
    ("pdf", "http"),
    ("time", "stdio"),
]
ts_direct_tours: dict[tuple[str, str], Tour] = {}


async def run_ts_tour(
    path: str, case: tuple[str, str], places: Places, url: str | None
) -> tuple[Tour, Path | None]:
    """`case`'s tour by the TypeScript client along `path`, and the inspector's transcript."""
    name, transport = case
    server = SERVERS[name]
    target = server.command(places) if server.command and transport == "stdio" else str(url)
    with anyio.fail_after(DEADLINE):
        async with ts_reach(path, target, places.scratch) as reach:
            return await ts_tour(reach, server, places), reach.get("transcript")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", TS_CASES, ids=["-".join(c) for c in TS_CASES])
async def test_the_typescript_client_passes_every_operation(
    path: str,
    case: tuple[str, str],
    places: Places,
    npm_peers: Path,
    request: pytest.FixtureRequest,
) -> None:
    url = request.getfixturevalue("http_urls")[case[0]] if case[1] == "http" else None
    await check_path(path, lambda way: run_ts_tour(way, case, places, url), ts_direct_tours, case)


def relayed(path: str, outcomes: dict[str, Any]) -> dict[str, Any]:
    """What a relay must pass on unchanged: everything, but what the proxy adds as the server it
    is: its own name in the handshake, its own tasks for a target without them (a legacy
    listing's `execution.taskSupport: "optional"`), and the target's name in a legacy result's
    `_meta` (`PROXY_META`). Only those are left out of the comparison."""
    if path != "proxy":
        return outcomes
    return {op: _unproxied(op, out) for op, out in outcomes.items() if op not in HANDSHAKES}


HANDSHAKES = frozenset({"initialize", "server/discover"})
PROXY_META = "io.modelcontextprotocol/serverInfo"
PROXY_TASKS = {"taskSupport": "optional"}


def _unproxied(op: str, outcome: Any) -> Any:
    if op == "list_tools" and isinstance(outcome, list):
        return [
            {k: v for k, v in tool.items() if not (k == "execution" and v == PROXY_TASKS)}
            for tool in outcome
        ]
    if isinstance(outcome, dict) and isinstance(outcome.get("_meta"), dict):
        meta = {k: v for k, v in outcome["_meta"].items() if k != PROXY_META}
        rest = {k: v for k, v in outcome.items() if k != "_meta"}
        return {**rest, "_meta": meta} if meta else rest
    return outcome


def config_of(places: Places, names: list[str]) -> dict[str, Any]:
    """The servers' stdio commands as `mcpServers` entries, under their names."""
    servers: dict[str, Any] = {}
    for name in names:
        stdio = SERVERS[name].command
        assert stdio is not None, f"{name} is toured over HTTP only"
        command, *args = stdio(places)
        servers[name] = {"command": command, "args": args}
    return {"mcpServers": servers}


STDIO = [name for name, server in SERVERS.items() if server.command is not None]
COMBINED = [
    pytest.param("legacy", STDIO, id="legacy-all"),
    pytest.param(MODERN, [n for n in STDIO if n != "filesystem"], id="modern-all-but-filesystem"),
    pytest.param(MODERN, ["filesystem", "memory"], id="modern-filesystem"),
]


@pytest.mark.parametrize(("mode", "names"), COMBINED)
async def test_servers_at_once_through_from_config(
    mode: str, names: list[str], places: Places
) -> None:
    done = Tour()
    # roots given, as a host gives them: the filesystem server asks for them when it starts
    roots = [str(places.root)]
    with anyio.fail_after(DEADLINE):
        async with from_config(config_of(places, names), mode=mode, roots=roots) as client:
            await handshake(client, done)
            found = await listings(client, done)
            for name in names:
                theirs = owned(found, Naming(name))
                assert theirs.get("tools"), f"{name}: no tools listed"
                await tour(client, SERVERS[name], places, theirs, done, Naming(name))
    assert done.failures == {}
