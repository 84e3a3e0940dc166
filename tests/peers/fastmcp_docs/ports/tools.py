"""The mcpio port of originals/tools.py (FastMCP's Tools page), written after reading
docs/servers/tools.md."""

import asyncio
from dataclasses import dataclass
from typing import Any

from mcpio import Server, ToolError, ToolResult

server = Server("Library desk")


@server.tool
def multiply(x: int, y: int) -> int:
    """The product of two whole numbers."""
    return x * y


@server.tool(
    name="lookup_books",
    description="Looks books up by title, within one genre if given.",
    tags={"shelf", "lookup"},
    meta={"revision": "3", "owner": "shelf-team"},
)
def books_by_title(title: str, genre: str | None = None) -> list[dict[str, Any]]:
    """Not shown: the description keyword replaces this docstring."""
    return [{"isbn": "978-0-00-000000-0", "title": f"{title} ({genre})"}]


@dataclass
class Member:
    handle: str
    joined: int
    city: str


@server.tool
def member_card(member_id: str) -> Member:
    """A library member's card."""
    return Member(handle="rosa", joined=2019, city="Lyon")


@server.tool
def shelf_report() -> ToolResult:
    """Answers its own content, structured data and meta."""
    return ToolResult(
        "3 shelves checked",
        structured_content={"shelves": 3, "empty": 1},
        meta={"elapsed_ms": 12},
    )


@server.tool
def ratio(part: float, whole: float) -> float:
    """The part's share of the whole."""
    if whole == 0:
        raise ToolError("The whole must not be zero.")
    return part / whole


@server.tool(timeout=0.2)
async def slow_lookup(isbn: str) -> dict[str, Any]:
    """Outlasts its timeout."""
    await asyncio.sleep(5)
    return {"isbn": isbn}
