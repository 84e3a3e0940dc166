"""schema/revisions.toml: the pinned revisions, read and written."""

from __future__ import annotations

import datetime
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from codegen.errors import CodegenError

# ASCII digits only, anchored at both ends (`$` would also accept a trailing newline).
REVISION_NAME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
ERAS = ("legacy", "modern")
_KEYS = {"sha256", "source", "era"}


def is_revision_name(name: str) -> bool:
    """A revision is named by a real calendar date, YYYY-MM-DD."""
    if not REVISION_NAME.match(name):
        return False
    try:
        datetime.date.fromisoformat(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Pin:
    revision: str
    sha256: str
    source: str | None  # upstream URL; None: added from a local file, no URL recorded
    era: str | None = None


def read_pins(path: Path) -> dict[str, Pin]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CodegenError(f"{path}: no such file") from None
    except OSError as exc:
        raise CodegenError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CodegenError(f"{path}: not valid TOML: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"{path}: not valid TOML: {exc}") from None
    pins: dict[str, Pin] = {}
    for rev, table in data.items():
        if not is_revision_name(rev) or not isinstance(table, dict):
            raise CodegenError(f"{path}: [{rev}] is not a revision table (YYYY-MM-DD)")
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise CodegenError(
                f"{path}: [{rev}] unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_KEYS))})"
            )
        sha, source, era = table.get("sha256"), table.get("source"), table.get("era")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise CodegenError(f"{path}: [{rev}] sha256 must be 64 lowercase hex digits")
        if source is not None and (not isinstance(source, str) or not source):
            raise CodegenError(f"{path}: [{rev}] source must be a non-empty string")
        if era is not None and era not in ERAS:
            raise CodegenError(f"{path}: [{rev}] era must be one of {', '.join(ERAS)}")
        pins[rev] = Pin(rev, sha, source, era)
    return dict(sorted(pins.items()))


def toml_string(text: str) -> str:
    """A TOML basic string holding exactly `text` (quotes, backslashes, controls escaped)."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


HEADER = (
    "# Pinned MCP protocol revisions: the inputs of `make generate`.",
    "# Each table: the revision's schema.json sha256, where upstream publishes it, and an optional",
    '# `era = "legacy" | "modern"` override (normally the era is derived from the schema itself).',
    "# Add a revision with `mcp-codegen add REV --from PATH_OR_URL [--source URL]`.",
)
# A table header as `render_pins` writes it (and as people write it): ["2025-11-25"] or [2025-11-25]
_TABLE = re.compile(r'\s*\[\s*"?([0-9]{4}-[0-9]{2}-[0-9]{2})"?\s*\]\s*(?:#.*)?\Z')
LOCAL_ORIGIN = (
    "# No `source`: added from a local file, and no upstream URL was given (`add --source URL`)."
)


def _table(pin: Pin) -> list[str]:
    lines = [f"[{toml_string(pin.revision)}]", f"sha256 = {toml_string(pin.sha256)}"]
    if pin.source is None:
        lines.insert(1, LOCAL_ORIGIN)
    else:
        lines.append(f"source = {toml_string(pin.source)}")
    if pin.era:
        lines.append(f"era = {toml_string(pin.era)}")
    return lines


def _blocks(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The lines before the first table, and each table's lines: its header, its keys and every
    comment in it, with the comments right above its header (no blank line between)."""
    lines = text.splitlines()
    starts = []
    for at, line in enumerate(lines):
        match = _TABLE.match(line)
        if match:
            start = at
            while start > 0 and lines[start - 1].lstrip().startswith("#"):
                start -= 1
            starts.append((max(start, starts[-1][1] + 1 if starts else 0), at, match[1]))
    preamble = lines[: starts[0][0]] if starts else lines
    blocks = {}
    for index, (start, _, rev) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        block = lines[start:end]
        while block and not block[-1].strip():
            block.pop()
        blocks[rev] = block
    while preamble and not preamble[-1].strip():
        preamble.pop()
    return preamble, blocks


def _same_pin(block: list[str], pin: Pin) -> bool:
    try:
        table = tomllib.loads("\n".join(block)).get(pin.revision)
    except tomllib.TOMLDecodeError:
        return False
    return (
        isinstance(table, dict)
        and Pin(pin.revision, table.get("sha256", ""), table.get("source"), table.get("era")) == pin
    )


def render_pins(pins: dict[str, Pin], existing: str | None = None) -> str:
    """revisions.toml for `pins`. Given the file's current text, everything a person wrote in it
    is kept: the opening comments, and each unchanged table exactly as it is (comments too)."""
    preamble, blocks = _blocks(existing) if existing is not None else (list(HEADER), {})
    out = list(preamble)
    for pin in sorted(pins.values(), key=lambda p: p.revision):
        block = blocks.get(pin.revision)
        if block is None or not _same_pin(block, pin):
            comments = []
            for line in block or []:
                if not line.lstrip().startswith("#"):
                    break
                comments.append(line)
            block = comments + _table(pin)
        out += ["", *block] if out else block
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- extensions

EXTENSION_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_EXTENSION_KEYS = {"name", "sha256", "source", "member", "built_on", "task_methods"}


@dataclass(frozen=True)
class ExtensionPin:
    """An extension pinned beside the revisions (schema/extensions.toml)."""

    id: str  # "io.modelcontextprotocol/tasks"
    name: str  # folder and module name: schema/ext/<name>/, mcp_wire.<revision>.ext.<name>
    sha256: str
    source: str | None
    # the core revisions its schema was written against (its copies of core definitions are
    # theirs); newer revisions of the same era get it where it still fits (codegen.carry)
    built_on: tuple[str, ...]
    task_methods: tuple[str, ...]  # methods its specification lets a server answer with a task
    # the schema's path inside `source` when upstream publishes it in a tarball (an npm package)
    member: str | None = None

    @property
    def label(self) -> str:
        return f"extension {self.id}"


def read_extension_pins(path: Path) -> dict[str, ExtensionPin]:
    """The pinned extensions; none when the file does not exist."""
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CodegenError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CodegenError(f"{path}: not valid TOML: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"{path}: not valid TOML: {exc}") from None
    pins: dict[str, ExtensionPin] = {}
    for ext_id, table in data.items():
        where = f"{path}: [{toml_string(ext_id)}]"
        if not isinstance(table, dict) or "/" not in ext_id:
            raise CodegenError(f"{where} is not an extension table (a prefixed id, e.g. a.b/name)")
        if "since" in table:
            raise CodegenError(
                f"{where} `since` is replaced by `built_on = [...]`: the revisions its schema "
                "was written against (newer ones get it where it still fits)"
            )
        unknown = sorted(set(table) - _EXTENSION_KEYS)
        if unknown:
            allowed = ", ".join(sorted(_EXTENSION_KEYS))
            raise CodegenError(f"{where} unknown key {unknown[0]!r} (allowed: {allowed})")
        name, sha, source = table.get("name"), table.get("sha256"), table.get("source")
        built_on, methods = table.get("built_on"), table.get("task_methods", [])
        member = table.get("member")
        if not isinstance(name, str) or not EXTENSION_NAME.match(name):
            raise CodegenError(f"{where} name must be a lowercase Python identifier")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise CodegenError(f"{where} sha256 must be 64 lowercase hex digits")
        if source is not None and (not isinstance(source, str) or not source):
            raise CodegenError(f"{where} source must be a non-empty string")
        if (
            not isinstance(built_on, list)
            or not built_on
            or not all(isinstance(r, str) and is_revision_name(r) for r in built_on)
        ):
            raise CodegenError(
                f"{where} built_on must be a non-empty list of revisions (YYYY-MM-DD)"
            )
        if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
            raise CodegenError(f"{where} task_methods must be a list of method names")
        if member is not None and (not isinstance(member, str) or not member):
            raise CodegenError(f"{where} member must be a non-empty path inside the source")
        if any(p.name == name for p in pins.values()):
            raise CodegenError(f"{where} name {name!r} is taken by another extension")
        pins[ext_id] = ExtensionPin(
            ext_id, name, sha, source, tuple(sorted(set(built_on))), tuple(methods), member
        )
    return dict(sorted(pins.items()))
