"""Exercises the features of FastMCP's Tools page (docs/servers/tools.mdx) under FastMCP: a
plain tool, the decorator's keywords, a dataclass answer, ToolResult, ToolError, a wrong
argument type and a timeout."""

import asyncio
from dataclasses import dataclass

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from mcp.types import TextContent

mcp = FastMCP(name="Library desk")


@mcp.tool
def multiply(x: int, y: int) -> int:
    """The product of two whole numbers."""
    return x * y


@mcp.tool(
    name="lookup_books",
    description="Looks books up by title, within one genre if given.",
    tags={"shelf", "lookup"},
    meta={"revision": "3", "owner": "shelf-team"},
)
def books_by_title(title: str, genre: str | None = None) -> list[dict]:
    """Not shown: the description keyword replaces this docstring."""
    return [{"isbn": "978-0-00-000000-0", "title": f"{title} ({genre})"}]


@dataclass
class Member:
    handle: str
    joined: int
    city: str


@mcp.tool
def member_card(member_id: str) -> Member:
    """A library member's card."""
    return Member(handle="rosa", joined=2019, city="Lyon")


@mcp.tool
def shelf_report() -> ToolResult:
    """Answers its own content, structured data and meta."""
    return ToolResult(
        content=[TextContent(type="text", text="3 shelves checked")],
        structured_content={"shelves": 3, "empty": 1},
        meta={"elapsed_ms": 12},
    )


@mcp.tool
def ratio(part: float, whole: float) -> float:
    """The part's share of the whole."""
    if whole == 0:
        raise ToolError("The whole must not be zero.")
    return part / whole


@mcp.tool(timeout=0.2)
async def slow_lookup(isbn: str) -> dict:
    """Outlasts its timeout."""
    await asyncio.sleep(5)
    return {"isbn": isbn}
