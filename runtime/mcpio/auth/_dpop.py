"""DPoP (RFC 9449), the pieces both sides share: a client's proof-of-possession key, the proofs it
signs (`DpopKey.proof`), the key's JWK thumbprint (RFC 7638, what `cnf.jkt` names), and the
checks a resource server runs on a proof (`check_proof`).

A proof is a JWT with the header `{"typ": "dpop+jwt", "alg": "ES256", "jwk": <public key>}` and
the claims `jti` (unique), `htm` (the HTTP method), `htu` (the URL without query and fragment),
`iat`, and on resource requests `ath` (the access token's SHA-256), `nonce` when the server gave
one. Keys are EC P-256 (ES256) made with `cryptography`; PyJWT signs and verifies (the `auth`
extra). The private key is kept out of reprs and logs: only its PEM form travels, to the stores.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from mcpio._core.extras import needs

if TYPE_CHECKING:
    import httpx

ALGORITHMS = ("ES256",)  # what we sign with
# What a resource server accepts from a proof (asymmetric only: `none` and HMAC never).
VERIFY_ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384")
PROOF_TYPE = "dpop+jwt"


def b64url(data: bytes) -> str:
    """Base64url without padding (JOSE's encoding)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def token_hash(access_token: str) -> str:
    """The `ath` of a proof: BASE64URL(SHA-256(access token))."""
    return b64url(hashlib.sha256(access_token.encode("utf-8")).digest())


def htu_of(url: str | httpx.URL) -> str:
    """The `htu` of a request to `url`: without query and fragment."""
    parts = urlsplit(str(url))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """The JWK SHA-256 thumbprint (RFC 7638): the required members, sorted, no whitespace."""
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or any(type(jwk.get(name)) is not str for name in members):
        raise ValueError("not a public EC, RSA or OKP key")
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"))
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


@dataclass
class DpopKey:
    """A client's DPoP key pair (EC P-256); `pem` (PKCS#8) is what the token stores keep.

    Args:
        pem: The private key, PEM-encoded PKCS#8 (unencrypted).
        _private: Derived from `pem` (the loaded key): leave it out.
        jwk: Derived from `pem` (the public key as a JWK): leave it out.
    """

    pem: str = field(repr=False)
    _private: Any = field(default=None, repr=False)
    jwk: dict[str, str] = field(default_factory=dict[str, str], repr=False)

    def __post_init__(self) -> None:
        with needs("auth", "DPoP"):
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.serialization import load_pem_private_key
        key = load_pem_private_key(self.pem.encode("ascii"), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
            raise ValueError("a DPoP key is an EC P-256 private key")
        numbers = key.public_key().public_numbers()
        self._private = key
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big")),
        }

    @classmethod
    def generate(cls) -> DpopKey:
        """A new EC P-256 key."""
        with needs("auth", "DPoP"):
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec
        private = ec.generate_private_key(ec.SECP256R1())
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return cls(pem.decode("ascii"))

    @property
    def jkt(self) -> str:
        """The key's JWK thumbprint (RFC 7638), what a bound token's `cnf.jkt` names."""
        return thumbprint(self.jwk)

    def proof(
        self,
        method: str,
        url: str | httpx.URL,
        access_token: str | None = None,
        nonce: str | None = None,
    ) -> str:
        """A fresh proof for one HTTP request (a new `jti` every time).

        Args:
            method: The request's HTTP method (`htm`).
            url: The request's URL (`htu`: without query and fragment).
            access_token: The access token the request carries, hashed into `ath` (None: none,
                as on a token request).
            nonce: The `DPoP-Nonce` the server gave, if any.
        """
        with needs("auth", "DPoP"):
            import jwt
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu_of(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        headers = {"typ": PROOF_TYPE, "jwk": self.jwk}
        return jwt.encode(claims, self._private, algorithm="ES256", headers=headers)
