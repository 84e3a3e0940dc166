"""`Server.from_fastapi` on a real FastAPI app: its own document, every route a tool called in
process, its dependencies and security running on each call (a header a dependency requires,
a bearer token an `HTTPBearer` scheme checks), its validation and `HTTPException`s tool errors."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import pytest
from fastapi import Depends, FastAPI, Header, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from mcpio import Client, Server
from tests.support import serve_app

pytestmark = pytest.mark.anyio


class Item(BaseModel):
    name: str
    price: float
    tags: list[str] = []


def tenant(x_tenant: Annotated[str, Header()]) -> str:
    """A dependency every route of the app needs: the tenant a header names."""
    if x_tenant not in ("acme", "globex"):
        raise HTTPException(403, f"unknown tenant {x_tenant}")
    return x_tenant


bearer = HTTPBearer()


def caller(credentials: Annotated[HTTPAuthorizationCredentials, Depends(bearer)]) -> str:
    if credentials.credentials != "s3cret":
        raise HTTPException(401, "bad token")
    return "alice"


def make_app() -> FastAPI:
    app = FastAPI(title="Shop", version="3.2")
    items: dict[int, Item] = {1: Item(name="pen", price=1.5)}

    @app.get("/items/{item_id}", operation_id="get_item", response_model=Item)
    def get_item(item_id: int, who: Annotated[str, Depends(tenant)]) -> Item:
        if item_id not in items:
            raise HTTPException(404, "no such item")
        return items[item_id]

    @app.post("/items", operation_id="create_item", status_code=201)
    def create_item(
        item: Item,
        where: Annotated[str, Depends(tenant)],
        user: Annotated[str, Depends(caller)],
    ) -> dict[str, Any]:
        items[len(items) + 1] = item
        return {"id": len(items), "tenant": where, "by": user}

    @app.get("/search", operation_id="search")
    def search(q: str, where: Annotated[str, Depends(tenant)], limit: int = 10) -> list[str]:
        return [i.name for i in items.values() if q in i.name][:limit]

    return app


async def test_every_route_is_a_tool_with_its_dependencies_intact() -> None:
    server = Server.from_fastapi(make_app(), headers={"authorization": "Bearer s3cret"})
    assert sorted(server.tools) == ["create_item", "get_item", "search"]
    assert (server.info.name, server.info.version) == ("Shop", "3.2")
    async with Client(server) as client:
        got = await client.call_tool("get_item", {"item_id": 1, "x_tenant": "acme"})
        made = await client.call_tool(
            "create_item", {"name": "ink", "price": 2, "x_tenant": "globex"}
        )
        found = await client.call_tool("search", {"q": "in", "x_tenant": "acme"})
    assert got.structuredContent == {"name": "pen", "price": 1.5, "tags": []}
    assert made.structuredContent == {"id": 2, "tenant": "globex", "by": "alice"}
    assert found.structuredContent == {"result": ["ink"]}


async def test_a_dependency_that_refuses_is_a_tool_error() -> None:
    server = Server.from_fastapi(make_app())  # no bearer token
    async with Client(server) as client:
        stranger = await client.call_tool("get_item", {"item_id": 1, "x_tenant": "initech"})
        unknown = await client.call_tool("get_item", {"item_id": 9, "x_tenant": "acme"})
        anonymous = await client.call_tool(
            "create_item", {"name": "ink", "price": 2, "x_tenant": "acme"}
        )
        header = await client.call_tool("get_item", {"item_id": 1})
    assert stranger.isError and stranger.structuredContent == {
        "status": 403,
        "body": {"detail": "unknown tenant initech"},
    }
    assert unknown.isError and "HTTP 404" in unknown.content[0].text
    assert anonymous.isError and anonymous.structuredContent["status"] in (401, 403)  # type: ignore[index]
    assert header.isError and "x_tenant" in header.content[0].text  # required by the schema


async def test_the_mcp_callers_token_is_forwarded_when_asked() -> None:
    server = Server.from_fastapi(make_app(), forward_headers=["authorization"])
    async with (
        serve_app(server.http_app()) as served,
        Client(f"{served.url}/mcp", headers={"authorization": "Bearer s3cret"}) as client,
    ):
        made = await client.call_tool(
            "create_item", {"name": "cap", "price": 3, "x_tenant": "acme"}
        )
    assert made.structuredContent == {"id": 2, "tenant": "acme", "by": "alice"}


class Recorded(httpx.AsyncClient):
    """An `httpx.AsyncClient` that keeps every one made (the server's own, to check)."""

    made: list[httpx.AsyncClient] = []

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        Recorded.made.append(self)


async def test_the_client_it_makes_is_closed_when_the_server_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(httpx, "AsyncClient", Recorded)
    monkeypatch.setattr(Recorded, "made", [])
    server = Server.from_fastapi(make_app())
    for run in range(2):  # started again: a client of its own again
        async with Client(server) as client:
            found = await client.call_tool("search", {"q": "pen", "x_tenant": "acme"})
        assert found.structuredContent == {"result": ["pen"]}, run
        assert Recorded.made and all(made.is_closed for made in Recorded.made), run
    assert len(Recorded.made) == 2


async def test_a_client_given_to_from_openapi_is_the_caller_s_to_close() -> None:
    document = make_app().openapi()
    given = httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app()), base_url="http://t")
    async with given:
        server = Server.from_openapi(document, given)
        async with Client(server) as client:
            found = await client.call_tool("search", {"q": "pen", "x_tenant": "acme"})
        assert found.structuredContent == {"result": ["pen"]}
        assert not given.is_closed
