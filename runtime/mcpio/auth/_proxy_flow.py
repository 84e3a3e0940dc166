"""The OAuth proxy's browser leg: `/authorize` (checks the client's request, shows the consent
page, sends the user to the upstream provider) and `/callback` (the provider's answer: its code
exchanged, the proxy's own code issued to the client).

Until the client and its redirect URI are known good, an error is a page on the proxy, never a
redirect (RFC 9700 4.11: no open redirector); after, it goes back to the client's redirect URI
with `state` and the proxy's `iss` (RFC 9207). Pending authorizations (`txn:`) and upstream
states (`up:`) are kept `state_seconds`, codes `code_seconds`, each taken once. The browser
sent to the provider gets a cookie only it has, asked of it at `/callback`: a login cannot be
finished in another browser than the one that started it (and consented).
"""

from __future__ import annotations

import hmac
import html
import logging
import secrets
from collections.abc import Sequence
from typing import Any

from mcpio._core.routes import HttpRequest, HttpResponse
from mcpio.auth._consent import approved, approving, consent_page, cookies_of, csrf_cookie
from mcpio.auth._pkce import pkce_pair
from mcpio.auth._proxy_clients import Clients, redirect_uri_matches
from mcpio.auth._proxy_settings import (
    ProxySettings,
    digest,
    form,
    page,
    query,
    redirect,
    with_cookies,
)

log = logging.getLogger("mcpio.auth")
LOGIN_COOKIE = "mcpio_oauth_login_"  # and the first 16 hex digits of the state's SHA-256


def refusal(status: int, reason: str) -> HttpResponse:
    """An error page on the proxy itself (no redirect to an unchecked URI)."""
    return page(
        status, "Authorization failed", f"<h1>Authorization failed</h1><p>{html.escape(reason)}</p>"
    )


