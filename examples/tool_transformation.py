"""Tool transformation: a new tool made of one the server offers (its own, a mounted server's, a
proxied one's), its arguments renamed, hidden or given defaults, with a function around the
call."""

import json

import anyio

from mcpio import Client, Server, ToolError
from mcpio.server import ArgTransform, forward

# --8<-- [start:basic]
server = Server("shop")


@server.tool
def search(q: str, category: str = "all", limit: int = 10) -> list[str]:
    """Search the catalogue."""
    return [f"{category}:{q}:{n}" for n in range(limit)]


server.add_transformed_tool(
    "search",
    name="find_books",
    description="Find books by title.",
    transform_args={
        "q": ArgTransform(name="title", description="Words of the title"),
        "category": ArgTransform(hide=True, default="books"),  # always "books"
        "limit": ArgTransform(default=3),
    },
)
server.disable(names={"search"})  # only the new tool is listed; it still reaches the source
# --8<-- [end:basic]


# --8<-- [start:function]
@server.tool
def divide(a: float, b: float) -> float:
    return a / b


async def safe_divide(numerator: float, denominator: float) -> str:
    if denominator == 0:
        raise ToolError("the denominator must not be 0")  # the model reads this
    result = await forward(numerator=numerator, denominator=denominator)
    return f"{result.structuredContent['result']:.2f}"  # type: ignore[index]


server.add_transformed_tool(
    "divide",
    name="safe_divide",
    transform_args={"a": ArgTransform(name="numerator"), "b": ArgTransform(name="denominator")},
    transform_fn=safe_divide,
)
# --8<-- [end:function]


# --8<-- [start:mounted]
parent = Server("gateway")
parent.mount(server, namespace="shop")
parent.add_transformed_tool(
    "shop_find_books", name="books", transform_args={"limit": ArgTransform(hide=True, default=1)}
)
# --8<-- [end:mounted]


async def main() -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        print(sorted(tools))
        print(json.dumps(tools["find_books"].inputSchema.model_dump(exclude_none=True)))
        found = await client.call_tool("find_books", {"title": "dune"})
        print(found.structuredContent)
        print((await client.call_tool("safe_divide", {"numerator": 1, "denominator": 3})).content[0].text)  # type: ignore[union-attr]
        refused = await client.call_tool("safe_divide", {"numerator": 1, "denominator": 0})
        print(refused.isError, refused.content[0].text)  # type: ignore[union-attr]
    async with Client(parent) as client:
        print((await client.call_tool("books", {"title": "dune"})).structuredContent)


anyio.run(main)

# Output:
#   ['divide', 'find_books', 'safe_divide']
#   {"type": "object", "properties": {"title": {"type": "string", "description": "Words of the title"}, "limit": {"default": 3, "type": "integer"}}, "required": ["title"]}
#   {'result': ['books:dune:0', 'books:dune:1', 'books:dune:2']}
#   0.33
#   True the denominator must not be 0
#   {'result': ['books:dune:0']}
