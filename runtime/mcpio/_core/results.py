"""The return helpers FastMCP code uses: `ToolResult`, a tool's whole result, and `Message`, one
message of a prompt. Each becomes the public model it stands for when its handler returns it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcp_wire_runtime.codec import plain
from mcpio._core.content import content_block
from mcpio.latest import public as pub


@dataclass(frozen=True)
class ToolResult:
    """A tool's whole result: its content blocks, structured content, `_meta` and error flag.

    Args:
        content: What the model reads: a string, a content block, `Image`/`Audio`/`File`, any
            other value (its JSON text), or a list of those (one block each). None: the
            structured content's JSON text.
        structured_content: The result's structured content, a mapping (or a model or
            dataclass that dumps as one).
        meta: The result's `_meta`.
        is_error: The call failed (`isError`): the model reads why in `content`.

    Raises:
        ValueError: Neither `content` nor `structured_content` is given, or the structured
            content is not an object.

    Examples:
        >>> ToolResult("done", structured_content={"count": 2}).result().structuredContent
        {'count': 2}
    """

    content: Any = None
    structured_content: Any = None
    meta: Mapping[str, Any] | None = None
    is_error: bool = False

    def __post_init__(self) -> None:
        if self.content is None and self.structured_content is None:
            raise ValueError("ToolResult needs content or structured_content")
        if self.structured_content is not None and not isinstance(
            plain(self.structured_content), dict
        ):
            raise ValueError("ToolResult's structured_content must be an object (a mapping)")

    def result(self) -> pub.CallToolResult:
        """The `CallToolResult` it stands for."""
        structured = None if self.structured_content is None else plain(self.structured_content)
        shown = structured if self.content is None else self.content
        items: list[Any] = (
            list(shown) if isinstance(shown, list | tuple) else [shown]
        )  # pyright: ignore[reportUnknownArgumentType]
        data: dict[str, Any] = {
            "content": [content_block(item) for item in items],
            "resultType": "complete",
        }
        if structured is not None:
            data["structuredContent"] = structured
        if self.is_error:
            data["isError"] = True
        if self.meta is not None:
            data["_meta"] = dict(self.meta)
        return pub.CallToolResult(**data)


@dataclass(frozen=True)
class Message:
    """One message of a prompt: `Message("text")` is the user's, `role="assistant"` the model's.

    Args:
        content: A string, a content block, `Image`/`Audio`/`File`, or any other value (its
            JSON text).
        role: Who says it: `"user"` or `"assistant"`.

    Examples:
        >>> Message("I can help.", role="assistant").message().role
        'assistant'
    """

    content: Any
    role: Literal["user", "assistant"] = "user"

    def message(self) -> pub.PromptMessage:
        """The `PromptMessage` it stands for."""
        return pub.PromptMessage(role=self.role, content=content_block(self.content))
