"""Elicitation: a typed form (`response_type=`), a single value, and the three answers; each
`--8<--` section is one snippet of docs/servers/elicitation.md."""

from typing import Any, Literal

import anyio
from pydantic import BaseModel

from mcpio import Client, Context, Server
from mcpio.server import Accepted, Cancelled, Declined

server = Server("booking")


# --8<-- [start:first]
class Seat(BaseModel):
    row: int
    window: bool


@server.tool
async def book(flight: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Which seat on {flight}?", response_type=Seat)
    if isinstance(answer, Accepted):  # else Declined() or Cancelled()
        return f"row {answer.data.row}, window: {answer.data.window}"
    return "no seat booked"


# --8<-- [end:first]


# --8<-- [start:scalar]
@server.tool
async def meal(ctx: Context) -> str:
    answer = await ctx.elicit("Which meal?", response_type=Literal["fish", "veggie"])
    match answer:  # asked as {"value": ...}, answered as the value itself
        case Accepted(data=choice):
            return f"{choice} it is"
        case Declined():
            return "no meal"
        case Cancelled():
            return "booking cancelled"
    return "unreachable"


# --8<-- [end:scalar]


async def ask(params: Any) -> dict[str, Any]:
    print("asked:", params.message, sorted(params.requestedSchema.properties))
    if params.message == "Which meal?":
        return {"action": "decline"}
    return {"action": "accept", "content": {"row": 12, "window": True}}


async def main() -> None:
    async with Client(server, elicitation=ask) as client:
        for tool, args in (("book", {"flight": "SK1"}), ("meal", {})):
            result = await client.call_tool(tool, args)
            print(getattr(result.content[0], "text", None))


anyio.run(main)

# Output:
#   asked: Which seat on SK1? ['row', 'window']
#   row 12, window: True
#   asked: Which meal? ['value']
#   no meal
