"""A synthetic OpenAPI 3.1 document of any number of operations (the benchmark's thousand, the
tests' few): resources of four operations each (list with query parameters, create with a
body, read with a path and a header parameter, delete), over fifty component schemas that name
each other in chains of five (no cycle), with enums, arrays, nested objects and nullable
members."""

from __future__ import annotations

from typing import Any

SCHEMAS = 50


def _schema(i: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "id": {"type": "integer", "minimum": 1},
        "name": {"type": "string", "description": f"the name of thing {i}"},
        "kind": {"type": "string", "enum": ["small", "large"]},
        "labels": {"type": "array", "items": {"type": "string"}},
        "note": {"type": ["string", "null"]},
    }
    if i % 5:  # chains of five: Thing4 holds Thing3, ... Thing0
        properties["part"] = {"$ref": f"#/components/schemas/Thing{i - 1}"}
    return {"type": "object", "required": ["id", "name"], "properties": properties}


def _resource(r: int) -> dict[str, Any]:
    thing = {"$ref": f"#/components/schemas/Thing{r % SCHEMAS}"}
    one = {"description": "one", "content": {"application/json": {"schema": thing}}}
    many = {"type": "array", "items": thing}
    return {
        f"/things{r}": {
            "get": {
                "operationId": f"listThings{r}",
                "summary": f"List the things of kind {r}.",
                "tags": [f"group{r % 10}"],
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "kind", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {"description": "all", "content": {"application/json": {"schema": many}}}
                },
            },
            "post": {
                "operationId": f"createThing{r}",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": thing}},
                },
                "responses": {"201": one},
            },
        },
        f"/things{r}/{{thingId}}": {
            "parameters": [
                {"name": "thingId", "in": "path", "required": True, "schema": {"type": "integer"}}
            ],
            "get": {
                "operationId": f"getThing{r}",
                "parameters": [
                    {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}}
                ],
                "responses": {"200": one, "404": {"description": "none"}},
            },
            "delete": {
                "operationId": f"deleteThing{r}",
                "responses": {"204": {"description": "gone"}},
            },
        },
    }


def synthetic_document(operations: int) -> dict[str, Any]:
    """The document, with `operations` operations (a multiple of 4)."""
    paths: dict[str, Any] = {}
    for r in range(operations // 4):
        paths.update(_resource(r))
    return {
        "openapi": "3.1.0",
        "info": {"title": "Things", "version": "1.0"},
        "servers": [{"url": "http://things.test"}],
        "paths": paths,
        "components": {"schemas": {f"Thing{i}": _schema(i) for i in range(SCHEMAS)}},
    }
