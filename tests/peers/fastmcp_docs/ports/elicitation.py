"""The mcpio port of originals/elicitation.py (FastMCP's Elicitation page), written after
reading docs/servers/elicitation.md."""

from dataclasses import dataclass
from typing import Literal

from mcpio import Context, Server
from mcpio.server import Accepted, Cancelled, Declined

server = Server("Front desk")


@dataclass
class Stay:
    guest: str
    nights: int


@server.tool
async def reserve_room(ctx: Context) -> str:
    """Asks who is staying and for how long."""
    answer = await ctx.elicit("Who is staying, and how many nights?", response_type=Stay)
    if isinstance(answer, Accepted):
        stay = answer.data
        return f"Reserved {stay.nights} night(s) for {stay.guest}"
    elif answer.action == "decline":
        return "No reservation made"
    else:
        return "Reservation abandoned"


@server.tool
async def ask_city(ctx: Context) -> str:
    answer = await ctx.elicit("Which city are you travelling from?", response_type=str)
    match answer:
        case Accepted(data=city):
            return f"Noted: {city}"
        case Declined():
            return "No city given"
        case Cancelled():
            return "Asking stopped"
    return "unreachable"


@server.tool
async def choose_speed(ctx: Context) -> str:
    answer = await ctx.elicit("Which delivery speed?", response_type=Literal["slow", "fast"])
    return f"Delivery: {answer.data}" if isinstance(answer, Accepted) else answer.action
