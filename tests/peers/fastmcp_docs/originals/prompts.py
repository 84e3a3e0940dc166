"""Exercises the features of FastMCP's Prompts page (docs/servers/prompts.mdx) under FastMCP: a
prompt answering text, one answering messages, the decorator's keywords with typed arguments,
and messages whose content is not text."""

from fastmcp import FastMCP
from fastmcp.prompts import Message

mcp = FastMCP(name="Phrasebook")


@mcp.prompt
def explain_term(term: str) -> str:
    """Asks for a term's meaning in plain words."""
    return f"What does '{term}' mean, in plain words?"


@mcp.prompt
def translation_chat(source: str, target: str) -> list[Message]:
    """Opens a translation exchange."""
    return [
        Message(f"I will send you {source} sentences; answer each in {target}."),
        Message("Ready: send the first sentence.", role="assistant"),
    ]


@mcp.prompt(name="score_summary", description="Summarises a list of scores.", tags={"reports"})
def scores_prompt(scores: list[int], cutoff: float = 0.5) -> str:
    """Not shown: the description keyword replaces this docstring."""
    return f"Summarise {scores}: total {sum(scores)}, cutoff {cutoff}."


@mcp.prompt
def json_payloads() -> list[Message]:
    """Messages whose content is a mapping and a list."""
    return [Message({"lang": "fr", "formal": True}), Message(["un", "deux"], role="assistant")]
