"""The HTTP server as an OAuth resource server (`mcpio.auth`), through real uvicorns on loopback
ports: an in-test authorization server built on authlib (`tests/support/oauth_issuer.py`: its token
endpoint, or its token generator for many subjects; the bad tokens it would never issue are
forged here with PyJWT) and our server with `auth=`."""

from __future__ import annotations

import json
import logging
import math
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mcpio import Client, Context, Server
from mcpio.auth import (
    STRICT_TOKEN_TYPES,
    DpopPolicy,
    IntrospectionVerifier,
    JwtVerifier,
    MemoryReplayCache,
    Nonces,
    Principal,
    RedisReplayCache,
    ReplayCacheFull,
    ResourceServerAuth,
    VerifierUnavailable,
)
from mcpio.auth._client import OAuth, pkce_pair
from mcpio.auth._dpop import DpopKey, token_hash
from tests.support import (
    ACCEPT,
    MODERN,
    ROOT,
    free_port,
    headers_for,
    initialize,
    modern,
    serve_app,
    until,
)
from tests.support.oauth_issuer import REDIRECT_URI, Issuer
from tests.support.once import Once

pytestmark = pytest.mark.anyio
READ, WRITE = "mcp:read", "mcp:write"


server = Server("auth-demo", "1.0")


@server.tool()
async def whoami(ctx: Context) -> str:
    principal = ctx.principal
    assert principal is not None
    return f"{principal.subject} {' '.join(sorted(principal.scopes))}"


@server.tool()
async def deploy() -> str:
    return "deployed"


@server.tool()
async def confirm(ctx: Context) -> str:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    await ctx.elicit("Sure?", schema, key="confirm")
    assert ctx.principal is not None
    return f"confirmed by {ctx.principal.subject}"


@server.prompt()
def greet() -> str:
    return "hello"


def forge(
    issuer: Issuer,
    key: Any = None,
    algorithm: str = "RS256",
    headers: dict[str, Any] | None = None,
    **claims: Any,
) -> str:
    """A token the issuer would not issue (bad claims, another key): minted here with PyJWT,
    signed with the issuer's key unless told otherwise; a claim given as None is left out, so
    is a `typ` in `headers` given as None."""
    now = int(time.time())
    body: dict[str, Any] = {
        "iss": issuer.url,
        "sub": "eve",
        "aud": min(issuer.resources),
        "iat": now,
        "exp": now + 300,
        "scope": READ,
        "client_id": "app",
        "jti": f"forged-{now}",
        **claims,
    }
    body = {k: v for k, v in body.items() if v is not None}
    if key is None:
        key = issuer.key.as_pem(private=True)
    header = {"kid": issuer.key.kid, "typ": "at+jwt", **(headers or {})}
    return jwt.encode(body, key, algorithm=algorithm, headers=header)


@dataclass
class Stack:
    issuer: Issuer
    http: httpx.AsyncClient
    resource: str


@asynccontextmanager
async def stack(
    leeway: float = 30.0,
    introspection: bool = False,
    verifier_options: dict[str, Any] | None = None,
    cors_origins: tuple[str, ...] = (),
    **auth_options: Any,
) -> AsyncIterator[Stack]:
    """The issuer and our server; its verifier `JwtVerifier` (with `verifier_options`), or with
    `introspection` an `IntrospectionVerifier` asking the issuer; browser pages of
    `cors_origins` allowed."""
    issuer_port, port = free_port(), free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(issuer_port, [resource])
    verifier: Any = JwtVerifier(
        issuer=issuer.url, audience=resource, leeway=leeway, **(verifier_options or {})
    )
    if introspection:
        verifier = IntrospectionVerifier(
            f"{issuer.url}/introspect",
            "resource-server",
            "rs-s3cret",
            audience=resource,
            issuer=issuer.url,
            leeway=leeway,
        )
    options: dict[str, Any] = {
        "verifier": verifier,
        "resource": resource,
        "authorization_servers": [issuer.url],
        "scopes_supported": [READ, WRITE, "mcp:prompts"],
        "required_scopes": {
            "*": [READ],
            "tools/call:deploy": [WRITE],
            "prompts/list": ["mcp:prompts"],
        },
        **auth_options,
    }
    app = server.http_app(auth=ResourceServerAuth(**options), cors_origins=cors_origins)
    async with serve_app(issuer.app(), issuer_port), serve_app(app, port) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=10) as http:
            yield Stack(issuer, http, resource)


async def post(
    http: httpx.AsyncClient, frame: Any, token: str | None, **extra: str
) -> httpx.Response:
    enveloped = isinstance(frame, dict) and "_meta" in frame.get("params", {})
    headers = (
        headers_for(frame) if enveloped else {"content-type": "application/json", "accept": ACCEPT}
    )
    headers.update(extra)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return await http.post("/mcp", content=json.dumps(frame), headers=headers)


def challenge(response: httpx.Response) -> dict[str, str]:
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer ")
    return dict(
        (k.strip(), v.strip('"')) for k, v in (p.split("=", 1) for p in value[7:].split(", "))
    )


@contextmanager
def captured() -> Iterator[list[str]]:
    """Every log line of every logger (uvicorn's own included), tracebacks too."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(logging.Formatter().format(record))

    handler = Collect(logging.DEBUG)
    loggers = [logging.getLogger(n) for n in ("", "uvicorn", "uvicorn.error", "uvicorn.access")]
    saved = [(lg, lg.level) for lg in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        for logger, level in saved:
            logger.removeHandler(handler)
            logger.setLevel(level)


async def test_metadata_and_no_token() -> None:
    async with stack() as s:
        metadata_url = f"{s.resource.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp"
        for path in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ):
            response = await s.http.get(path)
            assert response.status_code == 200
            assert response.json() == {
                "resource": s.resource,
                "authorization_servers": [s.issuer.url],
                "bearer_methods_supported": ["header"],
                "scopes_supported": [READ, WRITE, "mcp:prompts"],
            }
        # No token: 401 on every method of the endpoint, pointing at the metadata.
        for response in (
            await post(s.http, modern(1, "tools/call", name="whoami"), None),
            await post(s.http, initialize(), None),
            await s.http.get(
                "/mcp", headers={"accept": "text/event-stream", "mcp-session-id": "x"}
            ),
            await s.http.delete("/mcp", headers={"mcp-session-id": "x"}),
            await post(s.http, modern(2, "tools/list"), None, authorization="Basic dTpw"),
        ):
            assert response.status_code == 401
            assert challenge(response) == {"resource_metadata": metadata_url, "scope": READ}
            assert "error" not in response.json() or response.json()["error"]["code"] == -32600


@pytest.fixture(scope="module")
def once() -> Once:
    return Once()


@dataclass
class BothEras:
    """What `valid_tokens_in_both_eras` saw: the responses, by what was asked."""

    modern_whoami: httpx.Response
    modern_deploy: httpx.Response
    initialize: httpx.Response
    initialized: httpx.Response
    legacy_whoami: httpx.Response
    bob_on_alice_s_session: int
    no_token_on_alice_s_session: int
    streams: dict[str, int]  # the session's GET stream opened by each
    bob_deletes: int
    alice_deletes: int
    jwks_fetches: int


async def valid_tokens_in_both_eras() -> BothEras:
    """alice (read, write) calls tools on the modern wire, then opens a legacy session and calls
    on it; bob tries her session (calls, GET stream, DELETE), she ends it."""
    async with stack() as s:
        alice = s.issuer.token("alice", f"{READ} {WRITE}")
        modern_whoami = await post(s.http, modern(1, "tools/call", name="whoami"), alice)
        modern_deploy = await post(s.http, modern(2, "tools/call", name="deploy"), alice)
        initialized = await post(s.http, initialize(), alice)
        session = {
            "mcp-session-id": initialized.headers.get("mcp-session-id", ""),
            "mcp-protocol-version": "2025-11-25",
        }
        notified = await post(
            s.http, {"jsonrpc": "2.0", "method": "notifications/initialized"}, alice, **session
        )
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "whoami"}}
        legacy_whoami = await post(s.http, call, alice, **session)
        bob = s.issuer.token("bob", f"{READ} {WRITE}")
        bob_calls = (await post(s.http, call, bob, **session)).status_code
        nobody_calls = (await post(s.http, call, None, **session)).status_code
        stream = {**session, "accept": "text/event-stream"}
        streams: dict[str, int] = {}
        for who, token in (
            ("bob", bob),
            ("alice without scopes", s.issuer.token("alice", "")),
            ("alice", alice),
        ):
            headers = {**stream, "authorization": f"Bearer {token}"}
            async with s.http.stream("GET", "/mcp", headers=headers) as response:
                streams[who] = response.status_code
        deleted = [
            (
                await s.http.delete("/mcp", headers={**session, "authorization": f"Bearer {who}"})
            ).status_code
            for who in (bob, alice)
        ]
        return BothEras(
            modern_whoami,
            modern_deploy,
            initialized,
            notified,
            legacy_whoami,
            bob_calls,
            nobody_calls,
            streams,
            *deleted,
            s.issuer.jwks_fetches,
        )


def tool_text(response: httpx.Response) -> str:
    return response.json()["result"]["content"][0]["text"]


async def test_a_valid_token_calls_tools_on_the_modern_wire(once: Once) -> None:
    seen = await once(valid_tokens_in_both_eras)
    assert seen.modern_whoami.status_code == 200, seen.modern_whoami.text
    assert tool_text(seen.modern_whoami) == f"alice {READ} {WRITE}"
    assert tool_text(seen.modern_deploy) == "deployed"


async def test_a_valid_token_opens_and_calls_on_a_legacy_session(once: Once) -> None:
    """Legacy: initialize, then calls on the session, all with the token."""
    seen = await once(valid_tokens_in_both_eras)
    assert seen.initialize.status_code == 200
    assert seen.initialized.status_code == 202
    assert seen.legacy_whoami.status_code == 200
    assert tool_text(seen.legacy_whoami) == f"alice {READ} {WRITE}"


async def test_a_legacy_session_does_not_exist_for_another_principal(once: Once) -> None:
    """The session is alice's: bob (a valid token) is told it does not exist; no token is 401."""
    seen = await once(valid_tokens_in_both_eras)
    assert seen.bob_on_alice_s_session == 404
    assert seen.no_token_on_alice_s_session == 401


