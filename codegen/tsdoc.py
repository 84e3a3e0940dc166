"""TSDoc markup in schema descriptions, rendered as plain docstring text.

The official schemas are generated from TypeScript, and their descriptions keep its TSDoc:
inline `{@link Target}` / `{@link Target | text}` references and block tags (`@see`,
`@example`, `@deprecated`, ...). The schema's own generator also drops the ` | ` of a link,
leaving `{@link CallToolRequesttools/call}` for `{@link CallToolRequest | tools/call}`. In a
Python docstring none of that means anything, so the pre-pass rewrites it:

- `{@link X}` (a definition, a member `X.field`, a URL) -> `` `X` `` (a URL stays bare);
- `{@link X | text}`, `{@link X text}` and the glued `{@link Xtext}` -> the link text;
- `{@linkcode X}`, `{@linkplain X}`, `{@code X}` likewise; `{@inheritDoc}` goes;
- a block tag at the start of a line -> its plain English: `@deprecated` -> "Deprecated:",
  `@see` -> "See also:", `@example` -> "Example:", `@remarks` -> nothing, ...

Text inside ``` fences is code and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

_INLINE = re.compile(r"\{@(link|linkcode|linkplain|code|inheritDoc|inheritdoc)\b\s*([^{}]*)\}")
_BLOCK_TAG = re.compile(r"^(\s*)@([A-Za-z][A-Za-z]*)\b[ \t]*")
_FENCE = re.compile(r"^\s*```")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+\Z")

# Block tags -> the words that replace them ("" drops the tag and keeps its text).
_TAGS = {
    "deprecated": "Deprecated:",
    "see": "See also:",
    "example": "Example:",
    "remarks": "",
    "privateRemarks": "",
    "default": "Default:",
    "defaultValue": "Default:",
    "returns": "Returns:",
    "return": "Returns:",
    "param": "Parameter:",
    "throws": "Raises:",
    "since": "Since:",
    "experimental": "Experimental:",
    "beta": "Beta:",
    "alpha": "Alpha:",
    "internal": "Internal:",
    "category": "Category:",
}


def _code(text: str) -> str:
    """A bare token reads as code; text that has spaces or its own backticks stays as it is."""
    if not text or "`" in text or any(ch.isspace() for ch in text):
        return text
    return f"`{text}`"


def _link(kind: str, body: str, names: Collection[str]) -> str:
    body = body.strip()
    if kind.lower() == "inheritdoc":
        return ""
    if kind == "code":
        return _code(body)
    if "|" in body:
        target, text = (part.strip() for part in body.split("|", 1))
        return _code(text or target)
    parts = body.split(None, 1)

    def is_target(target: str) -> bool:
        return not names or target.split(".", 1)[0] in names or bool(_URL.match(target))

    if len(parts) == 2 and is_target(parts[0]):  # `{@link Target text}`
        return parts[1]
    if is_target(body):
        return body if _URL.match(body) else _code(body)
    # `{@link CallToolRequesttools/call}`: the schema generator glued target and text together.
    glued = [n for n in names if body.startswith(n) and body[len(n) : len(n) + 1] not in ("", ".")]
    if glued:
        return _code(body[len(max(glued, key=len)) :])
    return parts[1] if len(parts) == 2 else _code(body)


def _block_tag(line: str) -> str:
    match = _BLOCK_TAG.match(line)
    if match is None or match[2] not in _TAGS and not match[2].islower():
        return line  # not a tag we know, nor shaped like one (e.g. `@Annotation`)
    indent, tag = match[1], match[2]
    words = _TAGS.get(tag, f"{tag[:1].upper()}{tag[1:]}:")
    rest = line[match.end() :]
    if not words:
        return indent + rest
    if not rest.strip() and words.endswith(":") and tag not in ("example", "see", "returns"):
        return f"{indent}{words[:-1]}."  # `@deprecated` alone -> "Deprecated."
    return f"{indent}{words} {rest}".rstrip()


def plain_text(text: str, names: Collection[str] = ()) -> str:
    """`text` with its TSDoc markup rendered as plain docstring text; `names` are the schema's
    definitions (to take a glued `{@link Xtext}` apart)."""
    if "@" not in text:
        return text
    out, fenced = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            line = _INLINE.sub(lambda m: _link(m[1], m[2], names), line)
            line = _block_tag(line)
        out.append(line)
    return "\n".join(out)


def rewrite_descriptions(
    node: Any,
    names: Collection[str],
    literal_keys: Collection[str],
    map_keys: Collection[str],
    *,
    schema_map: bool = False,
) -> Any:
    """Every `description` annotation under `node`, rendered with `plain_text`. Values of
    `literal_keys` (`const`, `default`, ...) are data and stay as they are; the values of
    `map_keys` (`properties`, ...) are schemas whatever their names."""
    if isinstance(node, list):
        return [rewrite_descriptions(v, names, literal_keys, map_keys) for v in node]
    if not isinstance(node, dict):
        return node
    if schema_map:
        return {k: rewrite_descriptions(v, names, literal_keys, map_keys) for k, v in node.items()}
    out = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            out[key] = plain_text(value, names)
        elif key in literal_keys:
            out[key] = value
        else:
            out[key] = rewrite_descriptions(
                value, names, literal_keys, map_keys, schema_map=key in map_keys
            )
    return out
