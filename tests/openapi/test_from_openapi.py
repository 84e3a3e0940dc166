"""`Server.from_openapi` on documents written here to show one rule each: route maps (tools,
resources, templates, exclusions by method, path and tag), parameters in path, query, header and
cookie, a request body's members as arguments, `$ref`s (a cycle kept in `$defs`), OpenAPI 3.0's
`nullable`, a non-object response wrapped as `{"result": ...}`, a failure status as a tool
error with the status and body, headers of the MCP request passed on, JSON and YAML text."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mcpio import Client, Server
from mcpio.openapi import RouteMap, operations, read_document
from tests.support import serve_app

pytestmark = pytest.mark.anyio

PET = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "tag": {"type": "string", "nullable": True},
        "parent": {"$ref": "#/components/schemas/Pet"},
    },
}
DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "2.1"},
    "servers": [{"url": "http://pets.test/v1"}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "tags": ["pets"],
                "summary": "List the pets.",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "the pets",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "array",
                                    "items": {"$ref": "#/components/schemas/Pet"},
                                }
                            }
                        },
                    }
                },
            },
            "post": {
                "operationId": "createPet",
                "tags": ["pets", "admin"],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}
                    },
                },
                "responses": {"201": {"$ref": "#/components/responses/OnePet"}},
            },
        },
        "/pets/{petId}": {
            "parameters": [{"$ref": "#/components/parameters/PetId"}],
            "get": {
                "operationId": "showPet",
                "responses": {"200": {"$ref": "#/components/responses/OnePet"}},
            },
            "delete": {"responses": {"204": {"description": "gone"}}},
        },
    },
    "components": {
        "schemas": {"Pet": PET},
        "parameters": {
            "PetId": {
                "name": "petId",
                "in": "path",
                "required": True,
                "schema": {"type": "integer"},
            }
        },
        "responses": {
            "OnePet": {
                "description": "a pet",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
            }
        },
    },
}


class Recorder:
    """An httpx transport that answers like the pets API and keeps each request."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path.endswith("/404"):
            return httpx.Response(404, json={"detail": "no such pet"})
        if request.method == "DELETE":
            return httpx.Response(204)
        if request.url.path == "/v1/pets" and request.method == "GET":
            return httpx.Response(200, json=[{"id": 1, "name": "Rex", "tag": None}])
        if request.method == "POST":
            return httpx.Response(201, json=json.loads(request.content))
        return httpx.Response(200, json={"id": 7, "name": "Tom"})


def _server(recorder: Recorder, **options: Any) -> Server:
    client = httpx.AsyncClient(
        transport=httpx.MockTransport(recorder), base_url="http://pets.test/v1"
    )
    return Server.from_openapi(DOCUMENT, client, **options)


def test_each_operation_is_a_tool_named_by_its_operation_id() -> None:
    server = _server(Recorder())
    assert sorted(server.tools) == ["createPet", "delete_pets_petId", "listPets", "showPet"]
    assert (server.info.name, server.info.version) == ("Pets", "2.1")
    assert "X_Trace" in server.tools["listPets"].definition.inputSchema.model_dump()["properties"]
    listing = server.tools["listPets"].definition
    assert listing.description == "List the pets."
    assert listing.annotations is not None and listing.annotations.readOnlyHint is True


def test_refs_are_resolved_and_a_cycle_kept_in_defs() -> None:
    [_, create, show, _] = operations(DOCUMENT)
    assert show.input_schema["properties"]["petId"] == {"type": "integer"}
    assert create.input_schema["required"] == ["id", "name"]  # the body's members, flattened
    assert create.input_schema["properties"]["parent"] == {"$ref": "#/$defs/Pet"}
    pet = create.input_schema["$defs"]["Pet"]
    assert pet["properties"]["tag"] == {"type": ["string", "null"]}  # 3.0's nullable
    assert show.output_schema is not None and show.output_schema["required"] == ["id", "name"]