async def test_the_session_s_get_stream_is_its_owner_s_with_the_star_scope(once: Once) -> None:
    seen = await once(valid_tokens_in_both_eras)
    assert seen.streams == {"bob": 404, "alice without scopes": 403, "alice": 200}


async def test_only_the_session_s_owner_deletes_it(once: Once) -> None:
    seen = await once(valid_tokens_in_both_eras)
    assert seen.bob_deletes == 404
    assert seen.alice_deletes == 200


async def test_the_jwks_is_fetched_once_for_every_valid_token(once: Once) -> None:
    assert (await once(valid_tokens_in_both_eras)).jwks_fetches == 1  # the JWKS is cached


async def test_invalid_tokens_are_refused_and_never_logged() -> None:
    async with stack() as s:
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        good = s.issuer.token()
        head, body, signature = good.split(".")
        flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
        now = int(time.time())
        bad = {
            "expired": forge(s.issuer, exp=now - 3600, iat=now - 7200),
            "wrong audience": forge(s.issuer, aud="http://127.0.0.1:1/other"),
            "wrong issuer": forge(s.issuer, iss="http://127.0.0.1:1"),
            "tampered signature": f"{head}.{body}.{flipped}",
            "tampered claims": f"{head}.{jwt.utils.base64url_encode(json.dumps({'sub': 'mallory', 'scope': WRITE}).encode()).decode()}.{signature}",
            "another key": forge(s.issuer, other),
            "unknown key": jwt.encode(
                {"iss": s.issuer.url, "sub": "eve", "aud": s.resource, "exp": now + 60},
                other,
                algorithm="RS256",
                headers={"kid": "k9"},
            ),
            "symmetric": forge(s.issuer, "a-shared-secret-of-32-bytes-long!", "HS256"),
            "no subject": forge(s.issuer, sub=None),
            "garbage": "not-a-jwt",
        }
        with captured() as lines:
            for why, token in bad.items():
                for response in (
                    await post(s.http, modern(1, "tools/call", name="whoami"), token),
                    await post(s.http, initialize(), token),
                ):
                    assert response.status_code == 401, why
                    assert challenge(response)["error"] == "invalid_token", why
        assert sum("access token rejected" in line for line in lines) >= 2 * (len(bad) - 1)
        for token in [*bad.values(), good]:
            for part in token.split("."):
                assert all(
                    part not in line for line in lines if len(part) > 8
                ), "a token was logged"


async def test_insufficient_scope() -> None:
    async with stack() as s:
        reader = s.issuer.token("carol", READ)
        response = await post(s.http, modern(1, "tools/call", name="deploy"), reader)
        assert response.status_code == 403
        assert challenge(response) == {
            "error": "insufficient_scope",
            "resource_metadata": f"http://{s.resource.split('/')[2]}/.well-known/oauth-protected-resource/mcp",
            "scope": f"{READ} {WRITE}",
        }
        # Other tools are fine; a method-level scope is checked too; so is the "*" one.
        assert (
            await post(s.http, modern(2, "tools/call", name="whoami"), reader)
        ).status_code == 200
        response = await post(s.http, modern(3, "prompts/list"), reader)
        assert response.status_code == 403 and challenge(response)["scope"] == f"mcp:prompts {READ}"
        nothing = s.issuer.token("dave", "")
        response = await post(s.http, modern(4, "tools/list"), nothing)
        assert response.status_code == 403 and challenge(response)["scope"] == READ
        # Legacy: the same per tool, on the session's POST.
        response = await post(s.http, initialize(), reader)
        session = {
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "deploy"}}
        response = await post(s.http, call, reader, **session)
        assert response.status_code == 403 and challenge(response)["error"] == "insufficient_scope"
        writer = s.issuer.token("carol", f"{READ} {WRITE}")  # step-up: same subject, more scopes
        response = await post(s.http, call, writer, **session)
        assert response.json()["result"]["content"][0]["text"] == "deployed"


async def test_request_state_is_bound_to_the_principal() -> None:
    async with stack() as s:
        alice, bob = s.issuer.token("alice"), s.issuer.token("bob")
        frame = modern(1, "tools/call", name="confirm")
        frame["params"]["_meta"] = {
            **frame["params"]["_meta"],
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }
        first = (await post(s.http, frame, alice)).json()["result"]
        assert first["resultType"] == "input_required"
        retry = json.loads(json.dumps(frame))
        retry["params"]["requestState"] = first["requestState"]
        retry["params"]["inputResponses"] = {
            "confirm": {"action": "accept", "content": {"ok": True}}
        }
        response = await post(s.http, retry, bob)
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32602 and "another principal" in error["message"]
        response = await post(s.http, retry, alice)
        assert response.json()["result"]["content"][0]["text"] == "confirmed by alice"


async def test_custom_verifier_and_unreachable_keys() -> None:
    tokens = {"opaque-1": Principal("svc", frozenset({READ}), {"client_id": "svc"})}

    async def lookup(token: str) -> Principal | None:
        return tokens.get(token)

    async with stack(verifier=lookup) as s:
        response = await post(s.http, modern(1, "tools/call", name="whoami"), "opaque-1")
        assert response.json()["result"]["content"][0]["text"] == f"svc {READ}"
        response = await post(s.http, modern(2, "tools/call", name="whoami"), "opaque-2")
        assert response.status_code == 401 and challenge(response)["error"] == "invalid_token"
    closed = f"http://127.0.0.1:{free_port()}/jwks"
    async with stack(verifier_options={"jwks_uri": closed, "timeout": 2}) as s:
        response = await post(s.http, modern(1, "tools/list"), s.issuer.token())
        assert response.status_code == 503  # not the client's fault: no invalid_token
    with pytest.raises(ValueError):
        JwtVerifier(issuer="x", audience="y", algorithms=["HS256"])


async def test_our_client_end_to_end() -> None:
    """`Client` with OAuth against this server: discovery from the 401, the issuer's token
    endpoint, the token verified here; a machine client and a user's, both eras."""

    async def approve(url: str) -> str:  # the browser step: the user approves
        async with httpx.AsyncClient() as browser:
            return (await browser.get(url)).headers["location"]

    async with stack() as s:
        for mode in ("auto", "legacy"):
            machine = OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret")
            user = OAuth(redirect=approve, client_id="app", scope=f"{READ} {WRITE}")
            for oauth, expected in ((machine, f"machine {READ}"), (user, f"alice {READ} {WRITE}")):
                async with Client(s.resource, auth=oauth, mode=mode, timeout=10) as client:
                    assert (client.revision == MODERN) == (mode == "auto")
                    result = await client.call_tool("whoami", {})
                    assert result.content[0].text == expected  # type: ignore[union-attr]
        grants = [("client_credentials", "machine"), ("authorization_code", "alice")]
        assert s.issuer.issued == grants * 2


@dataclass
class IssuerSeen:
    """What `the_issuer_asked_what_oauth_21_refuses` saw."""

    authorize_statuses: list[int]
    refused: list[tuple[dict[str, str | None], str, dict[str, str]]]  # changed, error, answer
    granted: dict[str, str]  # an authorization answer
    wrong_verifier: httpx.Response
    other_resource: httpx.Response
    issued: httpx.Response
    replayed: httpx.Response
    client_credentials: dict[str | None, int]  # the status for each resource asked (or none)
    resource: str
    issuer_url: str
    issued_grants: list[tuple[str, str]]


