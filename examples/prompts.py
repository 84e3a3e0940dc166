"""The Prompts page, section by section: each `--8<--` section is one snippet of
docs/servers/prompts.md, and main() gets what it defines and prints what a client sees."""

from typing import Any

import anyio

from mcpio import Client, Message, Server
from mcpio.latest import public as pub

# --8<-- [start:first]
server = Server("prompts")


@server.prompt
def explain(topic: str) -> str:  # a string: one user message
    """Asks for an explanation of a topic."""
    return f"Can you explain {topic}?"


# --8<-- [end:first]


async def get_it() -> None:
    # --8<-- [start:get]
    async with Client(server) as client:
        got = await client.get_prompt("explain", {"topic": "recursion"})
        message = got.messages[0]
        print(message.role, getattr(message.content, "text", None))  # user Can you explain ...
    # --8<-- [end:get]


# --8<-- [start:messages]
@server.prompt
def pair_programming(language: str) -> list[Message]:
    return [
        Message(f"Let's write {language} together."),  # role="user" by default
        Message("Gladly. What are we building?", role="assistant"),
        Message({"editor": "vim", "tabs": False}),  # not text: sent as its JSON text
    ]


# --8<-- [end:messages]


# --8<-- [start:arguments]
@server.prompt
def plan_trip(city: str, days: int, budget: float = 100.0) -> str:
    """Plans a trip.

    Args:
        city: Where to.
        days: How long it lasts.
    """
    return f"Plan {days} days in {city} for {budget * days:.0f} euros."


# --8<-- [end:arguments]

LANGUAGES = ["python", "rust", "typescript"]


# --8<-- [start:completions]
@server.completer()
def complete(params: pub.CompleteRequestParams) -> list[str]:
    """Completes `language` (of any prompt or template) from what was typed so far."""
    if params.argument.name == "language":
        return [name for name in LANGUAGES if name.startswith(params.argument.value)]
    return []


# --8<-- [end:completions]


def text(message: Any) -> str | None:
    return getattr(message.content, "text", None)


async def main() -> None:
    await get_it()
    async with Client(server) as client:
        paired = await client.get_prompt("pair_programming", {"language": "Rust"})
        print([(m.role, text(m)) for m in paired.messages])
        planned = await client.get_prompt("plan_trip", {"city": "Rome", "days": "3"})
        print(text(planned.messages[0]))
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        print([(a.name, a.required, a.description) for a in listed["plan_trip"].arguments or []])
        ref = {"type": "ref/prompt", "name": "pair_programming"}
        done = await client.complete(ref, "language", "py")
        print(done.completion.values)


anyio.run(main)

# Output:
#   user Can you explain recursion?
#   [('user', "Let's write Rust together."), ('assistant', 'Gladly. What are we building?'), ('user', '{"editor": "vim", "tabs": false}')]
#   Plan 3 days in Rome for 300 euros.
#   [('city', True, 'Where to.'), ('days', True, 'How long it lasts. (an integer)'), ('budget', False, '(a number)')]
#   ['python']
