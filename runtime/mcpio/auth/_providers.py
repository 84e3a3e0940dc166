"""The identity providers an OAuth proxy (`mcpio.auth._proxy`) sends its users to: any OpenID
Connect provider by discovery (`OIDCProvider`), Google (`GoogleProvider`) and GitHub
(`GitHubProvider`), each registered once with a fixed client id and secret whose redirect URI is
the proxy's `/callback`.

A provider knows its endpoints, exchanges the code it sent back (with the proxy's PKCE
verifier) and tells who logged in: an `Identity`, its subject and its claims (`email`, `name`,
`groups` where the provider gives them; GitHub's `login` and `orgs`). Every endpoint can be
overridden (a test's local stub, a GitHub Enterprise host).

ID tokens are read from the token endpoint's answer, which the proxy got directly from the
provider (OpenID Connect Core 3.1.3.7: the TLS connection authenticates the issuer); their
`iss`, `aud`, `exp` and `nonce` are checked, and the user info endpoint, when there is one,
adds its claims for the same subject.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from mcpio._core.errors import AuthError
from mcpio._core.extras import needs

if TYPE_CHECKING:
    import httpx

IDENTITY_CLAIMS = ("email", "email_verified", "name", "preferred_username", "groups", "hd")


@dataclass(frozen=True)
class Identity:
    """Who logged in at the provider.

    Args:
        subject: The provider's stable id for the user (OIDC `sub`, GitHub's numeric id).
        claims: What else the provider tells: `email`, `name`, `groups`, `login`, `orgs`, ...
    """

    subject: str
    claims: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass
class UpstreamProvider:
    """An OAuth 2.0 provider with fixed endpoints (the base of the providers).

    Args:
        client_id: The proxy's client id at the provider.
        client_secret: Its secret (kept out of the repr).
        scopes: The scopes asked for.
        authorization_endpoint: Where the user's browser is sent.
        token_endpoint: Where the code is exchanged.
        revocation_endpoint: RFC 7009 revocation (None: the provider has none).
        issuer: The provider's issuer (RFC 9207: the `iss` its redirects must carry).
        token_auth: "client_secret_post" or "client_secret_basic".
        name: The provider's name on the consent page and in the tokens' `idp` claim.
    """

    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = ()
    authorization_endpoint: str = ""
    token_endpoint: str = ""
    revocation_endpoint: str | None = None
    issuer: str | None = None
    token_auth: str = "client_secret_post"
    name: str = "oauth"
    iss_required: bool = False  # RFC 9207 advertised: a redirect without `iss` is refused

    async def prepare(self, http: httpx.AsyncClient) -> None:
        """Learn the endpoints (discovery); nothing for fixed ones."""

    async def exchange(
        self, http: httpx.AsyncClient, code: str, redirect_uri: str, verifier: str
    ) -> dict[str, Any]:
        """The token endpoint's answer for `code`.

        Args:
            http: The HTTP client to ask with.
            code: The code the provider sent back to the proxy's callback.
            redirect_uri: The proxy's callback URL, as sent with the authorization request.
            verifier: The proxy's PKCE code verifier.

        Raises:
            AuthError: The provider refused the code.
        """
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        answer = await self._post(http, self.token_endpoint, form)
        if type(answer.get("access_token")) is not str:
            raise AuthError(f"{self.name}: the token endpoint gave no access token")
        return answer

    async def identity(
        self, http: httpx.AsyncClient, tokens: dict[str, Any], nonce: str
    ) -> Identity:
        """Who the tokens speak for.

        Args:
            http: The HTTP client to ask with.
            tokens: The token endpoint's answer.
            nonce: The nonce sent with the authorization request (an ID token's must match).

        Raises:
            AuthError: The provider named no user, or the ID token is not valid.
        """
        raise NotImplementedError

    async def revoke(self, http: httpx.AsyncClient, tokens: dict[str, Any]) -> bool:
        """Revoke the upstream tokens where the provider can (RFC 7009); whether it did."""
        if self.revocation_endpoint is None:
            return False
        done = True
        for kind in ("refresh_token", "access_token"):
            token = tokens.get(kind)
            if type(token) is str:
                form, headers = self._authenticated({"token": token, "token_type_hint": kind})
                response = await http.post(self.revocation_endpoint, data=form, headers=headers)
                done = done and response.status_code == 200
        return done

    def _authenticated(self, form: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """The form and headers of a request authenticated as the proxy's client."""
        headers = {"accept": "application/json"}
        if self.token_auth != "client_secret_basic":
            return {
                **form,
                "client_id": self.client_id,
                "client_secret": self.client_secret,
            }, headers
        pair = f"{quote(self.client_id, safe='')}:{quote(self.client_secret, safe='')}"
        headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        return form, headers

    async def _post(
        self, http: httpx.AsyncClient, url: str, form: dict[str, str]
    ) -> dict[str, Any]:
        data, headers = self._authenticated(form)
        response = await http.post(url, data=data, headers=headers)
        answer = _object(response)
        if response.status_code != 200 or "error" in answer:
            error = answer.get("error", f"HTTP {response.status_code}")
            raise AuthError(f"{self.name}: the token endpoint refused the code ({error})")
        return answer

    async def _get(self, http: httpx.AsyncClient, url: str, access_token: str) -> Any:
        response = await http.get(
            url, headers={"authorization": f"Bearer {access_token}", "accept": "application/json"}
        )
        if response.status_code != 200:
            raise AuthError(f"{self.name}: {url} answered HTTP {response.status_code}")
        return response.json()


def _object(response: httpx.Response) -> dict[str, Any]:
    try:
        value = response.json()
    except ValueError:
        return {}
    return cast(dict[str, Any], value) if type(value) is dict else {}


class OIDCProvider(UpstreamProvider):
    """Any OpenID Connect provider (Okta, Entra ID, Keycloak, Auth0, Google, ...).

    Its endpoints are found by discovery at `<issuer>/.well-known/openid-configuration`; the
    user's claims come from the ID token and the user info endpoint.

    Args:
        issuer: The provider's issuer URL.
        client_id: The proxy's client id there.
        client_secret: Its secret.
        scopes: The scopes asked for (`groups` too where the provider has such a scope).
        name: The provider's name on the consent page and in the tokens' `idp` claim.

    Examples:
        >>> OIDCProvider("https://id.example", "mcp-proxy", "s3cret").scopes
        ('openid', 'email', 'profile')
    """

    def __init__(
        self,
        issuer: str,
        client_id: str,
        client_secret: str,
        scopes: tuple[str, ...] | list[str] = ("openid", "email", "profile"),
        *,
        name: str = "oidc",
    ) -> None:
        super().__init__(client_id, client_secret, tuple(scopes), issuer=issuer, name=name)
        self.userinfo_endpoint: str | None = None
        self._discovered = False

    async def prepare(self, http: httpx.AsyncClient) -> None:
        if self._discovered:
            return
        assert self.issuer is not None
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        response = await http.get(url, headers={"accept": "application/json"})
        document = _object(response)
        if response.status_code != 200 or document.get("issuer") != self.issuer:
            raise AuthError(f"{self.name}: no OpenID configuration for {self.issuer} at {url}")
        self.authorization_endpoint = document["authorization_endpoint"]
        self.token_endpoint = document["token_endpoint"]
        self.userinfo_endpoint = document.get("userinfo_endpoint")
        self.revocation_endpoint = document.get("revocation_endpoint")
        self.iss_required = document.get("authorization_response_iss_parameter_supported") is True
        methods = document.get("token_endpoint_auth_methods_supported", ["client_secret_basic"])
        if "client_secret_post" not in methods:
            self.token_auth = "client_secret_basic"
        self._discovered = True

    async def identity(
        self, http: httpx.AsyncClient, tokens: dict[str, Any], nonce: str
    ) -> Identity:
        claims: dict[str, Any] = {}
        id_token = tokens.get("id_token")
        if type(id_token) is str:
            claims = self._id_token_claims(id_token, nonce)
        if self.userinfo_endpoint is not None:
            info = await self._get(http, self.userinfo_endpoint, tokens["access_token"])
            if type(info) is dict:
                info = cast(dict[str, Any], info)
                if "sub" in claims and info.get("sub") != claims["sub"]:
                    raise AuthError(f"{self.name}: the user info is another subject's")
                claims = {**claims, **info}
        subject = claims.get("sub")
        if type(subject) is not str or not subject:
            raise AuthError(f"{self.name}: no subject in the ID token or the user info")
        kept = {k: claims[k] for k in IDENTITY_CLAIMS if k in claims}
        return Identity(subject, kept)

    def _id_token_claims(self, id_token: str, nonce: str) -> dict[str, Any]:
        with needs("auth", "OIDCProvider"):
            import jwt

        try:  # the token endpoint's own answer: its signature is not what vouches (see above)
            claims = jwt.decode(
                id_token,
                options={"verify_signature": False, "verify_exp": True, "verify_aud": True},
                audience=self.client_id,
                issuer=self.issuer,
                leeway=60,
            )
        except jwt.PyJWTError as exc:
            why = type(exc).__name__
            raise AuthError(f"{self.name}: the ID token is not valid ({why})") from None
        if claims.get("nonce") != nonce:
            raise AuthError(f"{self.name}: the ID token's nonce is not the request's")
        if claims.get("exp", 0) + 60 < time.time():
            raise AuthError(f"{self.name}: the ID token has expired")
        return claims


class GoogleProvider(OIDCProvider):
    """Google accounts: OpenID Connect at accounts.google.com (`hd`: the Workspace domain).

    Args:
        client_id: The OAuth client id from Google Cloud's console.
        client_secret: Its secret.
        scopes: The scopes asked for.
        issuer: The issuer (a test's local stub; Google's otherwise).
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: tuple[str, ...] | list[str] = ("openid", "email", "profile"),
        *,
        issuer: str = "https://accounts.google.com",
    ) -> None:
        super().__init__(issuer, client_id, client_secret, scopes, name="google")


class GitHubProvider(UpstreamProvider):
    """GitHub: an OAuth App's (or a GitHub App's) user login.

    The user comes from `GET /user`, the verified primary email from `/user/emails` when the
    profile shows none, and the logins of the user's organizations (`orgs`) from `/user/orgs`
    (with the `read:org` scope).

    Args:
        client_id: The app's client id.
        client_secret: Its secret.
        scopes: The scopes asked for.
        base_url: GitHub's login host (a GitHub Enterprise Server's, or a test's stub).
        api_url: GitHub's API.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        scopes: tuple[str, ...] | list[str] = ("read:user", "user:email", "read:org"),
        *,
        base_url: str = "https://github.com",
        api_url: str = "https://api.github.com",
    ) -> None:
        super().__init__(
            client_id,
            client_secret,
            tuple(scopes),
            authorization_endpoint=f"{base_url}/login/oauth/authorize",
            token_endpoint=f"{base_url}/login/oauth/access_token",
            name="github",
        )
        self.api_url = api_url.rstrip("/")

    async def identity(
        self, http: httpx.AsyncClient, tokens: dict[str, Any], nonce: str
    ) -> Identity:
        token = tokens["access_token"]
        user = await self._get(http, f"{self.api_url}/user", token)
        if type(user) is not dict or not isinstance(user.get("id"), int | str):
            raise AuthError("github: /user named no user")
        user = cast(dict[str, Any], user)
        claims: dict[str, Any] = {"login": user.get("login"), "name": user.get("name")}
        email = user.get("email")
        if email is None and "user:email" in self.scopes:
            emails = await self._get(http, f"{self.api_url}/user/emails", token)
            email = next(
                (e["email"] for e in emails if e.get("primary") and e.get("verified")), None
            )
        if email is not None:
            claims["email"] = email
        if "read:org" in self.scopes:
            orgs = await self._get(http, f"{self.api_url}/user/orgs", token)
            claims["orgs"] = [o["login"] for o in orgs if type(o) is dict and "login" in o]
        return Identity(str(user["id"]), {k: v for k, v in claims.items() if v is not None})

    async def revoke(self, http: httpx.AsyncClient, tokens: dict[str, Any]) -> bool:
        """GitHub's grant revocation (`DELETE /applications/{client_id}/grant`)."""
        response = await http.request(
            "DELETE",
            f"{self.api_url}/applications/{self.client_id}/grant",
            json={"access_token": tokens.get("access_token")},
            auth=(self.client_id, self.client_secret),
            headers={"accept": "application/vnd.github+json"},
        )
        return response.status_code == 204
