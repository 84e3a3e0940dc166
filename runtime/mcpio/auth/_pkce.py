"""PKCE (RFC 7636), S256 only: the OAuth client's and the OAuth proxy's."""

from __future__ import annotations

import base64
import hashlib
import secrets


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier (43 characters of base64url, 256 bits) and its S256 challenge."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode("ascii")
    return verifier, s256(verifier)


def s256(verifier: str) -> str:
    """BASE64URL(SHA256(verifier)) without padding (RFC 7636 4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
