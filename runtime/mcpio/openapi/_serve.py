"""Serving a document's operations on a `Server`: each a tool, resource or resource template as
the route maps say, every call made through one `httpx.AsyncClient` (the one given, or the one
the server owns: `mcpio.openapi._owned`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcpio._core.options import ResourceOptions
from mcpio.openapi._calls import resource_body, send, tool_result
from mcpio.openapi._operations import Operation
from mcpio.openapi._routes import RouteMap, route_for

if TYPE_CHECKING:
    import httpx

# A `mcpio.Server`: its layer is above this one, which it imports (`Server.from_openapi`).
Server = Any
# The client a call goes through, asked at each call.
ClientOf = Callable[[], "httpx.AsyncClient"]

_READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})


def serve_operations(
    server: Server,
    operations: Sequence[Operation],
    client: httpx.AsyncClient,
    *,
    route_maps: Sequence[RouteMap] = (),
    names: Mapping[str, str] | None = None,
    forward_headers: Collection[str] = (),
    validate_output: bool = True,
) -> None:
    """Register each operation on `server` as its route map says (a tool by default).

    Args:
        server: Where they are served.
        operations: The operations (`mcpio.openapi.operations(document)`).
        client: The client every call goes through (its `base_url` the API's).
        route_maps: The first that matches an operation decides what it becomes.
        names: Component names by operationId (or by the name made of method and path).
        forward_headers: The MCP request's HTTP header fields passed on to the API. A header
            parameter these or the client's own headers name is no argument of the tool.
        validate_output: False: no output schema, the JSON still structured content when an
            object (an API that answers outside its document's schemas).
    """
    settings = (route_maps, names or {}, forward_headers, validate_output)
    serve_through(server, operations, lambda: client, *settings)


def serve_through(
    server: Server,
    operations: Sequence[Operation],
    client: ClientOf,
    route_maps: Sequence[RouteMap],
    names: Mapping[str, str],
    forward_headers: Collection[str],
    validate_output: bool,
) -> None:
    """`serve_operations`, each call through the client `client()` gives then."""
    # Headers the client sends itself, or passes on from the MCP request: no tool argument.
    own_headers = {h.lower() for h in [*client().headers.keys(), *forward_headers]}
    for operation in operations:
        operation = operation.without_headers(own_headers)
        route = route_for(operation, route_maps)
        if route.kind == "exclude":
            continue
        name = names.get(operation.operation_id or operation.name, operation.name)
        tags = {*operation.tags, *route.add_tags}
        if route.kind == "tool":
            _tool(server, operation, name, tags, client, forward_headers, validate_output)
        else:
            _resource(server, operation, route, name, tags, client, forward_headers)


def _tool(
    server: Server,
    operation: Operation,
    name: str,
    tags: set[str],
    client: ClientOf,
    forward_headers: Collection[str],
    validate_output: bool,
) -> None:
    async def call_operation(**arguments: Any) -> Any:  # (a CallToolResult)
        response = await send(client(), operation, arguments, forward_headers)
        return tool_result(operation, response, validate_output)

    annotations: dict[str, Any] = {"readOnlyHint": operation.method in _READ_ONLY}
    if operation.method in ("PUT", "DELETE"):
        annotations["idempotentHint"] = True
    server.tool(
        name,
        description=operation.description,
        input_schema=operation.input_schema,
        output_schema=operation.output_schema if validate_output else None,
        structured_output=validate_output and operation.output_schema is not None,
        annotations=annotations,
        tags=tags,
    )(call_operation)


def _resource(
    server: Server,
    operation: Operation,
    route: RouteMap,
    name: str,
    tags: set[str],
    client: ClientOf,
    forward_headers: Collection[str],
) -> None:
    """A resource at `resource://<name>`; a template `resource://<name>/{a}{?q}` when the
    operation has path parameters (and, mapped to a template, its query parameters too)."""
    path = [p.argument for p in operation.path_arguments]
    query = [p.argument for p in operation.parameters if p.location == "query"]
    if route.kind == "resource":
        query = []
    options: ResourceOptions = {
        "name": name,
        "description": operation.description,
        "mime_type": _mime(operation),
        "tags": tags,
    }

    async def read(**values: Any) -> str | bytes:
        response = await send(client(), operation, values, forward_headers)
        return resource_body(response)

    if not path and not query:
        read.__signature__ = inspect.Signature([])  # type: ignore[attr-defined]
        server.resource(f"resource://{name}", **options)(read)
        return
    variables = {v: str if v in path else str | None for v in [*path, *query]}
    read.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                v,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if v in path else None,
                annotation=hint,
            )
            for v, hint in variables.items()
        ]
    )
    read.__annotations__ = dict(variables)  # (what the template's values are coerced to)
    uri = f"resource://{name}" + "".join(f"/{{{v}}}" for v in path)
    if query:
        uri += "{?" + ",".join(query) + "}"
    server.resource_template(uri, **options)(read)


def _mime(operation: Operation) -> str | None:
    return "application/json" if operation.output_schema is not None else None
