"""A small server written with the official Python SDK (`mcp==2.3.0`), the peer that
tests/interop/test_interop.py points our `mcpio.Client` at over stdio:

    python tests/peers/sdk_server.py

The SDK decides the era per connection from the first request, so one process serves either a
legacy session (after `initialize`) or 2026-07-28 requests. The elicitation uses the SDK's
resolver pattern (`Resolve` + `Elicit`): a live `elicitation/create` on a legacy session, an
`input_required` round on 2026-07-28, from the same handler.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import (
    AcceptedElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    Resolve,
)
from mcp.types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)
from pydantic import BaseModel

NAME = "mcpgen-sdk-peer"
VERSION = "2.3.0"
TOPICS = ("MCP", "Markdown", "Python")

mcp = MCPServer(NAME, version=VERSION, instructions="An interop peer for mcpgen's tests.")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


class Name(BaseModel):
    name: str


async def ask_name() -> Elicit[Name]:
    """Live elicitation/create on a legacy session, an input_required round on 2026-07-28."""
    return Elicit("What is your name?", Name)


@mcp.tool()
async def greet(who: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Greet the user after eliciting their name."""
    match who:
        case AcceptedElicitation(data=Name(name=name)):
            return f"Hello, {name}!"
        case DeclinedElicitation():
            return "declined"
        case CancelledElicitation():
            return "cancelled"
    return "unexpected"


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress once per step, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted {steps}"


@mcp.tool()
async def bump(ctx: Context) -> str:
    """Announce a tool-list change to every listener."""
    await ctx.notify_tools_changed()
    return "bumped"


@mcp.resource("peer://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A static text resource."""
    return "hello from the SDK peer"


@mcp.resource("peer://items/{item}", name="item", mime_type="text/plain")
def item(item: str) -> str:
    """A resource template."""
    return f"item {item}"


@mcp.prompt()
def intro(topic: str) -> str:
    """A prompt with one argument."""
    return f"Tell me about {topic}."


@mcp.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion:
    values = [topic for topic in TOPICS if topic.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


if __name__ == "__main__":
    mcp.run()
