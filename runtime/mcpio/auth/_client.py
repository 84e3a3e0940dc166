"""OAuth 2.1 for the client over Streamable HTTP: `OAuth` is the auth object an `HttpTransport`
(and so `Client(url, auth=...)`) puts on every HTTP exchange: it adds `Authorization: Bearer`
and, on a 401 or a 403 `insufficient_scope`, runs the flow and has the exchange retried (once
more with a DPoP nonce the server asks for).

The flow (MCP authorization, 2025-11-25 and 2026-07-28):

1. Discovery from the challenge: `WWW-Authenticate: Bearer resource_metadata=..., scope=...`.
   Protected-resource metadata (RFC 9728) from `resource_metadata`, else
   `/.well-known/oauth-protected-resource/<path>`, then `/.well-known/oauth-protected-resource`.
   Its `resource` must name this server (same origin, a path prefix): a mismatch is refused.
   Without any, the server's origin is taken as the authorization server (2025-03-26 servers).
2. Authorization-server metadata for the issuer `authorization_servers[0]`: RFC 8414 then
   OpenID discovery, path-aware (`/.well-known/oauth-authorization-server/<path>`,
   `/.well-known/openid-configuration/<path>`, `<path>/.well-known/openid-configuration`); its
   `issuer` must be the one asked for. Without PKCE S256 in `code_challenge_methods_supported`
   the flow is refused. An origin-only AS (the 2025-03-26 fallback) without metadata gets the
   default endpoints `/authorize`, `/token`, `/register`.
3. The client's identity at that issuer: pre-registered (`client_id`, `client_secret`), else a
   Client ID Metadata Document URL (`client_metadata_url`) when the AS advertises
   `client_id_metadata_document_supported`, else dynamic client registration (RFC 7591).
   Registrations are kept per issuer: a new authorization server gets a new registration.
4. Scope: the challenge's `scope`, else the resource's `scopes_supported`, else none; on a
   step-up (403 `insufficient_scope`) the union of what was asked before and the challenge;
   `offline_access` is added when the AS lists it (to get a refresh token).
5. Authorization code with PKCE (S256) and `state`, the `resource` parameter (RFC 8707) on the
   authorization and token requests; the browser step is the `redirect` callable's (it gets
   the authorization URL and returns the redirect's URL or its parameters); the redirect's
   `iss` (RFC 9207) is compared with the issuer when present, and required when advertised.
6. Token endpoint client authentication: `client_secret_basic`, `client_secret_post` or `none`
   (what the registration says, else what the AS supports); `private_key_jwt` (RFC 7523, with
   PyJWT from the `auth` extra) when a `private_key` is given.
7. Refresh tokens are used before a new authorization; tokens live in a `TokenStore`
   (`MemoryTokenStore`, `FileTokenStore`, or your own).

Machine clients use `grant="client_credentials"` with a client id and secret (no browser).
Workloads use `grant="jwt_bearer"` (RFC 7523, SEP-1933): their own identity token (`assertion`:
the JWT, a file holding it, or a callable returning a fresh one) is exchanged for an access
token; a refusal is reported as it is, never retried with another grant. Desktop hosts in an
enterprise use `grant="id_jag"` (Enterprise-Managed Authorization, SEP-990): the user's ID token
(`id_token`) is exchanged at the enterprise IdP (`idp_token_endpoint` or `idp_issuer`,
`idp_client_id`) for an Identity Assertion JWT Authorization Grant (RFC 8693 token exchange),
which the JWT bearer grant turns into an access token at the MCP authorization server.

DPoP (RFC 9449): with `dpop=True`, or by default when the authorization server advertises
`dpop_signing_alg_values_supported` with ES256, tokens are bound to the client's EC P-256 key
(`mcpio.auth._dpop`; kept with the tokens in the store): every token request and every MCP request
carries a fresh proof, the token goes as `Authorization: DPoP ...`, and a `use_dpop_nonce`
answer (400 from the authorization server, 401 from the resource server) is retried with the
server's `DPoP-Nonce`; a `DPoP-Nonce` on a successful answer is used from the next request on.
Step-ups are limited (`max_step_ups`, 2 by default) until a request succeeds again.

Written on httpx and the standard library (secrets, hashlib, base64): the OAuth pieces are
small, and the MCP-specific discovery is most of the work.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import anyio
import httpx

from mcpio._core.errors import AuthError
from mcpio._core.extras import needs
from mcpio.auth._dpop import ALGORITHMS, DpopKey
from mcpio.auth._pkce import pkce_pair, s256
from mcpio.auth._wellknown import issuer_metadata_urls, resource_metadata_urls

log = logging.getLogger("mcpio")
T = TypeVar("T")

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
GRANTS = ("authorization_code", "client_credentials", "jwt_bearer", "id_jag")
REFRESH_MARGIN = 30.0  # seconds before expiry a token is refreshed
_AUTH_PARAM = re.compile(r'([A-Za-z0-9_\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


# ---------------------------------------------------------------------- challenges


def parse_www_authenticate(header: str, scheme: str = "bearer") -> dict[str, str]:
    """The parameters of the Bearer (or `scheme`) challenge of a `WWW-Authenticate` value
    (lower-case names); empty when there is no such challenge."""
    found = re.search(rf"(?i)(?:^|,)\s*{re.escape(scheme)}(?=\s|,|$)", header)
    if found is None:
        return {}
    params: dict[str, str] = {}
    rest = header[found.end() :]
    for match in _AUTH_PARAM.finditer(rest):
        name = match.group(1).lower()
        value = match.group(2)
        value = re.sub(r"\\(.)", r"\1", value) if value is not None else match.group(3)
        params.setdefault(name, value)
    return params


# ---------------------------------------------------------------------- tokens and stores


@dataclass
class Tokens:
    """An access token and what came with it; the tokens are kept out of the repr.

    Args:
        access_token: The access token.
        token_type: Its type: "Bearer", or "DPoP" for a DPoP-bound token.
        refresh_token: The refresh token, if one came.
        expires_at: When the access token expires, in seconds since the epoch (None: unknown).
        scope: The scopes granted (space-separated).
        issuer: The authorization server that issued them.
        dpop_key: The PEM of the key a DPoP token is bound to (None for a bearer token).
    """

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None  # seconds since the epoch
    scope: str | None = None
    issuer: str | None = None  # the authorization server that issued them
    # PEM of the key a DPoP token is bound to (None for a bearer token)
    dpop_key: str | None = field(default=None, repr=False)

    @property
    def dpop(self) -> bool:
        """Whether the tokens are DPoP-bound (sent as `Authorization: DPoP` with a proof)."""
        return self.token_type.lower() == "dpop" and self.dpop_key is not None

    def expired(self, margin: float = 0.0) -> bool:
        """Whether the access token has expired, or will within `margin` seconds."""
        return self.expires_at is not None and time.time() >= self.expires_at - margin


@dataclass
class ClientInfo:
    """The client's identity at one authorization server.

    Args:
        client_id: The client id (or a Client ID Metadata Document URL).
        client_secret: The client secret, if it has one (kept out of the repr).
        token_endpoint_auth_method: How it authenticates at the token endpoint
            (`client_secret_basic`, `client_secret_post`, `none`, ...); None: not said.
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None


