"""A handler's docstring read for its parameters' descriptions, in the three usual styles:

Google (`Args:` / `Arguments:` / `Parameters:`, each `name (type): text`), NumPy (a
`Parameters` heading underlined with dashes, each `name : type` over its indented text) and
Sphinx (`:param name: text`, `:param type name: text`, with `:type name:` lines dropped). What
remains is the description.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_GOOGLE = re.compile(r"(Args|Arguments|Parameters|Params):\s*")
_GOOGLE_ITEM = re.compile(r"\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)")
_NUMPY_ITEM = re.compile(r"\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?::.*)?")
_SPHINX = re.compile(
    r":(param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:\s*(.*)"
)
_SPHINX_TYPE = re.compile(r":type\s+\w+\s*:")


class Docstring(NamedTuple):
    description: str | None  # the docstring without its parameter section
    params: dict[str, str]  # parameter name -> its description


def parse(doc: str | None) -> Docstring:
    """The description and the parameters' descriptions of a cleaned docstring
    (`inspect.getdoc`)."""
    if not doc:
        return Docstring(None, {})
    lines = doc.strip().splitlines()
    params: dict[str, str] = {}
    kept: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if _GOOGLE.fullmatch(stripped):
            i = _google(lines, i + 1, indent, params)
        elif stripped in ("Parameters", "Arguments", "Other Parameters") and _underlined(lines, i):
            i = _numpy(lines, i + 2, indent, params)
        elif _SPHINX.match(stripped) or _SPHINX_TYPE.match(stripped):
            i = _sphinx(lines, i, indent, params)
        else:
            kept.append(line)
            i += 1
    description = "\n".join(kept).strip()
    return Docstring(re.sub(r"\n{3,}", "\n\n", description) or None, params)


def _underlined(lines: list[str], i: int) -> bool:
    return i + 1 < len(lines) and re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]) is not None


def _block(lines: list[str], i: int, indent: int) -> int:
    """Where the lines indented deeper than `indent` from `i` (blank ones within) end."""
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
        i += 1
    return i


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str], i: int, indent: int, params: dict[str, str]) -> int:
    end = _block(lines, i, indent)
    item_indent = min((_indent(x) for x in lines[i:end] if x.strip()), default=0)
    name = None
    for line in lines[i:end]:
        found = _GOOGLE_ITEM.fullmatch(line.strip())
        if _indent(line) == item_indent and found:
            name = found.group(1)
            params[name] = found.group(2).strip()
        elif name is not None and line.strip():
            params[name] = (params[name] + " " + line.strip()).strip()
    return end


def _numpy(lines: list[str], i: int, indent: int, params: dict[str, str]) -> int:
    name = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            if i + 1 < len(lines) and _underlined(lines, i + 1):
                break  # the next section
            i += 1
            continue
        if _indent(line) <= indent:
            if _underlined(lines, i):
                break
            found = _NUMPY_ITEM.fullmatch(line.strip())
            if found is None:
                break
            name = found.group(1)
            params[name] = ""
        elif name is not None:
            params[name] = (params[name] + " " + line.strip()).strip()
        i += 1
    return i


def _sphinx(lines: list[str], i: int, indent: int, params: dict[str, str]) -> int:
    found = _SPHINX.match(lines[i].strip())
    end = _block(lines, i + 1, indent)
    if found is not None:
        text = " ".join([found.group(3), *(x.strip() for x in lines[i + 1 : end])])
        params[found.group(2)] = " ".join(text.split())
    return end