async def the_issuer_asked_what_oauth_21_refuses() -> IssuerSeen:
    """Authorizations with bad PKCE or another resource, a code with the wrong verifier, for
    another resource, twice; client credentials without the resource, for another one."""
    async with stack() as s, httpx.AsyncClient(base_url=s.issuer.url) as http:
        verifier, challenge_ = pkce_pair()
        asked = {
            "response_type": "code",
            "client_id": "app",
            "redirect_uri": REDIRECT_URI,
            "state": "st",
            "scope": READ,
            "resource": s.resource,
            "code_challenge": challenge_,
            "code_challenge_method": "S256",
        }
        statuses: list[int] = []

        async def authorize(**changed: str | None) -> dict[str, str]:
            query = {k: v for k, v in {**asked, **changed}.items() if v is not None}
            response = await http.get("/authorize", params=query)
            statuses.append(response.status_code)
            return dict(parse_qsl(urlsplit(response.headers.get("location", "")).query))

        refused: list[tuple[dict[str, str | None], str, dict[str, str]]] = []
        for changed, error in (
            ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
            ({"code_challenge_method": "plain", "code_challenge": verifier}, "invalid_request"),
            ({"resource": "http://127.0.0.1:1/other"}, "invalid_target"),
        ):
            refused.append((changed, error, await authorize(**changed)))
        granted = await authorize()
        form = {
            "grant_type": "authorization_code",
            "client_id": "app",
            "code": granted.get("code", ""),
            "redirect_uri": REDIRECT_URI,
            "resource": s.resource,
        }
        wrong = await http.post("/token", data={**form, "code_verifier": "x" * 43})
        form["code"] = (await authorize()).get("code", "")
        other = await http.post(
            "/token",
            data={**form, "code_verifier": verifier, "resource": "http://127.0.0.1:1/other"},
        )
        issued = await http.post("/token", data={**form, "code_verifier": verifier})
        replay = await http.post("/token", data={**form, "code_verifier": verifier})
        machine = httpx.BasicAuth("machine", "s3cret")
        client_credentials: dict[str | None, int] = {}
        for resource in (None, "http://127.0.0.1:1/other", s.resource):
            data = {"grant_type": "client_credentials", "scope": WRITE}
            if resource is not None:
                data["resource"] = resource
            response = await http.post("/token", data=data, auth=machine)
            client_credentials[resource] = response.status_code
        return IssuerSeen(
            statuses,
            refused,
            granted,
            wrong,
            other,
            issued,
            replay,
            client_credentials,
            s.resource,
            s.issuer.url,
            list(s.issuer.issued),
        )


async def test_the_issuer_redirects_every_authorization_back(once: Once) -> None:
    """What the end-to-end tests rely on: authlib's server refuses what OAuth 2.1 refuses."""
    statuses = (await once(the_issuer_asked_what_oauth_21_refuses)).authorize_statuses
    assert statuses == [302] * 5


async def test_the_issuer_refuses_an_authorization_without_s256_or_for_another_resource(
    once: Once,
) -> None:
    for changed, error, answer in (await once(the_issuer_asked_what_oauth_21_refuses)).refused:
        assert answer["error"] == error and answer["state"] == "st", changed


async def test_the_issuer_names_itself_in_its_authorization_response(once: Once) -> None:
    seen = await once(the_issuer_asked_what_oauth_21_refuses)
    assert seen.granted["iss"] == seen.issuer_url  # RFC 9207


async def test_the_issuer_refuses_a_code_with_the_wrong_verifier(once: Once) -> None:
    wrong = (await once(the_issuer_asked_what_oauth_21_refuses)).wrong_verifier
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"


async def test_the_issuer_refuses_a_code_for_another_resource(once: Once) -> None:
    other = (await once(the_issuer_asked_what_oauth_21_refuses)).other_resource
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"


async def test_the_issuer_issues_an_access_token_jwt_for_the_resource(once: Once) -> None:
    seen = await once(the_issuer_asked_what_oauth_21_refuses)
    assert seen.issued.status_code == 200, seen.issued.text
    token = seen.issued.json()["access_token"]
    assert jwt.get_unverified_header(token)["typ"] == "at+jwt"  # RFC 9068
    claims = jwt.decode(token, options={"verify_signature": False})
    assert (claims["aud"], claims["sub"], claims["scope"]) == (seen.resource, "alice", READ)


async def test_the_issuer_refuses_a_code_twice(once: Once) -> None:
    replay = (await once(the_issuer_asked_what_oauth_21_refuses)).replayed
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"


async def test_the_issuer_grants_client_credentials_for_the_resource_only(once: Once) -> None:
    seen = await once(the_issuer_asked_what_oauth_21_refuses)
    for resource, status in ((None, 400), ("http://127.0.0.1:1/other", 400), (seen.resource, 200)):
        assert seen.client_credentials[resource] == status, resource


async def test_the_issuer_issued_a_token_for_each_good_grant_only(once: Once) -> None:
    seen = await once(the_issuer_asked_what_oauth_21_refuses)
    assert seen.issued_grants == [
        ("authorization_code", "alice"),
        ("client_credentials", "machine"),
    ]


async def test_streams_end_when_their_token_expires() -> None:
    """A legacy GET stream and a modern listen end when the token that opened them expires
    (tokens of the issuer's "brief" client live 2 s; no leeway here); others stay open."""
    async with stack(leeway=0) as s, httpx.AsyncClient(base_url=s.issuer.url) as issuer:

        async def brief() -> tuple[str, float]:
            form = {"grant_type": "client_credentials", "resource": s.resource}
            response = await issuer.post("/token", data=form, auth=("brief", "s3cret"))
            assert response.json()["expires_in"] == 2
            token = response.json()["access_token"]
            return token, jwt.decode(token, options={"verify_signature": False})["exp"]

        token, exp = await brief()
        response = await post(s.http, initialize(), token)
        session = {
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await post(s.http, initialized, token, **session)).status_code == 202
        headers = {**session, "accept": "text/event-stream", "authorization": f"Bearer {token}"}
        with anyio.fail_after(10):
            async with s.http.stream("GET", "/mcp", headers=headers) as response:
                assert response.status_code == 200
                async for _ in response.aiter_lines():
                    pass
        assert exp <= time.time() < exp + 2

        frame = modern(7, "subscriptions/listen", notifications={"toolsListChanged": True})
        lasting = s.issuer.token("alice", READ)
        token, exp = await brief()
        with anyio.fail_after(10):
            async with (
                s.http.stream(
                    "POST", "/mcp", content=json.dumps(frame), headers=listen_headers(frame, token)
                ) as short,
                s.http.stream(
                    "POST",
                    "/mcp",
                    content=json.dumps(frame),
                    headers=listen_headers(frame, lasting),
                ) as long,
            ):
                ended = anyio.Event()

                async def watch() -> None:
                    async for _ in long.aiter_lines():
                        pass
                    ended.set()

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(watch)
                    frames = [
                        json.loads(x[6:]) async for x in short.aiter_lines() if x[:6] == "data: "
                    ]
                    assert time.time() >= exp
                    await anyio.sleep(0.5)
                    assert not ended.is_set()
                    tasks.cancel_scope.cancel()
        assert frames[0]["method"] == "notifications/subscriptions/acknowledged"
        assert frames[-1]["id"] == 7 and frames[-1]["error"]["code"] == -32600
        assert "expired" in frames[-1]["error"]["message"]


def listen_headers(frame: dict[str, Any], token: str) -> dict[str, str]:
    return {**headers_for(frame), "authorization": f"Bearer {token}"}


@dataclass
class IntrospectionSeen:
    """What `introspection_asked` saw."""

    whoami: list[httpx.Response]  # the same valid token, twice
    introspections_for_it: int
    bad: dict[str, httpx.Response]  # each invalid token's answer
    bad_count: int
    introspections_after_the_bad_ones: int  # and the opaque one asked again
    deploy_with_read: int
    lines: list[str]  # logged meanwhile
    tokens: list[str]  # the bad ones and the valid one
    bounded: list[tuple[Principal | None, float]]  # a bounded cache's answers, and when
    bounded_introspections: int  # for those five
    brief: list[bool]  # answered by a cache of 0.2 s: twice, then again after 0.3 s
    brief_introspections: int  # for those three, after the five
    unavailable: list[int]  # with the resource server's credentials refused, with no endpoint


