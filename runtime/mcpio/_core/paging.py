"""Listings in pages (`Server(list_page_size=N)`): `tools/list`, `resources/list`,
`resources/templates/list` and `prompts/list` answer N items and an opaque `nextCursor`.

A cursor is stateless: the position in the listing, signed with the server's state key
(`Server(state_key=...)`, shared by the instances behind one load balancer), so any instance
continues a listing, in either era. It is bound to its method and to the caller (the authorized
principal's subject), expires with the state key's lifetime, and names the listing it was cut
from (a digest of its items' names): once the list changes it is stale. A forged, altered,
foreign, expired or stale cursor is -32602: list again from the start.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError
from mcpio._core.sealing import Sealer

T = TypeVar("T")
KIND = "c1"  # the cursors' token kind (see `Sealer.sign`)


def page(
    items: Sequence[T],
    keys: Sequence[str],
    cursor: str | None,
    *,
    size: int | None,
    method: str,
    sealer: Sealer,
    subject: str | None = None,
) -> tuple[list[T], str | None]:
    """The page of `items` (named by `keys`, in order) `cursor` points to, and the cursor of
    the next one (None: it was the last). `size` None: everything at once, no cursor taken."""
    if size is None:
        if cursor is not None:
            raise invalid("this server lists everything at once")
        return list(items), None
    listing = _digest(keys)
    start = 0 if cursor is None else _open(cursor, method, listing, sealer, subject)
    end = start + size
    if end >= len(items):
        return list(items[start:]), None
    payload: dict[str, Any] = {"m": method, "o": end, "l": listing}
    payload["x"] = int(time.time() + sealer.ttl)
    if subject is not None:
        payload["p"] = subject
    return list(items[start:end]), sealer.sign(KIND, payload)


def _open(cursor: str, method: str, listing: str, sealer: Sealer, subject: str | None) -> int:
    try:
        payload = sealer.verify(KIND, cursor)
        offset, expiry = payload["o"], payload["x"]
        if type(offset) is not int or type(expiry) is not int or offset < 0:
            raise ValueError("bad shape")
    except (ValueError, TypeError, KeyError, UnicodeError):
        raise invalid("it was not issued by this server or was altered") from None
    if payload.get("m") != method:
        raise invalid(f"it was issued for another list than {method}")
    if payload.get("p") != subject:
        raise invalid("it was issued to another principal")
    if expiry < time.time():
        raise invalid("it has expired; list again from the start")
    if payload.get("l") != listing:
        raise invalid("the list changed since; list again from the start")
    return offset


def _digest(keys: Sequence[str]) -> str:
    hashed = hashlib.sha256("\x00".join(keys).encode("utf-8", "surrogatepass"))
    return hashed.hexdigest()[:16]


def invalid(why: str) -> ProtocolError:
    """The -32602 error for a cursor that cannot be used, saying why."""
    return ProtocolError(INVALID_PARAMS, f"invalid cursor: {why}", {"field": "cursor"})
