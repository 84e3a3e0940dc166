"""Sealed `requestState`: the state a modern server hands the client between the rounds of a
multi-round-trip request. The client carries it, so it is authenticated (HMAC-SHA256 with the
server's key), expires, and is bound to the request it was issued for (method and a digest of
its params), so it cannot be altered, kept past its lifetime, or replayed against another
request. With authorization it is bound to the principal too (its subject), so it is refused
for another.
The answers it carries stand: a retry's `inputResponses` cannot replace them.

What a stateless server cannot do is make it single-use: within its lifetime the same state
sent again with the same request is accepted again. That gains the sender nothing it could not
get by answering the same questions again (the handler re-runs with the answers the client
itself gave); a handler whose effects must happen once should make them idempotent, keyed by
something of its own in the request.

It is signed, not encrypted: it holds only what the client itself sent (its earlier input
responses). Instances behind one load balancer share the key (`Server(state_key=...)`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError

_VERSION = "s1"
# Members of the params that vary between the rounds of one request: not part of its identity.
_ROUND_MEMBERS = frozenset({"_meta", "inputResponses", "requestState"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def request_digest(method: str, params: dict[str, Any]) -> str:
    """What identifies one request across its rounds: the method and its stable params."""
    stable = {k: v for k, v in params.items() if k not in _ROUND_MEMBERS}
    text = json.dumps([method, stable], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _b64(hashlib.sha256(text.encode()).digest()[:18])


class Sealer:
    """Signs and checks what a stateless server hands the client to bring back.

    That is a `requestState` or a cursor, signed with HMAC-SHA256.

    Args:
        key: The signing key, at least 16 bytes (random when None; share it between instances).
        ttl: Seconds a sealed `requestState` stays valid.
    """

    def __init__(self, key: bytes | None = None, ttl: float = 600.0) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        if len(self._key) < 16:
            raise ValueError("a requestState key needs at least 16 bytes")
        self.ttl = ttl

    def _mac(self, body: str) -> str:
        data = body.encode("utf-8", "surrogatepass")
        return _b64(hmac.new(self._key, data, hashlib.sha256).digest())

    def seal(
        self, digest: str, responses: dict[str, Any], round: int, subject: str | None = None
    ) -> str:
        """Seal a signed `requestState` carrying the `responses` so far and the `round`.

        It is bound to the request's `digest` (and to `subject`, the principal, where there is
        one), and expires after `ttl` seconds.

        Args:
            digest: The request's digest (its method and stable params).
            responses: The input responses so far, by key.
            round: The round it is handed out in.
            subject: The principal's subject; None without authorization.
        """
        payload = {"d": digest, "r": responses, "n": round, "x": int(time.time() + self.ttl)}
        if subject is not None:
            payload["p"] = subject
        body = _VERSION + "." + _b64(json.dumps(payload, separators=(",", ":")).encode())
        return body + "." + self._mac(body)

    def open(
        self, state: str, digest: str, subject: str | None = None
    ) -> tuple[dict[str, Any], int]:
        """Open `state`: the input responses sealed in it, and its round.

        Args:
            state: The `requestState` the client sent back.
            digest: The digest of the request it comes with.
            subject: Who asks now (the principal's subject); None without one.

        Raises:
            ProtocolError: -32602 if it is forged, expired, foreign, or issued to another
                principal.
        """
        try:
            payload = _shaped(self._payload(state))
        except (ValueError, TypeError, KeyError, UnicodeError):
            raise _invalid("it was not issued by this server or was altered") from None
        if payload["x"] < time.time():
            raise _invalid("it has expired; start the request again without it")
        if payload["d"] != digest:
            raise _invalid("it was issued for another request")
        if payload.get("p") != subject:
            raise _invalid("it was issued to another principal")
        responses: dict[str, Any] = payload["r"]
        return responses, payload["n"]

    def sign(self, kind: str, payload: dict[str, Any]) -> str:
        """Sign `payload` (JSON) as a `kind` token (e.g. a list cursor).

        The token is readable by the client but authenticated with this server's key, so one
        kind is never taken for another.
        """
        body = kind + "." + _b64(json.dumps(payload, separators=(",", ":")).encode())
        return body + "." + self._mac(body)

    def verify(self, kind: str, token: str) -> Any:
        """The payload of a `kind` token this server's key signed; ValueError otherwise."""
        body, _, mac = token.rpartition(".")
        if not body.startswith(kind + ".") or not hmac.compare_digest(
            mac.encode("utf-8", "surrogatepass"), self._mac(body).encode()
        ):
            raise ValueError("not signed here")
        return json.loads(_unb64(body.split(".", 1)[1]))

    def _payload(self, state: str) -> dict[str, Any]:
        """The payload of a state whose MAC is this server's (ValueError otherwise)."""
        body, _, mac = state.rpartition(".")
        expected = self._mac(body)
        if not body.startswith(_VERSION + ".") or not hmac.compare_digest(
            mac.encode("utf-8", "surrogatepass"), expected.encode()
        ):
            raise ValueError("not sealed here")
        payload: dict[str, Any] = json.loads(_unb64(body.split(".", 1)[1]))
        return payload


def _shaped(payload: Any) -> dict[str, Any]:
    """`payload` if it has the members and types `seal` writes (ValueError otherwise: a state
    with this server's MAC can still hold anything, e.g. sealed by another version of it)."""
    if type(payload) is not dict:
        raise ValueError("not an object")
    shapes = {"d": str, "r": dict, "n": int, "x": int}
    if any(type(payload.get(key)) is not kind for key, kind in shapes.items()):
        raise ValueError("a member is missing or of another type")
    if type(payload.get("p", "")) is not str:
        raise ValueError("p is not a string")
    return payload


def _invalid(why: str) -> ProtocolError:
    return ProtocolError(INVALID_PARAMS, f"invalid requestState: {why}", {"field": "requestState"})