async def introspection_asked() -> IntrospectionSeen:
    """`IntrospectionVerifier` against the issuer's RFC 7662 endpoint (authlib's): a valid token,
    invalid ones; then verifiers of a bounded cache, of a brief one, of refused credentials and
    of no endpoint."""
    async with stack(introspection=True) as s:
        good = s.issuer.token("alice", f"{READ} {WRITE}")
        with captured() as lines:
            whoami = [
                await post(s.http, modern(id, "tools/call", name="whoami"), good) for id in (1, 2)
            ]
            introspections_for_it = s.issuer.introspections
            now = int(time.time())
            bad_tokens = {
                "expired": forge(s.issuer, exp=now - 3600, iat=now - 7200),
                "wrong audience": forge(s.issuer, aud="http://127.0.0.1:1/other"),
                "wrong issuer": forge(s.issuer, iss="http://127.0.0.1:1"),
                "another key": forge(s.issuer, rsa.generate_private_key(65537, 2048)),
                "opaque": "not-a-jwt",
            }
            bad = {
                why: await post(s.http, modern(3, "tools/call", name="whoami"), token)
                for why, token in bad_tokens.items()
            }
            await post(s.http, modern(4, "tools/list"), bad_tokens["opaque"])
            introspections_after = s.issuer.introspections
            deploy = await post(s.http, modern(5, "tools/call", name="deploy"), s.issuer.token())

        verifier = IntrospectionVerifier(
            f"{s.issuer.url}/introspect",
            "resource-server",
            "rs-s3cret",
            audience=s.resource,
            cache_size=2,
        )
        tokens = [s.issuer.token(subject) for subject in ("a", "b", "c")]
        before = s.issuer.introspections
        bounded = []
        for token in [*tokens, tokens[2], tokens[0]]:  # "a" was evicted by "c"
            bounded.append((await verifier(token), time.time()))
        bounded_introspections = s.issuer.introspections - before
        brief = IntrospectionVerifier(
            f"{s.issuer.url}/introspect",
            "resource-server",
            "rs-s3cret",
            audience=s.resource,
            cache_seconds=0.2,
        )
        answered = [await brief(tokens[1]) is not None, await brief(tokens[1]) is not None]
        await anyio.sleep(0.3)
        answered.append(await brief(tokens[1]) is not None)
        brief_introspections = s.issuer.introspections - before
        unavailable: list[int] = []
        for endpoint, secret in (
            (f"{s.issuer.url}/introspect", "wrong"),
            (f"http://127.0.0.1:{free_port()}/introspect", "rs-s3cret"),
        ):
            refused = IntrospectionVerifier(
                endpoint, "resource-server", secret, audience=s.resource, timeout=2
            )
            async with stack(verifier=refused) as other:
                response = await post(other.http, modern(1, "tools/list"), good)
                unavailable.append(response.status_code)
        return IntrospectionSeen(
            whoami,
            introspections_for_it,
            bad,
            len(bad_tokens),
            introspections_after,
            deploy.status_code,
            lines,
            [*bad_tokens.values(), good],
            bounded,
            bounded_introspections,
            answered,
            brief_introspections,
            unavailable,
        )


async def test_introspection_accepts_a_valid_token_with_its_subject_and_scopes(
    once: Once,
) -> None:
    for response in (await once(introspection_asked)).whoami:
        assert response.json()["result"]["content"][0]["text"] == f"alice {READ} {WRITE}"


async def test_an_introspected_token_is_answered_from_the_cache(once: Once) -> None:
    assert (await once(introspection_asked)).introspections_for_it == 1  # the second: cached


async def test_introspection_refuses_invalid_tokens_as_invalid_token(once: Once) -> None:
    for why, response in (await once(introspection_asked)).bad.items():
        assert response.status_code == 401, why
        assert challenge(response)["error"] == "invalid_token", why


async def test_introspection_rejections_are_not_cached(once: Once) -> None:
    """Asked again, introspected again."""
    seen = await once(introspection_asked)
    assert seen.introspections_after_the_bad_ones == 1 + seen.bad_count + 1


async def test_introspected_scopes_are_enforced(once: Once) -> None:
    assert (await once(introspection_asked)).deploy_with_read == 403


async def test_introspection_rejections_are_logged_without_the_token(once: Once) -> None:
    seen = await once(introspection_asked)
    assert sum("access token rejected" in line for line in seen.lines) >= seen.bad_count
    for token in seen.tokens:
        for part in token.split("."):
            assert all(part not in line for line in seen.lines if len(part) > 8), "token logged"


async def test_the_introspection_cache_is_bounded(once: Once) -> None:
    seen = await once(introspection_asked)
    for principal, checked_at in seen.bounded:
        assert principal is not None and principal.expires_at is not None
        assert principal.expires_at > checked_at + 200
    assert seen.bounded_introspections == 4  # unbounded, it would be 3


async def test_introspection_answers_expire_from_the_cache(once: Once) -> None:
    seen = await once(introspection_asked)
    assert seen.brief[0] and seen.brief[1]
    assert seen.brief[2]
    assert seen.brief_introspections == 4 + 2  # cached once, then expired from the cache


async def test_refused_credentials_or_no_introspection_endpoint_is_503(once: Once) -> None:
    """The resource server's credentials refused, or no endpoint: 503, not 401."""
    for status in (await once(introspection_asked)).unavailable:
        assert status == 503


@dataclass
class RotationSeen:
    """What `keys_rotated` saw."""

    old_before: httpx.Response  # the k1 token, before the rotation
    new_kid: str  # of the token signed after it
    old_after: httpx.Response  # the k1 token, the JWKS's lifetime over
    new_after: httpx.Response
    fetches_after_expiry: int
    both_accept_k2: bool  # patient and eager
    patient_k3: Principal | None
    patient_fetches: int  # JWKS fetches for that
    eager_k3: Principal | None
    eager_k2_after: Principal | None
    eager_fetches: int  # JWKS fetches for patient's and eager's k3 and k2 checks


async def keys_rotated() -> RotationSeen:
    """Key rotation: a token of key k1 is accepted; the issuer withdraws k1 and signs with k2;
    once the JWKS's lifetime (here 0.5 s) is over it is fetched again and replaces the old one
    whole. Then k3 is rotated in before the cached JWKS expires, for a verifier that waits
    `refetch_interval` (30 s) between fetches and one that does not."""
    async with stack(verifier_options={"cache_seconds": 0.5}) as s:
        old = s.issuer.token("alice")
        old_before = await post(s.http, modern(1, "tools/call", name="whoami"), old)
        s.issuer.rotate("k2")
        new = s.issuer.token("bob")
        await anyio.sleep(0.5)
        old_after = await post(s.http, modern(2, "tools/call", name="whoami"), old)
        new_after = await post(s.http, modern(3, "tools/call", name="whoami"), new)
        fetches_after_expiry = s.issuer.jwks_fetches

        patient = JwtVerifier(issuer=s.issuer.url, audience=s.resource)  # 30 s between
        eager = JwtVerifier(issuer=s.issuer.url, audience=s.resource, refetch_interval=0)
        both = await patient(new) is not None and await eager(new) is not None
        s.issuer.rotate("k3")
        newest = s.issuer.token("carol")
        fetches = s.issuer.jwks_fetches
        patient_k3 = await patient(newest)
        patient_fetches = s.issuer.jwks_fetches - fetches
        eager_k3 = await eager(newest)
        eager_k2_after = await eager(new)
        return RotationSeen(
            old_before,
            jwt.get_unverified_header(new)["kid"],
            old_after,
            new_after,
            fetches_after_expiry,
            both,
            patient_k3,
            patient_fetches,
            eager_k3,
            eager_k2_after,
            s.issuer.jwks_fetches - fetches,
        )


async def test_a_token_of_the_issuer_s_key_is_accepted(once: Once) -> None:
    assert (await once(keys_rotated)).old_before.status_code == 200


async def test_the_rotated_issuer_signs_with_its_new_key(once: Once) -> None:
    assert (await once(keys_rotated)).new_kid == "k2"


async def test_once_the_jwks_expires_a_withdrawn_key_s_token_is_refused(once: Once) -> None:
    response = (await once(keys_rotated)).old_after
    assert response.status_code == 401 and challenge(response)["error"] == "invalid_token"


async def test_once_the_jwks_expires_the_new_key_s_token_is_accepted(once: Once) -> None:
    response = (await once(keys_rotated)).new_after
    assert response.json()["result"]["content"][0]["text"] == f"bob {READ}"


async def test_an_expired_jwks_is_fetched_again(once: Once) -> None:
    assert (await once(keys_rotated)).fetches_after_expiry == 2


async def test_an_unknown_kid_fetches_no_jwks_within_the_refetch_interval(once: Once) -> None:
    seen = await once(keys_rotated)
    assert seen.both_accept_k2
    assert seen.patient_k3 is None  # its JWKS was fetched less than 30 s ago
    assert seen.patient_fetches == 0


async def test_an_unknown_kid_fetches_the_jwks_early_and_replaces_it_whole(once: Once) -> None:
    """A key rotated in before the cached JWKS expires: an early fetch, rate-limited."""
    seen = await once(keys_rotated)
    assert seen.eager_k3 is not None and seen.eager_k3.subject == "carol"
    assert seen.eager_k2_after is None  # k2 is not in the refreshed JWKS any more
    assert seen.eager_fetches == 2