class TokenStore(Protocol):
    """Where tokens (per resource) and client registrations (per issuer) are kept."""

    async def get_tokens(self, resource: str) -> Tokens | None:
        """The tokens kept for `resource`, if any."""
        ...

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        """Keep `tokens` for `resource` (None: forget them)."""
        ...

    async def get_client(self, issuer: str) -> ClientInfo | None:
        """The client registration kept for `issuer`, if any."""
        ...

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        """Keep the client registration for `issuer` (None: forget it)."""
        ...


class MemoryTokenStore:
    """Kept in this process only."""

    def __init__(self) -> None:
        self.tokens: dict[str, Tokens] = {}
        self.clients: dict[str, ClientInfo] = {}

    async def get_tokens(self, resource: str) -> Tokens | None:
        """The tokens kept for `resource`, if any."""
        return self.tokens.get(resource)

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        """Keep `tokens` for `resource` (None: forget them)."""
        _put(self.tokens, resource, tokens)

    async def get_client(self, issuer: str) -> ClientInfo | None:
        """The client registration kept for `issuer`, if any."""
        return self.clients.get(issuer)

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        """Keep the client registration for `issuer` (None: forget it)."""
        _put(self.clients, issuer, client)


def _put(table: dict[str, T], key: str, value: T | None) -> None:
    """`value` stored under `key`; None removes the key."""
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value


class FileTokenStore:
    """One JSON file (created with mode 0600), rewritten atomically on every change."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {"tokens": {}, "clients": {}}
        if type(data) is not dict:
            return {"tokens": {}, "clients": {}}
        data = cast(dict[str, Any], data)
        tokens, clients = data.get("tokens"), data.get("clients")
        return {
            "tokens": cast(dict[str, Any], tokens) if type(tokens) is dict else {},
            "clients": cast(dict[str, Any], clients) if type(clients) is dict else {},
        }

    def _save(self, data: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(temporary, self.path)

    def _put(self, kind: str, key: str, value: Any) -> None:
        data = self._load()
        _put(data[kind], key, None if value is None else asdict(value))
        self._save(data)

    async def get_tokens(self, resource: str) -> Tokens | None:
        """The tokens kept for `resource` in the file, if any."""
        found = self._load()["tokens"].get(resource)
        return Tokens(**found) if type(found) is dict else None

    async def set_tokens(self, resource: str, tokens: Tokens | None) -> None:
        """Keep `tokens` for `resource` in the file (None: forget them)."""
        self._put("tokens", resource, tokens)

    async def get_client(self, issuer: str) -> ClientInfo | None:
        """The client registration kept for `issuer` in the file, if any."""
        found = self._load()["clients"].get(issuer)
        return ClientInfo(**found) if type(found) is dict else None

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        """Keep the client registration for `issuer` in the file (None: forget it)."""
        self._put("clients", issuer, client)


# ---------------------------------------------------------------------- assertions

Assertion = str | os.PathLike[str] | Callable[[], str | Awaitable[str]]
"""A JWT given as itself, as a file holding it (read anew each time: workload identity files are
rotated), or as a callable (sync or async) returning a fresh one."""


async def _fresh(source: Assertion | None, name: str) -> str:
    """The current value of an `Assertion`."""
    if isinstance(source, os.PathLike):
        try:
            value: object = Path(source).read_text("utf-8").strip()
        except OSError as exc:
            raise AuthError(f"the {name} file cannot be read: {exc.strerror}") from exc
    elif callable(source):
        value = source()
        if isinstance(value, Awaitable):
            value = await cast(Awaitable[object], value)
    else:
        value = source
    if type(value) is not str or not value:
        raise AuthError(f"no {name} to present")
    return value


# ---------------------------------------------------------------------- the redirect


@dataclass
class Redirect:
    """What came back to the redirect URI.

    Args:
        code: The authorization code (kept out of the repr).
        state: The `state` sent with the authorization request, echoed.
        iss: The issuer (RFC 9207), when the authorization server gives it.
        error: The error code, when the authorization was refused.
        error_description: Its description.
    """

    code: str | None = field(repr=False)
    state: str | None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None

    @classmethod
    def from_url(cls, url: str) -> Redirect:
        """The redirect's parameters read from the URL the browser was sent back to."""
        return cls.from_params(dict(parse_qsl(urlsplit(url).query)))

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Redirect:
        """The redirect from its query parameters (`code`, `state`, `iss`, ...)."""
        return cls(*(params.get(f.name) for f in fields(cls)))


