"""Servers from an existing HTTP API: its OpenAPI document mapped to tools and resources.

The document (3.0 or 3.1, JSON or YAML) becomes tools, resources and resource templates
(`Server.from_openapi`, `Server.from_fastapi`); beside them, the pieces the typed modules
`mcp-codegen openapi` writes are made of.

Each operation of the document is an `Operation`: its name (the operationId, else the method
and path), its description, the input schema its parameters and request body make (`$ref`s
resolved, a recursive schema kept in `$defs`), where each argument goes (path, query, header,
cookie or body) and the output schema of its success response. Route maps decide what each
becomes; a call goes through the `httpx.AsyncClient` given, and an answer outside 2xx is a tool
error with the status and body.

Examples:
    >>> document = {
    ...     "openapi": "3.1.0",
    ...     "info": {"title": "Pets", "version": "1"},
    ...     "paths": {"/pets/{id}": {"get": {
    ...         "operationId": "getPet",
    ...         "parameters": [{"name": "id", "in": "path", "required": True,
    ...                         "schema": {"type": "integer"}}],
    ...         "responses": {"200": {"description": "a pet"}},
    ...     }}},
    ... }
    >>> [op] = operations(document)
    >>> op.name, op.method, op.input_schema["required"]
    ('getPet', 'GET', ['id'])
"""

from mcpio.openapi._document import read_document
from mcpio.openapi._operations import Operation, Parameter, operations
from mcpio.openapi._routes import RouteMap
from mcpio.openapi._serve import serve_operations
from mcpio.openapi._typed import ApiModel, add_functions, read_result, request

__all__ = [
    "ApiModel",
    "add_functions",
    "read_result",
    "request",
    "Operation",
    "Parameter",
    "RouteMap",
    "operations",
    "read_document",
    "serve_operations",
]