@dataclass
class BurstSeen:
    """What `bursts_of_unknown_kids` saw."""

    delay: float  # the JWKS's answer time in the first two bursts
    answers: list[tuple[bool, httpx.Response]]  # of both bursts: whether the token was valid
    cold: float  # the valid token's latency in the first burst, nothing cached yet
    fetches_cold: int  # after it
    warm: float  # in the second, the JWKS cached
    fetches_warm: int
    eager_first: bool  # the valid token accepted by a verifier of `refetch_interval=0`
    eager_during: bool  # and again while its strangers' fetch was under way
    eager_latency: float  # of that
    eager_delay: float  # the JWKS's answer time then
    eager_refused: list[bool]  # a stranger refused, for each
    eager_fetches: int  # JWKS fetches for the strangers and the valid token


async def bursts_of_unknown_kids() -> BurstSeen:
    """50 tokens with random kids (plausible claims, another key) against an issuer whose JWKS
    takes 1 s to answer, with a valid token among them, twice (the JWKS cached the second time);
    then the strangers against a verifier that may fetch at once (`refetch_interval=0`) while
    the valid token is checked."""
    delay = 1.0
    async with stack() as s:
        s.issuer.jwks_delay = delay
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        strangers = [
            forge(s.issuer, other, headers={"kid": secrets.token_hex(8)}) for _ in range(50)
        ]
        good = s.issuer.token("alice")
        answers: list[tuple[bool, httpx.Response]] = []

        async def burst() -> float:
            """Sends the strangers and the good token at once: the good one's latency."""
            latency = math.inf

            async def send(token: str) -> None:
                nonlocal latency
                started = time.monotonic()
                response = await post(s.http, modern(1, "tools/call", name="whoami"), token)
                answers.append((token == good, response))
                if token == good:
                    latency = time.monotonic() - started

            async with anyio.create_task_group() as tasks:
                for token in [*strangers[:25], good, *strangers[25:]]:
                    tasks.start_soon(send, token)
            return latency

        cold = await burst()  # nothing cached yet
        fetches_cold = s.issuer.jwks_fetches
        warm = await burst()
        fetches_warm = s.issuer.jwks_fetches

        eager = JwtVerifier(issuer=s.issuer.url, audience=s.resource, refetch_interval=0)
        s.issuer.jwks_delay = 0
        eager_first = await eager(good) is not None
        s.issuer.jwks_delay = 0.5
        s.issuer.jwks_asked = anyio.Event()
        fetches = s.issuer.jwks_fetches
        refused: list[bool] = []

        async def check(token: str) -> None:
            refused.append(await eager(token) is None)

        async with anyio.create_task_group() as tasks:
            for token in strangers:
                tasks.start_soon(check, token)
            await s.issuer.jwks_asked.wait()  # the strangers' fetch is under way
            started = time.monotonic()
            eager_during = await eager(good) is not None
            eager_latency = time.monotonic() - started
        return BurstSeen(
            delay,
            answers,
            cold,
            fetches_cold,
            warm,
            fetches_warm,
            eager_first,
            eager_during,
            eager_latency,
            s.issuer.jwks_delay,
            refused,
            s.issuer.jwks_fetches - fetches,
        )


async def test_a_valid_token_in_a_burst_of_unknown_kids_is_served(once: Once) -> None:
    for valid, response in (await once(bursts_of_unknown_kids)).answers:
        if valid:
            assert response.status_code == 200


async def test_tokens_of_unknown_kids_are_refused_as_invalid_tokens(once: Once) -> None:
    for valid, response in (await once(bursts_of_unknown_kids)).answers:
        if not valid:
            assert response.status_code == 401
            assert challenge(response)["error"] == "invalid_token"


async def test_a_cold_burst_of_unknown_kids_costs_one_jwks_fetch_all_wait_for(
    once: Once,
) -> None:
    """One JWKS fetch, which all of them wait for and share."""
    seen = await once(bursts_of_unknown_kids)
    assert seen.fetches_cold == 1
    # The valid token waits for that one answer: one JWKS delay more than the same burst with
    # the JWKS cached, not two. (Against `2 * delay` alone, the burst's own serving time had to
    # stay under one delay, which a loaded machine missed: 2.03 s.)
    assert seen.delay <= seen.cold < seen.warm + 1.5 * seen.delay


async def test_a_burst_against_a_cached_jwks_fetches_nothing(once: Once) -> None:
    """With the JWKS cached, a burst fetches nothing (within `refetch_interval`)."""
    seen = await once(bursts_of_unknown_kids)
    assert seen.fetches_warm == 1
    assert seen.warm < seen.delay


async def test_a_verifier_that_may_refetch_fetches_once_for_a_burst(once: Once) -> None:
    """When it may (`refetch_interval=0`), a burst fetches once, and every stranger is
    refused."""
    seen = await once(bursts_of_unknown_kids)
    assert seen.eager_refused == [True] * 50
    assert seen.eager_fetches == 1


async def test_valid_tokens_go_on_at_once_while_a_burst_s_fetch_is_under_way(
    once: Once,
) -> None:
    seen = await once(bursts_of_unknown_kids)
    assert seen.eager_first
    assert seen.eager_during
    assert seen.eager_latency < seen.eager_delay / 2


async def test_token_types() -> None:
    """The JOSE `typ`: by default `at+jwt` (`application/at+jwt` alike), `JWT` or none; never
    an ID token's or another type; with `STRICT_TOKEN_TYPES` only `at+jwt`."""
    async with stack() as s:
        default = JwtVerifier(issuer=s.issuer.url, audience=s.resource)
        strict = JwtVerifier(
            issuer=s.issuer.url, audience=s.resource, accepted_types=STRICT_TOKEN_TYPES
        )
        cases: dict[str | None, tuple[bool, bool]] = {  # accepted by default, by strict
            "at+jwt": (True, True),
            "application/at+jwt": (True, True),
            "AT+JWT": (True, True),
            "JWT": (True, False),
            None: (True, False),
            "id_token": (False, False),
            "id_token+jwt": (False, False),
            "JWT+id": (False, False),
            "logout+jwt": (False, False),
        }
        for typ, (by_default, by_strict) in cases.items():
            token = forge(s.issuer, headers={"typ": typ})
            assert jwt.get_unverified_header(token).get("typ") == typ
            assert (await default(token) is not None) == by_default, typ
            assert (await strict(token) is not None) == by_strict, typ
        id_token = forge(s.issuer, headers={"typ": "id_token"})
        response = await post(s.http, modern(1, "tools/call", name="whoami"), id_token)
        assert response.status_code == 401 and challenge(response)["error"] == "invalid_token"


async def test_scopes_and_subjects() -> None:
    """`scope` or `scp`, a space-separated string (Entra ID's `scp`) or a list; a `sub` that
    is not a non-empty string is refused."""
    async with stack() as s:
        for claims in (
            {"scope": f"{READ} {WRITE}"},
            {"scope": None, "scp": f"{READ} {WRITE}"},
            {"scope": None, "scp": [READ, WRITE]},
        ):
            token = forge(s.issuer, **claims)
            response = await post(s.http, modern(1, "tools/call", name="whoami"), token)
            assert response.json()["result"]["content"][0]["text"] == f"eve {READ} {WRITE}"
        for subject in ("", 42, ["eve"], None):
            token = forge(s.issuer, sub=subject)
            response = await post(s.http, modern(2, "tools/call", name="whoami"), token)
            assert response.status_code == 401, subject


async def test_tokens_that_cannot_be_valid_are_401_while_the_issuer_is_down() -> None:
    """With the issuer's metadata and keys unavailable, a token that no key could make valid
    is still 401 `invalid_token`, decided without asking the issuer; a plausible one is 503."""
    async with stack() as s:
        s.issuer.down = True
        now = int(time.time())
        claims = {"iss": s.issuer.url, "aud": s.resource, "sub": "eve", "exp": now + 60}
        p521 = ec.generate_private_key(ec.SECP521R1())
        impossible = {
            "garbage": "not-a-jwt",
            "three segments": "abc.def.ghi",
            "alg none": jwt.encode(claims, None, algorithm="none", headers={"kid": "k1"}),
            "symmetric": forge(s.issuer, "a-shared-secret-of-32-bytes-long!", "HS256"),
            "an algorithm not allowed": forge(s.issuer, p521, "ES512"),
            "expired": forge(s.issuer, exp=now - 3600, iat=now - 7200),
            "no expiry": forge(s.issuer, exp=None),
            "wrong audience": forge(s.issuer, aud="http://127.0.0.1:1/other"),
            "wrong issuer": forge(s.issuer, iss="http://127.0.0.1:1"),
            "an ID token": forge(s.issuer, headers={"typ": "id_token"}),
            "empty subject": forge(s.issuer, sub=""),
        }
        for why, token in impossible.items():
            response = await post(s.http, modern(1, "tools/list"), token)
            assert response.status_code == 401, why
            assert challenge(response)["error"] == "invalid_token", why
        assert s.issuer.metadata_fetches == s.issuer.jwks_fetches == 0
        response = await post(s.http, modern(2, "tools/list"), s.issuer.token())
        assert response.status_code == 503
        assert s.issuer.metadata_fetches == 1


