"""Every tool `Server.from_openapi` makes of real OpenAPI documents nobody here wrote (the
@readme/oas-examples package: the Petstore in 3.0 and 3.1, ReadMe's own API, Bump.sh's Train
Travel API, STAPI's Star Trek API, and documents of parameter styles, status codes, security
schemes and circular schemas), called through an MCP client against a local server on
127.0.0.1 that checks each request against the document (tests/support/openapi_echo.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpio import Client, Server
from mcpio.openapi import read_document
from tests.support import serve_app
from tests.support.openapi_echo import EchoApi, sample

pytestmark = [pytest.mark.anyio, pytest.mark.peers]

DOCUMENTS = [
    "3.0/yaml/petstore.yaml",
    "3.1/json/petstore.json",
    "3.1/json/readme.json",
    "3.1/yaml/train-travel.yaml",
    "3.0/json/star-trek.json",
    "3.0/json/http-status-codes.json",
    "3.1/json/parameters-style.json",
    "3.1/json/security.json",
    "3.0/json/schema-circular.json",
]


async def _failures(document: dict[str, Any], echo: EchoApi, url: str) -> tuple[int, list[Any]]:
    """How many tools the document makes, and each call that failed (the tool, why, its
    arguments): every tool called once, with arguments made from its input schema."""
    failed: list[Any] = []
    async with httpx.AsyncClient(base_url=url) as http:
        server = Server.from_openapi(document, http)
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            for tool in tools:
                schema = tool.inputSchema.model_dump(by_alias=True, exclude_none=True)
                arguments = sample(schema, schema)
                result = await client.call_tool(tool.name, arguments)
                if result.isError:
                    failed.append((tool.name, result.content[0].text[:300], arguments))
    return len(tools), failed


@pytest.mark.parametrize("name", DOCUMENTS)
async def test_every_tool_of_a_real_document_calls_its_route(
    openapi_documents: Path, name: str
) -> None:
    document = read_document(openapi_documents / name)
    echo = EchoApi(document)
    async with serve_app(echo) as served:
        count, failed = await _failures(document, echo, served.url)
    operations = sum(
        1
        for item in document["paths"].values()
        for m in item
        if m in ("get", "post", "put", "delete", "patch", "head", "options", "trace")
    )
    assert count == operations and count > 0
    assert failed == []
    assert len(echo.calls) == count  # each call reached the server, each one once


async def test_the_petstore_places_each_argument_where_the_document_says(
    openapi_documents: Path,
) -> None:
    document = read_document(openapi_documents / "3.0/yaml/petstore.yaml")
    echo = EchoApi(document)
    async with serve_app(echo) as served, httpx.AsyncClient(base_url=served.url) as http:
        server = Server.from_openapi(document, http)
        async with Client(server) as client:
            found = await client.call_tool("getPetById", {"petId": 7})
            deleted = await client.call_tool("deletePet", {"petId": 7, "api_key": "k1"})
            listed = await client.call_tool("findPetsByStatus", {"status": ["sold", "pending"]})
            added = await client.call_tool(
                "addPet", {"name": "Rex", "photoUrls": ["https://example.com/rex.png"]}
            )
    assert not (found.isError or deleted.isError or listed.isError or added.isError)
    get, delete, find, add = echo.calls
    assert get["path"] == {"petId": "7"} and delete["headers"]["api_key"] == "k1"
    assert find["query"] == [("status", "sold"), ("status", "pending")]
    assert add["body"] == b'{"name":"Rex","photoUrls":["https://example.com/rex.png"]}'
    assert found.structuredContent == sample(document["components"]["schemas"]["Pet"], document)


async def test_a_3_1_and_a_3_0_document_of_one_api_make_the_same_tools(
    openapi_documents: Path,
) -> None:
    names = []
    for name in ("3.0/json/petstore.json", "3.1/yaml/petstore.yaml"):
        server = Server.from_openapi(openapi_documents / name, httpx.AsyncClient())
        names.append(sorted(server.tools))
    assert names[0] == names[1] and len(names[0]) == 20
