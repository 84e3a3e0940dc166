"""The OAuth proxy's defences, a probe each (RFC 9700): state and codes single-use and
short-lived, no open redirect, PKCE against code injection, no token substitution (the upstream
token is refused, the proxy's is bound to its resource), the mix-up check (RFC 9207), the
consent page's CSRF token; refresh rotation and revocation carried to the upstream provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
import httpx
import pytest

from mcpio.auth import GitHubProvider, GoogleProvider, MemoryOAuthStore, OAuthProxy
from mcpio.auth._pkce import pkce_pair
from tests.support import headers_for, modern
from tests.support.oauth_browser import Browser, first_form
from tests.support.oauth_proxy import (
    REDIRECT_URI,
    authorize_url,
    exchange,
    login,
    proxied,
    register,
    upstream,
)
from tests.support.upstream_stub import CLIENT_ID, CLIENT_SECRET, Upstream, fixture

pytestmark = pytest.mark.anyio
DEADLINE = 30
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # RFC 7636's example


@dataclass
class Setting:
    stub: Upstream
    proxy: OAuthProxy
    http: httpx.AsyncClient


@pytest.fixture
async def github() -> AsyncIterator[Setting]:
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            provider = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            async with proxied(provider, code_seconds=1.0) as proxy:
                async with httpx.AsyncClient(timeout=10) as http:
                    yield Setting(stub, proxy, http)


async def tool_status(s: Setting, token: str) -> int:
    """The status of a tools/list sent with `token`."""
    frame = modern(1, "tools/list")
    headers = headers_for(frame, authorization=f"Bearer {token}")
    response = await s.http.post(s.proxy.resource, json=frame, headers=headers)
    return response.status_code


async def logged_in(s: Setting) -> tuple[dict[str, Any], dict[str, Any]]:
    """A client registered, its user logged in: the client and its token answer."""
    client = await register(s.http, s.proxy)
    done = await login(s.proxy, client["client_id"])
    answer = await exchange(s.http, s.proxy, client["client_id"], done.code, done.verifier)
    assert answer.status_code == 200
    return client, answer.json()


async def test_the_metadata_names_the_proxy_and_requires_pkce_s256(github: Setting) -> None:
    document = (
        await github.http.get(f"{github.proxy.issuer}/.well-known/oauth-authorization-server")
    ).json()
    assert document["issuer"] == github.proxy.issuer
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["authorization_response_iss_parameter_supported"] is True
    resource = (
        await github.http.get(f"{github.proxy.issuer}/.well-known/oauth-protected-resource/mcp")
    ).json()
    assert resource["authorization_servers"] == [github.proxy.issuer]


async def test_the_public_endpoints_answer_a_browser_client_of_any_origin(
    github: Setting,
) -> None:
    origin = {"origin": "http://inspector.example:6274"}
    preflight = await github.http.options(f"{github.proxy.issuer}/token", headers=origin)
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "*"
    body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
    registered = await github.http.post(
        f"{github.proxy.issuer}/register", json=body, headers=origin
    )
    assert registered.status_code == 201
    assert registered.headers["access-control-allow-origin"] == "*"
    url = authorize_url(github.proxy, registered.json()["client_id"], CHALLENGE)
    consent = await github.http.get(url, headers={"origin": "http://evil.example"})
    assert consent.status_code == 403  # the browser's pages keep the endpoint's Origin check


async def test_state_and_code_are_single_use(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    done = await login(github.proxy, client["client_id"])
    callback = next(u for u in done.browser.visited if "/callback?" in u)
    replayed = await github.http.get(callback)
    assert replayed.status_code == 400 and "location" not in replayed.headers
    first = await exchange(github.http, github.proxy, client["client_id"], done.code, done.verifier)
    again = await exchange(github.http, github.proxy, client["client_id"], done.code, done.verifier)
    assert first.status_code == 200 and again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


async def test_a_code_expires_after_code_seconds(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    done = await login(github.proxy, client["client_id"])
    await anyio.sleep(1.2)
    late = await exchange(github.http, github.proxy, client["client_id"], done.code, done.verifier)
    assert late.status_code == 400 and late.json()["error"] == "invalid_grant"


async def test_no_open_redirect_to_an_unregistered_uri(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    for evil in (
        "https://evil.example/callback",
        "http://127.0.0.1:33418/other",
        "http://localhost.evil.example:33418/callback",
    ):
        url = authorize_url(github.proxy, client["client_id"], CHALLENGE, redirect_uri=evil)
        response = await github.http.get(url)
        assert response.status_code == 400 and "location" not in response.headers, evil
    unknown = await github.http.get(authorize_url(github.proxy, "nobody", CHALLENGE))
    assert unknown.status_code == 400 and "location" not in unknown.headers
    other_port = authorize_url(
        github.proxy, client["client_id"], CHALLENGE, redirect_uri="http://127.0.0.1:50123/callback"
    )
    assert (await github.http.get(other_port)).status_code == 200  # RFC 8252: any loopback port


async def test_registration_refuses_redirect_uris_that_could_leak_a_code(github: Setting) -> None:
    for uri in (
        "http://evil.example/cb",
        "https://x.example/cb#frag",
        "javascript:alert(1)",
        "data:text/html,x",
    ):
        body = {"redirect_uris": [uri], "token_endpoint_auth_method": "none"}
        response = await github.http.post(f"{github.proxy.issuer}/register", json=body)
        assert response.status_code == 400, uri
        assert response.json()["error"] == "invalid_redirect_uri"


async def test_pkce_is_required_and_a_wrong_verifier_gets_no_token(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    url = authorize_url(github.proxy, client["client_id"], CHALLENGE, code_challenge_method="plain")
    refused = await github.http.get(url)
    assert refused.status_code == 302 and "error=invalid_request" in refused.headers["location"]
    done = await login(github.proxy, client["client_id"])
    injected = await exchange(github.http, github.proxy, client["client_id"], done.code, "x" * 43)
    assert injected.status_code == 400 and injected.json()["error"] == "invalid_grant"
    odd = await exchange(github.http, github.proxy, client["client_id"], done.code, "é" * 43)
    assert odd.status_code == 400  # not a verifier at all: refused, not a server error


async def test_a_code_is_refused_to_another_client(github: Setting) -> None:
    alice, mallory = await register(github.http, github.proxy), await register(
        github.http, github.proxy
    )
    done = await login(github.proxy, alice["client_id"])
    stolen = await exchange(
        github.http, github.proxy, mallory["client_id"], done.code, done.verifier
    )
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"


async def test_the_upstream_token_is_not_accepted_by_the_mcp_endpoint(github: Setting) -> None:
    client, tokens = await logged_in(github)
    assert await tool_status(github, tokens["access_token"]) == 200
    upstream_token = fixture("github_token.json")["access_token"]
    assert upstream_token not in tokens.values()
    assert await tool_status(github, upstream_token) == 401


async def test_a_proxy_token_is_bound_to_its_resource() -> None:
    shared = MemoryOAuthStore()  # two servers, one store: only the audience tells them apart
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            provider = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            async with (
                proxied(provider, store=shared) as one,
                proxied(provider, store=shared) as two,
            ):
                async with httpx.AsyncClient(timeout=10) as http:
                    client = await register(http, one)
                    done = await login(one, client["client_id"])
                    answer = await exchange(
                        http, one, client["client_id"], done.code, done.verifier
                    )
                    token = answer.json()["access_token"]
                    assert await tool_status(Setting(stub, one, http), token) == 200
                    assert await tool_status(Setting(stub, two, http), token) == 401


async def test_mix_up_an_answer_naming_another_issuer_is_refused() -> None:
    with anyio.fail_after(DEADLINE):
        async with upstream("google") as stub:
            stub.send_iss = "https://attacker.example"
            google = GoogleProvider(CLIENT_ID, CLIENT_SECRET, issuer=stub.url)
            async with proxied(google) as proxy, httpx.AsyncClient(timeout=10) as http:
                client = await register(http, proxy)
                with pytest.raises(AssertionError, match="HTTP 400"):
                    await login(proxy, client["client_id"])
                assert "token" not in stub.seen  # the code never went to the token endpoint
                stub.send_iss = stub.url
                done = await login(proxy, client["client_id"])
    assert done.code and done.params["iss"] == proxy.issuer  # the proxy's own iss to its client


async def test_the_consent_form_needs_its_csrf_cookie_and_deny_denies(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    page = await github.http.get(authorize_url(github.proxy, client["client_id"], CHALLENGE))
    assert (
        page.status_code == 200
        and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    )
    github.http.cookies.clear()  # another site's form: the browser sends no SameSite=Strict cookie
    forged = await github.http.post(
        f"{github.proxy.issuer}/authorize", data={"txn": "x", "csrf": "y", "decision": "approve"}
    )
    assert forged.status_code == 403
    denied = await login(github.proxy, client["client_id"], Browser(REDIRECT_URI, decision="deny"))
    assert denied.params["error"] == "access_denied" and "authorize" not in github.stub.seen


async def test_refresh_rotates_and_revocation_reaches_the_provider(github: Setting) -> None:
    client, first = await logged_in(github)
    form = {
        "grant_type": "refresh_token",
        "client_id": client["client_id"],
        "refresh_token": first["refresh_token"],
    }
    second = (await github.http.post(f"{github.proxy.issuer}/token", data=form)).json()
    assert second["refresh_token"] != first["refresh_token"]
    assert await tool_status(github, first["access_token"]) == 401  # rotated with its pair
    assert await tool_status(github, second["access_token"]) == 200
    revoke = {"token": second["access_token"], "client_id": client["client_id"]}
    assert (await github.http.post(f"{github.proxy.issuer}/revoke", data=revoke)).status_code == 200
    assert await tool_status(github, second["access_token"]) == 401
    assert github.stub.revoked == [
        f'{{"access_token":"{fixture("github_token.json")["access_token"]}"}}'
    ]


async def test_a_rotated_refresh_token_used_again_revokes_its_grant(github: Setting) -> None:
    client, first = await logged_in(github)
    token_url = f"{github.proxy.issuer}/token"

    def refresh(token: str) -> dict[str, str]:
        return {
            "grant_type": "refresh_token",
            "client_id": client["client_id"],
            "refresh_token": token,
        }

    second = (await github.http.post(token_url, data=refresh(first["refresh_token"]))).json()
    stolen = await github.http.post(token_url, data=refresh(first["refresh_token"]))
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"
    assert await tool_status(github, second["access_token"]) == 401  # the thief's race is lost
    after = await github.http.post(token_url, data=refresh(second["refresh_token"]))
    assert after.status_code == 400  # so is the client's: its user logs in again


async def test_registrations_from_one_address_are_bounded_across_instances() -> None:
    shared = MemoryOAuthStore()  # two instances, one store: one count per address

    async def status(http: httpx.AsyncClient, proxy: OAuthProxy) -> httpx.Response:
        body = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
        return await http.post(f"{proxy.issuer}/register", json=body)

    limits = {"registrations_per_address": 3, "registration_window_seconds": 600}
    elsewhere = httpx.AsyncHTTPTransport(local_address="127.0.0.2")  # another client address
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            provider = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            async with (
                proxied(provider, store=shared, **limits) as one,
                proxied(provider, store=shared, **limits) as two,
                httpx.AsyncClient(timeout=10) as http,
                httpx.AsyncClient(timeout=10, transport=elsewhere) as other,
            ):
                answers = [await status(http, proxy) for proxy in (one, two, one, two)]
                other_answer = await status(other, two)
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    refused = answers[-1]
    assert refused.json()["error"] == "too_many_requests"
    assert 1 <= int(refused.headers["retry-after"]) <= 600
    assert refused.headers["access-control-allow-origin"] == "*"  # a browser client reads it
    assert other_answer.status_code == 201


async def test_a_login_started_in_one_browser_cannot_be_finished_in_another(
    github: Setting,
) -> None:
    """The confused deputy through the provider: Mallory consents for her own client in her
    browser and sends the provider's URL to Alice, whom the provider remembers; Alice's
    browser comes back to /callback, which must not hand Mallory a code for Alice."""
    mallory = await register(github.http, github.proxy)
    hers = Browser(github.stub.url)  # stops at the provider, the proxy's consent given
    at_provider = await hers(authorize_url(github.proxy, mallory["client_id"], CHALLENGE))
    alice = Browser(REDIRECT_URI)
    with pytest.raises(AssertionError, match="HTTP 400"):
        await alice(at_provider)
    assert not any(url.startswith(REDIRECT_URI) for url in alice.visited)
    assert "token" not in github.stub.seen  # Alice's code at the provider was never exchanged


async def test_a_code_used_twice_revokes_the_tokens_it_gave(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    done = await login(github.proxy, client["client_id"])
    first = await exchange(github.http, github.proxy, client["client_id"], done.code, done.verifier)
    tokens = first.json()
    assert await tool_status(github, tokens["access_token"]) == 200
    again = await exchange(github.http, github.proxy, client["client_id"], done.code, done.verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert await tool_status(github, tokens["access_token"]) == 401  # RFC 6749 4.1.2
    refresh = {
        "grant_type": "refresh_token",
        "client_id": client["client_id"],
        "refresh_token": tokens["refresh_token"],
    }
    assert (await github.http.post(f"{github.proxy.issuer}/token", data=refresh)).status_code == 400


async def test_a_consent_form_is_taken_once(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    page = await github.http.get(authorize_url(github.proxy, client["client_id"], CHALLENGE))
    action, fields = first_form(page.text, str(page.url))
    approved = await github.http.post(action, data=fields)
    replayed = await github.http.post(action, data=fields)
    assert approved.status_code == 303 and replayed.status_code == 400
    assert "location" not in replayed.headers


async def test_a_login_at_the_provider_expires_after_state_seconds() -> None:
    with anyio.fail_after(DEADLINE):
        async with upstream("github") as stub:
            provider = GitHubProvider(CLIENT_ID, CLIENT_SECRET, base_url=stub.url, api_url=stub.url)
            async with proxied(provider, state_seconds=1.0) as proxy, httpx.AsyncClient() as http:
                client = await register(http, proxy)
                browser = Browser(stub.url)
                at_provider = await browser(authorize_url(proxy, client["client_id"], CHALLENGE))
                await anyio.sleep(1.2)
                browser.stop_at = REDIRECT_URI
                with pytest.raises(AssertionError, match="HTTP 400"):
                    await browser(at_provider)


async def test_the_token_request_must_name_the_authorization_requests_redirect_uri(
    github: Setting,
) -> None:
    client = await register(github.http, github.proxy)
    done = await login(github.proxy, client["client_id"])
    other = "http://127.0.0.1:50123/callback"  # registered, by RFC 8252, but not the one used
    answer = await exchange(
        github.http, github.proxy, client["client_id"], done.code, done.verifier, redirect_uri=other
    )
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


async def test_a_token_request_may_leave_out_a_redirect_uri_the_authorization_left_out(
    github: Setting,
) -> None:
    """RFC 6749 4.1.3: `redirect_uri` is required at /token only if /authorize named it; one
    that is sent must still be the one the code was issued for."""
    client = await register(github.http, github.proxy)
    verifier, challenge = pkce_pair()
    url = authorize_url(github.proxy, client["client_id"], challenge)
    without = urlunsplit(urlsplit(url)._replace(query=_dropping(urlsplit(url).query)))
    back = await Browser(REDIRECT_URI)(without)
    code = dict(parse_qsl(urlsplit(back).query))["code"]
    other = "http://127.0.0.1:50123/callback"  # registered, by RFC 8252, but not the one used
    token = f"{github.proxy.issuer}/token"
    form = {"grant_type": "authorization_code", "client_id": client["client_id"], "code": code}
    wrong = await github.http.post(
        token, data={**form, "code_verifier": verifier, "redirect_uri": other}
    )
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    again = await login(github.proxy, client["client_id"])  # (the wrong try used the code up)
    form["code"] = again.code
    answer = await github.http.post(token, data={**form, "code_verifier": again.verifier})
    assert answer.status_code == 400  # /authorize named it: /token must too
    fresh = await Browser(REDIRECT_URI)(without)
    form["code"] = dict(parse_qsl(urlsplit(fresh).query))["code"]
    answer = await github.http.post(token, data={**form, "code_verifier": verifier})
    assert answer.status_code == 200 and answer.json()["access_token"]


def _dropping(query: str, name: str = "redirect_uri") -> str:
    return urlencode([(k, v) for k, v in parse_qsl(query) if k != name])


async def test_consent_pages_open_in_two_tabs_can_each_be_approved(github: Setting) -> None:
    client = await register(github.http, github.proxy)
    first = await github.http.get(authorize_url(github.proxy, client["client_id"], CHALLENGE))
    second = await github.http.get(authorize_url(github.proxy, client["client_id"], CHALLENGE))
    forms = [first_form(page.text, str(page.url)) for page in (first, second)]
    answers = [await github.http.post(action, data=fields) for action, fields in forms]
    assert [a.status_code for a in answers] == [303, 303]
    github.http.cookies.clear()  # without the cookie the page set, a form is still refused
    page = await github.http.get(authorize_url(github.proxy, client["client_id"], CHALLENGE))
    action, fields = first_form(page.text, str(page.url))
    github.http.cookies.clear()
    assert (await github.http.post(action, data=fields)).status_code == 403