async def test_a_down_issuer_is_not_asked_on_every_request() -> None:
    """A failed discovery (or JWKS fetch, or introspection) is not tried again before a
    backoff (here 0.3 s, doubling): the requests meanwhile are 503 at once."""
    async with stack(verifier_options={"backoff": 0.3}) as s:
        s.issuer.down = True
        token = s.issuer.token()
        for id in range(10):
            response = await post(s.http, modern(id, "tools/list"), token)
            assert response.status_code == 503
        assert s.issuer.metadata_fetches == 1
        await anyio.sleep(0.35)
        assert (await post(s.http, modern(11, "tools/list"), token)).status_code == 503
        assert s.issuer.metadata_fetches == 2  # tried again, failed again: 0.6 s now
        await anyio.sleep(0.35)
        assert (await post(s.http, modern(12, "tools/list"), token)).status_code == 503
        assert s.issuer.metadata_fetches == 2
        s.issuer.down = False
        await anyio.sleep(0.3)
        assert (await post(s.http, modern(13, "tools/list"), token)).status_code == 200
        assert (s.issuer.metadata_fetches, s.issuer.jwks_fetches) == (3, 1)

        s.issuer.down = True
        keys = JwtVerifier(
            issuer=s.issuer.url, audience=s.resource, jwks_uri=f"{s.issuer.url}/jwks"
        )
        introspection = IntrospectionVerifier(
            f"{s.issuer.url}/introspect", "resource-server", "wrong", audience=s.resource
        )
        for _ in range(5):
            for verifier in (keys, introspection):
                with pytest.raises(VerifierUnavailable):
                    await verifier(token)
        assert (s.issuer.jwks_fetches, s.issuer.introspections) == (2, 1)


def test_the_auth_names_are_mcpios_and_load_lazily() -> None:
    """`from mcpio import OAuth, JwtVerifier, ...`; `import mcpio` imports none of it, and
    PyJWT comes only with a `JwtVerifier`."""
    code = (
        "import sys, mcpio\n"
        "def loaded(): return [m for m in ('httpx', 'jwt', 'mcpio.auth', 'mcpio.auth._client')"
        " if m in sys.modules]\n"
        "print(loaded())\n"
        "mcpio.ResourceServerAuth, mcpio.IntrospectionVerifier\n"
        "print(loaded())\n"
        "print([getattr(mcpio, name).__name__ for name in ('OAuth', 'FileTokenStore')])\n"
        "print(loaded())\n"
        "mcpio.JwtVerifier(issuer='https://a.example', audience='https://r.example/mcp')\n"
        "print(loaded())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.splitlines() == [
        "[]",
        "['mcpio.auth']",
        "['OAuth', 'FileTokenStore']",
        "['httpx', 'mcpio.auth', 'mcpio.auth._client']",
        "['httpx', 'jwt', 'mcpio.auth', 'mcpio.auth._client']",
    ]


async def test_the_everything_server_with_auth() -> None:
    """`examples/everything_server.py http --auth-issuer ... --resource ... --scope ...`: a
    resource server for the authlib issuer's tokens; our Client gets in with client
    credentials, a request without a token gets 401."""
    issuer_port, port = free_port(), free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(issuer_port, [resource])
    example = ROOT / "examples" / "everything_server.py"
    command = [sys.executable, str(example), "http", "--port", str(port)]
    command += ["--auth-issuer", issuer.url, "--resource", resource, "--scope", READ]
    async with serve_app(issuer.app(), issuer_port), await anyio.open_process(command) as process:
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:

                async def answered() -> httpx.Response | None:
                    try:
                        return await post(http, modern(1, "tools/list"), None)
                    except httpx.ConnectError:
                        return None  # not listening yet

                response = await until(answered, 20, interval=0.1)
                assert response.status_code == 401
                assert challenge(response)["scope"] == READ
                metadata = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
                assert metadata["authorization_servers"] == [issuer.url]
            machine = OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret")
            async with Client(resource, auth=machine, timeout=10) as client:
                result = await client.call_tool("test_simple_text", {})
                assert "test" in result.content[0].text  # type: ignore[union-attr]
            assert issuer.issued == [("client_credentials", "machine")]
        finally:
            process.terminate()


# ---------------------------------------------------------------------- DPoP (RFC 9449)


def dpop_proof(
    key: DpopKey,
    token: str | None,
    url: str,
    method: str = "POST",
    **changes: Any,
) -> str:
    """A proof by `key` for `method` `url` and `token`, with claims changed (None: left out) or
    signed by another key (`signer`)."""
    signer = changes.pop("signer", key)
    claims: dict[str, Any] = {
        "jti": secrets.token_urlsafe(16),
        "htm": method,
        "htu": url,
        "iat": int(time.time()),
        "ath": token_hash(token) if token is not None else None,
        **changes,
    }
    claims = {k: v for k, v in claims.items() if v is not None}
    headers = {"typ": "dpop+jwt", "jwk": key.jwk}
    return jwt.encode(claims, signer._private, algorithm="ES256", headers=headers)


async def dpop_post(
    s: Stack, frame: Any, token: str, proof: str | None, scheme: str = "DPoP"
) -> httpx.Response:
    extra = {"dpop": proof} if proof is not None else {}
    response = await post(s.http, frame, None, authorization=f"{scheme} {token}", **extra)
    return response


def dpop_error(response: httpx.Response) -> str:
    """The error of a 401's DPoP challenge (which must name the algorithms)."""
    assert response.status_code == 401, response.text
    value = response.headers["www-authenticate"]
    assert value.startswith("DPoP error=") and 'algs="ES256' in value, value
    return value.split('"')[1]


@dataclass
class DpopSeen:
    """What `dpop_bound_token_presented` saw."""

    key: DpopKey
    metadata: dict[str, Any]
    good: httpx.Response  # a good proof
    bad: dict[str, httpx.Response]  # each bad proof
    no_proof: httpx.Response
    two_proofs: httpx.Response  # in one field
    as_bearer: httpx.Response
    as_bearer_with_proof: httpx.Response
    fresh_proof: httpx.Response  # after all those
    unbound_bearer: httpx.Response
    unbound_as_dpop: httpx.Response
    lines: list[str]  # logged meanwhile
    secrets: list[str]  # the token, the proofs, the key's PEM


async def dpop_bound_token_presented() -> DpopSeen:
    """A JWT bound by `cnf.jkt` (DPoP not required) presented with a good proof, bad ones, none,
    two, as a bearer token; an unbound token as bearer and under the DPoP scheme."""
    key, other = DpopKey.generate(), DpopKey.generate()
    async with stack(dpop=DpopPolicy()) as s:
        metadata = (await s.http.get("/.well-known/oauth-protected-resource/mcp")).json()
        token = s.issuer.token("alice", READ, jkt=key.jkt)
        whoami = modern(1, "tools/call", name="whoami")
        with captured() as lines:
            good = dpop_proof(key, token, s.resource)
            accepted = await dpop_post(s, whoami, token, good)
            now = int(time.time())
            bad_proofs = {
                "replayed": good,
                "stale": dpop_proof(key, token, s.resource, iat=now - 600),
                "from the future": dpop_proof(key, token, s.resource, iat=now + 600),
                "wrong method": dpop_proof(key, token, s.resource, method="GET"),
                "wrong url": dpop_proof(key, token, s.resource.replace("/mcp", "/other")),
                "wrong ath": dpop_proof(key, "another-token", s.resource),
                "no ath": dpop_proof(key, None, s.resource),
                "no jti": dpop_proof(key, token, s.resource, jti=None),
                "other key": dpop_proof(other, token, s.resource),
                "forged signature": dpop_proof(key, token, s.resource, signer=other),
                "not a jwt": "not.a.proof",
            }
            bad = {
                why: await dpop_post(s, whoami, token, proof) for why, proof in bad_proofs.items()
            }
            no_proof = await dpop_post(s, whoami, token, None)
            twice = f"{dpop_proof(key, token, s.resource)}, {dpop_proof(key, token, s.resource)}"
            two_proofs = await dpop_post(s, whoami, token, twice)
            as_bearer = await dpop_post(s, whoami, token, None, scheme="Bearer")
            with_proof = dpop_proof(key, token, s.resource)
            as_bearer_with_proof = await dpop_post(s, whoami, token, with_proof, "Bearer")
            fresh = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource))
            unbound_bearer = await post(s.http, modern(2, "tools/list"), s.issuer.token("bob"))
            unbound = s.issuer.token("bob")
            unbound_as_dpop = await dpop_post(
                s, whoami, unbound, dpop_proof(key, unbound, s.resource)
            )
        return DpopSeen(
            key,
            metadata,
            accepted,
            bad,
            no_proof,
            two_proofs,
            as_bearer,
            as_bearer_with_proof,
            fresh,
            unbound_bearer,
            unbound_as_dpop,
            lines,
            [token, good, key.pem, *bad_proofs.values()],
        )


