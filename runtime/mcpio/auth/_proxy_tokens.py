"""The OAuth proxy's own tokens: its token endpoint (`authorization_code` with PKCE,
`refresh_token` with rotation), its revocation endpoint (RFC 7009), and the check its resource
server side makes of an access token.

Tokens are opaque handles (`mcp_at_...`, `mcp_rt_...`, 256 random bits), stored under their
SHA-256 only, each with the grant it carries: the client, the scope, the resource (RFC 8707:
the audience, checked on every request) and the upstream identity's claims. A code is used
once; one that comes back revokes the tokens it gave (RFC 6749 4.1.2). A refresh token is
used once: the answer carries a new one and the old access token is revoked with it; a used
one that comes back (stolen, RFC 9700 4.14.2) revokes the tokens its rotations led to. The
upstream provider's tokens stay in the refresh token's record (for revocation) and never reach
the MCP client.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import time
from typing import Any

from mcpio._core.principal import Principal
from mcpio._core.routes import HttpRequest, HttpResponse
from mcpio.auth._pkce import s256
from mcpio.auth._proxy_clients import Clients
from mcpio.auth._proxy_settings import ProxySettings, digest, form, json_answer, oauth_error

log = logging.getLogger("mcpio.auth")
_VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")  # RFC 7636 4.1


class ProxyTokens:
    """What the proxy issued, and its token and revocation endpoints."""

    def __init__(self, settings: ProxySettings, clients: Clients) -> None:
        self.settings = settings
        self.clients = clients

    async def principal(self, token: str) -> Principal | None:
        """Whom one of the proxy's access tokens speaks for; None if it is not one, or not for
        this resource (another audience), or revoked or expired."""
        if not token.startswith("mcp_at_"):
            return None
        record = await self.settings.store.get(f"at:{digest(token)}")
        claims = record["claims"] if record is not None else {}
        if claims.get("aud") != self.settings.resource or claims["exp"] <= time.time():
            return None
        scopes = frozenset(claims.get("scope", "").split())
        return Principal(claims["sub"], scopes, claims, float(claims["exp"]))

    async def token_endpoint(self, request: HttpRequest) -> HttpResponse:
        """RFC 6749 3.2: the `authorization_code` and `refresh_token` grants."""
        fields = form(request.body)
        client = await self.clients.authenticate(request, fields)
        if isinstance(client, HttpResponse):
            return client
        grant_type = fields.get("grant_type")
        if grant_type not in client.get("grant_types", ()):
            return oauth_error(400, "unauthorized_client", f"no {grant_type} for this client")
        if grant_type == "authorization_code":
            return await self._code(client, fields)
        if grant_type == "refresh_token":
            return await self._refresh(client, fields)
        return oauth_error(400, "unsupported_grant_type", "authorization_code or refresh_token")

    async def _code(self, client: dict[str, Any], fields: dict[str, str]) -> HttpResponse:
        code = fields.get("code", "")
        store = self.settings.store
        grant = await store.take(f"code:{digest(code)}") if code else None
        verifier = fields.get("code_verifier", "")
        why = None
        if grant is None:
            why = "the code is unknown, used or expired"
            used = await store.take(f"usedcode:{digest(code)}") if code else None
            if used is not None:  # RFC 6749 4.1.2: the tokens it gave end too
                log.warning("an authorization code was used again: its tokens are revoked")
                await self._revoke_family(used["family"])
        elif grant["client_id"] != client["client_id"]:
            why = "the code was issued to another client"
        elif grant["redirect_uri"] != fields.get("redirect_uri") and (
            "redirect_uri" in fields or grant.get("redirect_uri_given", True)
        ):
            why = "the redirect_uri is not the authorization request's"
        elif not _VERIFIER.fullmatch(verifier) or not hmac.compare_digest(
            s256(verifier), grant["code_challenge"]
        ):
            why = "the code_verifier does not match the code_challenge"  # code injection
        elif fields.get("resource", grant["resource"]) != grant["resource"]:
            return oauth_error(400, "invalid_target", "the resource is not the code's")
        if why is not None or grant is None:
            log.info("token request refused: %s", why)
            return oauth_error(400, "invalid_grant", why or "")
        family = secrets.token_urlsafe(16)  # the rotations of this login
        # kept while the tokens it gives may live: a replay ends them (RFC 6749 4.1.2)
        used_for = self.settings.refresh_token_seconds
        await store.put(f"usedcode:{digest(code)}", {"family": family}, used_for)
        return json_answer(await self.issue({**grant, "family": family}))

    async def _refresh(self, client: dict[str, Any], fields: dict[str, str]) -> HttpResponse:
        token = fields.get("refresh_token", "")
        key = f"rt:{digest(token)}"
        store = self.settings.store
        grant = await store.take(key) if token.startswith("mcp_rt_") else None
        if grant is None or grant["client_id"] != client["client_id"]:
            if grant is not None:  # another client's: it stays that client's
                await store.put(key, grant, self._left(grant))
            elif token.startswith("mcp_rt_"):
                await self._reused(token)
            return oauth_error(400, "invalid_grant", "the refresh token is unknown or used")
        asked = fields.get("scope")
        if asked is not None and not set(asked.split()) <= set(grant["scope"].split()):
            await store.put(key, grant, self._left(grant))
            return oauth_error(400, "invalid_scope", "more scope than was granted")
        await store.delete(grant["at"])  # rotation: the old pair goes together
        await store.put(f"used:{digest(token)}", {"family": grant["family"]}, self._left(grant))
        if asked is not None:
            grant = {**grant, "scope": asked}
        return json_answer(await self.issue(grant, refresh_until=grant["refresh_until"]))

    async def _reused(self, token: str) -> None:
        """A refresh token used before came back (RFC 9700 4.14.2): stolen, or its client's
        copy was; the grant's current tokens end, and its user logs in again."""
        used = await self.settings.store.take(f"used:{digest(token)}")
        if used is not None:
            log.warning("a rotated refresh token was used again: its grant is revoked")
            await self._revoke_family(used["family"])

    async def _revoke_family(self, family_id: str) -> None:
        """End the current tokens of one login (whatever rotations led to them)."""
        family = await self.settings.store.take(f"family:{family_id}")
        if family is not None:
            await self.settings.store.delete(family["at"])
            await self.settings.store.delete(family["rt"])

    @staticmethod
    def _left(grant: dict[str, Any]) -> float:
        return max(1.0, grant["refresh_until"] - time.time())

    async def issue(
        self, grant: dict[str, Any], refresh_until: float | None = None
    ) -> dict[str, Any]:
        """A new access and refresh token for `grant`, stored; the token answer."""
        settings = self.settings
        now = time.time()
        access, refresh = "mcp_at_" + secrets.token_urlsafe(32), "mcp_rt_" + secrets.token_urlsafe(
            32
        )
        if refresh_until is None:
            refresh_until = now + settings.refresh_token_seconds
        at_key, rt_key = f"at:{digest(access)}", f"rt:{digest(refresh)}"
        claims = {
            **grant["claims"],
            "iss": settings.issuer,
            "sub": grant["sub"],
            "aud": grant["resource"],
            "client_id": grant["client_id"],
            "scope": grant["scope"],
            "idp": settings.provider.name,
            "iat": int(now),
            "exp": now + settings.access_token_seconds,
        }
        kept = {
            k: grant[k] for k in ("client_id", "sub", "claims", "scope", "resource", "upstream")
        }
        family = grant.get("family") or secrets.token_urlsafe(16)  # the rotations of one login
        refresh_record = {**kept, "at": at_key, "refresh_until": refresh_until, "family": family}
        access_record = {"claims": claims, "rt": rt_key}
        left = max(1.0, refresh_until - now)
        await settings.store.put(at_key, access_record, settings.access_token_seconds)
        await settings.store.put(rt_key, refresh_record, left)
        await settings.store.put(f"family:{family}", {"at": at_key, "rt": rt_key}, left)
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(settings.access_token_seconds),
            "refresh_token": refresh,
        }
        if grant["scope"]:
            answer["scope"] = grant["scope"]
        return answer

    async def revoke_endpoint(self, request: HttpRequest) -> HttpResponse:
        """RFC 7009: the token (access or refresh) and the other of its pair end, and the
        upstream provider's tokens where it can revoke them; 200 whatever the token was."""
        fields = form(request.body)
        client = await self.clients.authenticate(request, fields)
        if isinstance(client, HttpResponse):
            return client
        token = fields.get("token", "")
        store = self.settings.store
        refresh = None
        if token.startswith("mcp_at_"):
            access = await store.get(f"at:{digest(token)}")
            if access is not None and access["claims"]["client_id"] == client["client_id"]:
                await store.delete(f"at:{digest(token)}")
                refresh = await store.take(access["rt"])
        elif token.startswith("mcp_rt_"):
            refresh = await store.get(f"rt:{digest(token)}")
            if refresh is not None and refresh["client_id"] == client["client_id"]:
                await store.delete(f"rt:{digest(token)}")
                await store.delete(refresh["at"])
            else:
                refresh = None
        if refresh is not None and refresh.get("upstream"):
            await self._revoke_upstream(refresh["upstream"])
        return json_answer({})

    async def _revoke_upstream(self, upstream: dict[str, Any]) -> None:
        provider = self.settings.provider
        try:
            async with self.settings.http() as http:
                await provider.revoke(http, upstream)
        except Exception as exc:  # the proxy's tokens are revoked whatever the provider says
            log.warning("revoking at %s failed: %s", provider.name, type(exc).__name__)
