"""The OAuth proxy's clients: dynamic registration (RFC 7591) at `/register`, their redirect
URIs checked (RFC 8252 for native apps), and their authentication at the token endpoint.

A redirect URI is registered only as an absolute `https` URL, an `http` URL of the loopback
(`127.0.0.1`, `[::1]`, `localhost`), or a native app's private-use scheme (`com.example.app:`,
with a dot); never with a fragment. An authorization request's `redirect_uri` must equal a
registered one exactly, except that a loopback IP redirect may name any port (RFC 8252 7.3).
Secrets are stored as their SHA-256 only. Registrations from one address are bounded
(`mcpio.auth._proxy_limit`).
"""

from __future__ import annotations

import base64
import hmac
import secrets
import time
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from mcpio._core.routes import HttpRequest, HttpResponse
from mcpio.auth._proxy_limit import RegistrationLimit
from mcpio.auth._proxy_settings import ProxySettings, digest, json_answer, json_body, oauth_error

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
MAX_REDIRECT_URIS = 10
MAX_URI = 2000


def redirect_uri_problem(uri: object) -> str | None:
    """Why `uri` cannot be registered as a redirect URI (None: it can)."""
    if type(uri) is not str or not uri or len(uri) > MAX_URI:
        return "a redirect URI is a string of at most 2000 characters"
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri:
        return "a redirect URI has no fragment"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in LOOPBACK:
        return None
    if "." in parts.scheme and parts.scheme.isascii() and not parts.netloc:
        return None  # a native app's private-use scheme (RFC 8252 7.1)
    return "a redirect URI is https, http on the loopback, or a private-use scheme"


def redirect_uri_matches(registered: str, given: str) -> bool:
    """Whether `given` is `registered` (the loopback IP's port aside, RFC 8252 7.3)."""
    if given == registered:
        return True
    a, b = urlsplit(registered), urlsplit(given)
    loopback = a.hostname in ("127.0.0.1", "::1") and a.scheme == "http"
    try:
        b.port  # noqa: B018 (a port out of range raises)
    except ValueError:
        return False
    return (
        loopback
        and (b.scheme, b.hostname, b.path, b.query) == (a.scheme, a.hostname, a.path, a.query)
        and b.username is None
        and b.password is None
        and not b.fragment
    )


class Clients:
    """Registered clients, in the proxy's store under `client:<id>`."""

    def __init__(self, settings: ProxySettings) -> None:
        self.settings = settings
        self.limit = RegistrationLimit(
            settings.store,
            settings.registrations_per_address,
            settings.registration_window_seconds,
        )

    async def get(self, client_id: str | None) -> dict[str, Any] | None:
        """The registration of `client_id`, None if there is none."""
        if not client_id or len(client_id) > 200:
            return None
        return await self.settings.store.get(f"client:{client_id}")

    async def register(self, request: HttpRequest) -> HttpResponse:
        """RFC 7591: a new client from its metadata; 201 with its id (and secret); 429 past
        the bound on registrations from the request's address."""
        refused = await self.limit.refusal(request.client)
        if refused is not None:
            return refused
        metadata = json_body(request.body)
        if metadata is None:
            return oauth_error(400, "invalid_client_metadata", "the body is not a JSON object")
        problem = _metadata_problem(metadata)
        if problem is not None:
            error = "invalid_redirect_uri" if "redirect" in problem else "invalid_client_metadata"
            return oauth_error(400, error, problem)
        method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
        client_id = secrets.token_urlsafe(16)
        record: dict[str, Any] = {
            "client_id": client_id,
            "redirect_uris": list(metadata["redirect_uris"]),
            "token_endpoint_auth_method": method,
            "grant_types": metadata.get("grant_types", ["authorization_code", "refresh_token"]),
            "response_types": ["code"],
            "client_name": str(metadata.get("client_name", ""))[:200],
            "client_id_issued_at": int(time.time()),
        }
        answer = dict(record)
        if method != "none":
            secret = secrets.token_urlsafe(32)
            record["secret_sha256"] = digest(secret)
            answer.update(client_secret=secret, client_secret_expires_at=0)
        await self.settings.store.put(
            f"client:{client_id}", record, self.settings.registration_seconds
        )
        return json_answer(answer, 201)

    async def authenticate(
        self, request: HttpRequest, fields: dict[str, str]
    ) -> dict[str, Any] | HttpResponse:
        """The client a token or revocation request comes from, or the 401 refusing it."""
        basic = _basic(request.headers.get("authorization"))
        client_id = basic[0] if basic else fields.get("client_id")
        client = await self.get(client_id)
        if client is None:
            return oauth_error(401, "invalid_client", "unknown client")
        method = client["token_endpoint_auth_method"]
        if method == "none":
            return client
        secret = basic[1] if basic else fields.get("client_secret")
        expected = client.get("secret_sha256", "")
        if secret is None or not hmac.compare_digest(digest(secret), expected):
            return oauth_error(401, "invalid_client", "the client's credentials are wrong")
        return client


def _metadata_problem(metadata: dict[str, Any]) -> str | None:
    uris = metadata.get("redirect_uris")
    if type(uris) is not list or not uris or len(cast(list[Any], uris)) > MAX_REDIRECT_URIS:
        return "redirect_uris: a list of 1 to 10 redirect URIs"
    for uri in cast(list[Any], uris):
        problem = redirect_uri_problem(uri)
        if problem is not None:
            return problem
    if metadata.get("token_endpoint_auth_method", "client_secret_basic") not in AUTH_METHODS:
        return f"token_endpoint_auth_method: one of {', '.join(AUTH_METHODS)}"
    grants = metadata.get("grant_types", ["authorization_code"])
    if type(grants) is not list or not set(cast(list[Any], grants)) <= {
        "authorization_code",
        "refresh_token",
    }:
        return "grant_types: authorization_code and refresh_token only"
    if metadata.get("response_types", ["code"]) != ["code"]:
        return "response_types: code only"
    return None


def _basic(authorization: str | None) -> tuple[str, str] | None:
    """The client id and secret of an HTTP Basic `Authorization` (RFC 6749 2.3.1)."""
    if authorization is None or not authorization.lower().startswith("basic "):
        return None
    try:
        pair = base64.b64decode(authorization[6:].strip(), validate=True).decode()
    except ValueError:
        return None
    user, colon, password = pair.partition(":")
    return (unquote(user), unquote(password)) if colon else None
