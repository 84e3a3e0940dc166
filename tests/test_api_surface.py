"""The public API is what api-surface.txt records: an accidental change of a public name or
signature of `mcpio` (or of `mcp_wire`'s top level) fails here. A change that is meant rewrites
the file (`make api-surface`) in the same commit, where review sees it."""

from __future__ import annotations

import difflib

import pytest

from tests.support.surface import api_surface

HINT = (
    "If the change is meant, run `make api-surface` and commit api-surface.txt with it "
    "(what a change may break: docs/policies/versioning.md)."
)


def test_the_public_api_is_what_api_surface_txt_records() -> None:
    script = api_surface()
    recorded = script.SURFACE.read_text(encoding="utf-8")
    current = script.surface()
    if current != recorded:
        diff = difflib.unified_diff(
            recorded.splitlines(), current.splitlines(), "api-surface.txt", "the code", lineterm=""
        )
        pytest.fail("the public API changed:\n" + "\n".join(list(diff)[:120]) + "\n" + HINT)


def test_the_surface_names_the_main_classes_with_their_signatures() -> None:
    text = api_surface().surface()
    assert "\n## mcpio.server\n" in text and "\n## mcp_wire_runtime.codec\n" in text
    assert "\nclass Server\n    Server(name: str, version: str = " in text
    assert "\n    async def call_tool(self, name: str, arguments: " in text
    assert "\nClient = mcpio.client.Client\n" in text  # `from mcpio import Client`
    assert "0x" not in text  # no addresses of default values
