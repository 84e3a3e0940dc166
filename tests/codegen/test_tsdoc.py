"""TSDoc markup in schema descriptions becomes plain docstring text (codegen.tsdoc)."""

from __future__ import annotations

import pytest

from codegen.normalize import normalize
from codegen.tsdoc import plain_text
from tests.support import REVISIONS, ROOT, official_schema

NAMES = {"CallToolRequest", "Tool", "MetaObject", "ClientCapabilities", "Root"}


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("a {@link Tool} here", "a `Tool` here"),
        ("see {@link Tool.outputSchema}", "see `Tool.outputSchema`"),
        ("a {@link CallToolRequest | tools/call} request", "a `tools/call` request"),
        ("a {@link CallToolRequest tools/call request}", "a tools/call request"),
        # the schema generator's own mangling: target and text glued together
        ("a {@link CallToolRequesttools/call} request", "a `tools/call` request"),
        ("the {@link MetaObject`_meta` key naming rules}", "the `_meta` key naming rules"),
        ("{@linkcode Root} and {@linkplain Root | roots}", "`Root` and `roots`"),
        ("{@link https://example.com/spec}", "https://example.com/spec"),
        ("{@link https://example.com/spec the spec}", "the spec"),
        ("call {@code tools/list} first", "call `tools/list` first"),
        ("Text.{@inheritDoc}", "Text."),
        ("{@link Unknown}", "`Unknown`"),
        ("@deprecated Use {@link Tool} instead.", "Deprecated: Use `Tool` instead."),
        ("Old.\n@deprecated", "Old.\nDeprecated."),
        ("x\n@see {@link Root}", "x\nSee also: `Root`"),
        (
            "x\n@example\n```ts\n@decorator\n{@link Tool}\n```",
            "x\nExample:\n```ts\n@decorator\n{@link Tool}\n```",
        ),
        ("@remarks Plain words.", "Plain words."),
        ("@default 0", "Default: 0"),
        ("@internal", "Internal."),
        ("mail me@example.com, or @someone", "mail me@example.com, or @someone"),
        ("no markup at all", "no markup at all"),
    ],
)
def test_plain_text(text: str, plain: str) -> None:
    assert plain_text(text, NAMES) == plain


@pytest.mark.parametrize("rev", REVISIONS)
def test_normalized_descriptions_hold_no_tsdoc(rev: str) -> None:
    normalized, _ = normalize(official_schema(rev), rev)
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "description" and isinstance(value, str) and "{@" in value:
                    found.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(normalized)
    assert found == []


def test_generated_docstrings_read_as_plain_text() -> None:
    for path in sorted((ROOT / "generated" / "mcp_wire").glob("v*/models.py")):
        text = path.read_text(encoding="utf-8")
        assert "{@link" not in text and "{@" not in text, path
    models = (ROOT / "generated" / "mcp_wire" / "v2026_07_28" / "models.py").read_text()
    assert "The result returned by the server for a `tools/call` request." in models
    assert "CallToolRequesttools/call" not in models
