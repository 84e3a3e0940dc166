"""The mcpio port of originals/prompts.py (FastMCP's Prompts page), written after reading
docs/servers/prompts.md."""

from mcpio import Message, Server

server = Server("Phrasebook")


@server.prompt
def explain_term(term: str) -> str:
    """Asks for a term's meaning in plain words."""
    return f"What does '{term}' mean, in plain words?"


@server.prompt
def translation_chat(source: str, target: str) -> list[Message]:
    """Opens a translation exchange."""
    return [
        Message(f"I will send you {source} sentences; answer each in {target}."),
        Message("Ready: send the first sentence.", role="assistant"),
    ]


@server.prompt(name="score_summary", description="Summarises a list of scores.", tags={"reports"})
def scores_prompt(scores: list[int], cutoff: float = 0.5) -> str:
    """Not shown: the description keyword replaces this docstring."""
    return f"Summarise {scores}: total {sum(scores)}, cutoff {cutoff}."


@server.prompt
def json_payloads() -> list[Message]:
    """Messages whose content is a mapping and a list."""
    return [Message({"lang": "fr", "formal": True}), Message(["un", "deux"], role="assistant")]
