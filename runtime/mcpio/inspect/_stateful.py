"""What the checker learns from one answer and holds a later frame to: the tools a `tools/list`
declared (their `outputSchema` judges `structuredContent`, their `x-mcp-header` arguments the
`Mcp-Param-*` headers), and the requestState values servers issued."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_wire_runtime.errors import ProtocolError
from mcpio._core.extras import needs
from mcpio.inspect._apps import AppsSeen
from mcpio.transports._http_rules import check_params, param_headers


@dataclass
class Shared:
    """What the checkers of one relay share: their sessions' modern exchanges are checked apart,
    but a `tools/list` answered in one exchange declares the tools every later one calls."""

    issued_states: set[str] = field(default_factory=lambda: set())
    tools: dict[str, dict[str, Any]] = field(default_factory=lambda: {})  # name -> tool
    apps: AppsSeen = field(default_factory=AppsSeen)  # MCP Apps: resources listed, tools' UIs


@functools.cache
def output_checked() -> bool:
    """Whether `output_violation` can run: jsonschema (the `inspect` extra) is installed. Without
    it `mcpio inspect` runs with that one rule off, and says so."""
    return importlib.util.find_spec("jsonschema") is not None


def output_violation(
    tool: dict[str, Any] | None, result: Mapping[str, Any]
) -> tuple[str, str] | None:
    """Where a `tools/call` result breaks the tool's declared `outputSchema` (server/tools#output-
    schema: structured results MUST conform to it), as (JSON path, why); None when it conforms,
    the tool declared none, the result is an error, or the schema itself is not valid."""
    with needs("inspect", "mcpio inspect's outputSchema check"):
        from jsonschema import Draft202012Validator, SchemaError
        from jsonschema.exceptions import best_match
        from jsonschema.validators import validator_for

    if tool is None or type(tool.get("outputSchema")) is not dict or result.get("isError") is True:
        return None
    schema = tool["outputSchema"]
    if "structuredContent" not in result:
        return "$.result", f"no structuredContent, but tool {tool['name']!r} has an outputSchema"
    validator_class = validator_for(schema, default=Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except SchemaError:
        return None
    error = best_match(validator_class(schema).iter_errors(result["structuredContent"]))
    if error is None:
        return None
    path = "".join(f"[{p}]" if type(p) is int else f".{p}" for p in error.absolute_path)
    return (
        f"$.result.structuredContent{path}",
        f"{error.message} (outputSchema of {tool['name']!r})",
    )


def param_header_mismatch(
    tool: Mapping[str, Any], arguments: Mapping[str, Any], headers: Mapping[str, str]
) -> str | None:
    """Why a `tools/call`'s `Mcp-Param-*` headers (lowercase names) do not mirror its arguments
    as the tool's `x-mcp-header` annotations ask (the server's own check), or None."""

    def received(name: str) -> list[str]:
        value = headers.get(name.lower())
        return [] if value is None else [value]

    try:
        check_params(param_headers(tool.get("inputSchema")), arguments, received)
    except ProtocolError as exc:
        return exc.message
    return None
