"""The OAuth proxy's parts on their own: its stores (memory, SQLite, Redis: values by key with a
time to live, `take` once, counters that lose no increment), its bound on registrations per
address, its redirect URI rules (RFC 8252), and `MultiAuth` (the proxy's tokens and a JWT
issuer's on one server, tried in order)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from mcpio import Client
from mcpio.auth import (
    GitHubProvider,
    JwtVerifier,
    MemoryOAuthStore,
    MultiAuth,
    OAuth,
    OAuthProxy,
    OAuthStore,
    RedisOAuthStore,
    SqliteOAuthStore,
    VerifierUnavailable,
    open_oauth_store,
)
from mcpio.auth._proxy_clients import redirect_uri_matches, redirect_uri_problem
from mcpio.auth._proxy_limit import RegistrationLimit
from tests.support import free_port, serve_app
from tests.support.oauth_browser import Browser
from tests.support.oauth_issuer import Issuer
from tests.support.oauth_proxy import REDIRECT_URI, proxied, upstream
from tests.support.upstream_stub import CLIENT_ID, CLIENT_SECRET

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def check_store(store: OAuthStore, clock: Clock | None) -> None:
    await store.put("code:a", {"n": 1}, 60)
    await store.put("client:b", {"n": 2}, None)
    assert await store.get("code:a") == {"n": 1}
    results: list[object] = []

    async def take() -> None:
        results.append(await store.take("code:a"))

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(take)
    assert sorted(results, key=repr) == [None, None, None, None, {"n": 1}]  # one winner
    await store.put("up:c", {"n": 3}, 0.2)
    if clock is not None:
        clock.now += 1
    else:
        await anyio.sleep(0.3)
    assert await store.get("up:c") is None and await store.take("up:c") is None
    assert await store.get("client:b") == {"n": 2}
    await store.delete("client:b")
    assert await store.get("client:b") is None


async def check_counter(store: OAuthStore, clock: Clock | None) -> None:
    counted: list[int] = []

    async def count() -> None:
        counted.append(await store.count("register:127.0.0.1:7", 0.5))

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(count)
    assert sorted(counted) == [1, 2, 3, 4, 5]  # no increment lost
    if clock is not None:
        clock.now += 1
    else:
        await anyio.sleep(0.6)
    assert await store.count("register:127.0.0.1:7", 0.5) == 1  # it ended: a new one


async def test_memory_and_sqlite_stores(tmp_path: Path) -> None:
    for make in (MemoryOAuthStore, lambda c: SqliteOAuthStore(tmp_path / "oauth.db", c)):
        clock = Clock()
        store = make(clock)
        await check_store(store, clock)
        await check_counter(store, clock)
        await store.close()
    kept = SqliteOAuthStore(tmp_path / "kept.db")
    await kept.put("client:x", {"id": "x"}, None)
    await kept.close()
    again = open_oauth_store(f"sqlite:{tmp_path / 'kept.db'}")
    assert await again.get("client:x") == {"id": "x"}  # a restart keeps registrations
    assert (tmp_path / "kept.db").stat().st_mode & 0o777 == 0o600
    with pytest.raises(ValueError, match="expected memory"):
        open_oauth_store("postgres://user:pw@db/x")


@pytest.mark.services
async def test_redis_store(redis_url: str) -> None:
    store = open_oauth_store(redis_url)
    assert isinstance(store, RedisOAuthStore)
    await check_store(store, None)
    await check_counter(store, None)
    await store.close()


async def test_the_registration_limit_counts_per_address_and_window() -> None:
    clock = Clock()
    clock.now = 1000 * 60.0 + 45  # 15 s before a window ends
    limit = RegistrationLimit(MemoryOAuthStore(clock), 2, 60, clock)
    assert [await limit.refusal("10.0.0.1") is None for _ in range(2)] == [True, True]
    refused = await limit.refusal("10.0.0.1")
    assert refused is not None and refused.status == 429
    assert refused.headers["retry-after"] == "15" and b'"too_many_requests"' in refused.body
    assert await limit.refusal("10.0.0.2") is None  # another address: its own count
    clock.now += 15
    assert await limit.refusal("10.0.0.1") is None  # the next window
    unbounded = RegistrationLimit(MemoryOAuthStore(clock), None, 60, clock)
    assert all([await unbounded.refusal("10.0.0.1") is None for _ in range(50)])
    with pytest.raises(ValueError, match="positive"):
        RegistrationLimit(MemoryOAuthStore(), 0, 60)


def test_redirect_uri_rules() -> None:
    assert redirect_uri_problem("https://app.example/cb") is None
    assert redirect_uri_problem("http://127.0.0.1:8080/cb") is None
    assert redirect_uri_problem("com.example.app:/oauth") is None
    for bad in ("http://app.example/cb", "https://a.example/cb#x", "javascript:alert(1)", "", 7):
        assert redirect_uri_problem(bad) is not None, bad
    assert redirect_uri_matches("http://127.0.0.1:1/cb", "http://127.0.0.1:5555/cb")
    assert redirect_uri_matches("http://[::1]:1/cb", "http://[::1]:5555/cb")
    assert not redirect_uri_matches("http://127.0.0.1:1/cb", "http://127.0.0.1:5555/cb2")
    assert not redirect_uri_matches("https://app.example/cb", "https://app.example:444/cb")
    assert not redirect_uri_matches("http://127.0.0.1:1/cb", "http://u@127.0.0.1:2/cb")


async def test_multi_auth_takes_the_first_verifier_that_accepts() -> None:
    async def down(token: str) -> None:
        raise VerifierUnavailable("keys unreachable")

    async def refuses(token: str) -> None:
        return None

    assert await MultiAuth([refuses, refuses])("t") is None
    with pytest.raises(VerifierUnavailable):
        await MultiAuth([down, refuses])("t")  # the token may be valid: 503, not 401
    with pytest.raises(ValueError):
        MultiAuth([])


async def test_people_through_the_proxy_and_machines_with_jwts_on_one_server() -> None:
    issuer_port = free_port()
    with anyio.fail_after(30):
        async with upstream("github") as stub:
            github = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            issuer = Issuer(issuer_port, [])

            def both(proxy: OAuthProxy) -> MultiAuth:
                issuer.resources = frozenset([proxy.resource])
                return MultiAuth([proxy, JwtVerifier(issuer=issuer.url, audience=proxy.resource)])

            async with serve_app(issuer.app(), issuer_port), proxied(github, both) as proxy:
                person = await call(proxy.resource, OAuth(redirect=Browser(REDIRECT_URI)))
                machine = await call(proxy.resource, issuer.token("ci-bot"))
    assert person == "583231" and machine == "ci-bot"


async def call(url: str, auth: OAuth | str) -> str:
    async with Client(url, auth=auth) as client:
        result = await client.call_tool("whoami", {})
    assert result.structuredContent is not None
    return str(result.structuredContent["subject"])
