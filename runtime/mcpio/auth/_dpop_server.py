"""DPoP (RFC 9449) on the resource server: `DpopPolicy` checks the proof that comes with a
DPoP-bound access token (`ResourceServerAuth(dpop=DpopPolicy(...))`, see `mcpio.auth`).

A proof is accepted when it is a JWT of `typ` `dpop+jwt`, signed by an allowed asymmetric
algorithm with the public key in its own `jwk` header (no private part), whose thumbprint is the
token's `cnf.jkt`; its `htm` is the request's method and its `htu` the request's URL (query and
fragment left out); its `iat` at most `max_age` seconds old and not in the future, either way
with `leeway` seconds for clocks that differ; its `ath` is the token's hash; its `nonce` one this
server issued within `nonce_lifetime` (when `nonces` are on); and its `jti` was not seen before
(`replay`: `MemoryReplayCache`, bounded, or `RedisReplayCache`, shared by every instance). Only
one `DPoP` header field is taken. The first failing rule is the error: a
`use_dpop_nonce` refusal carries a fresh nonce; nonces rotate as they age out, and a response to
a proof whose nonce has less than half its lifetime left carries the next one (`DPoP-Nonce`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import math
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast
from urllib.parse import urlsplit

from mcpio._core.extras import needs
from mcpio.auth._dpop import PROOF_TYPE, VERIFY_ALGORITHMS, thumbprint, token_hash

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("mcpio.auth")
# RFC 9449 8.1: a nonce is 1*NQCHAR (printable ASCII without '"' and '\\').
_NONCE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]*")


class DpopError(Exception):
    """A proof refused: `error` is RFC 9449's code (`invalid_dpop_proof`, `use_dpop_nonce`),
    `nonce` the one to use next (with `use_dpop_nonce`)."""

    def __init__(self, error: str, reason: str, nonce: str | None = None) -> None:
        super().__init__(reason)
        self.error = error
        self.reason = reason
        self.nonce = nonce


class ReplayUnavailable(Exception):
    """The shared replay cache cannot be asked: the proof can be neither accepted nor refused."""


class ReplayCacheFull(ReplayUnavailable):
    """The memory replay cache holds `size` proofs none of which has expired.

    A new proof can be accepted only once the oldest expires, `retry_after` seconds from now.
    """

    def __init__(self, retry_after: float) -> None:
        super().__init__("the DPoP replay cache is full")
        self.retry_after = retry_after


class ReplayCache(Protocol):
    """Where DPoP proof ids (`jti`) are remembered, so a proof is accepted once."""

    async def first_use(self, key: str, seconds: float) -> bool:
        """Record `key` for `seconds`; False if it was already recorded (a replay)."""
        ...


class MemoryReplayCache:
    """A replay cache in this process, of at most `size` unexpired keys.

    Expired keys are dropped first; when `size` keys are still unexpired a new one is refused
    (`ReplayCacheFull`), never recorded by forgetting one that could still be replayed.
    """

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self._seen: OrderedDict[str, float] = OrderedDict()

    async def first_use(self, key: str, seconds: float) -> bool:
        """Record `key` for `seconds`; False if it was already recorded (a replay).

        Raises:
            ReplayCacheFull: When `size` unexpired keys are recorded.
        """
        now = time.monotonic()
        until = self._seen.get(key)
        if until is not None and until > now:
            return False
        self._seen.pop(key, None)
        while self._seen:  # keys are recorded for the same span: the oldest expire first
            oldest, until = next(iter(self._seen.items()))
            if until > now:
                break
            del self._seen[oldest]
        if len(self._seen) >= self.size:
            raise ReplayCacheFull(next(iter(self._seen.values())) - now)
        self._seen[key] = now + seconds
        return True

    def __len__(self) -> int:
        return len(self._seen)


class RedisReplayCache:
    """A replay cache shared by every instance through Redis (`SET key NX PX`).

    Its keys are under `prefix`.

    Args:
        url: The Redis URL (`redis://...`).
        prefix: The prefix of the keys it sets.
        timeout: Seconds to connect, and for each command; past it the proof can be neither
            accepted nor refused (`ReplayUnavailable`).
    """

    def __init__(self, url: str, *, prefix: str = "mcpio:dpop:jti:", timeout: float = 2.0) -> None:
        with needs("redis", "RedisReplayCache"):
            from redis.asyncio import Redis
        self.prefix = prefix
        self._client: Redis = Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout
        )

    async def first_use(self, key: str, seconds: float) -> bool:
        """Record `key` for `seconds` in Redis (`SET NX PX`); False if it was already recorded."""
        try:
            done = await self._client.set(
                self.prefix + key, b"1", nx=True, px=max(1, int(seconds * 1000))
            )
        except Exception as exc:  # the cause only: no key in logs
            log.warning("the DPoP replay cache is unreachable: %s", type(exc).__name__)
            raise ReplayUnavailable(type(exc).__name__) from None
        return bool(done)

    async def aclose(self) -> None:
        """Close the Redis connection."""
        await self._client.aclose()


class Nonces:
    """A DPoP server's stateless nonces, valid `lifetime` seconds, then refused with a new one.

    Each is its time of issue and that time's HMAC under `secret`: give every instance the same
    secret to share them (None: a random one, this instance's own).
    """

    def __init__(self, secret: bytes | None = None, lifetime: float = 300.0) -> None:
        self._secret = secret or secrets.token_bytes(32)
        self.lifetime = lifetime

    def __repr__(self) -> str:
        return f"Nonces(lifetime={self.lifetime})"

    def issue(self) -> str:
        """A new server nonce: a timestamp and its HMAC."""
        stamp = str(int(time.time()))
        return f"{stamp}.{self._mac(stamp)}"

    def valid(self, nonce: object) -> bool:
        """Whether `nonce` is one this server issued, within its lifetime."""
        if type(nonce) is not str or not nonce.isascii():
            return False
        stamp, _, mac = nonce.partition(".")
        if not stamp.isdigit() or not hmac.compare_digest(mac, self._mac(stamp)):
            return False
        return 0 <= time.time() - int(stamp) <= self.lifetime

    def renewal(self, nonce: object) -> str | None:
        """A new nonce when less than half of valid `nonce`'s lifetime is left, else None.

        Sent with the response to the request that used `nonce`: RFC 9449 9 lets a resource
        server send one on any response, so a client moves on before its nonce is refused.
        """
        stamp = nonce.partition(".")[0] if type(nonce) is str and nonce.isascii() else ""
        if stamp.isdigit() and time.time() - int(stamp) > self.lifetime / 2:
            return self.issue()
        return None

    def _mac(self, stamp: str) -> str:
        digest = hmac.new(self._secret, stamp.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:18]).decode("ascii")


def same_url(htu: str, url: str) -> bool:
    """`htu` names `url` (RFC 9449 4.3: scheme and host case-insensitive, default ports, no
    query or fragment; a trailing slash does not count)."""

    def normal(value: str) -> tuple[str, str, int | None, str]:
        parsed = urlsplit(value)
        scheme = parsed.scheme.lower()
        port = parsed.port or {"http": 80, "https": 443}.get(scheme)
        return scheme, (parsed.hostname or "").lower(), port, parsed.path.rstrip("/")

    try:
        return normal(htu) == normal(url)
    except ValueError:  # a port out of range, a malformed IPv6 host
        return False


@dataclass
class DpopPolicy:
    """How the resource server checks DPoP proofs (RFC 9449).

    A proof is accepted when it is a JWT of `typ` `dpop+jwt`, signed by an allowed asymmetric
    algorithm with the public key in its own `jwk` header (no private part), whose thumbprint
    is the token's `cnf.jkt`; its `htm` is the request's method and its `htu` the request's URL
    (query and fragment left out); its `iat` at most `max_age` seconds old and not in the
    future, either way with `leeway` seconds; its `ath` is the token's hash; its `nonce` one
    this server issued (when `nonces` are on); and its `jti` was not seen before. The docs
    page on authorization (docs/servers/auth.md, "DPoP-bound tokens") tells the rest.

    Args:
        required: Only DPoP-bound tokens are accepted (a bearer token is refused), which the
            protected-resource metadata says as `dpop_bound_access_tokens_required`.
        algorithms: The signing algorithms a proof may use: asymmetric only (`none` and HMAC
            are refused).
        max_age: How old a proof's `iat` may be, in seconds.
        leeway: Seconds allowed either way for clocks that differ.
        nonces: The server's nonces (`Nonces`), valid `lifetime` seconds; None: no nonce is
            asked for.
        replay: Where proof ids are remembered: `MemoryReplayCache` (bounded, the default) or
            `RedisReplayCache` (shared by every instance).
    """

    required: bool = False
    algorithms: Sequence[str] = VERIFY_ALGORITHMS
    max_age: float = 300.0
    leeway: float = 30.0
    nonces: Nonces | None = None
    replay: ReplayCache = field(default_factory=MemoryReplayCache)

    def __post_init__(self) -> None:
        weak = [a for a in self.algorithms if a == "none" or a.upper().startswith("HS")]
        if weak or not self.algorithms:
            raise ValueError(f"DPoP proofs take asymmetric algorithms only, not {weak}")

    async def check(
        self, proof: str | None, method: str, urls: Sequence[str], token: str, jkt: str
    ) -> str | None:
        """Accept the proof of a request presenting `token` bound to the key `jkt`, or raise.

        Args:
            proof: The request's `DPoP` header (None: none came).
            method: The request's HTTP method.
            urls: The URLs the request may name (`htu`): where it was sent, or the configured
                `resource`.
            token: The access token the request presents.
            jkt: The thumbprint of the key the token is bound to (`cnf.jkt`).

        Returns:
            The fresh nonce to send with the response (`Nonces.renewal`), if any.

        Raises:
            DpopError: The proof is refused.
            ReplayUnavailable: The replay cache cannot decide.
        """
        if not proof or "," in proof:  # (fields repeated come joined by commas)
            raise DpopError("invalid_dpop_proof", "exactly one DPoP proof header is needed")
        claims = self._verified(proof, jkt)
        self._check_claims(claims, method, urls, token)
        if self.nonces is not None and not self.nonces.valid(claims.get("nonce")):
            raise DpopError("use_dpop_nonce", "a fresh server nonce is needed", self.nonces.issue())
        key = hashlib.sha256(f"{jkt}:{claims['jti']}".encode()).hexdigest()
        # As long as a proof can be accepted: from `leeway` ahead to `max_age + leeway` old.
        if not await self.replay.first_use(key, self.max_age + 2 * self.leeway):
            raise DpopError("invalid_dpop_proof", "the proof was used before")
        return None if self.nonces is None else self.nonces.renewal(claims.get("nonce"))

    def _verified(self, proof: str, jkt: str) -> dict[str, Any]:
        """The proof's claims, its signature checked with its own key, which must be `jkt`."""
        with needs("auth", "DPoP"):
            import jwt
        try:
            header = jwt.get_unverified_header(proof)
        except jwt.PyJWTError:
            raise DpopError("invalid_dpop_proof", "the proof is not a JWT") from None
        if header.get("typ") != PROOF_TYPE or header.get("alg") not in self.algorithms:
            raise DpopError("invalid_dpop_proof", "the proof's typ or alg is not accepted")
        jwk = header.get("jwk")
        if type(jwk) is not dict or "d" in jwk or "p" in jwk or "k" in jwk:
            raise DpopError("invalid_dpop_proof", "the proof carries no public key")
        try:
            bound = thumbprint(cast(dict[str, Any], jwk)) == jkt
            key = jwt.PyJWK(jwk, header["alg"])
            claims = jwt.decode(  # (`iat` is checked below, with the leeway)
                proof,
                key,
                algorithms=[header["alg"]],
                leeway=self.leeway,
                options={"verify_aud": False, "verify_iat": False},
            )
        except (jwt.PyJWTError, ValueError):
            raise DpopError("invalid_dpop_proof", "the proof's signature is not valid") from None
        if not bound:
            raise DpopError("invalid_dpop_proof", "the proof's key is not the token's")
        return claims

    def _check_claims(
        self, claims: dict[str, Any], method: str, urls: Sequence[str], token: str
    ) -> None:
        jti, htu, iat = claims.get("jti"), claims.get("htu"), claims.get("iat")
        if type(jti) is not str or not 8 <= len(jti) <= 256:
            raise DpopError("invalid_dpop_proof", "the proof has no usable jti")
        if claims.get("htm") != method:
            raise DpopError("invalid_dpop_proof", "the proof is for another method")
        if type(htu) is not str or not any(same_url(htu, url) for url in urls):
            raise DpopError("invalid_dpop_proof", "the proof is for another URL")
        age = math.nan
        if isinstance(iat, int | float) and not isinstance(iat, bool) and abs(iat) < 1e12:
            age = time.time() - iat
        if not -self.leeway <= age <= self.max_age + self.leeway:
            raise DpopError("invalid_dpop_proof", "the proof is too old or from the future")
        nonce = claims.get("nonce", "")
        if type(nonce) is not str or not _NONCE.fullmatch(nonce):
            raise DpopError("invalid_dpop_proof", "the proof's nonce is not a nonce's syntax")
        if claims.get("ath") != token_hash(token):
            raise DpopError("invalid_dpop_proof", "the proof is for another access token")


def bound_key(claims: Any) -> str | None:
    """The `cnf.jkt` a token's claims (JWT or introspection answer) bind it to, if any."""
    cnf = claims.get("cnf") if hasattr(claims, "get") else None
    jkt = cast(dict[str, Any], cnf).get("jkt") if type(cnf) is dict else None
    return jkt if type(jkt) is str and jkt else None
