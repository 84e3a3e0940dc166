"""The authorization server of the auth tests, built on authlib's framework-agnostic
`AuthorizationServer` with a small Starlette adapter (as authlib's docs describe for frameworks
it has no integration for): authorization code with PKCE (S256 required), client credentials,
RFC 8707 resource indicators (a minimal check: authlib leaves them to the server), JWT access
tokens per RFC 9068 signed RS256 with a key whose JWKS it publishes, RFC 7662 introspection,
RFC 8414 metadata and the RFC 9207 `iss` on its redirects. For the verifier's tests its keys
can be rotated (`rotate`), its JWKS made slow (`jwks_delay`) and its metadata and JWKS
unavailable (`down`); it counts the fetches of both.

The resource owner at /authorize is `Issuer.user`, who approves at once (the browser step a
test's redirect handler drives by following the redirect)."""

from __future__ import annotations

import base64
import contextvars
import hashlib
import hmac
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import jwt
from authlib.oauth2.rfc6749 import (
    AuthorizationServer,
    ClientMixin,
    InvalidRequestError,
    OAuth2Error,
    OAuth2Payload,
    OAuth2Request,
    grants,
)
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator, JWTIntrospectionEndpoint
from authlib.oauth2.rfc9207 import IssuerParameter
from joserfc.jwk import KeySet, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

# The resource (RFC 8707) the token being issued is for: set by the grant that validated the
# token request, read by the token generator, which authlib calls without the request.
RESOURCE: contextvars.ContextVar[str] = contextvars.ContextVar("RESOURCE")
# The key thumbprint a DPoP-bound token is bound to (RFC 9449 `cnf.jkt`), None for bearer ones.
JKT: contextvars.ContextVar[str | None] = contextvars.ContextVar("JKT", default=None)
REDIRECT_URI = "http://127.0.0.1:33418/callback"  # our `OAuth`'s default


class InvalidTargetError(OAuth2Error):
    error = "invalid_target"  # RFC 8707 2.2


@dataclass
class User:
    subject: str

    def get_user_id(self) -> str:
        return self.subject


