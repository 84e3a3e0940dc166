"""Reading an OpenAPI document: JSON or YAML text, a file, or the parsed mapping; 3.0 and 3.1."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Source = Mapping[str, Any] | str | bytes | os.PathLike[str]


def read_document(source: Source) -> dict[str, Any]:
    """The OpenAPI document `source` holds: a mapping as it is, a path's file, or JSON or YAML text.

    Raises:
        ValueError: Not an OpenAPI 3.0 or 3.1 document (Swagger 2.0 is refused by name).
    """
    if isinstance(source, Mapping):
        document = dict(source)
    else:
        text = Path(source).read_bytes() if isinstance(source, os.PathLike) else source
        document = parse_text(text)
    version = str(document.get("openapi", document.get("swagger", "")))
    if not version.startswith(("3.0", "3.1")):
        kind = "Swagger 2.0" if "swagger" in document else f"version {version or '(none)'}"
        raise ValueError(f"an OpenAPI 3.0 or 3.1 document is needed, not {kind}")
    return document


def parse_text(text: str | bytes) -> dict[str, Any]:
    """JSON, else YAML (the `openapi` extra's PyYAML); `ValueError` for neither an object."""
    raw = text.decode("utf-8") if isinstance(text, bytes) else text
    try:
        data = json.loads(raw)
    except ValueError:
        from mcpio._core.extras import needs

        with needs("openapi", "reading a YAML OpenAPI document"):
            import yaml

        try:
            data = _json_like(yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except yaml.YAMLError as exc:
            raise ValueError(f"neither JSON nor YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("an OpenAPI document is an object")
    return data  # pyright: ignore[reportUnknownVariableType]


def _json_like(node: Any) -> Any:
    """YAML's data as JSON would give it: keys as strings (`200:` is a status, not an int),
    dates and times as their ISO text."""
    if isinstance(node, dict):
        return {str(k): _json_like(v) for k, v in node.items()}  # pyright: ignore
    if isinstance(node, list):
        return [_json_like(v) for v in node]  # pyright: ignore
    if isinstance(node, datetime.date | datetime.datetime):
        return node.isoformat()
    return node


def is_version_31(document: Mapping[str, Any]) -> bool:
    """Whether its schemas are JSON Schema 2020-12 already (3.1), not 3.0's dialect."""
    return str(document.get("openapi", "")).startswith("3.1")
