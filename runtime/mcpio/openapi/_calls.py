"""An operation's call: the HTTP request its arguments make (each where the document puts it),
and the answer read back, a failure status as a tool error with the status and body."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from mcpio._core.errors import ResourceError, ToolError
from mcpio.openapi._operations import Operation

if TYPE_CHECKING:
    import httpx

    from mcpio.latest import public as pub


def _text(value: Any) -> str:
    """A value as a parameter's text: JSON's `true`, numbers as written, objects as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def request_parts(operation: Operation, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`httpx.AsyncClient.request`'s arguments for a call of `operation` with `arguments`."""
    places: dict[str, dict[str, Any]] = {"path": {}, "query": {}, "header": {}, "cookie": {}}
    members: dict[str, Any] = {}
    unexploded: set[str] = set()
    for param in operation.parameters:
        value = arguments.get(param.argument)
        if value is None:
            continue
        (members if param.location == "body" else places[param.location])[param.name] = value
        if not param.explode:
            unexploded.add(param.name)
    if operation.body_argument:
        body = arguments.get(operation.body_argument)
    else:  # its members, each an argument: an empty object when none is given but one is due
        body = members or ({} if operation.body_required else None)
    return send_parts(
        operation.method,
        operation.path,
        places["path"],
        places["query"],
        frozenset(unexploded),
        places["header"],
        places["cookie"],
        body,
        operation.body_type,
    )


def send_parts(
    method: str,
    path: str,
    path_values: Mapping[str, Any],
    query: Mapping[str, Any],
    unexploded: frozenset[str],
    headers: Mapping[str, Any],
    cookies: Mapping[str, Any],
    body: Any,
    content_type: str | None,
) -> dict[str, Any]:
    """`httpx.AsyncClient.request`'s arguments: each value in its place (path segments and
    cookies percent-encoded, query arrays as repeated keys unless `unexploded`)."""
    for name, value in path_values.items():
        path = path.replace("{" + name + "}", quote(_text(value), safe=""))
    pairs: list[tuple[str, str]] = []
    for name, value in query.items():
        if isinstance(value, list | tuple) and name not in unexploded:
            pairs.extend((name, _text(v)) for v in value)  # pyright: ignore
        elif isinstance(value, list | tuple):
            pairs.append((name, ",".join(_text(v) for v in value)))  # pyright: ignore
        else:
            pairs.append((name, _text(value)))
    sent = {name: _text(value) for name, value in headers.items()}
    if cookies:
        sent["cookie"] = "; ".join(f"{k}={quote(_text(v), safe='')}" for k, v in cookies.items())
    parts: dict[str, Any] = {"method": method, "url": path, "headers": sent}
    if pairs:
        parts["params"] = pairs
    if content_type is not None and body is not None:
        body_parts = _body(content_type, body)
        sent.update(body_parts.pop("headers_extra", {}))
        parts.update(body_parts)
    return parts


def _body(content_type: str, body: Any) -> dict[str, Any]:
    """The request's body in `content_type`: JSON, a form, multipart, text or bytes."""
    if content_type == "application/x-www-form-urlencoded" and isinstance(body, Mapping):
        return {"data": {k: _text(v) for k, v in body.items()}}  # pyright: ignore
    if content_type.startswith("multipart/") and isinstance(body, Mapping):
        return {"files": {k: (None, _text(v)) for k, v in body.items()}}  # pyright: ignore
    if isinstance(body, str | bytes) and "json" not in content_type:
        return {"content": body, "headers_extra": {"content-type": content_type}}
    return {"json": body}


async def send(
    client: httpx.AsyncClient,
    operation: Operation,
    arguments: Mapping[str, Any],
    forward_headers: Collection[str] = (),
) -> httpx.Response:
    """Call `operation` through `client`; `forward_headers`: the MCP request's HTTP header
    fields passed on (by name, as `Authorization`), beside those of its header parameters."""
    parts = request_parts(operation, arguments)
    if forward_headers:
        from mcpio._core.dependencies import get_http_headers

        names = {n.lower() for n in forward_headers}
        passed = get_http_headers(include=names)
        parts["headers"] = {
            **{k: v for k, v in passed.items() if k in names},
            **parts["headers"],
        }
    return await client.request(**parts)


def answer_of(response: httpx.Response) -> Any:
    """The success response's JSON (its text when not JSON); `ToolError` with the status and
    body for any other status."""
    if not response.is_success:
        body = _read(response)
        raise ToolError(
            f"HTTP {response.status_code} {response.reason_phrase}: {response.text}",
            structured={"status": response.status_code, "body": body},
        )
    return _read(response)


def _read(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def tool_result(
    operation: Operation, response: httpx.Response, structured: bool
) -> pub.CallToolResult:
    """The tool's result: the response's text, and with `structured` (an output schema) its
    JSON as structured content (`{"result": ...}` when wrapped)."""
    from mcpio.latest import public as pub

    data = answer_of(response)
    text = response.text
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}] if text else []}
    if structured and operation.output_schema is not None:
        result["structuredContent"] = {"result": data} if operation.wrapped else data
    return pub.CallToolResult.model_validate({**result, "resultType": "complete"})


def resource_body(response: httpx.Response) -> str | bytes:
    """A resource's contents: the success response's text (bytes when not text);
    `ResourceError` with the status and body for any other status."""
    if not response.is_success:
        raise ResourceError(
            f"HTTP {response.status_code} {response.reason_phrase}: {response.text}"
        )
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/") or "json" in kind or "xml" in kind or not kind:
        return response.text
    return response.content
