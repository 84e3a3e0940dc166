"""Prompts with typed arguments, and completions for them."""

import anyio

from mcpio import Client, Server
from mcpio.latest import public as pub

server = Server("prompts", "1.0")
LANGUAGES = ["python", "rust", "typescript"]


@server.prompt()
def review(language: str, days: int = 3) -> str:
    """Asks for a code review.

    Args:
        language: The language the code is written in.
        days: How long the review may take.
    """
    return f"Review this {language} code within {days} days."


@server.completer()
def complete(params: pub.CompleteRequestParams) -> list[str]:
    """Completes the `language` argument of `review` from what was typed so far."""
    if params.argument.name == "language":
        return [name for name in LANGUAGES if name.startswith(params.argument.value)]
    return []


async def main() -> None:
    async with Client(server) as client:
        prompts = await client.list_prompts()
        print([(a.name, a.required) for a in prompts.prompts[0].arguments or []])
        result = await client.get_prompt("review", {"language": "rust", "days": "2"})
        print(getattr(result.messages[0].content, "text", None))
        ref = {"type": "ref/prompt", "name": "review"}
        done = await client.complete(ref, "language", "py")
        print(done.completion.values)


anyio.run(main)

# Output:
#   [('language', True), ('days', False)]
#   Review this rust code within 2 days.
#   ['python']