RedirectHandler = Callable[[str], Awaitable[Redirect | Mapping[str, str] | str]]
"""Receives the authorization URL (open it in a browser, print it, drive it in a test) and
returns what reached the redirect URI: its full URL, its query parameters, or a `Redirect`."""


# ---------------------------------------------------------------------- discovery results


@dataclass
class Discovery:
    resource: str  # the resource parameter: the metadata's `resource`, verbatim
    issuer: str
    metadata: dict[str, Any]
    resource_scopes: list[str] | None = None


# ---------------------------------------------------------------------- the auth object


@dataclass
class OAuth:
    """The auth object of `HttpTransport(url, auth=...)` / `Client(url, auth=...)`.

    It adds `Authorization` to every HTTP exchange and, on a 401 or a 403
    `insufficient_scope`, runs the OAuth 2.1 flow and has the exchange retried; the docs page
    "The OAuth client" (docs/clients/oauth.md) tells the flow.

    `grant="authorization_code"` (a user's client) needs `redirect`; `"client_credentials"`
    (a machine client) needs `client_id` and `client_secret`. Give `client_id` (and
    `client_secret`) for a pre-registered client, `client_metadata_url` for a Client ID
    Metadata Document; otherwise the client registers itself where the AS allows it.

    Args:
        redirect: The browser step (`RedirectHandler`): gets the authorization URL, returns
            what reached the redirect URI.
        redirect_uri: The redirect URI registered and sent with the authorization request.
        grant: "authorization_code", "client_credentials", "jwt_bearer" or "id_jag".
        client_id: A pre-registered client's id.
        client_secret: Its secret.
        token_endpoint_auth_method: How the client authenticates at the token endpoint; None:
            what the registration says, else what the AS supports.
        client_metadata_url: The URL of a Client ID Metadata Document, used as the client id
            where the AS supports it.
        private_key: A PEM private key: authenticate with `private_key_jwt` (RFC 7523; needs
            PyJWT, the `auth` extra).
        signing_algorithm: The algorithm `private_key` signs with.
        client_name: The name dynamic registration gives.
        application_type: The `application_type` dynamic registration gives.
        scope: The scopes to ask for, overriding the scope selection.
        offline_access: Add `offline_access` when the AS lists it (to get a refresh token).
        store: Where tokens and registrations are kept (`TokenStore`).
        max_step_ups: The step-ups (403 `insufficient_scope`) in a row before giving up.
        timeout: Seconds each request to the authorization servers may take.
        dpop: None follows the authorization server's metadata, True forces DPoP, False never.
        dpop_key: A PEM (EC P-256) DPoP key; else one is generated.
        assertion: With `grant="jwt_bearer"`: the workload's JWT, a path to a file holding it,
            or a callable returning a fresh one (`Assertion`).
        idp_token_endpoint: With `grant="id_jag"`: the enterprise IdP's token endpoint.
        idp_issuer: Or the enterprise IdP's issuer, its token endpoint discovered.
        idp_client_id: The client's id at the enterprise IdP.
        idp_client_secret: Its secret there.
        id_token: The user's ID token (or a callable returning it).
        step_ups: The step-ups made since a request last went through (state: leave it out).
        _lock: Internal state: leave it out (as every field whose name starts with `_`).
        _requested: Internal state.
        _key: Internal state.
        _dpop: Internal state.
        _nonces: Internal state.
        _obtained: Internal state.
    """

    redirect: RedirectHandler | None = None
    redirect_uri: str = "http://127.0.0.1:33418/callback"
    grant: str = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    client_metadata_url: str | None = None
    # PEM: authenticate with private_key_jwt (needs PyJWT)
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str = "RS256"
    client_name: str = "mcpio"
    application_type: str = "native"
    scope: str | None = None  # overrides scope selection
    offline_access: bool = True
    store: TokenStore = field(default_factory=MemoryTokenStore)
    max_step_ups: int = 2
    timeout: float = 30.0
    # DPoP: None follows the authorization server's metadata, True forces it, False never
    dpop: bool | None = None
    dpop_key: str | None = field(default=None, repr=False)  # PEM (EC P-256); else generated
    # grant="jwt_bearer": the workload's JWT, a path to a file holding it, or a callable
    assertion: Assertion | None = field(default=None, repr=False)
    # grant="id_jag": the enterprise IdP and the user's ID token (or a callable)
    idp_token_endpoint: str | None = None
    idp_issuer: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)
    id_token: Assertion | None = field(default=None, repr=False)
    step_ups: int = 0
    _lock: anyio.Lock = field(default_factory=anyio.Lock, repr=False)
    _requested: set[str] = field(default_factory=set[str], repr=False)
    _key: str | None = field(default=None, repr=False)
    _dpop: DpopKey | None = field(default=None, repr=False)
    _nonces: dict[str, str] = field(default_factory=dict[str, str], repr=False)
    _obtained: str | None = field(default=None, repr=False)  # by the last flow, unused yet

    def __post_init__(self) -> None:
        if self.grant not in GRANTS:
            raise ValueError(f"grant must be one of {', '.join(map(repr, GRANTS))}")
        if self.grant == "client_credentials" and not self.client_id:
            raise ValueError("the client_credentials grant needs a client_id")
        if self.grant == "jwt_bearer" and self.assertion is None:
            raise ValueError("the jwt_bearer grant needs an assertion (a JWT, a file, a callable)")
        if self.grant == "id_jag" and (
            self.id_token is None
            or not (self.idp_token_endpoint or self.idp_issuer)
            or not self.idp_client_id
        ):
            raise ValueError(
                "the id_jag grant needs id_token, idp_client_id and idp_token_endpoint or idp_issuer"
            )
        if self.dpop_key is not None:
            self._dpop = DpopKey(self.dpop_key)

    # ------------------------------------------------------------ the transport's hook

    async def headers(
        self, url: httpx.URL, http: httpx.AsyncClient, method: str = "POST"
    ) -> dict[str, str]:
        """The headers for a `method` request to `url`, refreshing an expiring token.

        They are `Authorization`, and with a DPoP-bound token a fresh `DPoP` proof.

        Args:
            url: The request's URL.
            http: The HTTP client, for a refresh.
            method: The request's HTTP method (the proof is bound to it).
        """
        key = self._resource_key(url)
        tokens = await self.store.get_tokens(key)
        if tokens is not None and tokens.expired(REFRESH_MARGIN) and tokens.refresh_token:
            async with self._lock:
                tokens = await self.store.get_tokens(key)
                if tokens is not None and tokens.expired(REFRESH_MARGIN) and tokens.refresh_token:
                    tokens = await self._refresh(http, tokens, key)
        if tokens is None:
            return {}
        if tokens.dpop and tokens.dpop_key is not None:
            proof = self._bound_key(tokens.dpop_key).proof(
                method, url, tokens.access_token, self._nonces.get(_origin(url))
            )
            return {"Authorization": f"DPoP {tokens.access_token}", "DPoP": proof}
        return {"Authorization": f"Bearer {tokens.access_token}"}

    def succeeded(self) -> None:
        """An authorized request went through: step-ups may start again."""
        self.step_ups = 0
        self._obtained = None

    def dpop_nonce(self, url: httpx.URL, nonce: str) -> None:
        """Take the `DPoP-Nonce` a successful answer from `url`'s server carried.

        RFC 9449 9 lets a server send one on any response: the next proofs to that origin carry
        it.
        """
        self._nonces[_origin(url)] = nonce

    async def challenge(
        self,
        url: httpx.URL,
        response: httpx.Response,
        sent: Mapping[str, str],
        http: httpx.AsyncClient,
    ) -> bool:
        """Answer a 401 or 403: run what it asks for; True if the request should be sent again.

        Args:
            url: The URL of the refused request.
            response: The 401 or 403 response.
            sent: The headers the request was sent with.
            http: The HTTP client, for the flow.

        Raises:
            AuthError: The flow fails.
        """
        status = response.status_code
        header = response.headers.get("www-authenticate", "")
        params = parse_www_authenticate(header) or parse_www_authenticate(header, "dpop")
        if status == 403 and params.get("error") != "insufficient_scope":
            return False
        nonce = response.headers.get("dpop-nonce")
        if status == 401 and params.get("error") == "use_dpop_nonce":
            # RFC 9449 9: send it again with the server's nonce (once per new nonce)
            if nonce is None or self._nonces.get(_origin(url)) == nonce:
                return False
            self._nonces[_origin(url)] = nonce
            return True
        if nonce is not None:
            self._nonces[_origin(url)] = nonce
        key = self._resource_key(url)
        async with self._lock:
            current = await self.store.get_tokens(key)
            sent_token = sent.get("Authorization", "").partition(" ")[2]
            if sent_token and sent_token == self._obtained:
                return False  # refused the token its flow just gave: a new flow will not help
            if status == 401 and current is not None and current.access_token != sent_token:
                return True  # another request got a new token meanwhile
            if status == 403:
                if self.step_ups >= self.max_step_ups:
                    log.warning("step-up authorization limit (%d) reached", self.max_step_ups)
                    return False
                self.step_ups += 1
            await self._authorize(url, http, params, current, step_up=status == 403)
            fresh = await self.store.get_tokens(key)
            self._obtained = fresh.access_token if fresh is not None else None
            return True

    # ------------------------------------------------------------ the flow

    def _resource_key(self, url: httpx.URL) -> str:
        if self._key is None:
            self._key = str(url.copy_with(query=None, fragment=None))
        return self._key

    async def _authorize(
        self,
        url: httpx.URL,
        http: httpx.AsyncClient,
        challenge: Mapping[str, str],
        current: Tokens | None,
        step_up: bool,
    ) -> None:
        key = self._resource_key(url)
        found = await self.discover(http, url, challenge.get("resource_metadata"))
        if self._dpop is None and current is not None and current.dpop_key is not None:
            self._dpop = DpopKey(current.dpop_key)  # the key the stored tokens are bound to
        if current is not None and current.issuer not in (None, found.issuer):
            current = None  # a new authorization server: nothing of the old one is used
            await self.store.set_tokens(key, None)
        if current is not None and current.refresh_token and not step_up:
            refreshed = await self._refresh(http, current, key, found)
            if refreshed is not None:
                return
        scope = self._select_scope(challenge, found, step_up)
        client = await self._client_for(http, found)
        if self.grant == "client_credentials":
            tokens = await self._client_credentials(http, found, client, scope)
        elif self.grant == "jwt_bearer":
            assertion = await _fresh(self.assertion, "assertion")
            tokens = await self._jwt_bearer(http, found, client, assertion, scope)
        elif self.grant == "id_jag":
            grant = await self._id_jag(http, found, scope)
            tokens = await self._jwt_bearer(http, found, client, grant, scope)
        else:
            tokens = await self._authorization_code(http, found, client, scope)
        await self.store.set_tokens(key, tokens)

    def _select_scope(
        self, challenge: Mapping[str, str], found: Discovery, step_up: bool
    ) -> str | None:
        if self.scope is not None:
            wanted = self.scope.split()
        elif challenge.get("scope"):
            wanted = challenge["scope"].split()
        elif found.resource_scopes:
            wanted = list(found.resource_scopes)
        else:
            wanted = []
        if step_up:
            wanted = [*sorted(self._requested - set(wanted)), *wanted]
        supported = found.metadata.get("scopes_supported")
        if (
            wanted
            and self.offline_access
            and self.grant == "authorization_code"
            and type(supported) is list
            and "offline_access" in supported
            and "offline_access" not in wanted
        ):
            wanted.append("offline_access")
        self._requested.update(wanted)
        return " ".join(wanted) or None

    async def discover(
        self, http: httpx.AsyncClient, url: httpx.URL, resource_metadata: str | None = None
    ) -> Discovery:
        """Discover the protected-resource metadata, then the authorization server's.

        The well-known URLs are tried as RFC 9728 and RFC 8414 / OpenID discovery say, path-aware
        (the `mcpio.auth._client` module's docstring lists the order).

        Args:
            http: The HTTP client to fetch with.
            url: The MCP server's URL.
            resource_metadata: The metadata URL the challenge named, if any.

        Raises:
            AuthError: The metadata names another resource, or no authorization server.
        """
        prm = await self._protected_resource(http, url, resource_metadata)
        if prm is None:  # 2025-03-26: the MCP server's origin is the authorization server
            issuer = f"{url.scheme}://{url.netloc.decode('ascii')}"
            resource = _canonical(url)
            metadata = await self._as_metadata(http, issuer, legacy=True)
            return Discovery(resource, issuer, metadata)
        resource = prm.get("resource")
        if type(resource) is not str or not _covers(resource, url):
            raise AuthError(
                f"the protected resource metadata names {resource!r}, not this server ({url})"
            )
        servers = prm.get("authorization_servers")
        if type(servers) is not list or not servers or type(servers[0]) is not str:
            raise AuthError("the protected resource metadata names no authorization server")
        issuer = cast(str, servers[0])
        scopes = prm.get("scopes_supported")
        if type(scopes) is list:
            scopes = [s for s in cast(list[Any], scopes) if type(s) is str]
        metadata = await self._as_metadata(http, issuer)
        return Discovery(resource, issuer, metadata, scopes if type(scopes) is list else None)

    async def _get_json(self, http: httpx.AsyncClient, url: str) -> dict[str, Any] | None:
        try:
            response = await http.get(
                url, headers={"Accept": "application/json"}, timeout=self.timeout
            )
        except httpx.HTTPError as exc:
            log.debug("GET %s failed: %s", url, exc)
            return None
        return _json_object(response) if response.status_code == 200 else None

    async def _protected_resource(
        self, http: httpx.AsyncClient, url: httpx.URL, resource_metadata: str | None
    ) -> dict[str, Any] | None:
        candidates = [resource_metadata] if resource_metadata else []
        candidates += resource_metadata_urls(str(url))
        for candidate in dict.fromkeys(candidates):
            found = await self._get_json(http, candidate)
            if found is not None:
                return found
        return None

    async def _as_metadata(
        self, http: httpx.AsyncClient, issuer: str, legacy: bool = False
    ) -> dict[str, Any]:
        for candidate in issuer_metadata_urls(issuer):
            found = await self._get_json(http, candidate)
            if found is None:
                continue
            if found.get("issuer") != issuer and not legacy:
                raise AuthError(
                    f"the authorization server metadata at {candidate} names the issuer "
                    f"{found.get('issuer')!r}, not {issuer!r}"
                )
            methods = found.get("code_challenge_methods_supported")
            if self.grant == "authorization_code" and (
                type(methods) is not list or "S256" not in methods
            ):
                raise AuthError(f"the authorization server {issuer} does not support PKCE S256")
            return found
        if not legacy:
            raise AuthError(f"no authorization server metadata found for {issuer}")
        parts = urlsplit(issuer)
        origin = f"{parts.scheme}://{parts.netloc}"
        return {  # a 2025-03-26 server without metadata: the default endpoints
            "issuer": issuer,
            "authorization_endpoint": f"{origin}/authorize",
            "token_endpoint": f"{origin}/token",
            "registration_endpoint": f"{origin}/register",
            "code_challenge_methods_supported": ["S256"],
        }

    # ------------------------------------------------------------ the client's identity

    async def _client_for(self, http: httpx.AsyncClient, found: Discovery) -> ClientInfo:
        if self.client_id is not None:
            return ClientInfo(self.client_id, self.client_secret, self.token_endpoint_auth_method)
        if self.grant == "jwt_bearer":
            return ClientInfo("")  # the assertion is the workload's identity (RFC 7523 3.1)
        known = await self.store.get_client(found.issuer)
        if known is not None:
            return known
        if self.client_metadata_url and found.metadata.get("client_id_metadata_document_supported"):
            return ClientInfo(self.client_metadata_url, None, "none")
        endpoint = found.metadata.get("registration_endpoint")
        if type(endpoint) is not str:
            raise AuthError(
                f"{found.issuer} offers no dynamic client registration and no client id was "
                "given (pre-register the client, or give a client metadata document URL)"
            )
        client = await self._register(http, endpoint, found.metadata)
        await self.store.set_client(found.issuer, client)
        return client

    async def _register(
        self, http: httpx.AsyncClient, endpoint: str, metadata: Mapping[str, Any]
    ) -> ClientInfo:
        supported = _auth_methods(metadata)
        method = self.token_endpoint_auth_method or next(
            (m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported),
            "client_secret_basic",
        )
        grants = (
            ["client_credentials"]
            if self.grant == "client_credentials"
            else ["authorization_code", "refresh_token"]
        )
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "grant_types": grants,
            "token_endpoint_auth_method": method,
            "application_type": self.application_type,
        }
        if self.grant == "authorization_code":
            body["redirect_uris"] = [self.redirect_uri]
            body["response_types"] = ["code"]
        try:
            response = await http.post(endpoint, json=body, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise AuthError(f"client registration at {endpoint} failed: {exc}") from exc
        data = _json_object(response) or {}
        if response.status_code not in (200, 201) or type(data.get("client_id")) is not str:
            raise AuthError(f"client registration at {endpoint}: HTTP {response.status_code}")
        secret = data.get("client_secret")
        answered = data.get("token_endpoint_auth_method")
        return ClientInfo(
            data["client_id"],
            secret if type(secret) is str else None,
            answered if type(answered) is str else method,
        )

    # ------------------------------------------------------------ grants

    async def _authorization_code(
        self, http: httpx.AsyncClient, found: Discovery, client: ClientInfo, scope: str | None
    ) -> Tokens:
        if self.redirect is None:
            raise AuthError("the authorization code flow needs a redirect handler")
        endpoint = found.metadata.get("authorization_endpoint")
        if type(endpoint) is not str:
            raise AuthError(f"{found.issuer} names no authorization endpoint")
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        query: dict[str, str] = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": found.resource,
        }
        if scope:
            query["scope"] = scope
        separator = "&" if urlsplit(endpoint).query else "?"
        answer = await self.redirect(f"{endpoint}{separator}{urlencode(query, quote_via=quote)}")
        if isinstance(answer, str):
            redirect = Redirect.from_url(answer)
        elif isinstance(answer, Redirect):
            redirect = answer
        else:
            redirect = Redirect.from_params(answer)
        if redirect.error:
            raise AuthError(
                f"authorization refused: {redirect.error}"
                + (f" ({redirect.error_description})" if redirect.error_description else "")
            )
        if redirect.state != state:
            raise AuthError("the redirect's state does not match the request's")
        if redirect.iss is not None:
            if redirect.iss != found.metadata.get("issuer"):
                raise AuthError(f"the redirect's iss {redirect.iss!r} is not the issuer")
        elif found.metadata.get("authorization_response_iss_parameter_supported") is True:
            raise AuthError("the redirect lacks the iss parameter its server advertises")
        if not redirect.code:
            raise AuthError("the redirect carries no code")
        form = {
            "grant_type": "authorization_code",
            "code": redirect.code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
            "resource": found.resource,
        }
        return await self._token_request(http, found, client, form, scope)

    async def _client_credentials(
        self, http: httpx.AsyncClient, found: Discovery, client: ClientInfo, scope: str | None
    ) -> Tokens:
        form = {"grant_type": "client_credentials", "resource": found.resource}
        if scope:
            form["scope"] = scope
        return await self._token_request(http, found, client, form, scope)

    async def _jwt_bearer(
        self,
        http: httpx.AsyncClient,
        found: Discovery,
        client: ClientInfo,
        assertion: str,
        scope: str | None,
    ) -> Tokens:
        """The JWT bearer grant (RFC 7523 2.1): `assertion` (a workload's identity token, or an
        ID-JAG) for an access token. A refusal is the caller's error: no retry, no other grant."""
        form = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion, "resource": found.resource}
        if scope:
            form["scope"] = scope
        return await self._token_request(http, found, client, form, scope)

    async def _id_jag(self, http: httpx.AsyncClient, found: Discovery, scope: str | None) -> str:
        """An Identity Assertion JWT Authorization Grant for `found`'s authorization server and
        resource, by token exchange (RFC 8693) of the user's ID token at the enterprise IdP."""
        endpoint = self.idp_token_endpoint
        if endpoint is None:
            assert self.idp_issuer is not None
            metadata = await self._as_metadata(http, self.idp_issuer)
            endpoint = metadata.get("token_endpoint")
            if type(endpoint) is not str:
                raise AuthError(f"the IdP {self.idp_issuer} names no token endpoint")
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "requested_token_type": ID_JAG_TYPE,
            "audience": found.issuer,
            "resource": found.resource,
            "subject_token": await _fresh(self.id_token, "id_token"),
            "subject_token_type": ID_TOKEN_TYPE,
        }
        if scope:
            form["scope"] = scope
        assert self.idp_client_id is not None
        idp = ClientInfo(self.idp_client_id, self.idp_client_secret)
        data = await self._post_token(http, endpoint, self._client_auth(idp, {}, form), "the IdP")
        if data.get("issued_token_type") not in (None, ID_JAG_TYPE):
            raise AuthError(f"the IdP issued a {data.get('issued_token_type')!r}, not an ID-JAG")
        return cast(str, data["access_token"])

    async def _refresh(
        self, http: httpx.AsyncClient, tokens: Tokens, key: str, found: Discovery | None = None
    ) -> Tokens | None:
        """New tokens from the refresh token (stored), or None (the old ones are dropped)."""
        assert tokens.refresh_token is not None
        try:
            if found is None:
                found = await self.discover(http, httpx.URL(key))
            client = await self._client_for(http, found)
            form = {
                "grant_type": "refresh_token",
                "refresh_token": tokens.refresh_token,
                "resource": found.resource,
            }
            bound = DpopKey(tokens.dpop_key) if tokens.dpop_key is not None else None
            fresh = await self._token_request(http, found, client, form, tokens.scope, bound)
        except AuthError as exc:
            log.debug("refreshing the token failed: %s", exc)
            await self.store.set_tokens(key, None)
            return None
        if fresh.refresh_token is None:
            fresh.refresh_token = tokens.refresh_token
        await self.store.set_tokens(key, fresh)
        return fresh

    async def _token_request(
        self,
        http: httpx.AsyncClient,
        found: Discovery,
        client: ClientInfo,
        form: dict[str, str],
        scope: str | None,
        key: DpopKey | None = None,
    ) -> Tokens:
        """Tokens from `found`'s token endpoint; DPoP-bound (with `key`, else the client's key)
        when DPoP is in use."""
        endpoint = found.metadata.get("token_endpoint")
        if type(endpoint) is not str:
            raise AuthError(f"{found.issuer} names no token endpoint")
        if key is None and self._use_dpop(found.metadata):
            key = self._client_key()
        request = self._client_auth(client, found.metadata, form, found.issuer)
        data = await self._post_token(http, endpoint, request, "the token endpoint", key)
        expires = data.get("expires_in")
        refresh = data.get("refresh_token")
        granted = data.get("scope")
        token_type = str(data.get("token_type") or "Bearer")
        return Tokens(
            data["access_token"],
            token_type,
            refresh if type(refresh) is str else None,
            time.time() + float(expires) if isinstance(expires, int | float) else None,
            granted if type(granted) is str else scope,
            found.issuer,
            key.pem if key is not None and token_type.lower() == "dpop" else None,
        )

    def _client_auth(
        self,
        client: ClientInfo,
        metadata: Mapping[str, Any],
        form: dict[str, str],
        issuer: str = "",
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The form and headers of a token request with the client's authentication."""
        headers = {"Accept": "application/json"}
        method = self._auth_method(client, metadata)
        if method == "private_key_jwt":
            form = {
                **form,
                "client_id": client.client_id,
                "client_assertion_type": JWT_BEARER_ASSERTION,
                "client_assertion": self._client_assertion(client, issuer),
            }
        elif method == "client_secret_basic" and client.client_secret is not None:
            pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif method == "client_secret_post" and client.client_secret is not None:
            form = {**form, "client_id": client.client_id, "client_secret": client.client_secret}
        elif client.client_id:
            form = {**form, "client_id": client.client_id}
        return form, headers

    async def _post_token(
        self,
        http: httpx.AsyncClient,
        endpoint: str,
        request: tuple[dict[str, str], dict[str, str]],
        who: str,
        key: DpopKey | None = None,
    ) -> dict[str, Any]:
        """The JSON answer of a token endpoint (one more try on a new `use_dpop_nonce`)."""
        form, headers = request
        origin = _origin(httpx.URL(endpoint))
        retried = False
        while True:
            if key is not None:
                headers = {
                    **headers,
                    "DPoP": key.proof("POST", endpoint, None, self._nonces.get(origin)),
                }
            try:
                response = await http.post(
                    endpoint, data=form, headers=headers, timeout=self.timeout
                )
            except httpx.HTTPError as exc:
                raise AuthError(f"the token request to {endpoint} failed: {exc}") from exc
            data = _json_object(response) or {}
            nonce = response.headers.get("dpop-nonce")
            fresh_nonce = nonce is not None and nonce != self._nonces.get(origin)
            if nonce is not None:
                self._nonces[origin] = nonce
            if response.status_code == 200 and type(data.get("access_token")) is str:
                return data
            if retried or not (
                key is not None and data.get("error") == "use_dpop_nonce" and fresh_nonce
            ):
                raise AuthError(f"{who} refused: {_refusal(response.status_code, data, form)}")
            retried = True

    def _use_dpop(self, metadata: Mapping[str, Any]) -> bool:
        if self.dpop is not None:
            return self.dpop
        algs = metadata.get("dpop_signing_alg_values_supported")
        return type(algs) is list and any(alg in ALGORITHMS for alg in cast(list[Any], algs))

    def _bound_key(self, pem: str) -> DpopKey:
        """The key of stored tokens: the client's own (parsed once) when it is that one."""
        if self._dpop is None or self._dpop.pem != pem:
            self._dpop = DpopKey(pem)
        return self._dpop

    def _client_key(self) -> DpopKey:
        """This client's DPoP key (made on first use)."""
        if self._dpop is None:
            self._dpop = DpopKey.generate()
        return self._dpop

    def _client_assertion(self, client: ClientInfo, issuer: str) -> str:
        """A client assertion JWT (RFC 7523): the client as issuer and subject, the
        authorization server's issuer as audience, valid for five minutes."""
        with needs("auth", "private_key_jwt"):
            import jwt
        now = int(time.time())
        claims = {
            "iss": client.client_id,
            "sub": client.client_id,
            "aud": issuer,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_urlsafe(16),
        }
        assert self.private_key is not None
        return jwt.encode(claims, self.private_key, algorithm=self.signing_algorithm)

    def _auth_method(self, client: ClientInfo, metadata: Mapping[str, Any]) -> str:
        if self.private_key is not None and client.client_id == self.client_id:
            return "private_key_jwt"
        if client.client_secret is None:
            return "none"
        if client.token_endpoint_auth_method in ("client_secret_basic", "client_secret_post"):
            return client.token_endpoint_auth_method
        supported = _auth_methods(metadata)
        only_post = "client_secret_post" in supported and "client_secret_basic" not in supported
        return "client_secret_post" if only_post else "client_secret_basic"


def _auth_methods(metadata: Mapping[str, Any]) -> list[Any]:
    """The AS's token endpoint authentication methods (RFC 8414's default: basic)."""
    supported = metadata.get("token_endpoint_auth_methods_supported")
    return cast(list[Any], supported) if type(supported) is list else ["client_secret_basic"]


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return cast(dict[str, Any], data) if type(data) is dict else None


_SECRET_FIELDS = (
    "assertion",
    "subject_token",
    "client_secret",
    "client_assertion",
    "code",
    "code_verifier",
    "refresh_token",
)


def _refusal(status: int, data: Mapping[str, Any], form: Mapping[str, str]) -> str:
    """A token endpoint's error and its description (left out if it quotes a secret of the
    request), or the HTTP status."""
    error = str(data.get("error") or f"HTTP {status}")
    described = data.get("error_description")
    if type(described) is str and described:
        quoted = any(form.get(name) and form[name] in described for name in _SECRET_FIELDS)
        if not quoted:
            error = f"{error} ({described[:200]})"
    return error


def _origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode('ascii')}"


def _canonical(url: httpx.URL) -> str:
    """The canonical resource URI of an MCP endpoint (no query, no fragment)."""
    return str(url.copy_with(query=None, fragment=None))


def _covers(resource: str, url: httpx.URL) -> bool:
    """Whether the protected resource `resource` names the endpoint `url`: the same origin and
    a path that is `url`'s or a segment prefix of it."""
    try:
        named = httpx.URL(resource)
    except (httpx.InvalidURL, TypeError):
        return False
    default = {"http": 80, "https": 443}

    def origin(u: httpx.URL) -> tuple[str, str, int | None]:
        return u.scheme.lower(), u.host.lower(), u.port or default.get(u.scheme)

    if origin(named) != origin(url):
        return False
    prefix = named.path.rstrip("/")
    path = url.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


__all__ = [
    "AuthError",
    "ClientInfo",
    "Discovery",
    "FileTokenStore",
    "MemoryTokenStore",
    "OAuth",
    "Assertion",
    "Redirect",
    "RedirectHandler",
    "TokenStore",
    "Tokens",
    "parse_www_authenticate",
    "pkce_pair",
    "s256",
]
