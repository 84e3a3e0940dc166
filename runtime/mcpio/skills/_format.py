"""What server and host agree on about a skill (SEP-2640, the Agent Skills format).

The extension's identifier and limits, digests, skill names and URIs, and SKILL.md frontmatter.

Frontmatter is YAML, read with PyYAML (the `skills` extra) restricted towards YAML 1.2's core
schema (what other implementations parse with): `yes`/`no`/`on`/`off` stay strings, and so do
dates, so a frontmatter block renders as the same JSON object on either side. It is data, not a
program: anchors and aliases (`&a`, `*a`, and so `<<: *a` merges) are refused, since a few
hundred bytes of aliases expand to megabytes of JSON in every `skills/list`; so is a block over
`MAX_FRONTMATTER_BYTES` or nested deeper than `MAX_FRONTMATTER_DEPTH`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from mcpio._core.extras import needs

EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
DIRECTORY_MIME = "inode/directory"
MAX_RESOURCES = 512  # entries per skill, SKILL.md included (the SEP's SHOULD NOT exceed)
MAX_TOTAL_BYTES = 16 * 1024 * 1024  # bytes per skill
MAX_FRONTMATTER_BYTES = 64 * 1024  # the YAML block, UTF-8 (the Agent Skills fields need < 2 KiB)
MAX_FRONTMATTER_DEPTH = 32  # nested sequences and mappings
NAME = re.compile(r"^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
_BLOCK = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
_BOOL_1_2 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


class FrontmatterError(ValueError):
    """A SKILL.md whose frontmatter is missing, not YAML, or lacks `name` / `description`."""


def digest(data: bytes) -> str:
    """`sha256:{64 lowercase hex}` of raw bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def frontmatter(text: str) -> dict[str, Any]:
    """Read the YAML frontmatter block a SKILL.md begins with, as a JSON-ready object.

    It must carry a non-empty string `name` and `description`.

    Raises:
        FrontmatterError: When the block is missing, over `MAX_FRONTMATTER_BYTES`, refused
            (anchors and aliases, nesting deeper than `MAX_FRONTMATTER_DEPTH`), not valid YAML,
            not a mapping, or without a non-empty string `name` or `description`.
    """
    found = _BLOCK.match(text.removeprefix("\ufeff"))
    if found is None:
        raise FrontmatterError("SKILL.md does not begin with a --- delimited frontmatter block")
    block = found.group(1)
    size = len(block.encode())
    if size > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"the frontmatter is over {MAX_FRONTMATTER_BYTES} bytes ({size})")
    with needs("skills", "reading SKILL.md frontmatter"):
        import yaml
    loader = _loader()
    try:
        data = yaml.load(block, Loader=loader)  # noqa: S506 (a SafeLoader)
    except loader.Refused as exc:
        raise FrontmatterError(f"the frontmatter is refused: {_first_line(exc)}") from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"the frontmatter is not valid YAML: {_first_line(exc)}") from None
    if type(data) is not dict:
        raise FrontmatterError("the frontmatter is not a YAML mapping")
    for field in ("name", "description"):
        value = data.get(field)
        if type(value) is not str or not value.strip():
            raise FrontmatterError(f"the frontmatter has no non-empty string {field!r}")
    return data


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]


_LOADER: Any = None


def _loader() -> Any:
    """A SafeLoader without YAML 1.1's timestamps and yes/no booleans, anchors and aliases,
    or nesting deeper than `MAX_FRONTMATTER_DEPTH` (built once)."""
    global _LOADER
    if _LOADER is None:
        import yaml
        from yaml.composer import ComposerError

        class Refused(ComposerError):
            """Valid YAML that frontmatter may not use."""

        class Loader(yaml.SafeLoader):
            depth = 0

            def compose_node(self, parent: Any, index: Any) -> Any:
                event = self.peek_event()
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                    raise Refused(
                        None,
                        None,
                        "anchors and aliases (& and *) are not allowed",
                        event.start_mark,
                    )
                if self.depth >= MAX_FRONTMATTER_DEPTH:
                    raise Refused(
                        None,
                        None,
                        f"nested deeper than {MAX_FRONTMATTER_DEPTH} levels",
                        event.start_mark,
                    )
                self.depth += 1
                try:
                    return super().compose_node(parent, index)
                finally:
                    self.depth -= 1

        resolvers: dict[Any, list[Any]] = {}
        for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items():
            kept = [
                (tag, regexp)
                for tag, regexp in entries
                if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
            ]
            resolvers[first] = kept
        Loader.Refused = Refused  # pyright: ignore[reportAttributeAccessIssue]
        Loader.yaml_implicit_resolvers = resolvers
        Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL_1_2, list("tTfF"))
        _LOADER = Loader
    return _LOADER


def skill_name(uri: str) -> str | None:
    """The skill name a SKILL.md URI ends in (`skill://a/b/name/SKILL.md` -> `name`)."""
    _, sep, rest = uri.partition("://")
    parts = [part for part in rest.split("/") if part]
    if not sep or len(parts) < 2 or parts[-1] != SKILL_FILE:
        return None
    return parts[-2]


def skill_root(uri: str) -> str:
    """The directory URI of the skill whose SKILL.md is at `uri` (no trailing slash)."""
    return uri.removesuffix("/" + SKILL_FILE)
