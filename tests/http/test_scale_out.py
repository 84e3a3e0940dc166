"""Scale-out: instances of examples/everything_server.py behind a real nginx, over loopback.

Four uvicorn instances run as subprocesses: two (`shared`) with one `MCPIO_STATE_KEY`, two
(`unshared`) with none, so each seals `requestState` with a random key of its own. One nginx
(a subprocess too, `daemon off;`, its config, pid file, logs and temp paths in a tmp dir) listens
on a free loopback port, one worker process (so round-robin alternates strictly), and names the
instance that answered in `X-Upstream`:

- `/mcp`: round-robin over the shared pair;
- `/unshared/mcp`: round-robin over the unshared pair;
- `/sticky/mcp`: the shared pair under `hash $remote_addr consistent` (client affinity);
- `/session-hash/mcp`: the shared pair under `hash $http_mcp_session_id consistent`.

Modern (2026-07-28) requests are stateless: the rounds of one multi-round-trip call may be
answered by different instances as long as they share the key. Legacy sessions live in the
instance that opened them, so they need sticky routing, and hashing `Mcp-Session-Id` is not
enough: `initialize` carries no session id, so it is routed without regard to the id it is given,
and about half of the sessions are then routed to the other instance. A key known from the first
request on (here the client's address; in production a client identity or cookie) is needed.

nginx must be installed (`scripts/ensure-services.sh`, run by `make test`); without it this fails.
The process helpers are in tests/support/cluster.py.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support import ACCEPT, MODERN
from tests.support.cluster import Process, start_instances, start_nginx

pytestmark = pytest.mark.services

LEGACY = "2025-11-25"
CAPABILITIES = {"elicitation": {}}
HTTP_TIMEOUT = 10.0
MULTI_ROUND = "test_input_required_result_multi_round"


@dataclass
class Cluster:
    base: str  # http://127.0.0.1:<nginx port>
    shared: list[Process]
    unshared: list[Process]
    nginx: Process
    processes: list[Process] = field(default_factory=list)

    def upstreams(self, group: list[Process]) -> set[str]:
        return {f"127.0.0.1:{p.port}" for p in group}


NGINX_CONF = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    client_body_buffer_size 1m;

    upstream shared {{
{shared}
        keepalive 16;
    }}
    upstream unshared {{
{unshared}
        keepalive 16;
    }}
    upstream sticky {{
        hash $remote_addr consistent;
{shared}
        keepalive 16;
    }}
    upstream session_hash {{
        hash $http_mcp_session_id consistent;
{shared}
        keepalive 16;
    }}

    server {{
        listen 127.0.0.1:{port};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_buffering off;
        proxy_read_timeout 60s;
        add_header X-Upstream $upstream_addr always;

        location = /mcp {{ proxy_pass http://shared; }}
        location = /unshared/mcp {{ proxy_pass http://unshared/mcp; }}
        location = /sticky/mcp {{ proxy_pass http://sticky/mcp; }}
        location = /session-hash/mcp {{ proxy_pass http://session_hash/mcp; }}
    }}
}}
"""


def nginx_config(tmp: Path, shared: list[Process], unshared: list[Process]) -> Callable[[int], str]:
    def servers(group: list[Process]) -> str:
        return "\n".join(f"        server 127.0.0.1:{p.port};" for p in group)

    return lambda port: NGINX_CONF.format(
        tmp=tmp, port=port, shared=servers(shared), unshared=servers(unshared)
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("scale-out")
    processes: list[Process] = []
    try:
        key = secrets.token_hex(32)
        a, b, c, d = start_instances(
            tmp,
            [("shared-a", key), ("shared-b", key), ("unshared-c", None), ("unshared-d", None)],
            processes,
        )
        nginx = start_nginx(tmp, nginx_config(tmp, [a, b], [c, d]), processes)
        yield Cluster(f"http://127.0.0.1:{nginx.port}", [a, b], [c, d], nginx, processes)
    finally:
        for process in reversed(processes):
            process.stop()


# ---------------------------------------------------------------------- frames


def modern_call(id: int, name: str, arguments: dict[str, Any] | None = None, **extra: Any) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
    }
    params = {"_meta": meta, "name": name, "arguments": arguments or {}, **extra}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def modern_headers(name: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": ACCEPT,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }


def client(base: str, local_address: str | None = None) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=local_address)
    return httpx.Client(base_url=base, timeout=HTTP_TIMEOUT, transport=transport, trust_env=False)


def call(
    http: httpx.Client, path: str, id: int, name: str, **extra: Any
) -> tuple[httpx.Response, str]:
    body = json.dumps(modern_call(id, name, **extra))
    response = http.post(path, content=body, headers=modern_headers(name))
    return response, response.headers["x-upstream"]


def multi_round(http: httpx.Client, path: str) -> list[tuple[httpx.Response, str]]:
    """The three rounds of the multi-round tool: step1, then step2 with round 1's state."""
    first = call(http, path, 1, MULTI_ROUND)
    answers = [first]
    result = first[0].json()["result"]
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == ["step1"]
    step1 = {"step1": {"action": "accept", "content": {"name": "Alice"}}}
    second = call(
        http, path, 2, MULTI_ROUND, inputResponses=step1, requestState=result["requestState"]
    )
    answers.append(second)
    if second[0].status_code != 200 or "error" in second[0].json():
        return answers
    result = second[0].json()["result"]
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == ["step2"]
    step2 = {"step2": {"action": "accept", "content": {"color": "blue"}}}
    answers.append(
        call(http, path, 3, MULTI_ROUND, inputResponses=step2, requestState=result["requestState"])
    )
    return answers


# ---------------------------------------------------------------------- modern: stateless


