"""Elicitation: a typed form (`response_type=`) and its three answers."""

from typing import Any

import anyio
from pydantic import BaseModel

from mcpio import Client, Context, Server
from mcpio.server import Accepted

server = Server("booking", "1.0")


class Seat(BaseModel):
    row: int
    window: bool


@server.tool()
async def book(ctx: Context, flight: str) -> str:
    answer = await ctx.elicit(f"Which seat on {flight}?", response_type=Seat)
    if isinstance(answer, Accepted):  # else Declined() or Cancelled()
        return f"row {answer.data.row}, window: {answer.data.window}"
    return "no seat booked"


async def ask(params: Any) -> dict[str, Any]:
    print("asked:", params.message, sorted(params.requestedSchema.properties))
    return {"action": "accept", "content": {"row": 12, "window": True}}


async def main() -> None:
    async with Client(server, elicitation=ask) as client:
        result = await client.call_tool("book", {"flight": "SK1"})
        print(getattr(result.content[0], "text", None))


anyio.run(main)

# Output:
#   asked: Which seat on SK1? ['row', 'window']
#   row 12, window: True
