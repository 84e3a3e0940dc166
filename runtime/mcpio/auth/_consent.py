"""The OAuth proxy's consent page: before a client this browser has not approved gets a token,
the user is shown which client asks, for which redirect URI, and approves or denies.

The form carries the pending authorization's id and a CSRF token that must equal the value of a
`SameSite=Strict` cookie set with the page: another site cannot approve on the user's behalf.
Each pending authorization has a cookie of its own name (`csrf_cookie`), so consent pages open
in two tabs can each be answered.
Approved clients are remembered in a cookie signed with the proxy's secret (HMAC-SHA256), for
`APPROVAL_SECONDS`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
from collections.abc import Mapping
from typing import Any, cast

from mcpio._core.routes import HttpResponse
from mcpio.auth._proxy_settings import page

CSRF_COOKIE = "mcpio_oauth_csrf"  # the prefix of each pending authorization's
APPROVED_COOKIE = "mcpio_oauth_approved"
APPROVAL_SECONDS = 365 * 86400
MOST_APPROVED = 20


def cookies_of(headers: Mapping[str, str]) -> dict[str, str]:
    """The request's cookies by name."""
    found: dict[str, str] = {}
    for part in headers.get("cookie", "").split(";"):
        name, eq, value = part.strip().partition("=")
        if eq:
            found.setdefault(name, value)
    return found


def cookie(name: str, value: str, *, secure: bool, same_site: str, max_age: int) -> str:
    """A `Set-Cookie` value: HttpOnly, for the whole host."""
    flags = "; Secure" if secure else ""
    return f"{name}={value}; Path=/; HttpOnly; SameSite={same_site}; Max-Age={max_age}{flags}"


def csrf_cookie(txn: str) -> str:
    """The name of the CSRF cookie of the pending authorization `txn`."""
    return f"{CSRF_COOKIE}_{hashlib.sha256(txn.encode()).hexdigest()[:16]}"


def _sign(secret: bytes, payload: bytes) -> str:
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()


def approved(secret: bytes, headers: Mapping[str, str]) -> list[str]:
    """The clients this browser approved (its signed cookie; empty if it is missing or forged)."""
    value = cookies_of(headers).get(APPROVED_COOKIE, "")
    payload, _, signature = value.partition(".")
    try:
        raw = base64.urlsafe_b64decode(payload.encode() + b"==")
    except ValueError:
        return []
    if not signature or not hmac.compare_digest(_sign(secret, raw), signature):
        return []
    try:
        clients = json.loads(raw)
    except ValueError:
        return []
    if type(clients) is not list:
        return []
    return [c for c in cast(list[Any], clients) if type(c) is str]


def approving(secret: bytes, headers: Mapping[str, str], client_id: str, secure: bool) -> str:
    """The `Set-Cookie` remembering that this browser approved `client_id` too."""
    clients = [c for c in approved(secret, headers) if c != client_id]
    clients = [*clients, client_id][-MOST_APPROVED:]
    raw = json.dumps(clients).encode()
    payload = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    value = f"{payload}.{_sign(secret, raw)}"
    return cookie(APPROVED_COOKIE, value, secure=secure, same_site="Lax", max_age=APPROVAL_SECONDS)


def consent_page(
    action: str,
    txn: str,
    csrf: str,
    client: Mapping[str, Any],
    redirect_uri: str,
    idp: str,
    secure: bool,
) -> HttpResponse:
    """The page asking the user to approve `client`, setting the CSRF cookie."""
    name = html.escape(client.get("client_name") or "An unnamed application")
    where = html.escape(redirect_uri)
    body = (
        f"<h1>Allow {name}?</h1>"
        f"<p><b>{name}</b> (client <code>{html.escape(client['client_id'])}</code>) asks to use "
        f"this MCP server on your behalf. After you sign in with {html.escape(idp)}, you will be "
        f"sent to <code>{where}</code>.</p>"
        f"<p>Approve only if you started this and trust that address.</p>"
        f"<form method='post' action='{html.escape(action)}'>"
        f"<input type='hidden' name='txn' value='{html.escape(txn)}'>"
        f"<input type='hidden' name='csrf' value='{html.escape(csrf)}'>"
        "<button type='submit' name='decision' value='approve' id='approve'>Approve</button> "
        "<button type='submit' name='decision' value='deny' id='deny'>Deny</button>"
        "</form>"
    )
    csrf_set = cookie(csrf_cookie(txn), csrf, secure=secure, same_site="Strict", max_age=600)
    return page(200, "Authorize an application", body, [csrf_set])
