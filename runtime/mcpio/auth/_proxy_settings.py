"""What every part of the OAuth proxy (`mcpio.auth._proxy`) shares: its URLs, its store, its
upstream provider, the lifetimes of what it issues, and the small HTTP answers it gives."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit

from mcpio._core.routes import HttpResponse
from mcpio.auth._providers import UpstreamProvider
from mcpio.auth._proxy_store import OAuthStore

if TYPE_CHECKING:
    import httpx

NO_STORE = {"cache-control": "no-store", "pragma": "no-cache"}


@dataclass
class ProxySettings:
    """The proxy's configuration, as `OAuthProxy` fills it in."""

    provider: UpstreamProvider
    issuer: str  # the proxy as an authorization server: its clients see this
    resource: str  # the MCP endpoint its tokens are for (their audience)
    store: OAuthStore
    secret: bytes  # signs the consent cookie
    http: Callable[[], httpx.AsyncClient]
    scopes_supported: Sequence[str] = ()
    code_seconds: float = 120.0
    state_seconds: float = 600.0
    access_token_seconds: float = 3600.0
    refresh_token_seconds: float = 30 * 86400.0
    registration_seconds: float | None = 90 * 86400.0
    registrations_per_address: int | None = 20
    registration_window_seconds: float = 3600.0
    consent: bool = True
    secure_cookies: bool = field(init=False)

    def __post_init__(self) -> None:
        self.secure_cookies = self.issuer.startswith("https://")

    def endpoint(self, name: str) -> str:
        """The URL of one of the proxy's endpoints (`authorize`, `token`, ...)."""
        return f"{self.issuer.rstrip('/')}/{name}"

    def path(self, name: str) -> str:
        """Its path inside the app."""
        return urlsplit(self.endpoint(name)).path


def digest(secret: str) -> str:
    """The key a secret (a token, a code) is stored under: its SHA-256, never itself."""
    return hashlib.sha256(secret.encode()).hexdigest()


def query(request_query: str) -> dict[str, str]:
    """A query string's parameters (the first of a repeated name)."""
    params: dict[str, str] = {}
    for name, value in parse_qsl(request_query, keep_blank_values=True):
        params.setdefault(name, value)
    return params


def form(body: bytes) -> dict[str, str]:
    """An `application/x-www-form-urlencoded` body's fields."""
    return query(body.decode("utf-8", "replace"))


def json_body(body: bytes) -> dict[str, Any] | None:
    """A JSON object body, None for anything else."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return cast(dict[str, Any], value) if type(value) is dict else None


def oauth_error(status: int, error: str, description: str, **headers: str) -> HttpResponse:
    """An OAuth error answer (RFC 6749 5.2), never cached."""
    body = json.dumps({"error": error, "error_description": description}).encode()
    return HttpResponse(status, body, {**NO_STORE, **headers}, "application/json")


def json_answer(document: Mapping[str, Any], status: int = 200) -> HttpResponse:
    """A JSON answer, never cached (it may carry tokens)."""
    return HttpResponse(status, json.dumps(document).encode(), NO_STORE, "application/json")


def redirect(
    url: str, params: Mapping[str, str], cookies: Sequence[str] = (), status: int = 302
) -> HttpResponse:
    """A 302 (or `status`) to `url` with `params` added to its query (and cookies set)."""
    separator = "&" if urlsplit(url).query else "?"
    location = f"{url}{separator}{urlencode(params)}" if params else url
    headers: dict[str, str] = {"location": location, **NO_STORE}
    response = HttpResponse(status, b"", headers)
    return with_cookies(response, cookies)


def with_cookies(response: HttpResponse, cookies: Sequence[str]) -> HttpResponse:
    """`response` setting `cookies` (each a `Set-Cookie` value)."""
    if not cookies:
        return response
    # One field per cookie: the app writes header pairs, so the names may repeat.
    headers = _Repeated(response.headers)
    for cookie in cookies:
        headers.add("set-cookie", cookie)
    return HttpResponse(response.status, response.body, headers, response.content_type)


class _Repeated(dict[str, str]):
    """Header fields where a name may come more than once (`Set-Cookie`): `items` gives each."""

    def __init__(self, fields: Mapping[str, str]) -> None:
        super().__init__(fields)
        self._more: list[tuple[str, str]] = []

    def add(self, name: str, value: str) -> None:
        self._more.append((name, value))

    def items(self) -> Any:
        return [*super().items(), *self._more]


def page(status: int, title: str, body_html: str, cookies: Sequence[str] = ()) -> HttpResponse:
    """A small HTML page that no other site may frame (clickjacking)."""
    html = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title></head><body>{body_html}</body></html>"
    )
    headers = {
        **NO_STORE,
        "x-frame-options": "DENY",
        "content-security-policy": "frame-ancestors 'none'; default-src 'none'; "
        "style-src 'unsafe-inline'",
        "referrer-policy": "same-origin",  # no-referrer would make a form POST's Origin "null"
    }
    response = HttpResponse(status, html.encode(), headers, "text/html; charset=utf-8")
    return with_cookies(response, cookies)