async def test_the_metadata_offers_dpop_without_requiring_it(once: Once) -> None:
    metadata = (await once(dpop_bound_token_presented)).metadata
    assert metadata["dpop_bound_access_tokens_required"] is False
    assert "ES256" in metadata["dpop_signing_alg_values_supported"]


async def test_a_bound_token_with_a_good_proof_is_accepted(once: Once) -> None:
    response = (await once(dpop_bound_token_presented)).good
    assert response.json()["result"]["content"][0]["text"] == f"alice {READ}"


async def test_each_bad_proof_is_an_invalid_dpop_proof(once: Once) -> None:
    for why, response in (await once(dpop_bound_token_presented)).bad.items():
        assert dpop_error(response) == "invalid_dpop_proof", why


async def test_a_bound_token_without_a_proof_or_with_two_is_refused(once: Once) -> None:
    seen = await once(dpop_bound_token_presented)
    assert dpop_error(seen.no_proof) == "invalid_dpop_proof"
    assert dpop_error(seen.two_proofs) == "invalid_dpop_proof"


async def test_a_bound_token_as_a_bearer_token_is_an_invalid_token(once: Once) -> None:
    seen = await once(dpop_bound_token_presented)
    assert dpop_error(seen.as_bearer) == "invalid_token"
    assert dpop_error(seen.as_bearer_with_proof) == "invalid_token"


async def test_refused_proofs_leave_the_key_and_bearer_tokens_working(once: Once) -> None:
    """Nothing else affected: a fresh proof of the right key, an unbound bearer token."""
    seen = await once(dpop_bound_token_presented)
    assert seen.fresh_proof.status_code == 200
    assert seen.unbound_bearer.status_code == 200


async def test_an_unbound_token_under_the_dpop_scheme_is_an_invalid_token(once: Once) -> None:
    """An unbound token under the DPoP scheme is no DPoP token."""
    assert dpop_error((await once(dpop_bound_token_presented)).unbound_as_dpop) == "invalid_token"


async def test_no_key_token_or_proof_reaches_a_log_line(once: Once) -> None:
    seen = await once(dpop_bound_token_presented)
    for secret in seen.secrets:
        for part in secret.split("."):
            assert all(part not in line for line in seen.lines if len(part) > 8), "logged"


async def test_no_private_key_in_a_dpop_repr(once: Once) -> None:
    key = (await once(dpop_bound_token_presented)).key
    assert "PRIVATE" not in repr(key) and key.pem not in repr(DpopPolicy())


async def test_dpop_nonces_and_required_binding() -> None:
    """`DpopPolicy(required=True, nonces=...)`: a proof without the server's nonce gets 401
    `use_dpop_nonce` and a `DPoP-Nonce`; with it, through; an aged nonce is refused with a new
    one; a bearer token is refused; introspection's `cnf` binds as a JWT's does."""
    key = DpopKey.generate()
    policy = DpopPolicy(required=True, nonces=Nonces(lifetime=1))
    async with stack(introspection=True, dpop=policy) as s:
        metadata = (await s.http.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert metadata["dpop_bound_access_tokens_required"] is True
        token = s.issuer.token("alice", READ, jkt=key.jkt)
        whoami = modern(1, "tools/call", name="whoami")
        refused = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource))
        assert dpop_error(refused) == "use_dpop_nonce"
        nonce = refused.headers["dpop-nonce"]
        proof = dpop_proof(key, token, s.resource, nonce=nonce)
        response = await dpop_post(s, whoami, token, proof)
        assert response.json()["result"]["content"][0]["text"] == f"alice {READ}"
        forged = dpop_proof(key, token, s.resource, nonce=nonce[:-2] + "xx")
        assert dpop_error(await dpop_post(s, whoami, token, forged)) == "use_dpop_nonce"
        await anyio.sleep(2.2)
        aged = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource, nonce=nonce))
        assert dpop_error(aged) == "use_dpop_nonce" and aged.headers["dpop-nonce"] != nonce
        bearer = await post(s.http, whoami, s.issuer.token("bob"))
        assert dpop_error(bearer) == "invalid_token"
        # without a token: the challenge is DPoP's alone, naming the metadata
        bare = await post(s.http, whoami, None)
        assert bare.headers["www-authenticate"].startswith("DPoP resource_metadata=")


async def test_a_browser_dpop_client_passes_cors() -> None:
    """A page of an allowed origin with a DPoP-bound token: its preflight naming `DPoP` and
    `Authorization` is allowed; the `use_dpop_nonce` refusal exposes `DPoP-Nonce` and
    `WWW-Authenticate` to the page, which retries with the nonce and gets through."""
    page = "http://127.0.0.1:5173"
    key = DpopKey.generate()
    policy = DpopPolicy(required=True, nonces=Nonces())
    async with stack(dpop=policy, cors_origins=(page,)) as s:
        asked = "authorization, content-type, dpop, mcp-method, mcp-protocol-version"
        preflight = {
            "origin": page,
            "access-control-request-method": "POST",
            "access-control-request-headers": asked,
        }
        answer = await s.http.options("/mcp", headers=preflight)
        assert answer.status_code == 204, answer.text
        assert answer.headers["access-control-allow-origin"] == page
        assert answer.headers["access-control-allow-headers"] == asked
        token = s.issuer.token("alice", READ, jkt=key.jkt)
        whoami = modern(1, "tools/call", name="whoami")

        async def from_page(proof: str) -> httpx.Response:
            headers = {"authorization": f"DPoP {token}", "dpop": proof, "origin": page}
            return await post(s.http, whoami, None, **headers)

        def exposed(response: httpx.Response) -> set[str]:
            assert response.headers["access-control-allow-origin"] == page
            names = response.headers["access-control-expose-headers"].split(",")
            return {name.strip().lower() for name in names}

        refused = await from_page(dpop_proof(key, token, s.resource))
        assert dpop_error(refused) == "use_dpop_nonce"
        assert {"dpop-nonce", "www-authenticate"} <= exposed(refused)
        nonce = refused.headers["dpop-nonce"]
        response = await from_page(dpop_proof(key, token, s.resource, nonce=nonce))
        assert response.json()["result"]["content"][0]["text"] == f"alice {READ}"
        assert "dpop-nonce" in exposed(response)


async def test_our_client_gets_and_uses_a_dpop_bound_token() -> None:
    """The issuer advertises DPoP: our client binds its client-credentials token to its key,
    and the resource server (DPoP required, with nonces) lets it in, both eras."""
    policy = DpopPolicy(required=True, nonces=Nonces())
    async with stack(dpop=policy) as s:
        s.issuer.dpop = True
        for mode in ("auto", "legacy"):
            oauth = OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret")
            async with Client(s.resource, auth=oauth, mode=mode, timeout=10) as client:
                result = await client.call_tool("whoami", {})
                assert result.content[0].text == f"machine {READ}"  # type: ignore[union-attr]
                await client.list_tools()
            tokens = await oauth.store.get_tokens(s.resource)
            assert tokens is not None and tokens.dpop
            claims = jwt.decode(tokens.access_token, options={"verify_signature": False})
            assert claims["cnf"]["jkt"] == DpopKey(tokens.dpop_key or "").jkt


async def test_a_nonce_near_its_end_comes_with_the_next_one() -> None:
    """RFC 9449 9: a proof whose nonce has less than half its lifetime left is accepted, and the
    answer carries a fresh `DPoP-Nonce` (which works); a young nonce's answer carries none."""
    key = DpopKey.generate()
    async with stack(dpop=DpopPolicy(required=True, nonces=Nonces(lifetime=4))) as s:
        token = s.issuer.token("alice", READ, jkt=key.jkt)
        whoami = modern(1, "tools/call", name="whoami")
        refused = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource))
        nonce = refused.headers["dpop-nonce"]
        young = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource, nonce=nonce))
        assert young.status_code == 200 and "dpop-nonce" not in young.headers
        await anyio.sleep(3.1 - (time.time() - int(nonce.partition(".")[0])))
        old = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource, nonce=nonce))
        assert old.status_code == 200, old.text
        fresh = old.headers["dpop-nonce"]
        assert fresh != nonce
        again = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource, nonce=fresh))
        assert again.status_code == 200 and "dpop-nonce" not in again.headers


