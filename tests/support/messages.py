"""Message frames built for the codec tests."""

from __future__ import annotations

import json
from typing import Any

from tests.support.wire_samples import GOLDEN, file_name


def golden(rev: str, method: str) -> dict[str, Any]:
    return json.loads((GOLDEN / rev / file_name(method)).read_text(encoding="utf-8"))


def message(rev: str, method: str, **changes: Any) -> dict[str, Any]:
    """The golden (schema-valid) message of `method`, with members replaced or (None) removed."""
    out = dict(golden(rev, method)["message"])
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out
