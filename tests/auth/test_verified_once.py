"""A bearer token is verified once: `JwtVerifier` caches the principal of a token it verified
while the keys that verified it are trusted, never past the token's `exp`, and forgets it when
the keys change; and an HTTP server with authorization reads a modern request on the same path as
one without (parsed once, its scopes checked before it is served)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jwt
import pytest

from mcpio import Context, Server
from mcpio.auth import JwtVerifier, ResourceServerAuth
from mcpio.auth import _resource as resource_module
from mcpio.http import _app as http_app_module
from tests.support import ACCEPT, MODERN, free_port, modern, serve_app
from tests.support.oauth_issuer import Issuer

pytestmark = pytest.mark.anyio

READ, WRITE = "mcp:read", "mcp:write"


class CountingJwt:
    """The PyJWT module with its signature checks counted (`decode` with a key)."""

    def __init__(self) -> None:
        self.verified = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(jwt, name)

    def decode(self, token: str, key: Any, **options: Any) -> Any:
        if options["options"]["verify_signature"]:
            self.verified += 1
        return jwt.decode(token, key, **options)


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    port = free_port()
    issuer = Issuer(port, ["http://127.0.0.1:1/mcp"])
    async with serve_app(issuer.app(), port):
        yield issuer


def counted(issuer: Issuer, **options: Any) -> tuple[JwtVerifier, CountingJwt]:
    verifier = JwtVerifier(issuer=issuer.url, audience="http://127.0.0.1:1/mcp", **options)
    counter = CountingJwt()
    verifier._jwt = counter  # pyright: ignore[reportPrivateUsage]
    return verifier, counter


async def test_a_token_is_verified_once_and_its_principal_served_from_then_on(
    issuer: Issuer,
) -> None:
    verifier, counter = counted(issuer)
    token = issuer.token("alice")
    first = await verifier(token)
    assert first is not None and first.subject == "alice"
    checks = counter.verified
    for _ in range(5):
        again = await verifier(token)
        assert again is not None and again.subject == "alice" and again.scopes == first.scopes
    assert counter.verified == checks


async def test_another_token_is_verified_on_its_own(issuer: Issuer) -> None:
    verifier, counter = counted(issuer)
    assert await verifier(issuer.token("alice")) is not None
    checks = counter.verified
    bob = await verifier(issuer.token("bob"))
    assert bob is not None and bob.subject == "bob"
    assert counter.verified == checks + 1


async def test_a_cache_of_zero_verifies_every_time(issuer: Issuer) -> None:
    verifier, counter = counted(issuer, cache_size=0)
    token = issuer.token("alice")
    for _ in range(3):
        assert await verifier(token) is not None
    assert counter.verified == 3


async def test_the_cache_keeps_the_most_recently_used_tokens(issuer: Issuer) -> None:
    verifier, counter = counted(issuer, cache_size=2)
    alice, bob, carol = (issuer.token(name) for name in ("alice", "bob", "carol"))
    for token in (alice, bob, alice, carol):  # carol's entry pushes bob's out
        assert await verifier(token) is not None
    checks = counter.verified
    assert await verifier(alice) is not None and counter.verified == checks
    assert await verifier(bob) is not None and counter.verified == checks + 1


class ShiftedTime:
    """The `time` module as `mcpio.auth._resource` sees it, `seconds` later than it is."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def time(self) -> float:
        return time.time() + self.seconds

    def monotonic(self) -> float:
        return time.monotonic() + self.seconds


async def test_a_cached_token_is_verified_again_past_its_exp(
    issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier, counter = counted(issuer, leeway=0, cache_seconds=1e7)  # keys trusted past exp
    token = issuer.token("alice")
    principal = await verifier(token)
    assert principal is not None and principal.expires_at is not None
    checks = counter.verified
    later = ShiftedTime(principal.expires_at + 1 - time.time())
    monkeypatch.setattr(resource_module, "time", later)
    await verifier(token)  # (PyJWT's own clock still reads the token as valid)
    assert counter.verified == checks + 1


async def test_a_cached_token_of_a_withdrawn_key_is_refused_once_the_keys_are_fetched_again(
    issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier, _ = counted(issuer, cache_seconds=60)
    old = issuer.token("alice")
    assert await verifier(old) is not None
    issuer.rotate("k2")
    fetches = issuer.jwks_fetches
    assert await verifier(old) is not None  # the JWKS is trusted 60 s: no fetch yet
    assert issuer.jwks_fetches == fetches
    monkeypatch.setattr(resource_module, "time", ShiftedTime(61))
    assert await verifier(old) is None  # fetched anew: k1 is gone
    assert issuer.jwks_fetches == fetches + 1


# The HTTP host: a server with authorization reads a modern request once, on the fast path.


def make_server() -> Server:
    server = Server("verified-once")

    @server.tool()
    async def whoami(ctx: Context) -> str:  # pyright: ignore[reportUnusedFunction]
        assert ctx.principal is not None
        return ctx.principal.subject

    @server.tool()
    async def deploy() -> str:  # pyright: ignore[reportUnusedFunction]
        return "deployed"

    return server


@pytest.fixture
async def gateway() -> AsyncIterator[tuple[Issuer, httpx.AsyncClient]]:
    issuer_port, port = free_port(), free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(issuer_port, [resource])
    auth = ResourceServerAuth(
        verifier=JwtVerifier(issuer=issuer.url, audience=resource),
        resource=resource,
        authorization_servers=[issuer.url],
        required_scopes={"*": [READ], "tools/call:deploy": [WRITE]},
    )
    app = make_server().http_app(auth=auth)
    async with serve_app(issuer.app(), issuer_port), serve_app(app, port) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=10) as http:
            yield issuer, http


def headers(token: str, method: str, name: str) -> dict[str, str]:
    return {
        "authorization": f"Bearer {token}",
        "accept": ACCEPT,
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        "mcp-name": name,
    }


def spy_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each modern read of the HTTP host, True where it decoded the request."""
    reads: list[bool] = []
    original = http_app_module.read_modern

    def read_modern(version: str, raw: bytes) -> Any:
        read = original(version, raw)
        reads.append(read is not None)
        return read

    monkeypatch.setattr(http_app_module, "read_modern", read_modern)
    return reads


async def test_with_authorization_a_modern_call_is_read_once(
    gateway: tuple[Issuer, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    issuer, http = gateway
    reads = spy_reads(monkeypatch)
    token = issuer.token("alice")
    call = modern(1, "tools/call", name="whoami", arguments={})
    response = await http.post("/mcp", json=call, headers=headers(token, "tools/call", "whoami"))
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == "alice"
    assert reads == [True]


async def test_on_the_fast_read_a_call_the_token_has_no_scope_for_is_403(
    gateway: tuple[Issuer, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    issuer, http = gateway
    reads = spy_reads(monkeypatch)
    token = issuer.token("alice", scope=READ)
    call = modern(1, "tools/call", name="deploy", arguments={})
    response = await http.post("/mcp", json=call, headers=headers(token, "tools/call", "deploy"))
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    assert reads == [True]


async def test_a_request_that_does_not_decode_is_still_403_before_its_errors(
    gateway: tuple[Issuer, httpx.AsyncClient],
) -> None:
    """The scope check comes first on the slow read too: a call the token may not make is 403,
    whatever is wrong with its arguments."""
    issuer, http = gateway
    token = issuer.token("alice", scope=READ)
    call = modern(1, "tools/call", name="deploy", arguments="not an object")
    response = await http.post("/mcp", json=call, headers=headers(token, "tools/call", "deploy"))
    assert response.status_code == 403