async def test_a_long_running_client_rotates_nonces_without_a_401() -> None:
    """Our client over three nonce lifetimes: after the first call (its token, then the first
    nonce: 401s it answers) it takes each next nonce from a successful answer, and is never
    refused again."""
    policy = DpopPolicy(required=True, nonces=Nonces(lifetime=2))
    async with stack(dpop=policy) as s:
        s.issuer.dpop = True
        oauth = OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret")
        refusals: list[int] = []
        challenge = oauth.challenge

        async def counted(url: Any, response: httpx.Response, *args: Any) -> bool:
            refusals.append(response.status_code)
            return await challenge(url, response, *args)

        oauth.challenge = counted  # type: ignore[method-assign]
        async with Client(s.resource, auth=oauth, mode="2026-07-28", timeout=10) as client:
            await client.call_tool("whoami", {})
            first = len(refusals)
            assert first >= 1  # the first nonce came with a 401
            calls, started = 0, time.monotonic()
            while time.monotonic() - started < 6.5:
                result = await client.call_tool("whoami", {})
                assert result.content[0].text == f"machine {READ}"  # type: ignore[union-attr]
                calls += 1
                await anyio.sleep(0.2)
        assert calls >= 20 and refusals[first:] == []


async def test_the_dpop_leeway_applies_both_ways() -> None:
    """`leeway=30`: a proof a few seconds ahead (a client's clock a little fast) and one a few
    seconds past `max_age` are accepted; farther either way, refused (PyJWT's own `iat` check
    refused a proof 1 s ahead before)."""
    key = DpopKey.generate()
    async with stack(dpop=DpopPolicy(max_age=300, leeway=30)) as s:
        token = s.issuer.token("alice", READ, jkt=key.jkt)
        whoami = modern(1, "tools/call", name="whoami")
        now = int(time.time())
        for ahead in (1, 5):
            proof = dpop_proof(key, token, s.resource, iat=now + ahead)
            response = await dpop_post(s, whoami, token, proof)
            assert response.status_code == 200, (ahead, response.text)
        late = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource, iat=now - 310))
        assert late.status_code == 200, late.text
        for iat in (now + 60, now - 340, 10**400, 1.5e308):
            proof = dpop_proof(key, token, s.resource, iat=iat)
            assert dpop_error(await dpop_post(s, whoami, token, proof)) == "invalid_dpop_proof"


async def test_a_full_replay_cache_refuses_and_never_forgets_an_unexpired_proof() -> None:
    """A holder of a bound token cannot flush the memory replay cache to replay a captured
    proof: once `size` unexpired proofs are held, a new one is 503 with Retry-After (it was
    accepted, the oldest forgotten, and that one then accepted again); a replay stays 401."""
    key = DpopKey.generate()
    async with stack(dpop=DpopPolicy(replay=MemoryReplayCache(size=2))) as s:
        token = s.issuer.token("alice", READ, jkt=key.jkt)
        whoami = modern(1, "tools/call", name="whoami")
        captured_proof = dpop_proof(key, token, s.resource)
        assert (await dpop_post(s, whoami, token, captured_proof)).status_code == 200
        assert (await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource))).is_success
        with captured() as lines:
            full = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource))
            assert full.status_code == 503, full.text
            assert int(full.headers["retry-after"]) >= 1
            assert "DPoP" in full.json()["error"]["message"]
            replayed = await dpop_post(s, whoami, token, captured_proof)
            assert dpop_error(replayed) == "invalid_dpop_proof"
        assert not [line for line in lines if "Traceback" in line]


async def test_the_memory_replay_cache_drops_expired_proofs_first() -> None:
    """Expired keys make room (no refusal while any has expired); unexpired ones never do."""
    cache = MemoryReplayCache(size=1)
    assert await cache.first_use("a", 0.0)  # expired at once
    assert await cache.first_use("b", 60.0)
    assert not await cache.first_use("b", 60.0)
    with pytest.raises(ReplayCacheFull) as full:
        await cache.first_use("c", 60.0)
    assert 0 < full.value.retry_after <= 60
    assert len(cache) == 1 and not await cache.first_use("b", 60.0)


async def test_a_nonce_of_another_syntax_is_an_invalid_proof() -> None:
    """A proof whose `nonce` is not RFC 9449's syntax (non-ASCII, Unicode digits, a number) is
    401 `invalid_dpop_proof`, with nonces on or off: a non-ASCII one was a 500 and a
    traceback; a well-formed nonce this server did not issue stays `use_dpop_nonce`."""
    key = DpopKey.generate()
    for nonces in (Nonces(), None):
        async with stack(dpop=DpopPolicy(nonces=nonces)) as s:
            token = s.issuer.token("alice", READ, jkt=key.jkt)
            whoami = modern(1, "tools/call", name="whoami")
            with captured() as lines:
                for nonce in ("1700000000.é", "é", "١٧٠٠٠٠٠٠٠٠.abc", 'a"b', 5, ["x"]):
                    proof = dpop_proof(key, token, s.resource, nonce=nonce)
                    response = await dpop_post(s, whoami, token, proof)
                    assert dpop_error(response) == "invalid_dpop_proof", (nonces, nonce)
                if nonces is not None:
                    proof = dpop_proof(key, token, s.resource, nonce="1700000000.abc")
                    response = await dpop_post(s, whoami, token, proof)
                    assert dpop_error(response) == "use_dpop_nonce"
            assert not [line for line in lines if "Traceback" in line]


async def test_two_dpop_header_fields_are_refused() -> None:
    """RFC 9449 4.3: a request carries exactly one `DPoP` field; two (each a valid proof) are
    401 `invalid_dpop_proof` (the first was taken before)."""
    key = DpopKey.generate()
    async with stack(dpop=DpopPolicy()) as s:
        token = s.issuer.token("alice", READ, jkt=key.jkt)
        whoami = modern(1, "tools/call", name="whoami")
        headers = httpx.Headers(headers_for(whoami))
        headers["authorization"] = f"DPoP {token}"
        headers.update(
            httpx.Headers(
                [
                    ("dpop", dpop_proof(key, token, s.resource)),
                    ("dpop", dpop_proof(key, token, s.resource)),
                ]
            )
        )
        assert len(headers.get_list("dpop")) == 2
        response = await s.http.post("/mcp", content=json.dumps(whoami), headers=headers)
        assert dpop_error(response) == "invalid_dpop_proof"
        one = await dpop_post(s, whoami, token, dpop_proof(key, token, s.resource))
        assert one.status_code == 200


@pytest.mark.services
async def test_two_instances_share_the_replay_cache_through_redis(tmp_path: Path) -> None:
    """Two resource servers for one resource (behind one address) with a `RedisReplayCache`:
    a proof accepted by one is refused by the other; with memory caches it would pass."""
    from tests.support.cluster import Process, start_redis

    processes: list[Process] = []
    try:
        redis = start_redis(tmp_path, processes)
        url = f"redis://127.0.0.1:{redis.port}/0"
        key = DpopKey.generate()
        async with stack(dpop=DpopPolicy(replay=RedisReplayCache(url))) as a:
            options = {"resource": a.resource, "authorization_servers": [a.issuer.url]}
            verifier = JwtVerifier(issuer=a.issuer.url, audience=a.resource)
            b_auth = ResourceServerAuth(
                verifier, **options, dpop=DpopPolicy(replay=RedisReplayCache(url))
            )
            port = free_port()
            async with serve_app(server.http_app(auth=b_auth), port) as b_served:
                async with httpx.AsyncClient(base_url=b_served.url, timeout=10) as b_http:
                    b = Stack(a.issuer, b_http, a.resource)
                    token = a.issuer.token("alice", READ, jkt=key.jkt)
                    whoami = modern(1, "tools/call", name="whoami")
                    proof = dpop_proof(key, token, a.resource)
                    assert (await dpop_post(a, whoami, token, proof)).status_code == 200
                    assert dpop_error(await dpop_post(b, whoami, token, proof)) == (
                        "invalid_dpop_proof"
                    )
                    fresh = dpop_proof(key, token, a.resource)
                    assert (await dpop_post(b, whoami, token, fresh)).status_code == 200
                    assert dpop_error(await dpop_post(a, whoami, token, fresh)) == (
                        "invalid_dpop_proof"
                    )
            redis.stop()
            # The shared cache unreachable: the proof can be neither accepted nor refused.
            later = dpop_proof(key, token, a.resource)
            assert (await dpop_post(a, whoami, token, later)).status_code == 503
    finally:
        for process in processes:
            process.stop()


async def test_memory_replay_cache_is_bounded() -> None:
    cache = MemoryReplayCache(size=3)
    assert [await cache.first_use(k, 60) for k in "abca"] == [True, True, True, False]
    with pytest.raises(ReplayCacheFull):  # issue 46: refused, no unexpired key dropped
        await cache.first_use("d", 60)
    assert len(cache) == 3 and not await cache.first_use("a", 60)  # still a replay
    cache = MemoryReplayCache(size=3)
    assert await cache.first_use("x", 0.05) and not await cache.first_use("x", 0.05)
    await anyio.sleep(0.1)
    assert await cache.first_use("x", 0.05)  # expired