def test_rounds_on_different_instances_with_a_shared_key(cluster: Cluster) -> None:
    with client(cluster.base) as http:
        answers = multi_round(http, "/mcp")
    upstreams = [upstream for _, upstream in answers]
    assert len(answers) == 3 and set(upstreams) <= cluster.upstreams(cluster.shared)
    assert upstreams[0] != upstreams[1] != upstreams[2], upstreams  # each round elsewhere
    final = answers[-1][0]
    assert final.status_code == 200, final.text
    result = final.json()["result"]
    assert result["resultType"] == "complete"
    assert result["content"] == [
        {"type": "text", "text": "Multi-round complete for Alice who likes blue"}
    ]


def test_without_a_shared_key_the_other_instance_refuses_the_state(cluster: Cluster) -> None:
    with client(cluster.base) as http:
        answers = multi_round(http, "/unshared/mcp")
    assert len(answers) == 2, "round 2 should have been refused"
    (first, where_first), (second, where_second) = answers
    assert where_first != where_second
    assert {where_first, where_second} == cluster.upstreams(cluster.unshared)
    assert second.status_code == 400, second.text
    error = second.json()["error"]
    assert error["code"] == -32602 and "requestState" in error["message"], error


@pytest.mark.anyio
async def test_load_spreads_over_both_instances(cluster: Cluster) -> None:
    """200 calls, 16 in flight; each answer echoes its own request (the elicitation's message)."""
    count, in_flight = 200, 16
    hits: Counter[str] = Counter()
    failures: list[str] = []
    limiter = anyio.CapacityLimiter(in_flight)
    limits = httpx.Limits(max_connections=in_flight)
    async with httpx.AsyncClient(
        base_url=cluster.base, timeout=HTTP_TIMEOUT, limits=limits, trust_env=False
    ) as http:

        async def one(i: int) -> None:
            async with limiter:
                name = "test_elicitation"
                body = json.dumps(modern_call(i, name, {"message": f"request {i}"}))
                response = await http.post("/mcp", content=body, headers=modern_headers(name))
            hits[response.headers.get("x-upstream", "?")] += 1
            try:
                answer = response.json()
                request = next(iter(answer["result"]["inputRequests"].values()))
                assert response.status_code == 200 and answer["id"] == i
                assert request["params"]["message"] == f"request {i}"
            except (AssertionError, KeyError, ValueError, StopIteration):
                failures.append(f"{i}: {response.status_code} {response.text[:200]}")

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tasks:
                for i in range(count):
                    tasks.start_soon(one, i)
    assert not failures, failures[:5]
    assert set(hits) == cluster.upstreams(cluster.shared), hits
    assert min(hits.values()) >= 0.4 * count, hits


# ---------------------------------------------------------------------- legacy: sessions


def legacy_post(
    http: httpx.Client, path: str, frame: dict[str, Any], session: str | None = None
) -> httpx.Response:
    headers = {"content-type": "application/json", "accept": ACCEPT}
    if session is not None:
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = LEGACY
    return http.post(path, content=json.dumps(frame), headers=headers)


def initialize(http: httpx.Client, path: str) -> tuple[str, str]:
    """A new session's id and the instance that holds it."""
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "scale-out-test", "version": "0"},
    }
    response = legacy_post(
        http, path, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == LEGACY
    return response.headers["mcp-session-id"], response.headers["x-upstream"]


def test_legacy_session_without_stickiness_is_lost(cluster: Cluster) -> None:
    with client(cluster.base) as http:
        session, home = initialize(http, "/mcp")
        response = legacy_post(http, "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, session)
    assert response.headers["x-upstream"] != home  # round-robin sent it to the other instance
    assert response.status_code == 404, response.text
    assert "unknown or expired session" in response.json()["error"]["message"]


def test_legacy_sessions_with_client_affinity(cluster: Cluster) -> None:
    """`hash $remote_addr consistent`: each client (here each loopback source address) keeps
    its instance from `initialize` on, and the clients spread over both instances."""
    homes: Counter[str] = Counter()
    for n in range(2, 34):
        with client(cluster.base, local_address=f"127.0.0.{n}") as http:
            session, home = initialize(http, "/sticky/mcp")
            homes[home] += 1
            frames = [
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "test_simple_text", "arguments": {}},
                },
            ]
            answers = [legacy_post(http, "/sticky/mcp", frame, session) for frame in frames]
            assert [a.status_code for a in answers] == [202, 200, 200], [a.text for a in answers]
            assert {a.headers["x-upstream"] for a in answers} == {home}
            tools = {tool["name"] for tool in answers[1].json()["result"]["tools"]}
            assert MULTI_ROUND in tools
            text = answers[2].json()["result"]["content"][0]["text"]
            assert text == "This is a simple text response for testing."
            ended = http.delete(
                "/sticky/mcp", headers={"mcp-session-id": session, "mcp-protocol-version": LEGACY}
            )
            assert ended.status_code == 200 and ended.headers["x-upstream"] == home
        if len(homes) == 2 and n >= 5:
            break
    assert set(homes) == cluster.upstreams(cluster.shared), homes


def test_hashing_the_session_id_alone_strands_sessions(cluster: Cluster) -> None:
    """`hash $http_mcp_session_id consistent` routes `initialize` (no id yet) independently of
    the id it hands out: the id's hash names the other instance for about half of the sessions.
    With 24 sessions, none stranded would happen by chance once in 2**24 runs."""
    outcomes: Counter[int] = Counter()
    with client(cluster.base) as http:
        for _ in range(24):
            session, home = initialize(http, "/session-hash/mcp")
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            response = legacy_post(http, "/session-hash/mcp", ping, session)
            same = response.headers["x-upstream"] == home
            assert response.status_code == (200 if same else 404), response.text
            outcomes[response.status_code] += 1
    assert outcomes[404] > 0, outcomes