async def test_arguments_go_to_path_query_header_and_cookie() -> None:
    recorder = Recorder()
    async with Client(_server(recorder)) as client:
        await client.call_tool("listPets", {"limit": 2, "X_Trace": "t1", "session": "s 1"})
        await client.call_tool("showPet", {"petId": 7})
    listing, showing = recorder.requests
    assert str(listing.url) == "http://pets.test/v1/pets?limit=2"
    assert listing.headers["x-trace"] == "t1" and listing.headers["cookie"] == "session=s%201"
    assert showing.url.path == "/v1/pets/7"


async def test_a_json_response_is_structured_output_wrapped_when_not_an_object() -> None:
    recorder = Recorder()
    server = _server(recorder)
    schema = server.tools["listPets"].definition.outputSchema
    assert schema is not None and schema.model_dump()["required"] == ["result"]
    async with Client(server) as client:
        listed = await client.call_tool("listPets", {})
        created = await client.call_tool("createPet", {"id": 3, "name": "Kit"})
    assert listed.structuredContent == {"result": [{"id": 1, "name": "Rex", "tag": None}]}
    assert created.structuredContent == {"id": 3, "name": "Kit"}
    assert json.loads(recorder.requests[1].content) == {"id": 3, "name": "Kit"}


async def test_a_failure_status_is_a_tool_error_with_status_and_body() -> None:
    async with Client(_server(Recorder())) as client:
        missing = await client.call_tool("showPet", {"petId": 404})
        invalid = await client.call_tool("showPet", {"petId": "seven"})
    assert missing.isError and missing.structuredContent == {
        "status": 404,
        "body": {"detail": "no such pet"},
    }
    assert missing.content[0].text == 'HTTP 404 Not Found: {"detail":"no such pet"}'
    assert invalid.isError and "petId" in invalid.content[0].text  # checked before any call


async def test_route_maps_make_resources_and_templates_and_exclude() -> None:
    recorder = Recorder()
    server = _server(
        recorder,
        route_maps=[
            RouteMap("exclude", tags=["admin"]),
            RouteMap("resource_template", methods=["GET"], pattern=r"\{"),
            RouteMap("resource", methods=["GET"], add_tags=["listing"]),
        ],
    )
    assert sorted(server.tools) == ["delete_pets_petId"]
    assert list(server.resources) == ["resource://listPets"]
    assert list(server.templates) == ["resource://showPet/{petId}"]
    assert server.resources["resource://listPets"].options.get("tags") == {"pets", "listing"}
    async with Client(server) as client:
        pet = await client.read_resource("resource://showPet/7")
        pets = await client.read_resource("resource://listPets")
    assert json.loads(pet.contents[0].text) == {"id": 7, "name": "Tom"}  # type: ignore[union-attr]
    assert pets.contents[0].mimeType == "application/json"
    assert [r.url.path for r in recorder.requests] == ["/v1/pets/7", "/v1/pets"]


async def test_forwarded_headers_of_the_mcp_request_reach_the_api() -> None:
    recorder = Recorder()
    server = _server(recorder, forward_headers=["Authorization"])
    headers = {"authorization": "Bearer abc", "x-other": "kept here"}
    async with (
        serve_app(server.http_app()) as served,
        Client(f"{served.url}/mcp", headers=headers) as client,
    ):
        await client.call_tool("showPet", {"petId": 1})
    [sent] = recorder.requests
    assert sent.headers["authorization"] == "Bearer abc" and "x-other" not in sent.headers


def test_yaml_and_json_text_read_alike_and_swagger_2_is_refused() -> None:
    import yaml

    as_yaml = read_document(yaml.safe_dump(DOCUMENT))
    assert as_yaml == read_document(json.dumps(DOCUMENT)) == DOCUMENT
    with pytest.raises(ValueError, match="not Swagger 2.0"):
        read_document({"swagger": "2.0", "paths": {}})


def test_a_reference_cycle_of_components_is_an_error_not_a_hang() -> None:
    looped = {
        **DOCUMENT,
        "components": {
            **DOCUMENT["components"],
            "parameters": {"PetId": {"$ref": "#/components/parameters/PetId"}},
        },
    }
    with pytest.raises(ValueError, match="refers to itself"):
        operations(looped)