class BrowserFlow:
    """`/authorize` (GET: the client's request; POST: the consent form) and `/callback`."""

    def __init__(self, settings: ProxySettings, clients: Clients) -> None:
        self.settings = settings
        self.clients = clients

    def _back(self, pending: dict[str, Any], **params: str) -> HttpResponse:
        """Back to the client's (checked) redirect URI, with its state and the proxy's iss."""
        answer = {**params, "iss": self.settings.issuer}
        if pending.get("state") is not None:
            answer["state"] = pending["state"]
        return redirect(pending["redirect_uri"], answer)

    async def authorize(self, request: HttpRequest) -> HttpResponse:
        """The client's authorization request (GET) or the consent form's answer (POST)."""
        if request.method == "POST":
            return await self._consented(request)
        params = query(request.query)
        client = await self.clients.get(params.get("client_id"))
        if client is None:
            return refusal(400, "unknown client_id")
        redirect_uri = params.get("redirect_uri")
        if redirect_uri is None and len(client["redirect_uris"]) == 1:
            redirect_uri = client["redirect_uris"][0]
        if redirect_uri is None or not any(
            redirect_uri_matches(r, redirect_uri) for r in client["redirect_uris"]
        ):
            return refusal(400, "the redirect_uri is not one the client registered")
        pending: dict[str, Any] = {
            "client_id": client["client_id"],
            "redirect_uri": redirect_uri,
            # RFC 6749 4.1.3: the token request must name it only if this request did
            "redirect_uri_given": "redirect_uri" in params,
            "state": params.get("state"),
            "code_challenge": params.get("code_challenge", ""),
            "scope": self._scope(params.get("scope")),
            "resource": params.get("resource", self.settings.resource),
            "csrf": secrets.token_urlsafe(24),
        }
        problem = self._problem(params, pending)
        if problem is not None:
            return self._back(pending, error=problem[0], error_description=problem[1])
        txn = secrets.token_urlsafe(24)
        await self.settings.store.put(f"txn:{txn}", pending, self.settings.state_seconds)
        if not self.settings.consent or client["client_id"] in approved(
            self.settings.secret, request.headers
        ):
            return await self._upstream(await self.settings.store.take(f"txn:{txn}") or pending)
        return consent_page(
            self.settings.path("authorize"),
            txn,
            pending["csrf"],
            client,
            redirect_uri,
            self.settings.provider.name,
            self.settings.secure_cookies,
        )

    def _scope(self, asked: str | None) -> str:
        scopes = (asked or "").split()
        if self.settings.scopes_supported:
            scopes = [s for s in scopes if s in self.settings.scopes_supported]
        return " ".join(dict.fromkeys(scopes))

    def _problem(self, params: dict[str, str], pending: dict[str, Any]) -> tuple[str, str] | None:
        if params.get("response_type") != "code":
            return "unsupported_response_type", "response_type must be code"
        if params.get("code_challenge_method") != "S256" or not (
            43 <= len(pending["code_challenge"]) <= 128
        ):
            return "invalid_request", "PKCE with code_challenge_method=S256 is required"
        if pending["resource"] != self.settings.resource:
            return "invalid_target", "the resource is not this server's"
        return None

    async def _consented(self, request: HttpRequest) -> HttpResponse:
        fields = form(request.body)
        csrf = fields.get("csrf", "")
        cookie = cookies_of(request.headers).get(csrf_cookie(fields.get("txn", "")), "")
        if not csrf or not hmac.compare_digest(csrf.encode(), cookie.encode()):
            return refusal(403, "the consent form's CSRF token does not match")
        pending = await self.settings.store.take(f"txn:{fields.get('txn', '')}")
        if pending is None or not hmac.compare_digest(pending["csrf"].encode(), csrf.encode()):
            return refusal(400, "this authorization is unknown, used or expired: start again")
        if fields.get("decision") != "approve":
            return self._back(
                pending, error="access_denied", error_description="denied by the user"
            )
        remember = approving(
            self.settings.secret,
            request.headers,
            pending["client_id"],
            self.settings.secure_cookies,
        )
        # 303 after a POST: the browser GETs the provider
        return await self._upstream(pending, 303, [remember])

    async def _upstream(
        self, pending: dict[str, Any], status: int = 302, cookies: Sequence[str] = ()
    ) -> HttpResponse:
        """To the provider, with the proxy's own client id, PKCE, state and nonce; the browser
        sent there is given the login's cookie, which `/callback` asks of it."""
        settings, provider = self.settings, self.settings.provider
        try:
            async with settings.http() as http:
                await provider.prepare(http)
        except Exception as exc:  # discovery failed: the provider is down or misconfigured
            log.warning("%s's configuration cannot be had: %s", provider.name, type(exc).__name__)
            return refusal(502, f"{provider.name} cannot be reached now: try again later")
        verifier, challenge = pkce_pair()
        state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        browser = secrets.token_urlsafe(24)
        record = {**pending, "verifier": verifier, "nonce": nonce, "browser": digest(browser)}
        record.pop("csrf", None)
        await settings.store.put(f"up:{state}", record, settings.state_seconds)
        params = {
            "response_type": "code",
            "client_id": provider.client_id,
            "redirect_uri": settings.endpoint("callback"),
            "scope": " ".join(provider.scopes),
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "nonce": nonce,
        }
        login = self._login_cookie(state, browser, int(settings.state_seconds))
        return redirect(provider.authorization_endpoint, params, [*cookies, login], status)

    def _login_cookie(self, state: str, value: str, max_age: int) -> str:
        """The cookie binding the login at the provider to this browser (one per login, so
        that logins in two tabs do not undo each other); `max_age` 0 ends it."""
        name = f"{LOGIN_COOKIE}{digest(state)[:16]}"
        path = self.settings.path("callback")
        # Lax: the provider's redirect back is a top-level navigation from another site
        flags = "; Secure" if self.settings.secure_cookies else ""
        return f"{name}={value}; Path={path}; HttpOnly; SameSite=Lax; Max-Age={max_age}{flags}"

    def _same_browser(self, request: HttpRequest, state: str, pending: dict[str, Any]) -> bool:
        """Whether the provider's answer came to the browser that was sent to the provider."""
        given = cookies_of(request.headers).get(f"{LOGIN_COOKIE}{digest(state)[:16]}", "")
        return bool(given) and hmac.compare_digest(digest(given), pending.get("browser", ""))

    async def callback(self, request: HttpRequest) -> HttpResponse:
        """The provider's redirect: its code exchanged, the proxy's own code to the client."""
        params = query(request.query)
        state = params.get("state", "")
        pending = await self.settings.store.take(f"up:{state}")
        if pending is None:
            return refusal(400, "unknown, used or expired state")
        if not self._same_browser(request, state, pending):
            # a login started elsewhere (the confused deputy: another's client, this user's
            # session at the provider); its code is not exchanged
            log.warning("a login came back to another browser than the one that started it")
            return refusal(400, "this login was started in another browser: start it again")
        provider = self.settings.provider
        iss = params.get("iss")
        if (iss is not None and provider.issuer is not None and iss != provider.issuer) or (
            iss is None and provider.iss_required
        ):  # mix-up (RFC 9207): the answer is not from the provider the user was sent to
            log.warning("the callback's iss is not %s's: refused", provider.name)
            return refusal(400, "the authorization response comes from another issuer")
        if "error" in params or not params.get("code"):
            return self._back(pending, error="access_denied", error_description="login failed")
        try:
            async with self.settings.http() as http:
                tokens = await provider.exchange(
                    http, params["code"], self.settings.endpoint("callback"), pending["verifier"]
                )
                identity = await provider.identity(http, tokens, pending["nonce"])
        except Exception as exc:  # AuthError or the provider unreachable: its type only
            log.warning("the login at %s failed: %s", provider.name, type(exc).__name__)
            return self._back(pending, error="access_denied", error_description="login failed")
        code = secrets.token_urlsafe(32)
        upstream = {k: tokens[k] for k in ("access_token", "refresh_token") if k in tokens}
        grant = {
            **{
                k: pending[k]
                for k in ("client_id", "redirect_uri", "code_challenge", "scope", "resource")
            },
            "redirect_uri_given": pending.get("redirect_uri_given", True),
            "sub": identity.subject,
            "claims": identity.claims,
            "upstream": upstream,
        }
        await self.settings.store.put(f"code:{digest(code)}", grant, self.settings.code_seconds)
        done = self._login_cookie(state, "", 0)
        return with_cookies(self._back(pending, code=code), [done])
