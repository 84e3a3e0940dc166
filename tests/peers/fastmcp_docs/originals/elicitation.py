"""Exercises the features of FastMCP's Elicitation page (docs/servers/elicitation.mdx) under
FastMCP: a dataclass asked for and each action told apart, a `str` matched on the result's
classes, and a Literal."""

from dataclasses import dataclass
from typing import Literal

from fastmcp import Context, FastMCP
from fastmcp.server.elicitation import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
)

mcp = FastMCP("Front desk")


@dataclass
class Stay:
    guest: str
    nights: int


@mcp.tool
async def reserve_room(ctx: Context) -> str:
    """Asks who is staying and for how long."""
    answer = await ctx.elicit(message="Who is staying, and how many nights?", response_type=Stay)
    if answer.action == "accept":
        stay = answer.data
        return f"Reserved {stay.nights} night(s) for {stay.guest}"
    elif answer.action == "decline":
        return "No reservation made"
    else:
        return "Reservation abandoned"


@mcp.tool
async def ask_city(ctx: Context) -> str:
    answer = await ctx.elicit("Which city are you travelling from?", response_type=str)
    match answer:
        case AcceptedElicitation(data=city):
            return f"Noted: {city}"
        case DeclinedElicitation():
            return "No city given"
        case CancelledElicitation():
            return "Asking stopped"
    return "unreachable"


@mcp.tool
async def choose_speed(ctx: Context) -> str:
    answer = await ctx.elicit("Which delivery speed?", response_type=Literal["slow", "fast"])
    return f"Delivery: {answer.data}" if answer.action == "accept" else answer.action
