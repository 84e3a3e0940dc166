"""The OAuth client (mcpio.auth._client) against a tiny Starlette mock on 127.0.0.1: a protected
MCP endpoint (our own Server behind a bearer check), its protected-resource metadata, and an
authorization server (metadata, /authorize that redirects at once, /token, /register), each
piece placed where a test wants it. Every request the mock sees is recorded, so the tests check
the discovery order and what went to the token endpoint."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mcpio import Client, McpError, Server
from mcpio.auth._client import (
    AuthError,
    ClientInfo,
    FileTokenStore,
    MemoryTokenStore,
    OAuth,
    Redirect,
    Tokens,
    parse_www_authenticate,
    pkce_pair,
    s256,
)
from tests.support import free_port, serve_app
from tests.support.once import Once

pytestmark = pytest.mark.anyio
DEADLINE = 30


# ---------------------------------------------------------------------- PKCE, challenges


def test_pkce_s256() -> None:
    verifier, challenge = pkce_pair()
    # computed the way the conformance suite's authorization server checks it
    digest = base64.b64encode(hashlib.sha256(verifier.encode()).digest()).decode()
    assert challenge == digest.replace("+", "-").replace("/", "_").rstrip("=")
    assert len(verifier) == 43 and set(verifier) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )
    assert challenge == s256(verifier) and "=" not in challenge
    assert pkce_pair()[0] != verifier


def test_www_authenticate() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="a b", '
        'resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", realm=mcp'
    )
    assert parse_www_authenticate(header) == {
        "error": "insufficient_scope",
        "scope": "a b",
        "resource_metadata": "http://x/.well-known/oauth-protected-resource/mcp",
        "realm": "mcp",
    }
    assert parse_www_authenticate('Basic realm="x"') == {}
    assert parse_www_authenticate('Basic realm="x", Bearer scope="s"') == {"scope": "s"}


# ---------------------------------------------------------------------- token stores


async def test_token_store_round_trip(tmp_path: Path) -> None:
    tokens = Tokens("at", "Bearer", "rt", time.time() + 60, "a b", "http://as")
    client = ClientInfo("id", "secret", "client_secret_post")
    path = tmp_path / "auth" / "tokens.json"
    for store in (MemoryTokenStore(), FileTokenStore(path)):
        assert await store.get_tokens("http://r/mcp") is None
        await store.set_tokens("http://r/mcp", tokens)
        await store.set_client("http://as", client)
        assert await store.get_tokens("http://r/mcp") == tokens
        assert await store.get_client("http://as") == client
        assert await store.get_client("http://other") is None
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = FileTokenStore(path)  # a new process reads what the last one wrote
    assert await again.get_tokens("http://r/mcp") == tokens
    await again.set_tokens("http://r/mcp", None)
    assert await FileTokenStore(path).get_tokens("http://r/mcp") is None
    assert await FileTokenStore(path).get_client("http://as") == client


# ---------------------------------------------------------------------- the mock


@dataclass
class Mock:
    """Where each document lives (None: nowhere) and how the endpoint treats tokens."""

    prm_paths: tuple[str, ...] = ("/.well-known/oauth-protected-resource/mcp",)
    prm_in_challenge: bool = True
    as_prefix: str = ""
    as_metadata_path: str = "/.well-known/oauth-authorization-server"
    resource: str | None = None  # default: the endpoint's URL
    issuer: str | None = None  # default: the AS URL
    challenge_scope: str | None = "mcp:read"
    scopes_supported: list[str] | None = None
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    always_forbidden: bool = False  # 403 insufficient_scope to every token
    always_invalid: bool = False  # 401 invalid_token to every token, even fresh ones
    refresh_tokens: bool = True
    expires_in: int = 3600
    port: int = 0
    seen: list[str] = field(default_factory=list[str])
    authorizations: list[dict[str, str]] = field(default_factory=list[dict[str, str]])
    token_requests: list[tuple[dict[str, str], str | None]] = field(
        default_factory=list[tuple[dict[str, str], str | None]]
    )
    registrations: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    issued: set[str] = field(default_factory=set[str])
    dpop_algs: list[str] | None = None  # advertised; the token endpoint then binds tokens
    dpop_nonce: str | None = None  # required in proofs at the token endpoint and at /mcp
    bound: dict[str, str] = field(default_factory=dict[str, str])  # token -> jkt
    proofs: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])  # accepted ones
    exchanges: list[dict[str, str]] = field(default_factory=list[dict[str, str]])  # at the IdP

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def as_url(self) -> str:
        return f"{self.base}{self.as_prefix}"

    def app(self, mcp: Any) -> Callable[..., Awaitable[None]]:
        async def prm(request: Request) -> Response:
            body: dict[str, Any] = {
                "resource": self.resource or self.url,
                "authorization_servers": [self.as_url],
            }
            if self.scopes_supported is not None:
                body["scopes_supported"] = self.scopes_supported
            return JSONResponse(body)

        async def metadata(request: Request) -> Response:
            return JSONResponse(
                {
                    "issuer": self.issuer or self.as_url,
                    "authorization_endpoint": f"{self.as_url}/authorize",
                    "token_endpoint": f"{self.as_url}/token",
                    "registration_endpoint": f"{self.as_url}/register",
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": self.auth_methods,
                    "authorization_response_iss_parameter_supported": True,
                    **(
                        {"dpop_signing_alg_values_supported": self.dpop_algs}
                        if self.dpop_algs
                        else {}
                    ),
                }
            )

        async def authorize(request: Request) -> Response:
            query = dict(request.query_params)
            self.authorizations.append(query)
            target = (
                query["redirect_uri"]
                + "?"
                + urlencode(
                    {
                        "code": "code-1",
                        "state": query.get("state", ""),
                        "iss": self.issuer or self.as_url,
                    }
                )
            )
            return RedirectResponse(target, status_code=302)

        async def token(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            self.token_requests.append((form, request.headers.get("authorization")))
            grant = form.get("grant_type")
            if grant == "refresh_token" and form.get("refresh_token") != "refresh-1":
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            assertion = form.get("assertion", "bad")
            if grant == JWT_BEARER and assertion.startswith("bad"):
                described = "expired" if assertion == "bad" else f"{assertion} is not trusted"
                return JSONResponse(
                    {"error": "invalid_grant", "error_description": described}, status_code=400
                )
            jkt = None
            if self.dpop_algs and "dpop" in request.headers:
                claims, jkt = read_proof(request.headers["dpop"], "POST", f"{self.as_url}/token")
                if self.dpop_nonce is not None and claims.get("nonce") != self.dpop_nonce:
                    return JSONResponse(
                        {"error": "use_dpop_nonce"},
                        status_code=400,
                        headers={"DPoP-Nonce": self.dpop_nonce},
                    )
            access = f"token-{len(self.token_requests)}"
            self.issued.add(access)
            if jkt is not None:
                self.bound[access] = jkt
            body: dict[str, Any] = {
                "access_token": access,
                "token_type": "DPoP" if jkt is not None else "Bearer",
                "expires_in": self.expires_in,
            }
            if self.refresh_tokens and grant != "client_credentials":
                body["refresh_token"] = "refresh-1"
            return JSONResponse(body)

        async def register(request: Request) -> Response:
            body = await request.json()
            self.registrations.append(body)
            return JSONResponse(
                {"client_id": "dcr-client", **body, "token_endpoint_auth_method": "none"},
                status_code=201,
            )

        async def idp_token(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            self.exchanges.append(
                {**form, "authorization": request.headers.get("authorization", "")}
            )
            if form.get("subject_token") != "id-token-1":
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(
                {
                    "access_token": "id-jag-1",
                    "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "token_type": "N_A",
                }
            )

        routes = [Route(path, prm) for path in self.prm_paths]
        routes.append(Route("/idp/token", idp_token, methods=["POST"]))
        routes += [
            Route(self.as_metadata_path, metadata),
            Route(f"{self.as_prefix}/authorize", authorize),
            Route(f"{self.as_prefix}/token", token, methods=["POST"]),
            Route(f"{self.as_prefix}/register", register, methods=["POST"]),
        ]
        documents = Starlette(routes=routes)

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return await documents(scope, receive, send)
            self.seen.append(f"{scope['method']} {scope['path']}")
            if scope["path"] != "/mcp":
                return await documents(scope, receive, send)
            headers = dict((k.decode(), v.decode()) for k, v in scope["headers"])
            scheme, _, bearer = headers.get("authorization", "").partition(" ")
            refusal = self.dpop_refusal(scheme, bearer, headers, scope["method"])
            if refusal is not None:
                return await refusal(scope, receive, send)
            challenge = ["Bearer"]
            if self.prm_in_challenge:
                prm_url = f"{self.base}{self.prm_paths[0]}" if self.prm_paths else ""
                challenge.append(f'resource_metadata="{prm_url}"')
            if bearer not in self.issued or self.always_invalid:
                if self.challenge_scope:
                    challenge.append(f'scope="{self.challenge_scope}"')
                response: Response = JSONResponse(
                    {"error": "invalid_token"},
                    status_code=401,
                    headers={"WWW-Authenticate": ", ".join(challenge)},
                )
                return await response(scope, receive, send)
            if self.always_forbidden:
                challenge += ['error="insufficient_scope"', 'scope="mcp:admin"']
                response = JSONResponse(
                    {"error": "insufficient_scope"},
                    status_code=403,
                    headers={"WWW-Authenticate": ", ".join(challenge)},
                )
                return await response(scope, receive, send)
            await mcp(scope, receive, send)

        return app

    def dpop_refusal(
        self, scheme: str, token: str, headers: dict[str, str], method: str
    ) -> Response | None:
        """What the endpoint says to a request that misuses a DPoP-bound token (else None)."""
        jkt = self.bound.get(token)
        if jkt is None:
            return None if scheme.lower() != "dpop" else JSONResponse({}, status_code=400)
        if scheme != "DPoP" or "dpop" not in headers:
            return JSONResponse({"error": "invalid_token"}, status_code=401)
        claims, key = read_proof(headers["dpop"], method, self.url)
        assert key == jkt and claims["ath"] == s256(token)
        if self.dpop_nonce is not None and claims.get("nonce") != self.dpop_nonce:
            return JSONResponse(
                {},
                status_code=401,
                headers={
                    "WWW-Authenticate": 'DPoP error="use_dpop_nonce"',
                    "DPoP-Nonce": self.dpop_nonce,
                },
            )
        self.proofs.append(claims)
        return None


JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def read_proof(proof: str, method: str, url: str) -> tuple[dict[str, Any], str]:
    """A DPoP proof's claims and its key's thumbprint, checked the way RFC 9449 says (with
    PyJWT alone, not with mcpio's code)."""
    import jwt

    header = jwt.get_unverified_header(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    jwk = header["jwk"]
    assert set(jwk) == {"kty", "crv", "x", "y"}  # no private part
    claims = jwt.decode(proof, jwt.PyJWK(jwk).key, algorithms=["ES256"])
    assert claims["htm"] == method and claims["htu"] == url
    assert abs(claims["iat"] - time.time()) < 60 and len(claims["jti"]) >= 16
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    return claims, s256(canonical)


def tool_server() -> Server:
    server = Server("protected", "1.0")

    @server.tool()
    async def add(a: int, b: int) -> str:
        """Adds."""
        return str(a + b)

    return server


@asynccontextmanager
async def serving(mock: Mock) -> AsyncIterator[Mock]:
    mock.port = free_port()
    async with serve_app(mock.app(tool_server().http_app()), mock.port):
        yield mock


async def browser(url: str) -> Redirect:
    """The user's browser: follow the authorization URL to its redirect."""
    async with httpx.AsyncClient(follow_redirects=False) as http:
        response = await http.get(url)
    return Redirect.from_url(response.headers["location"])


def well_known(mock: Mock) -> list[str]:
    return [line for line in mock.seen if "/.well-known/" in line]


# ---------------------------------------------------------------------- discovery


async def test_discovery_from_the_challenge() -> None:
    with anyio.fail_after(DEADLINE):
        async with serving(Mock()) as mock, httpx.AsyncClient() as http:
            oauth = OAuth(redirect=browser)
            prm = f"{mock.base}/.well-known/oauth-protected-resource/mcp"
            found = await oauth.discover(http, httpx.URL(mock.url), prm)
    assert found.issuer == mock.as_url and found.resource == mock.url
    assert well_known(mock) == [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server",
    ]


async def test_discovery_fallbacks() -> None:
    # No resource_metadata: the path-aware PRM (absent), then the root one; an AS with a path:
    # RFC 8414 path-aware, OIDC path-aware, then OIDC under the path (found there).
    mock = Mock(
        prm_paths=("/.well-known/oauth-protected-resource",),
        prm_in_challenge=False,
        as_prefix="/tenant1",
        as_metadata_path="/tenant1/.well-known/openid-configuration",
    )
    with anyio.fail_after(DEADLINE):
        async with serving(mock), httpx.AsyncClient() as http:
            mock.resource = mock.base  # the whole origin is the protected resource
            found = await OAuth(redirect=browser).discover(http, httpx.URL(mock.url))
    assert found.issuer == f"{mock.base}/tenant1" and found.resource == mock.base
    assert well_known(mock) == [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server/tenant1",
        "GET /.well-known/openid-configuration/tenant1",
        "GET /tenant1/.well-known/openid-configuration",
    ]


async def test_discovery_without_metadata_uses_the_origin() -> None:
    # A 2025-03-26 server: no PRM anywhere, no AS metadata: the origin's default endpoints.
    mock = Mock(prm_paths=(), prm_in_challenge=False, as_metadata_path="/nowhere")
    with anyio.fail_after(DEADLINE):
        async with serving(mock), httpx.AsyncClient() as http:
            found = await OAuth(redirect=browser).discover(http, httpx.URL(mock.url))
    assert found.issuer == mock.base
    assert found.metadata["token_endpoint"] == f"{mock.base}/token"
    assert well_known(mock) == [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server",
        "GET /.well-known/openid-configuration",
    ]


async def test_discovery_refuses_a_foreign_resource_or_issuer() -> None:
    with anyio.fail_after(DEADLINE):
        async with serving(Mock(resource="https://evil.example.com/mcp")) as mock:
            async with httpx.AsyncClient() as http:
                with pytest.raises(AuthError, match="evil.example.com"):
                    await OAuth(redirect=browser).discover(http, httpx.URL(mock.url))
        async with serving(Mock(issuer="https://attacker.example.com")) as mock:
            async with httpx.AsyncClient() as http:
                with pytest.raises(AuthError, match="attacker"):
                    await OAuth(redirect=browser).discover(http, httpx.URL(mock.url))


# ---------------------------------------------------------------------- whole flows


@pytest.fixture(scope="module")
def once() -> Once:
    return Once()


@dataclass
class CodeFlow:
    """What `code_flow_then_a_refresh` saw."""

    added: str  # the tool's answer, on the first token
    tokens: Tokens | None  # stored after that call
    mock: Mock


async def code_flow_then_a_refresh() -> CodeFlow:
    """The authorization code flow (the client registered dynamically) for a tool call, then a
    request with the token about to expire: the client refreshes it first."""
    store = MemoryTokenStore()
    with anyio.fail_after(DEADLINE):
        async with serving(Mock(scopes_supported=["mcp:read", "mcp:write"])) as mock:
            oauth = OAuth(redirect=browser, store=store, redirect_uri="http://127.0.0.1:9/cb")
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
                tokens = await store.get_tokens(mock.url)
                if tokens is not None:
                    tokens.expires_at = time.time()
                await client.list_tools()
    return CodeFlow(result.content[0].text, tokens, mock)  # type: ignore[union-attr]


async def test_the_code_flow_s_token_calls_the_tool(once: Once) -> None:
    assert (await once(code_flow_then_a_refresh)).added == "5"


async def test_the_code_flow_stores_a_refresh_token(once: Once) -> None:
    tokens = (await once(code_flow_then_a_refresh)).tokens
    assert tokens is not None and tokens.refresh_token == "refresh-1"


async def test_the_code_flow_registers_and_authorizes_once(once: Once) -> None:
    mock = (await once(code_flow_then_a_refresh)).mock
    assert len(mock.authorizations) == 1 and len(mock.registrations) == 1


async def test_the_authorization_request_asks_with_pkce_for_the_challenge_s_scope(
    once: Once,
) -> None:
    mock = (await once(code_flow_then_a_refresh)).mock
    authorization = mock.authorizations[0]
    assert authorization["code_challenge_method"] == "S256"
    assert authorization["scope"] == "mcp:read"  # from the challenge
    assert authorization["resource"] == mock.url
    assert authorization["client_id"] == "dcr-client"


async def test_the_registration_names_the_redirect_uri(once: Once) -> None:
    mock = (await once(code_flow_then_a_refresh)).mock
    assert mock.registrations[0]["redirect_uris"] == ["http://127.0.0.1:9/cb"]


async def test_a_token_about_to_expire_is_refreshed_before_the_next_request(once: Once) -> None:
    mock = (await once(code_flow_then_a_refresh)).mock
    grants = [form["grant_type"] for form, _ in mock.token_requests]
    assert grants == ["authorization_code", "refresh_token"]


async def test_the_code_is_exchanged_with_its_verifier_for_the_resource(once: Once) -> None:
    mock = (await once(code_flow_then_a_refresh)).mock
    first, _ = mock.token_requests[0]
    assert s256(first["code_verifier"]) == mock.authorizations[0]["code_challenge"]
    assert first["resource"] == mock.url and first["client_id"] == "dcr-client"


async def test_step_up_retry_limit() -> None:
    attempts: list[str] = []

    async def counting_browser(url: str) -> Redirect:
        attempts.append(dict(parse_qsl(urlsplit(url).query)).get("scope", ""))
        return await browser(url)

    with anyio.fail_after(DEADLINE):
        async with serving(Mock(always_forbidden=True)) as mock:
            oauth = OAuth(redirect=counting_browser, max_step_ups=2)
            with pytest.raises(McpError) as raised:
                async with Client(mock.url, auth=oauth, mode="legacy", timeout=10) as client:
                    for _ in range(5):
                        try:
                            await client.list_tools()
                        except McpError:
                            pass
                    await client.list_tools()
    assert isinstance(raised.value.data, dict) and raised.value.data.get("status") in (401, 403)
    # one authorization for the 401, then at most two step-ups, each asking for the union
    assert 1 <= len(attempts) <= 3, attempts
    assert attempts[0] == "mcp:read"
    assert all(set(a.split()) == {"mcp:read", "mcp:admin"} for a in attempts[1:])


async def test_client_credentials() -> None:
    mock = Mock(auth_methods=["client_secret_basic"], challenge_scope=None)
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            oauth = OAuth(grant="client_credentials", client_id="machine", client_secret="s3cret")
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                await client.list_tools()
    assert mock.authorizations == [] and mock.registrations == []
    [(form, authorization)] = mock.token_requests
    assert form["grant_type"] == "client_credentials" and form["resource"] == mock.url
    assert "client_secret" not in form
    assert authorization == "Basic " + base64.b64encode(b"machine:s3cret").decode()


async def test_client_secret_post_for_a_pre_registered_client() -> None:
    mock = Mock(auth_methods=["client_secret_post"])
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            oauth = OAuth(redirect=browser, client_id="pre", client_secret="pw")
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                await client.list_tools()
    assert mock.registrations == []
    [(form, authorization)] = mock.token_requests
    assert authorization is None
    assert form["client_id"] == "pre" and form["client_secret"] == "pw"


async def test_the_redirect_is_checked() -> None:
    """A forged state, a foreign iss, a missing iss the AS advertises, an error: no token
    request, and the call fails with the reason."""

    def tampered(**changes: str | None) -> Callable[[str], Awaitable[Redirect]]:
        async def handler(url: str) -> Redirect:
            redirect = await browser(url)
            for name, value in changes.items():
                setattr(redirect, name, value)
            return redirect

        return handler

    cases = {
        "state": tampered(state="forged"),
        "iss": tampered(iss="https://evil.example.com"),
        "lacks the iss": tampered(iss=None),
        "access_denied": tampered(error="access_denied", code=None),
    }
    for reason, handler in cases.items():
        with anyio.fail_after(DEADLINE):
            async with serving(Mock()) as mock:
                with pytest.raises(McpError, match="authorization failed") as raised:
                    async with Client(mock.url, auth=OAuth(redirect=handler), timeout=10):
                        pass
        assert reason in str(raised.value)
        assert mock.token_requests == [] and len(mock.authorizations) == 1


async def test_concurrent_401s_run_one_flow() -> None:
    with anyio.fail_after(DEADLINE):
        async with serving(Mock()) as mock:
            oauth = OAuth(redirect=browser)
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                await oauth.store.set_tokens(mock.url, None)  # forget the token: all 401 again
                async with anyio.create_task_group() as tasks:
                    for n in range(5):
                        tasks.start_soon(client.call_tool, "add", {"a": n, "b": 1})
    # one flow at connection time, one for the five calls that met a 401 together
    assert len(mock.authorizations) == 2, mock.authorizations


def test_file_store_expands_the_home_directory() -> None:
    assert FileTokenStore("~/tokens.json").path == Path.home() / "tokens.json"


async def test_client_credentials_with_private_key_jwt() -> None:
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    mock = Mock(auth_methods=["private_key_jwt"], challenge_scope=None)
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            oauth = OAuth(
                grant="client_credentials",
                client_id="machine",
                private_key=pem,
                signing_algorithm="ES256",
            )
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                await client.list_tools()
    [(form, authorization)] = mock.token_requests
    assert authorization is None and "client_secret" not in form
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(
        form["client_assertion"], key.public_key(), algorithms=["ES256"], audience=mock.as_url
    )
    assert claims["iss"] == claims["sub"] == "machine" and claims["exp"] > time.time()


async def test_no_secret_in_a_repr_or_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    """Client secrets, private keys, tokens, codes and code verifiers stay out of the reprs
    and of every log line of a flow (a refresh refused included)."""
    caplog.set_level(logging.DEBUG)
    pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIPrivate\n-----END PRIVATE KEY-----"
    machine = OAuth(grant="client_credentials", client_id="m", client_secret="m-s3cret")
    signed = OAuth(grant="client_credentials", client_id="m", private_key=pem)
    mock = Mock(auth_methods=["client_secret_post"])
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            oauth = OAuth(redirect=browser, client_id="pre", client_secret="pre-s3cret")
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                tokens = await oauth.store.get_tokens(mock.url)
                assert tokens is not None and tokens.refresh_token == "refresh-1"
                tokens.refresh_token, tokens.expires_at = "refresh-stale", time.time()
                await client.list_tools()  # the refresh is refused: a new authorization
    tokens = await oauth.store.get_tokens(mock.url)
    assert tokens is not None and len(mock.authorizations) == 2
    verifiers = [
        form["code_verifier"] for form, _ in mock.token_requests if "code_verifier" in form
    ]
    hidden = [
        "m-s3cret",
        "pre-s3cret",
        "PRIVATE KEY",
        "code-1",
        "refresh-1",
        "refresh-stale",
        *mock.issued,
        *verifiers,
    ]
    shown = [
        repr(machine),
        repr(signed),
        repr(oauth),
        repr(tokens),
        repr(ClientInfo("pre", "pre-s3cret")),
        repr(Redirect("code-1", "st")),
        # all but httpcore's wire trace, which shows the test's browser the redirect (the code)
        *(r.getMessage() for r in caplog.records if not r.name.startswith("httpcore")),
    ]
    for text in shown:
        for secret in hidden:
            assert secret not in text, (secret, text)
    assert "client_id='m'" in repr(machine) and "state='st'" in repr(Redirect("code-1", "st"))
    assert any("refreshing the token failed" in text for text in shown)


# ---------------------------------------------------------------------- DPoP, JWT bearer grants


async def test_dpop_bound_tokens_with_nonces(tmp_path: Path) -> None:
    """The AS advertises DPoP and wants nonces at the token endpoint and at /mcp: every token
    request (the refresh included) and every MCP request carries a fresh proof of the same key,
    the token goes with the DPoP scheme, and the key is kept with the tokens."""
    store = FileTokenStore(tmp_path / "tokens.json")
    mock = Mock(dpop_algs=["ES256"], dpop_nonce="nonce-1")
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            oauth = OAuth(redirect=browser, store=store)
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                await client.call_tool("add", {"a": 1, "b": 2})
                tokens = await store.get_tokens(mock.url)
                assert tokens is not None and tokens.dpop and tokens.token_type == "DPoP"
                tokens.expires_at = time.time()
                await store.set_tokens(mock.url, tokens)
                await client.list_tools()  # refreshed first, bound to the same key
    grants = [form["grant_type"] for form, _ in mock.token_requests]
    # the first asked without the AS's nonce (refused: use_dpop_nonce), then with it; the
    # refresh has the nonce (one per origin) from the start
    assert grants == ["authorization_code", "authorization_code", "refresh_token"]
    assert len(mock.bound) == 2 and len(set(mock.bound.values())) == 1
    assert len(mock.proofs) >= 3 and all(p["nonce"] == "nonce-1" for p in mock.proofs)
    assert len({p["jti"] for p in mock.proofs}) == len(mock.proofs)
    stored = await FileTokenStore(tmp_path / "tokens.json").get_tokens(mock.url)
    assert stored is not None and stored.dpop_key is not None
    assert "PRIVATE" not in repr(stored) and "PRIVATE" not in repr(oauth)
    assert stored.dpop_key not in repr(oauth)


async def test_dpop_forced_off_and_on() -> None:
    mock = Mock(dpop_algs=["ES256"])
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            async with Client(mock.url, auth=OAuth(redirect=browser, dpop=False), timeout=10) as c:
                await c.list_tools()
            assert mock.bound == {} and mock.proofs == []
            mock.dpop_algs = ["RS512"]  # nothing we sign with: DPoP only when forced
            async with Client(mock.url, auth=OAuth(redirect=browser), timeout=10) as c:
                await c.list_tools()
            assert mock.bound == {}
            mock.dpop_algs = ["ES256"]
            async with Client(mock.url, auth=OAuth(redirect=browser, dpop=True), timeout=10) as c:
                await c.list_tools()
    assert len(mock.bound) == 1 and mock.proofs != []


async def test_jwt_bearer_grant_for_a_workload(tmp_path: Path) -> None:
    """The workload's JWT from a file (read anew each time) or a callable; a refusal is surfaced
    at once: one token request, no other grant tried."""
    path = tmp_path / "token"
    path.write_text("workload-jwt-1\n")
    fresh = iter(["workload-jwt-2"])

    async def assertion() -> str:
        return next(fresh)

    mock = Mock(challenge_scope=None)
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            for source in (path, assertion):
                oauth = OAuth(grant="jwt_bearer", client_id="workload", assertion=source)
                async with Client(mock.url, auth=oauth, timeout=10) as client:
                    await client.list_tools()
            sent = [(form["grant_type"], form["assertion"]) for form, _ in mock.token_requests]
            assert sent == [(JWT_BEARER, "workload-jwt-1"), (JWT_BEARER, "workload-jwt-2")]
            assert mock.token_requests[0][0]["client_id"] == "workload"
            assert mock.authorizations == [] and mock.registrations == []
            mock.token_requests.clear()
            refused = OAuth(grant="jwt_bearer", assertion="bad")
            with pytest.raises(McpError, match=r"invalid_grant \(expired\)"):
                async with Client(mock.url, auth=refused, timeout=10):
                    pass
            assert [form["grant_type"] for form, _ in mock.token_requests] == [JWT_BEARER]
            assert "client_id" not in mock.token_requests[0][0]
            # a description quoting the assertion is left out of the error
            echoed = OAuth(grant="jwt_bearer", assertion="bad-workload-jwt-7")
            with pytest.raises(McpError) as raised:
                async with Client(mock.url, auth=echoed, timeout=10):
                    pass
            assert "invalid_grant" in str(raised.value)
            assert "bad-workload-jwt-7" not in str(raised.value)
            missing = OAuth(grant="jwt_bearer", assertion=tmp_path / "absent")
            with pytest.raises(McpError, match="assertion file cannot be read"):
                async with Client(mock.url, auth=missing, timeout=10):
                    pass
    assert "workload-jwt" not in repr(OAuth(grant="jwt_bearer", assertion="workload-jwt-9"))
    with pytest.raises(ValueError, match="assertion"):
        OAuth(grant="jwt_bearer")


async def test_enterprise_managed_authorization() -> None:
    """The user's ID token is exchanged at the IdP for an ID-JAG (RFC 8693) naming the MCP
    authorization server and resource; the ID-JAG goes to the AS with the JWT bearer grant and
    the client's own authentication."""
    mock = Mock(auth_methods=["client_secret_basic"], challenge_scope=None)
    with anyio.fail_after(DEADLINE):
        async with serving(mock):
            oauth = OAuth(
                grant="id_jag",
                client_id="desktop",
                client_secret="desk-s3cret",
                idp_token_endpoint=f"{mock.base}/idp/token",
                idp_client_id="idp-client",
                id_token=lambda: "id-token-1",
            )
            async with Client(mock.url, auth=oauth, timeout=10) as client:
                await client.list_tools()
            [exchange] = mock.exchanges
            assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
            assert exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
            assert exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
            assert exchange["audience"] == mock.as_url and exchange["resource"] == mock.url
            assert exchange["client_id"] == "idp-client" and exchange["authorization"] == ""
            [(form, authorization)] = mock.token_requests
            assert form["grant_type"] == JWT_BEARER and form["assertion"] == "id-jag-1"
            assert authorization == "Basic " + base64.b64encode(b"desktop:desk-s3cret").decode()
            oauth.id_token = "expired-id-token"
            oauth.store = MemoryTokenStore()
            with pytest.raises(McpError, match="the IdP refused: invalid_grant"):
                async with Client(mock.url, auth=oauth, timeout=10):
                    pass
    assert len(mock.token_requests) == 1
    assert "id-token" not in repr(oauth) and "desk-s3cret" not in repr(oauth)
    with pytest.raises(ValueError, match="id_jag"):
        OAuth(grant="id_jag", idp_client_id="x", id_token="t")


async def test_a_token_refused_as_soon_as_issued_runs_one_flow() -> None:
    """The transport may send a request three times (a flow, then a nonce), but a 401 for the
    token a flow just gave does not start another flow."""
    with anyio.fail_after(DEADLINE):
        async with serving(Mock(always_invalid=True)) as mock:
            with pytest.raises(McpError) as raised:
                async with Client(mock.url, auth=OAuth(redirect=browser), timeout=10):
                    pass
    assert isinstance(raised.value.data, dict) and raised.value.data.get("status") == 401
    assert len(mock.authorizations) == 1 and len(mock.token_requests) == 1
