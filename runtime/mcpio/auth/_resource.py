"""Authorization for Streamable HTTP: the server as an OAuth 2.1 resource server.

Opt-in on the ASGI app (the example below).

Every POST, GET and DELETE of the MCP endpoint needs `Authorization: Bearer <token>`: a missing
or invalid token is answered 401, a valid one without the scopes the request needs 403, both with
the `WWW-Authenticate` challenge of RFC 6750 / RFC 9728 pointing at the protected-resource
metadata, served at `/.well-known/oauth-protected-resource` (and the path-suffixed form).

The verifier is any `async (token) -> Principal | None`: None (or `InvalidToken`) is 401
`invalid_token`; `VerifierUnavailable` (or any other exception) is 503, for a token that may be
valid but cannot be checked now. Tokens are never logged.

`JwtVerifier` checks JWT access tokens with PyJWT (`pip install 'mcpgen[auth]'`): the
signature with a key of the issuer's JWKS, the JOSE `typ`, `iss`, `aud`, `exp` and `sub`, and
reads the scopes (see the class for the rules, the key cache and the backoff).

DPoP (RFC 9449): with `dpop=DpopPolicy(...)` (`mcpio.auth._dpop_server`), a token bound to a key
(`cnf.jkt` in its JWT claims or its introspection answer) is accepted only as
`Authorization: DPoP <token>` with a valid proof of that key for this request; sent as Bearer it
is refused (`invalid_token`), and a bad proof is 401 `invalid_dpop_proof` (`use_dpop_nonce` with
a `DPoP-Nonce` when a fresh nonce is needed), with a `DPoP` challenge naming the accepted
algorithms. `DpopPolicy(required=True)` refuses bearer tokens altogether. The metadata then
advertises `dpop_signing_alg_values_supported` and `dpop_bound_access_tokens_required`.

`IntrospectionVerifier` asks the authorization server (RFC 7662 token introspection, with
httpx), with the same subject and scope rules and the same backoff when the endpoint fails.

Examples:
    >>> from mcpio import JwtVerifier, ResourceServerAuth, Server
    >>> server = Server("demo", "1.0")
    >>> auth = ResourceServerAuth(
    ...     verifier=JwtVerifier(issuer="https://auth.example", audience="https://mcp.example/mcp"),
    ...     resource="https://mcp.example/mcp",
    ...     authorization_servers=["https://auth.example"],
    ...     scopes_supported=["mcp:read", "mcp:write"],
    ...     required_scopes={"*": ["mcp:read"], "tools/call:deploy": ["mcp:write"]},
    ... )
    >>> app = server.http_app(auth=auth)
    >>> auth.metadata()["resource"]
    'https://mcp.example/mcp'
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import anyio

from mcpio._core.extras import needs
from mcpio._core.principal import Principal
from mcpio.auth._dpop_server import (
    DpopError,
    DpopPolicy,
    ReplayCacheFull,
    ReplayUnavailable,
    bound_key,
)
from mcpio.auth._wellknown import (
    PROTECTED_RESOURCE,
    inserted,
    issuer_metadata_urls,
    resource_metadata_urls,
)

if TYPE_CHECKING:
    import httpx
    import jwt

log = logging.getLogger("mcpio.auth")


TokenVerifier = Callable[[str], Awaitable[Principal | None]]
"""`async (token) -> Principal | None`: None (or raising `InvalidToken`) rejects the token."""


class InvalidToken(Exception):
    """A verifier may raise this instead of returning None."""


class VerifierUnavailable(Exception):
    """The verifier could not decide (the issuer's keys unreachable): 503, not 401."""


class AuthRefused(Exception):
    """A token refused with its own answer (401).

    Args:
        reason: The reason, for the response's body.
        headers: The response's headers (`WWW-Authenticate`, `DPoP-Nonce`).
    """

    def __init__(self, reason: str, headers: dict[str, str]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.headers = headers


@dataclass
class ResourceServerAuth:
    """What the HTTP app needs to act as an OAuth 2.1 resource server.

    Every POST, GET and DELETE of the MCP endpoint then needs a token: a missing or invalid one
    is answered 401, a valid one without the scopes the request needs 403, both with the
    `WWW-Authenticate` challenge of RFC 6750 / RFC 9728 pointing at the protected-resource
    metadata. The docs page on authorization (docs/servers/auth.md) tells the rules.

    Args:
        verifier: Any `async (token) -> Principal | None` (`TokenVerifier`): None (or
            `InvalidToken`) is 401 `invalid_token`; `VerifierUnavailable` (or any other
            exception) is 503.
        resource: This resource's URL (RFC 8707), as the metadata names it.
        authorization_servers: The issuers of the tokens it accepts, for the metadata.
        scopes_supported: The scopes the metadata lists.
        required_scopes: Maps `"*"` (every request, GET and DELETE included), a method name
            (`"tools/list"`), or a method and the name it acts on (`"tools/call:deploy"`,
            `"prompts/get:greet"`, `"resources/read:demo://x"`) to the scopes it needs; a
            request needs the union of every entry that matches it.
        resource_name: The human-readable name the metadata gives (`resource_name`).
        dpop: How DPoP-bound tokens are checked (`DpopPolicy`); None: DPoP is off.
    """

    verifier: TokenVerifier
    resource: str
    authorization_servers: Sequence[str]
    scopes_supported: Sequence[str] = ()
    required_scopes: Mapping[str, Collection[str]] = field(default_factory=dict[str, Any])
    resource_name: str | None = None
    dpop: DpopPolicy | None = None

    @property
    def metadata_url(self) -> str:
        """RFC 9728: the well-known path inserted between the resource's host and path."""
        return inserted(self.resource, PROTECTED_RESOURCE)

    @property
    def metadata_paths(self) -> frozenset[str]:
        """The paths this server answers its metadata at (with and without the resource's)."""
        return frozenset(urlsplit(url).path for url in resource_metadata_urls(self.resource))

    def metadata(self) -> dict[str, Any]:
        """The protected-resource metadata document (RFC 9728) served at the well-known path."""
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name:
            document["resource_name"] = self.resource_name
        if self.dpop is not None:
            document["dpop_signing_alg_values_supported"] = list(self.dpop.algorithms)
            document["dpop_bound_access_tokens_required"] = self.dpop.required
        return document

    def needed(self, routes: Iterable[tuple[str, str | None]] = ()) -> frozenset[str]:
        """The scopes a request carrying these messages needs.

        Each message is given by its method and the name it acts on (`params.name` of
        tools/call and prompts/get, `params.uri` of resources/read).
        """
        if not self.required_scopes:
            return _NO_SCOPES
        needed = set(self.required_scopes.get("*", ()))
        for method, name in routes:
            needed.update(self.required_scopes.get(method, ()))
            if name is not None:
                needed.update(self.required_scopes.get(f"{method}:{name}", ()))
        return frozenset(needed)

    def challenge(self, error: str | None = None, scopes: Collection[str] | None = None) -> str:
        """A `WWW-Authenticate` value: the metadata URL, the scopes to ask for, and the error.

        The error (`invalid_token`, `insufficient_scope`) is there when there is one; the
        scopes default to those every request needs, else `scopes_supported`.
        """
        if scopes is None:
            scopes = self.needed() or frozenset(self.scopes_supported)
        parts = [f'resource_metadata="{self.metadata_url}"']
        if scopes:
            parts.append(f'scope="{" ".join(sorted(scopes))}"')
        if error is not None:
            parts.insert(0, f'error="{error}"')
        if self.dpop is None:
            return "Bearer " + ", ".join(parts)
        algs = f'algs="{" ".join(self.dpop.algorithms)}"'
        if self.dpop.required:
            return "DPoP " + ", ".join([*parts, algs])
        return "Bearer " + ", ".join(parts) + ", DPoP " + algs

    def dpop_challenge(self, error: str, description: str) -> str:
        """RFC 9449 7.1's challenge for a refused proof (or a token bound but sent as Bearer)."""
        assert self.dpop is not None
        algs = " ".join(self.dpop.algorithms)
        return (
            f'DPoP error="{error}", error_description="{description}", algs="{algs}", '
            f'resource_metadata="{self.metadata_url}"'
        )

    def token_of(self, authorization: str | None) -> str | None:
        """The access token of an `Authorization` header: Bearer, or DPoP when it is on."""
        scheme, token = _credentials(authorization)
        return token if scheme == "bearer" or (scheme == "dpop" and self.dpop) else None

    async def authenticate(
        self,
        authorization: str | None,
        *,
        proof: str | None = None,
        method: str = "POST",
        urls: Sequence[str] = (),
        answer: dict[str, str] | None = None,
    ) -> Principal | None:
        """The principal of an `Authorization` header's token (None: no token, or invalid).

        Args:
            authorization: The request's `Authorization` header (None: none came).
            proof: With DPoP on, the request's `DPoP` header, checked against `method` and one
                of `urls`.
            method: The request's HTTP method.
            urls: The request's URL as the client may have named it (the configured `resource`
                is tried too).
            answer: Gets the headers the response should carry: a `dpop-nonce` when the
                proof's nonce nears its end (`Nonces.renewal`).

        Raises:
            VerifierUnavailable: Whether the token is valid cannot be decided now.
            ReplayCacheFull: The memory replay cache is full of unexpired proofs.
            AuthRefused: The DPoP proof or the scheme is wrong.
        """
        scheme, token = _credentials(authorization)  # (`token_of`, inline: on every request)
        if token is None or not (scheme == "bearer" or (scheme == "dpop" and self.dpop)):
            return None
        try:  # (inline: one coroutine less on every request)
            principal = await self.verifier(token)
        except InvalidToken:
            principal = None
        except VerifierUnavailable:
            raise
        except Exception as exc:  # the message could quote the token: the type only
            log.error("the token verifier raised %s", type(exc).__name__)
            raise VerifierUnavailable(type(exc).__name__) from None
        if principal is None or self.dpop is None:
            return principal
        dpop = scheme == "dpop"
        jkt = bound_key(principal.claims)
        if jkt is None and (dpop or self.dpop.required):
            why = "the token is not DPoP-bound" if dpop else "this server takes DPoP tokens only"
            raise AuthRefused(why, {"www-authenticate": self.dpop_challenge("invalid_token", why)})
        if jkt is not None and not dpop:
            why = "a DPoP-bound token sent as a bearer token"
            raise AuthRefused(why, {"www-authenticate": self.dpop_challenge("invalid_token", why)})
        if jkt is not None:
            renewed = await self._check_proof(proof, method, [*urls, self.resource], token, jkt)
            if renewed is not None and answer is not None:
                answer["dpop-nonce"] = renewed
        return principal

    async def _check_proof(
        self, proof: str | None, method: str, urls: Sequence[str], token: str, jkt: str
    ) -> str | None:
        assert self.dpop is not None
        try:
            return await self.dpop.check(proof, method, urls, token, jkt)
        except DpopError as exc:
            headers = {"www-authenticate": self.dpop_challenge(exc.error, exc.reason)}
            if exc.nonce is not None:
                headers["dpop-nonce"] = exc.nonce
            raise AuthRefused(exc.reason, headers) from None
        except ReplayCacheFull:
            raise
        except ReplayUnavailable as exc:
            raise VerifierUnavailable(str(exc)) from None


_NO_SCOPES: frozenset[str] = frozenset()


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer` header, else None."""
    scheme, token = _credentials(authorization)
    return token if scheme == "bearer" else None


def _credentials(authorization: str | None) -> tuple[str, str | None]:
    """The (lower-case) scheme and the token of an `Authorization` header."""
    if authorization is None:
        return "", None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return scheme.lower(), token or None


DEFAULT_TOKEN_TYPES: frozenset[str | None] = frozenset({"at+jwt", "jwt", None})
"""The JOSE `typ`s `JwtVerifier` accepts by default: RFC 9068's `at+jwt`, and the `JWT` or no
`typ` at all that many issuers put on access tokens (Auth0, Entra ID, Keycloak by default)."""

STRICT_TOKEN_TYPES: frozenset[str | None] = frozenset({"at+jwt"})
"""RFC 9068 only: `accepted_types=STRICT_TOKEN_TYPES`."""


class JwtVerifier:
    """Verifies JWT access tokens (RFC 9068) with PyJWT (the `auth` extra).

    It checks:

    - the signature, with a key of the issuer's JWKS, by one of `algorithms` (asymmetric only;
      a JWK's own `alg`, when it has one, must be the token's);
    - the JOSE header's `typ`, one of `accepted_types`, compared as media types
      (`application/at+jwt` is `at+jwt`; None stands for no `typ`): by default
      `DEFAULT_TOKEN_TYPES`, RFC 9068's `at+jwt` and the `JWT` or absent `typ` many issuers put
      on access tokens; anything else (`id_token`, `JWT+id`, ...) is refused.
      `STRICT_TOKEN_TYPES` accepts `at+jwt` only. ID tokens without a telling `typ` are refused
      by their `aud`, the client's id and not this resource (no claim is taken as a sign:
      Keycloak before 25 put `nonce` in access tokens too);
    - `iss` = `issuer`, `aud` containing `audience` (this resource, RFC 8707), `exp` in the
      future (`leeway` seconds of clock skew), a `sub` that is a non-empty string;
    - scopes from `scope`, else `scp`: a space-separated string (`"scp": "mcp:read mcp:write"`
      as Entra ID issues it) or a list of strings.

    A token that cannot be valid whatever the issuer's keys (not a JWT, an `alg` not allowed or
    `none`, a `typ` not accepted, failing claims) is refused (None: 401) before any key is
    fetched, so even while the issuer is down. Only a plausible token whose key cannot be had
    raises `VerifierUnavailable` (503).

    Keys: the JWKS at `jwks_uri` (default: the one the issuer's RFC 8414 metadata names, else
    its OpenID discovery's, looked up once) is trusted `cache_seconds` after it was fetched,
    then fetched anew on the next token and replaced whole: a key the issuer withdrew is
    refused from then on. A token whose `kid` the JWKS lacks has it fetched early (a key
    rotated in), at most once every `refetch_interval` seconds; otherwise the token is refused.
    A token once verified is not verified again while the JWKS that verified it is trusted (and
    never past its `exp`): its principal is cached, at most `cache_size` tokens by their SHA-256,
    and forgotten when the keys are fetched anew.
    One fetch at a time (async, httpx, `timeout` seconds at most): tokens needing one meanwhile
    wait for it and share its result. A failed discovery or fetch is not tried again for
    `backoff` seconds, doubling up to `max_backoff` while it keeps failing (503 meanwhile for
    tokens the cached keys cannot decide).

    Args:
        issuer: The tokens' issuer: their `iss`, and where the JWKS is discovered.
        audience: This resource, which a token's `aud` must contain (RFC 8707).
        jwks_uri: The issuer's JWKS; None: discovered from the issuer's metadata.
        algorithms: The signing algorithms accepted (asymmetric only).
        accepted_types: The JOSE `typ` values accepted (None in it: no `typ`).
        leeway: Seconds of clock skew allowed on `exp`.
        timeout: Seconds a discovery or JWKS fetch may take at most.
        cache_seconds: Seconds a fetched JWKS is trusted.
        refetch_interval: The fewest seconds between early fetches for an unknown `kid`.
        backoff: Seconds before a failed discovery or fetch is tried again.
        max_backoff: The most that wait doubles up to.
        cache_size: The most verified tokens cached (0: none; each is verified every time).
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_uri: str | None = None,
        algorithms: Sequence[str] = ("RS256", "ES256", "PS256", "EdDSA"),
        accepted_types: Collection[str | None] = DEFAULT_TOKEN_TYPES,
        leeway: float = 30.0,
        timeout: float = 5.0,
        cache_seconds: float = 300.0,
        refetch_interval: float = 30.0,
        backoff: float = 2.0,
        max_backoff: float = 60.0,
        cache_size: int = 4096,
    ) -> None:
        with needs("auth", "JwtVerifier"):
            import jwt

        weak = [a for a in algorithms if a == "none" or a.upper().startswith("HS")]
        if weak or not algorithms:
            raise ValueError(f"JwtVerifier takes asymmetric algorithms only, not {weak}")
        self.issuer = issuer
        self.audience = audience
        self.algorithms = list(algorithms)
        self.accepted_types = frozenset(_media_type(t) for t in accepted_types)
        self.leeway = leeway
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self.refetch_interval = refetch_interval
        self._jwt = jwt
        self._jwks_uri = jwks_uri
        self._keys: dict[str | None, dict[str, Any]] = {}  # the last JWKS's signing keys by kid
        self._expires = -math.inf  # (monotonic) when the last JWKS stops being trusted
        self._fetched = -math.inf  # when the last fetch ended, succeeded or not
        self._fetches = 0
        self._backoff = _Backoff(backoff, max_backoff)
        self._lock = anyio.Lock()
        self._verified = _TokenCache(cache_size)

    async def __call__(self, token: str) -> Principal | None:
        key = hashlib.sha256(token.encode()).digest()  # (`_token_key`, inline: every request)
        if time.monotonic() < self._expires:  # (the keys that verified it are still trusted)
            cached = self._verified.get(key)
            if cached is not None:
                return cached
        principal = await self._verify(token)
        if principal is not None:  # (by the current keys: nothing awaits after `_key`)
            self._verified.put(key, principal, math.inf)
        return principal

    async def _verify(self, token: str) -> Principal | None:
        jwt = self._jwt
        try:
            header = self._plausible(token)
            jwk = await self._key(header.get("kid"))
            if jwk is None:
                raise InvalidToken("no such key")
            # The JWK's own alg if it has one (PyJWT then requires the token's to match).
            claims = self._claims(token, jwt.PyJWK(jwk, jwk.get("alg") or header["alg"]))
        except InvalidToken as exc:
            log.debug("access token rejected: %s", exc)
            return None
        except jwt.PyJWTError as exc:
            log.debug("access token rejected: %s", type(exc).__name__)
            return None
        expires_at = float(claims["exp"]) + self.leeway  # as long as decode would accept it
        return Principal(claims["sub"], _scopes(claims), claims, expires_at)

    def _plausible(self, token: str) -> dict[str, Any]:
        """The token's JOSE header, if the token could be valid with some key: well-formed, of
        an accepted algorithm and `typ`, its claims valid (its signature unchecked)."""
        header = self._jwt.get_unverified_header(token)
        if header.get("alg") not in self.algorithms:
            raise InvalidToken("algorithm")
        typ = header.get("typ")
        if not (typ is None or type(typ) is str) or _media_type(typ) not in self.accepted_types:
            raise InvalidToken("typ")
        self._claims(token, None)
        return header

    def _claims(self, token: str, key: jwt.PyJWK | None) -> dict[str, Any]:
        """The token's claims, checked, and its signature with `key` (None: unchecked)."""
        claims = self._jwt.decode(
            token,
            key if key is not None else "",
            algorithms=self.algorithms,
            audience=self.audience,
            issuer=self.issuer,
            leeway=self.leeway,
            options={
                "verify_signature": key is not None,
                "verify_exp": True,
                "verify_nbf": True,
                "verify_iat": True,
                "verify_aud": True,
                "verify_iss": True,
                "verify_sub": True,
                "verify_jti": True,
                "require": ["exp", "iss", "aud", "sub"],
            },
        )
        if type(claims["sub"]) is not str or not claims["sub"]:
            raise InvalidToken("subject")
        return claims

    async def _key(self, kid: str | None) -> dict[str, Any] | None:
        """The JWK named `kid` in a JWKS within its lifetime, fetched if need be (see the
        class's docstring); None if that JWKS has no such key."""
        if time.monotonic() < self._expires and kid in self._keys:
            return self._keys[kid]
        fetches = self._fetches
        async with self._lock:
            now = time.monotonic()
            due = now >= self._expires or (
                kid not in self._keys and now >= self._fetched + self.refetch_interval
            )
            # Not if a fetch ended while this task waited: concurrent tokens share one.
            if due and self._fetches == fetches and not self._backoff.waiting():
                await self._fetch()
        if time.monotonic() < self._expires:
            return self._keys.get(kid)
        raise VerifierUnavailable("the issuer's keys are unreachable")

    async def _fetch(self) -> None:
        import httpx  # the http extra

        keys = None
        with anyio.move_on_after(self.timeout) as deadline:
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                if self._jwks_uri is None:
                    self._jwks_uri = await self._discover(http)
                if self._jwks_uri is not None:
                    keys = await self._jwks(http, self._jwks_uri)
        if deadline.cancelled_caught:
            log.warning("fetching the issuer's keys took more than %s s", self.timeout)
        self._fetches += 1
        self._fetched = time.monotonic()
        if keys is None:
            self._backoff.failed()
        else:
            self._keys, self._expires = keys, self._fetched + self.cache_seconds
            self._verified.clear()
            self._backoff.succeeded()

    async def _jwks(
        self, http: httpx.AsyncClient, uri: str
    ) -> dict[str | None, dict[str, Any]] | None:
        """The signing keys of the JWKS at `uri` by kid; None if it cannot be had."""
        import httpx

        try:
            response = await http.get(uri, headers={"accept": "application/json"})
            document = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("the issuer's keys are unreachable (%s)", type(exc).__name__)
            return None
        found = document.get("keys") if type(document) is dict else None
        if type(found) is not list:
            log.warning("no JWKS at %s (HTTP %s)", uri, response.status_code)
            return None
        keys: dict[str | None, dict[str, Any]] = {}
        for jwk in cast(list[Any], found):
            if type(jwk) is not dict or jwk.get("use", "sig") != "sig" or jwk.get("kty") == "oct":
                continue
            kid = jwk.get("kid")
            if kid is None or type(kid) is str:
                keys.setdefault(kid, jwk)
        return keys

    async def _discover(self, http: httpx.AsyncClient) -> str | None:
        import httpx

        for url in issuer_metadata_urls(self.issuer):
            try:
                response = await http.get(url, headers={"accept": "application/json"})
                document = response.json() if response.status_code == 200 else {}
            except (httpx.HTTPError, ValueError):
                continue
            if type(document) is dict and document.get("issuer") == self.issuer:
                if type(document.get("jwks_uri")) is str:
                    return document["jwks_uri"]
        log.warning("no authorization-server metadata with a jwks_uri for %s", self.issuer)
        return None


def _media_type(typ: str | None) -> str | None:
    """RFC 7515 4.1.9: `typ` is a media type, compared case-insensitively, `application/`
    left out."""
    return typ.lower().removeprefix("application/") if typ is not None else None


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """`scope` (RFC 9068, RFC 7662), else `scp` (Entra ID, Okta): a space-separated string or
    a list of strings."""
    value = claims.get("scope")
    if value is None:
        value = claims.get("scp")
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(s for s in cast(list[Any], value) if isinstance(s, str))
    return frozenset()


class _Backoff:
    """After a failure, no new attempt for `first` seconds, doubling up to `most` while
    attempts keep failing."""

    def __init__(self, first: float, most: float) -> None:
        self.first, self.most = first, most
        self.delay, self.until = first, -math.inf

    def waiting(self) -> bool:
        return time.monotonic() < self.until

    def failed(self) -> None:
        if self.waiting():  # an attempt started before the last failure: not a new one
            return
        self.until = time.monotonic() + self.delay
        self.delay = min(2 * self.delay, self.most)

    def succeeded(self) -> None:
        self.delay, self.until = self.first, -math.inf


class _TokenCache:
    """Principals of tokens already verified, by the token's SHA-256, each until its deadline
    (wall clock); at most `size`, the least recently used leaving first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()

    def get(self, key: bytes) -> Principal | None:
        """The principal cached for `key` if its deadline has not passed."""
        cached = self._entries.get(key)
        if cached is None:
            return None
        if cached[1] <= time.time():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return cached[0]

    def put(self, key: bytes, principal: Principal, until: float) -> None:
        """Cache `principal` for `key` until `until` (never past the principal's expiry)."""
        if self.size <= 0:
            return
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        self._entries[key] = (principal, until)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every token (the keys that verified them changed)."""
        self._entries.clear()


def _token_key(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class IntrospectionVerifier:
    """Verifies access tokens of any format by RFC 7662 introspection.

    The token is POSTed to the authorization server's `introspection_endpoint`, the resource
    server authenticating as `client_id` / `client_secret` (HTTP Basic). A token is accepted
    when the answer says `active`, names a `sub` (a non-empty string), has `audience` in its
    `aud` (this resource, RFC 8707; None skips the check, for servers whose answers carry no
    `aud`), `issuer` as its `iss` when given, and an `exp` (if any) in the future (`leeway`
    seconds of clock skew). Scopes come from `scope` (space-separated), else `scp`, as for
    `JwtVerifier`.

    Accepted tokens are cached `cache_seconds` (never past their `exp`), at most `cache_size`
    of them, keyed by their SHA-256: a revoked token may be accepted that long. Rejections are
    not cached. An unreachable endpoint or an answer that is not an introspection response
    (the resource server's credentials refused, say) is `VerifierUnavailable` (503); the
    endpoint is then not asked again for `backoff` seconds, doubling up to `max_backoff` while
    it keeps failing (tokens not in the cache are 503 meanwhile).

    Args:
        introspection_endpoint: The authorization server's introspection endpoint.
        client_id: The resource server's client id there (HTTP Basic).
        client_secret: Its client secret.
        audience: This resource, which an answer's `aud` must contain; None skips the check.
        issuer: The `iss` an answer must name; None: not checked.
        leeway: Seconds of clock skew allowed on `exp`.
        timeout: Seconds an introspection request may take at most.
        cache_seconds: Seconds an accepted token is cached (never past its `exp`).
        cache_size: The most accepted tokens cached (0: none).
        backoff: Seconds before a failed endpoint is asked again.
        max_backoff: The most that wait doubles up to.
    """

    def __init__(
        self,
        introspection_endpoint: str,
        client_id: str,
        client_secret: str,
        *,
        audience: str | None,
        issuer: str | None = None,
        leeway: float = 30.0,
        timeout: float = 5.0,
        cache_seconds: float = 60.0,
        cache_size: int = 1024,
        backoff: float = 2.0,
        max_backoff: float = 60.0,
    ) -> None:
        self.endpoint = introspection_endpoint
        self.audience = audience
        self.issuer = issuer
        self.leeway = leeway
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self.cache_size = cache_size
        self._credentials = (client_id, client_secret)
        self._cache = _TokenCache(cache_size)
        self._backoff = _Backoff(backoff, max_backoff)

    async def __call__(self, token: str) -> Principal | None:
        key = _token_key(token)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        principal = self._principal(await self._introspect(token))
        if principal is not None:
            self._cache.put(key, principal, time.time() + self.cache_seconds)
        return principal

    async def _introspect(self, token: str) -> dict[str, Any]:
        import httpx  # the http extra

        if self._backoff.waiting():
            raise VerifierUnavailable("token introspection failed recently")
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                response = await http.post(
                    self.endpoint,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=self._credentials,
                    headers={"accept": "application/json"},
                )
            answer = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("token introspection failed: %s", type(exc).__name__)
            self._backoff.failed()
            raise VerifierUnavailable("token introspection failed") from None
        if type(answer) is not dict or type(answer.get("active")) is not bool:
            log.warning("token introspection answered HTTP %s", response.status_code)
            self._backoff.failed()
            raise VerifierUnavailable("token introspection failed")
        self._backoff.succeeded()
        return cast(dict[str, Any], answer)

    def _principal(self, answer: dict[str, Any]) -> Principal | None:
        subject, exp = answer.get("sub"), answer.get("exp")
        audience = answer.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience
        if not isinstance(audiences, list):
            audiences = []
        why = None
        if answer["active"] is not True:
            why = "inactive"
        elif type(subject) is not str or not subject:
            why = "no subject"
        elif self.audience is not None and self.audience not in audiences:
            why = "audience"
        elif self.issuer is not None and answer.get("iss") != self.issuer:
            why = "issuer"
        elif exp is not None and (
            not isinstance(exp, int | float) or exp + self.leeway <= time.time()
        ):
            why = "expired"
        if why is not None:
            log.debug("access token rejected: %s", why)
            return None
        assert isinstance(subject, str)
        expires_at = float(exp) + self.leeway if isinstance(exp, int | float) else None
        return Principal(subject, _scopes(answer), answer, expires_at)
