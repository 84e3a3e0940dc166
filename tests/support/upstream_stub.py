"""A local stand-in for GitHub and Google as the OAuth proxy's upstream provider: a Starlette app
on 127.0.0.1 answering with the recorded answers of tests/auth/fixtures/oauth_proxy (discovery,
token, user info, GitHub's /user, /user/emails and /user/orgs).

Its /authorize logs the user in at once and redirects back with a code; its token endpoint
checks the proxy's client credentials, the code (once), the redirect URI and the PKCE verifier,
as the real providers do. It records the requests it saw and the revocations it got."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jwt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

FIXTURES = Path(__file__).parent.parent / "auth" / "fixtures" / "oauth_proxy"
CLIENT_ID = "proxy-client-id"
CLIENT_SECRET = "proxy-client-secret-9f8e7d"


def fixture(name: str, **values: Any) -> Any:
    """A recorded answer with its `{placeholders}` filled in."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f'"{{{key}}}"', json.dumps(value)).replace(f"{{{key}}}", str(value))
    return json.loads(text)


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class Upstream:
    """The stub's state: `kind` is "github" or "google"; `url` is set once it is served."""

    kind: str
    url: str = ""
    codes: dict[str, dict[str, str]] = field(default_factory=dict[str, dict[str, str]])
    seen: list[str] = field(default_factory=list[str])
    revoked: list[str] = field(default_factory=list[str])
    send_iss: str | None = None  # an `iss` its redirects carry (a mix-up test's forgery)

    def app(self) -> Starlette:
        google = [
            Route("/.well-known/openid-configuration", self.discovery),
            Route("/o/oauth2/v2/auth", self.authorize),
            Route("/token", self.token, methods=["POST"]),
            Route("/v1/userinfo", self.userinfo),
            Route("/revoke", self.revoke, methods=["POST"]),
        ]
        github = [
            Route("/login/oauth/authorize", self.authorize),
            Route("/login/oauth/access_token", self.token, methods=["POST"]),
            Route("/user", self.api("github_user.json")),
            Route("/user/emails", self.api("github_emails.json")),
            Route("/user/orgs", self.api("github_orgs.json")),
            Route(f"/applications/{CLIENT_ID}/grant", self.revoke, methods=["DELETE"]),
        ]
        return Starlette(routes=google if self.kind == "google" else github)

    async def discovery(self, request: Request) -> Response:
        self.seen.append("discovery")
        return JSONResponse(fixture("google_openid_configuration.json", issuer=self.url))

    async def authorize(self, request: Request) -> Response:
        params = request.query_params
        self.seen.append("authorize")
        if params.get("client_id") != CLIENT_ID or params.get("code_challenge_method") != "S256":
            return Response("bad request", 400)
        code = secrets.token_urlsafe(16)
        self.codes[code] = dict(params)
        back = {"code": code, "state": params["state"]}
        if self.send_iss is not None:
            back["iss"] = self.send_iss
        return RedirectResponse(f"{params['redirect_uri']}?{urlencode(back)}", 302)

    def _client_ok(self, request: Request, form: dict[str, Any]) -> bool:
        basic = request.headers.get("authorization", "")
        if basic.startswith("Basic "):
            pair = base64.b64decode(basic[6:]).decode()
            return pair == f"{CLIENT_ID}:{CLIENT_SECRET}"
        return (form.get("client_id"), form.get("client_secret")) == (CLIENT_ID, CLIENT_SECRET)

    async def token(self, request: Request) -> Response:
        form = dict(await request.form())
        self.seen.append("token")
        asked = self.codes.pop(str(form.get("code")), None)
        if not self._client_ok(request, form):
            return JSONResponse({"error": "invalid_client"}, 401)
        if (
            asked is None
            or asked["redirect_uri"] != form.get("redirect_uri")
            or _s256(str(form.get("code_verifier"))) != asked["code_challenge"]
        ):
            return JSONResponse({"error": "invalid_grant"}, 400)
        if self.kind == "github":
            return JSONResponse(fixture("github_token.json"))
        now = int(time.time())
        claims = fixture(
            "google_id_token_claims.json",
            issuer=self.url,
            client_id=CLIENT_ID,
            nonce=asked.get("nonce", ""),
            iat=now,
            exp=now + 3600,
        )
        id_token = jwt.encode(claims, "stub-signing-key-of-32-bytes-or-more!", algorithm="HS256")
        return JSONResponse(fixture("google_token.json", id_token=id_token))

    def _bearer_ok(self, request: Request) -> bool:
        answer = fixture(
            "github_token.json" if self.kind == "github" else "google_token.json", id_token=""
        )
        return request.headers.get("authorization") == f"Bearer {answer['access_token']}"

    async def userinfo(self, request: Request) -> Response:
        self.seen.append("userinfo")
        if not self._bearer_ok(request):
            return JSONResponse({"error": "invalid_token"}, 401)
        return JSONResponse(fixture("google_userinfo.json"))

    def api(self, name: str) -> Any:
        async def answer(request: Request) -> Response:
            self.seen.append(request.url.path)
            if not self._bearer_ok(request):
                return JSONResponse({"message": "Bad credentials"}, 401)
            return JSONResponse(fixture(name))

        return answer

    async def revoke(self, request: Request) -> Response:
        body = await request.body()
        self.revoked.append(body.decode())
        return Response(status_code=204 if self.kind == "github" else 200)
