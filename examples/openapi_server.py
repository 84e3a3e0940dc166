"""A server made of an HTTP API's OpenAPI document: every operation a tool, a GET a resource
template by a route map; the API here a stand-in answered in process (httpx.MockTransport)."""

import anyio
import httpx

from mcpio import Client, Server
from mcpio.openapi import RouteMap

DOCUMENT = """
openapi: 3.1.0
info: {title: Pets, version: "1.0"}
paths:
  /pets:
    post:
      operationId: createPet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
      responses:
        "201":
          description: the pet
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
  /pets/{petId}:
    get:
      operationId: showPet
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      responses:
        "200": {description: the pet, content: {application/json: {schema: {$ref: "#/components/schemas/Pet"}}}}
        "404": {description: no such pet}
components:
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        tag: {type: string}
"""


def api(request: httpx.Request) -> httpx.Response:
    """The pets API: it knows pet 1 only."""
    if request.method == "POST":
        return httpx.Response(201, content=request.content)
    if request.url.path == "/pets/1":
        return httpx.Response(200, json={"name": "Rex"})
    return httpx.Response(404, json={"detail": "no such pet"})


client = httpx.AsyncClient(transport=httpx.MockTransport(api), base_url="https://pets.example")
# --8<-- [start:route_maps]
server = Server.from_openapi(
    DOCUMENT,
    client,
    route_maps=[RouteMap("resource_template", methods=["GET"], pattern=r"\{")],
)
# --8<-- [end:route_maps]


async def main() -> None:
    async with Client(server) as client:
        created = await client.call_tool("createPet", {"name": "Kit", "tag": "cat"})
        print(created.structuredContent)  # {'name': 'Kit', 'tag': 'cat'}
        pet = await client.read_resource("resource://showPet/1")
        print(getattr(pet.contents[0], "text", None))  # {"name":"Rex"}
    print(list(server.templates))  # ['resource://showPet/{petId}']


anyio.run(main)

# Output:
#   {'name': 'Kit', 'tag': 'cat'}
#   {"name":"Rex"}
#   ['resource://showPet/{petId}']
