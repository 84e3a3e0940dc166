"""Authorization for Streamable HTTP: the server as an OAuth 2.1 resource server.

Opt-in on the ASGI app:

    auth = ResourceServerAuth(
        verifier=JwtVerifier(issuer="https://auth.example", audience="https://mcp.example/mcp"),
        resource="https://mcp.example/mcp",
        authorization_servers=["https://auth.example"],
        scopes_supported=["mcp:read", "mcp:write"],
        required_scopes={"*": ["mcp:read"], "tools/call:deploy": ["mcp:write"]},
    )
    app = server.http_app(auth=auth)

Every POST, GET and DELETE of the MCP endpoint needs `Authorization: Bearer <token>`: a missing
or invalid token is answered 401, a valid one without the scopes the request needs 403, both with
the `WWW-Authenticate` challenge of RFC 6750 / RFC 9728 pointing at the protected-resource
metadata, served at `/.well-known/oauth-protected-resource` (and the path-suffixed form).

The verifier is any `async (token) -> Principal | None`; `JwtVerifier` checks JWT access tokens
(signature from the issuer's JWKS, issuer, audience = this resource per RFC 8707, expiry) with
PyJWT (`pip install 'mcpgen[auth]'`); `IntrospectionVerifier` asks the authorization server
(RFC 7662 token introspection, with httpx). Tokens are never logged.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from mcpio.wire.peek import NAMED_BY

if TYPE_CHECKING:
    import jwt

log = logging.getLogger("mcpio.auth")

METADATA_PATH = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class Principal:
    """Who a valid access token speaks for: its subject, its granted scopes, all its claims,
    and when the verifier stops accepting the token (seconds since the epoch; None: unknown).
    Long-lived streams opened with the token (a legacy GET stream, a `subscriptions/listen`)
    end then."""

    subject: str
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict[str, Any])
    expires_at: float | None = None


TokenVerifier = Callable[[str], Awaitable[Principal | None]]
"""`async (token) -> Principal | None`: None (or raising `InvalidToken`) rejects the token."""


class InvalidToken(Exception):
    """A verifier may raise this instead of returning None."""


class VerifierUnavailable(Exception):
    """The verifier could not decide (the issuer's keys unreachable): 503, not 401."""


@dataclass
class ResourceServerAuth:
    """What the HTTP app needs to act as a resource server; see the module's docstring.

    `required_scopes` maps `"*"` (every request, GET and DELETE included), a method name
    (`"tools/list"`), or a method and the name it acts on (`"tools/call:deploy"`,
    `"prompts/get:greet"`, `"resources/read:demo://x"`) to the scopes it needs; a request needs
    the union of every entry that matches it."""

    verifier: TokenVerifier
    resource: str
    authorization_servers: Sequence[str]
    scopes_supported: Sequence[str] = ()
    required_scopes: Mapping[str, Collection[str]] = field(default_factory=dict[str, Any])
    resource_name: str | None = None

    @property
    def metadata_url(self) -> str:
        """RFC 9728: the well-known path inserted between the resource's host and path."""
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"

    @property
    def metadata_paths(self) -> frozenset[str]:
        path = urlsplit(self.resource).path.rstrip("/")
        return frozenset({METADATA_PATH, METADATA_PATH + path})

    def metadata(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name:
            document["resource_name"] = self.resource_name
        return document

    def needed(self, messages: Iterable[Any] = ()) -> frozenset[str]:
        """The scopes a request carrying these JSON-RPC messages needs."""
        needed = set(self.required_scopes.get("*", ()))
        for message in messages:
            method = message.get("method") if type(message) is dict else None
            if type(method) is not str:
                continue
            needed.update(self.required_scopes.get(method, ()))
            key = NAMED_BY.get(method)
            params = message.get("params")
            name = params.get(key) if key is not None and type(params) is dict else None
            if type(name) is str:
                needed.update(self.required_scopes.get(f"{method}:{name}", ()))
        return frozenset(needed)

    def challenge(self, error: str | None = None, scopes: Collection[str] | None = None) -> str:
        """A `WWW-Authenticate` value: the metadata URL, the scopes to ask for, and the error
        (`invalid_token`, `insufficient_scope`) when there is one."""
        if scopes is None:
            scopes = self.needed() or frozenset(self.scopes_supported)
        parts = [f'resource_metadata="{self.metadata_url}"']
        if scopes:
            parts.append(f'scope="{" ".join(sorted(scopes))}"')
        if error is not None:
            parts.insert(0, f'error="{error}"')
        return "Bearer " + ", ".join(parts)

    async def authenticate(self, authorization: str | None) -> Principal | None:
        """The principal of an `Authorization` header's bearer token; None if there is none or
        it is invalid (`VerifierUnavailable` when that cannot be decided)."""
        token = bearer_token(authorization)
        if token is None:
            return None
        try:
            return await self.verifier(token)
        except InvalidToken:
            return None
        except VerifierUnavailable:
            raise
        except Exception as exc:  # the message could quote the token: the type only
            log.error("the token verifier raised %s", type(exc).__name__)
            raise VerifierUnavailable(type(exc).__name__) from None


def bearer_token(authorization: str | None) -> str | None:
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class JwtVerifier:
    """Verifies JWT access tokens (RFC 9068) with PyJWT: the signature with a key of the
    issuer's JWKS (fetched over HTTP, cached, `timeout` seconds per fetch), one of `algorithms`
    (asymmetric only), `iss` = `issuer`, `aud` containing `audience` (this resource, RFC 8707),
    `exp` in the future (`leeway` seconds of clock skew), and a `sub`. Scopes come from the
    `scope` claim (space-separated) or `scp` (a list).

    `jwks_uri` defaults to the issuer's metadata's (RFC 8414
    `/.well-known/oauth-authorization-server`, else OpenID discovery), looked up once."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_uri: str | None = None,
        algorithms: Sequence[str] = ("RS256", "ES256", "PS256", "EdDSA"),
        leeway: float = 30.0,
        timeout: float = 5.0,
        cache_seconds: float = 300.0,
    ) -> None:
        import jwt  # the `auth` extra

        weak = [a for a in algorithms if a == "none" or a.upper().startswith("HS")]
        if weak or not algorithms:
            raise ValueError(f"JwtVerifier takes asymmetric algorithms only, not {weak}")
        self.issuer = issuer
        self.audience = audience
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self.timeout = timeout
        self._jwks_uri = jwks_uri
        self._cache_seconds = cache_seconds
        self._client: jwt.PyJWKClient | None = None
        self._jwt = jwt

    async def __call__(self, token: str) -> Principal | None:
        import anyio.to_thread

        jwt = self._jwt
        client = await self._jwks()
        try:
            # PyJWKClient fetches with urllib (blocking): in a worker thread.
            key = await anyio.to_thread.run_sync(client.get_signing_key_from_jwt, token)
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=self.algorithms,
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWKClientConnectionError as exc:
            log.warning("the issuer's keys are unreachable (%s)", exc)
            raise VerifierUnavailable("the issuer's keys are unreachable") from None
        except jwt.PyJWTError as exc:
            log.debug("access token rejected: %s", type(exc).__name__)
            return None
        scope = claims.get("scope")
        scopes = scope.split() if isinstance(scope, str) else claims.get("scp") or []
        expires_at = float(claims["exp"]) + self.leeway  # as long as decode would accept it
        return Principal(str(claims["sub"]), frozenset(str(s) for s in scopes), claims, expires_at)

    async def _jwks(self) -> jwt.PyJWKClient:
        if self._client is None:
            uri = self._jwks_uri or await self._discover()
            self._client = self._jwt.PyJWKClient(
                uri, cache_keys=True, lifespan=self._cache_seconds, timeout=self.timeout
            )
        return self._client

    async def _discover(self) -> str:
        import httpx

        parts = urlsplit(self.issuer)
        base = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        candidates = [
            f"{base}/.well-known/oauth-authorization-server{path}",
            f"{base}/.well-known/openid-configuration{path}",
            f"{self.issuer.rstrip('/')}/.well-known/openid-configuration",
        ]
        async with httpx.AsyncClient(timeout=self.timeout) as http:
            for url in candidates:
                try:
                    response = await http.get(url)
                    document = response.json() if response.status_code == 200 else {}
                except (httpx.HTTPError, ValueError):
                    continue
                if document.get("issuer") == self.issuer and document.get("jwks_uri"):
                    return str(document["jwks_uri"])
        log.warning("no authorization-server metadata with a jwks_uri for %s", self.issuer)
        raise VerifierUnavailable("the issuer's metadata is unreachable")


class IntrospectionVerifier:
    """Verifies access tokens of any format by RFC 7662 introspection: the token is POSTed to
    the authorization server's `introspection_endpoint`, the resource server authenticating as
    `client_id` / `client_secret` (HTTP Basic). A token is accepted when the answer says
    `active`, names a `sub`, has `audience` in its `aud` (this resource, RFC 8707; None skips
    the check, for servers whose answers carry no `aud`), `issuer` as its `iss` when given, and
    an `exp` (if any) in the future (`leeway` seconds of clock skew). Scopes come from `scope`.

    Accepted tokens are cached `cache_seconds` (never past their `exp`), at most `cache_size`
    of them, keyed by their SHA-256: a revoked token may be accepted that long. Rejections are
    not cached. An unreachable endpoint or an answer that is not an introspection response
    (the resource server's credentials refused, say) is `VerifierUnavailable` (503)."""

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
    ) -> None:
        self.endpoint = introspection_endpoint
        self.audience = audience
        self.issuer = issuer
        self.leeway = leeway
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self.cache_size = cache_size
        self._credentials = (client_id, client_secret)
        self._cache: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()

    async def __call__(self, token: str) -> Principal | None:
        key = hashlib.sha256(token.encode()).digest()
        cached = self._cache.get(key)
        if cached is not None and cached[1] > time.time():
            self._cache.move_to_end(key)
            return cached[0]
        self._cache.pop(key, None)
        principal = self._principal(await self._introspect(token))
        if principal is not None and self.cache_size > 0:
            until = time.time() + self.cache_seconds
            if principal.expires_at is not None:
                until = min(until, principal.expires_at)
            self._cache[key] = (principal, until)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return principal

    async def _introspect(self, token: str) -> dict[str, Any]:
        import httpx  # the http extra

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
            raise VerifierUnavailable("token introspection failed") from None
        if type(answer) is not dict or type(answer.get("active")) is not bool:
            log.warning("token introspection answered HTTP %s", response.status_code)
            raise VerifierUnavailable("token introspection failed")
        return cast(dict[str, Any], answer)

    def _principal(self, answer: dict[str, Any]) -> Principal | None:
        subject, exp, scope = answer.get("sub"), answer.get("exp"), answer.get("scope")
        audience = answer.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience or []
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
        scopes = scope.split() if isinstance(scope, str) else []
        expires_at = float(exp) + self.leeway if isinstance(exp, int | float) else None
        return Principal(subject, frozenset(scopes), answer, expires_at)