@dataclass
class Client(ClientMixin):
    client_id: str
    client_secret: str | None  # None: a public client (token endpoint auth "none")
    grant_types: tuple[str, ...]
    scopes: frozenset[str]
    default_scope: str = ""
    redirect_uris: tuple[str, ...] = ()
    token_lifetime: int = 300

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        if scope is None:
            return self.default_scope
        return " ".join(s for s in scope.split() if s in self.scopes)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        secret = self.client_secret
        return secret is not None and hmac.compare_digest(secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.client_secret is None:
            return method == "none"
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code" and "authorization_code" in self.grant_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class AuthorizationCode:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    subject: str
    resource: str
    code_challenge: str
    code_challenge_method: str
    issued_at: float = field(default_factory=time.time)

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


class S256Only(CodeChallenge):
    """PKCE required on every authorization request, S256 only (OAuth 2.1)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE with code_challenge_method=S256 is required")
        super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
    server: Server

    def validate_authorization_request(self) -> str:
        redirect_uri = super().validate_authorization_request()
        resource = self.request.payload.data.get("resource")
        self.server.issuer.check_resource(resource, redirect_uri)  # told on the redirect
        return redirect_uri

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        assert isinstance(request.user, User)
        self.server.issuer.codes[code] = AuthorizationCode(
            code,
            request.client.get_client_id(),
            data["redirect_uri"],
            request.client.get_allowed_scope(data.get("scope")),
            request.user.subject,
            data["resource"],
            data["code_challenge"],
            data["code_challenge_method"],
        )

    def query_authorization_code(self, code: str, client: Client) -> AuthorizationCode | None:
        found = self.server.issuer.codes.get(code)
        if found is None or found.client_id != client.client_id:
            return None
        return found if time.time() - found.issued_at < 60 else None

    def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
        self.server.issuer.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: AuthorizationCode) -> User:
        return User(authorization_code.subject)

    def validate_token_request(self) -> None:
        super().validate_token_request()
        code: AuthorizationCode = self.request.authorization_code
        # RFC 8707: the token request may only narrow to what was authorized.
        if self.request.payload.data.get("resource", code.resource) != code.resource:
            raise InvalidTargetError("the resource was not authorized")
        RESOURCE.set(code.resource)


class MachineGrant(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
    server: Server

    def validate_token_request(self) -> None:
        super().validate_token_request()
        resource = self.request.payload.data.get("resource")
        RESOURCE.set(self.server.issuer.check_resource(resource))


class AccessTokens(JWTBearerTokenGenerator):
    """RFC 9068 access tokens: `aud` is the resource asked for (RFC 8707)."""

    def __init__(self, issuer: Issuer) -> None:
        super().__init__(issuer.url, "RS256", expires_generator=self.lifetime)
        self.owner = issuer  # not `issuer`: authlib's name for the issuer's URL

    @staticmethod
    def lifetime(client: Client, grant_type: str) -> int:
        return client.token_lifetime

    def get_jwks(self) -> KeySet:
        return self.owner.keys

    def get_audiences(self, client: Client, user: User | None, scope: str) -> str:
        return RESOURCE.get()

    def get_extra_claims(
        self, client: Client, grant_type: str, user: User | None, scope: str
    ) -> dict[str, Any]:
        jkt = JKT.get()
        return {"cnf": {"jkt": jkt}} if jkt is not None else {}


class Introspection(JWTIntrospectionEndpoint):
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def __init__(self, issuer: Issuer) -> None:
        super().__init__(issuer.url)
        self.owner = issuer  # not `issuer`: authlib's name for the issuer's URL

    def get_jwks(self) -> KeySet:
        return self.owner.keys

    def check_permission(self, token: Any, client: Client, request: OAuth2Request) -> bool:
        return "introspection" in client.grant_types

    def create_introspection_payload(self, token: Any) -> dict[str, Any]:
        payload: dict[str, Any] = super().create_introspection_payload(token)
        if payload.get("active") and "cnf" in token:  # RFC 9449 6.2: the binding
            payload.update(cnf=token["cnf"], token_type="DPoP")
        return payload


class NotAJwt(IntrospectionEndpoint):
    """Whatever the JWT endpoint passes on (not a JWT, not ours): inactive."""

    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

    def query_token(self, token_string: str, token_type_hint: str | None) -> None:
        return None

    def check_permission(self, token: Any, client: Client, request: OAuth2Request) -> bool:
        return True


class Payload(OAuth2Payload):
    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in items:
            self._datalist[key].append(value)

    @property
    def data(self) -> dict[str, str]:
        return {key: values[0] for key, values in self._datalist.items()}

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class FormRequest(OAuth2Request):
    """A Starlette request, its form already read (authlib's processing is synchronous)."""

    def __init__(self, request: Request, form: list[tuple[str, str]]) -> None:
        super().__init__(request.method, str(request.url), headers=request.headers)
        self._args = dict(request.query_params)
        self._form = dict(form)
        self.payload = Payload([*request.query_params.multi_items(), *form])

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


@dataclass
class Reply:
    """What authlib answers (`handle_response`); `location` is what RFC 9207's extension
    edits on a redirect."""

    status: int
    body: Any
    headers: list[tuple[str, str]]

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)

    @location.setter
    def location(self, value: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != "location"]
        self.headers.append(("Location", value))

    def response(self) -> Response:
        headers = dict(self.headers)
        if isinstance(self.body, dict):
            return JSONResponse(self.body, self.status, headers)
        return Response(self.body or b"", self.status, headers)


class Server(AuthorizationServer):
    def __init__(self, issuer: Issuer) -> None:
        super().__init__(scopes_supported=issuer.scopes)
        self.issuer = issuer

    def query_client(self, client_id: str) -> Client | None:
        return self.issuer.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        user = request.user
        subject = user.subject if isinstance(user, User) else request.client.get_client_id()
        self.issuer.issued.append((request.payload.grant_type, subject))

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        assert isinstance(request, OAuth2Request)  # the routes build it (see `Issuer._call`)
        return request

    def handle_response(self, status: int, body: Any, headers: Any) -> Reply:
        return Reply(status, body, list(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass


class IssuerName(IssuerParameter):
    def __init__(self, url: str) -> None:
        self.url = url

    def get_issuer(self) -> str:
        return self.url


class Issuer:
    """An authorization server at `url` for the resources in `resources`."""

    READ, WRITE = "mcp:read", "mcp:write"

    def __init__(self, port: int, resources: Iterable[str], user: str = "alice") -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.resources = frozenset(resources)
        self.user = user  # who is signed in at /authorize, and approves
        self.scopes = [self.READ, self.WRITE, "mcp:prompts"]
        self.rotate("k1")
        self.jwks_fetches = 0
        self.metadata_fetches = 0
        self.jwks_delay = 0.0  # seconds the JWKS endpoint takes to answer
        self.jwks_asked = anyio.Event()  # set by every JWKS request, as it arrives
        self.down = False  # metadata and JWKS answer 503
        self.dpop = False  # advertises DPoP and binds tokens to a token request's proof key
        self.introspections = 0
        everything = frozenset(self.scopes)
        code, machine = ("authorization_code",), ("client_credentials",)
        self.clients = {
            "app": Client("app", None, code, everything, self.READ, (REDIRECT_URI,)),
            "machine": Client("machine", "s3cret", machine, everything, self.READ),
            # a machine whose tokens live two seconds
            "brief": Client("brief", "s3cret", machine, everything, self.READ, token_lifetime=2),
            # the resource server's own credentials, for introspection
            "resource-server": Client(
                "resource-server", "rs-s3cret", ("introspection",), everything
            ),
        }
        self.codes: dict[str, AuthorizationCode] = {}
        self.issued: list[tuple[str, str]] = []  # (grant, subject) of every token issued
        self.server = Server(self)
        self.server.register_grant(CodeGrant, [S256Only(required=True)])
        self.server.register_grant(MachineGrant)
        self.server.register_extension(IssuerName(self.url))
        self.generator = AccessTokens(self)
        self.server.register_token_generator("default", self.generator)
        self.server.register_endpoint(Introspection(self))
        self.server.register_endpoint(NotAJwt)
        AuthorizationServerMetadata(self.metadata()).validate()

    def rotate(self, kid: str) -> None:
        """Sign with a new key `kid` from now on, and publish only it: the old one is
        withdrawn."""
        self.key = RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"})
        self.keys = KeySet([self.key])
        self.jwks = self.keys.as_dict(private=False)

    def check_resource(self, resource: str | None, redirect_uri: str | None = None) -> str:
        if resource not in self.resources:
            raise InvalidTargetError(f"unknown resource {resource!r}", redirect_uri=redirect_uri)
        return resource

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "introspection_endpoint": f"{self.url}/introspect",
            "jwks_uri": f"{self.url}/jwks",
            "scopes_supported": self.scopes,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "client_credentials"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "none",
            ],
            "introspection_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
            ],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            **({"dpop_signing_alg_values_supported": ["ES256"]} if self.dpop else {}),
        }

    def token(
        self, subject: str = "alice", scope: str = READ, client: str = "app", jkt: str | None = None
    ) -> str:
        """An access token for `subject` from the issuer's own generator, as its token
        endpoint issues them, for the first resource (tests that need many subjects); bound to
        the DPoP key `jkt` when given."""

        def generate() -> str:
            RESOURCE.set(min(self.resources))
            JKT.set(jkt)
            issued = self.generator(
                grant_type="authorization_code",
                client=self.clients[client],
                user=User(subject),
                scope=scope,
            )
            return str(issued["access_token"])

        return contextvars.copy_context().run(generate)

    def app(self) -> Starlette:
        server = self.server

        async def metadata(request: Request) -> JSONResponse:
            self.metadata_fetches += 1
            if self.down:
                return JSONResponse({"error": "unavailable"}, 503)
            return JSONResponse(self.metadata())

        async def jwks(request: Request) -> JSONResponse:
            self.jwks_fetches += 1
            self.jwks_asked.set()
            await anyio.sleep(self.jwks_delay)
            if self.down:
                return JSONResponse({"error": "unavailable"}, 503)
            return JSONResponse(self.jwks)

        async def authorize(request: Request) -> Response:
            def approve(oauth: OAuth2Request) -> object:
                user = User(self.user)
                try:
                    grant = server.get_consent_grant(oauth, end_user=user)
                except OAuth2Error as error:
                    return server.handle_error_response(oauth, error)
                return server.create_authorization_response(oauth, user, grant)

            return await self._call(request, approve)

        async def token(request: Request) -> Response:
            proof = request.headers.get("dpop") if self.dpop else None
            if proof is None:
                return await self._call(request, server.create_token_response)
            jkt = proof_key(proof, f"{self.url}/token")
            if jkt is None:
                return JSONResponse({"error": "invalid_dpop_proof"}, 400)
            response = await self._call(request, server.create_token_response, jkt)
            body = json.loads(bytes(response.body))
            if response.status_code == 200:
                body["token_type"] = "DPoP"
            return JSONResponse(body, response.status_code)

        async def introspect(request: Request) -> Response:
            self.introspections += 1
            return await self._call(
                request, lambda oauth: server.create_endpoint_response("introspection", oauth)
            )

        return Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", metadata),
                Route("/jwks", jwks),
                Route("/authorize", authorize),
                Route("/token", token, methods=["POST"]),
                Route("/introspect", introspect, methods=["POST"]),
            ]
        )

    @staticmethod
    async def _call(
        request: Request, handle: Callable[[OAuth2Request], object], jkt: str | None = None
    ) -> Response:
        form: list[tuple[str, str]] = []
        if request.method == "POST":
            form = [(k, v) for k, v in (await request.form()).multi_items() if isinstance(v, str)]

        def bound() -> object:
            JKT.set(jkt)
            return handle(FormRequest(request, form))

        # A context of its own: what a grant sets (RESOURCE, JKT) ends with the request.
        reply = contextvars.copy_context().run(bound)
        assert isinstance(reply, Reply)
        return reply.response()


def proof_key(proof: str, url: str) -> str | None:
    """The thumbprint of the key of a DPoP proof for a POST to `url` (checked with PyJWT,
    RFC 9449 4.3, the nonce and replay rules left out), or None if it is not one."""
    try:
        header = jwt.get_unverified_header(proof)
        jwk = header["jwk"]
        claims = jwt.decode(proof, jwt.PyJWK(jwk, header["alg"]), algorithms=["ES256"])
    except (jwt.PyJWTError, KeyError, TypeError):
        return None
    if header.get("typ") != "dpop+jwt" or claims.get("htm") != "POST" or claims.get("htu") != url:
        return None
    if abs(time.time() - claims.get("iat", 0)) > 60:
        return None
    members = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    digest = hashlib.sha256(members.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
