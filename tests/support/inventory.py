"""The schema inventory of every revision, as the IR and the changelog tests read it."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from codegen.ir import Direction, Kind
from tests.support import SHARED

INVENTORY = SHARED / "schema-inventory.md"


KINDS = {
    "request": Kind.REQUEST,
    "notification": Kind.NOTIFICATION,
    "input request (MRTR)": Kind.INPUT_REQUEST,
}


DIRECTIONS = {
    "C→S": Direction.CLIENT_TO_SERVER,
    "S→C": Direction.SERVER_TO_CLIENT,
    "both": Direction.BOTH,
    "S→C embedded": Direction.INPUT,
}


RESULT_LINKS = {"name": "name", "ResultResponse": "response", "empty": "empty", "": ""}


NOT_IN_UNION = "(!not in union)"


@dataclass(frozen=True)
class InventoryParams:
    name: str | None  # a named definition, or None for inline / no params
    inline_fields: dict[str, bool] | None  # inline object: field -> required
    required: bool


@dataclass(frozen=True)
class InventoryMethod:
    name: str
    kind: Kind
    direction: Direction
    definition: str
    params: InventoryParams
    results: frozenset[str]
    results_in_union: bool
    task_result: str | None
    result_link: str


def _clean(cell: str) -> str:
    return cell.strip().replace("\\|", "|").replace("`", "").replace("**", "").strip()


def _cells(line: str) -> list[str]:
    text = line.strip()
    if not (text.startswith("|") and text.endswith("|")):
        raise ValueError(f"not a table row: {line!r}")
    return [_clean(cell) for cell in re.split(r"(?<!\\)\|", text[1:-1])]


def _table(lines: list[str]) -> list[dict[str, str]]:
    """The first Markdown table in `lines`, as one dict per row keyed by the header cells."""
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    block = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        block.append(line)
    header = _cells(block[0])
    if not all(re.fullmatch(r"-+", cell) for cell in _cells(block[1])):
        raise ValueError(f"no separator row under {block[0]!r}")
    rows = []
    for line in block[2:]:
        cells = _cells(line)
        if len(cells) != len(header):
            raise ValueError(f"{len(cells)} cells, header has {len(header)}: {line!r}")
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _split(lines: list[str], prefix: str) -> dict[str, list[str]]:
    """Lines grouped under each heading that starts with `prefix` (heading text -> its body)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        if line.startswith(prefix):
            current = out.setdefault(line[len(prefix) :].strip(), [])
        elif current is not None:
            current.append(line)
    return out


@functools.cache
def _inventory_sections() -> dict[str, list[str]]:
    """`## N. Title` sections by number."""
    lines = INVENTORY.read_text(encoding="utf-8").splitlines()
    sections = {}
    for title, body in _split(lines, "## ").items():
        number = re.match(r"(\d+)\.", title)
        if number:
            sections[number[1]] = body
    return sections


def _params(cell: str) -> InventoryParams:
    m = re.fullmatch(
        r"(?:inline \{(?P<fields>[^}]*)\}|(?P<name>\w+)|—)(?P<optional> \(optional\))?", cell
    )
    if m is None:
        raise ValueError(f"unparsed params cell {cell!r}")
    inline = None
    if m["fields"] is not None:
        names = [f.strip() for f in m["fields"].split(",") if f.strip()]
        inline = {f.removesuffix("?"): not f.endswith("?") for f in names}
    present = m["fields"] is not None or m["name"] is not None
    return InventoryParams(m["name"], inline, present and m["optional"] is None)


def _results(cell: str) -> tuple[frozenset[str], bool, str | None]:
    """`A | B`, `X | T if params.task (!not in union)` or `—` -> (results, in union, task result)."""
    if cell in ("", "—"):
        return frozenset(), True, None
    results, in_union, task = set(), True, None
    for part in (p.strip() for p in cell.split("|")):
        flagged = part.endswith(NOT_IN_UNION)
        part = part.removesuffix(NOT_IN_UNION).strip()
        if (m := re.fullmatch(r"(\w+) if params\.task", part)) is not None:
            task = m[1]
        elif re.fullmatch(r"\w+", part):
            results.add(part)
            in_union = in_union and not flagged
        else:
            raise ValueError(f"unparsed result cell {cell!r}")
    return frozenset(results), in_union, task


@dataclass(frozen=True)
class InventoryRevision:
    methods: dict[str, InventoryMethod]
    counts: dict[Kind, int]  # from the `### REV — N request, M notification, K MRTR` heading


@functools.cache
def inventory_methods() -> dict[str, InventoryRevision]:
    heading = re.compile(
        r"(\S+) — (\d+) JSON-RPC request methods, (\d+) notification methods, "
        r"(\d+) MRTR input-request methods"
    )
    out = {}
    for title, body in _split(_inventory_sections()["3"], "### ").items():
        m = heading.fullmatch(title)
        if m is None:
            raise ValueError(f"unexpected §3 heading {title!r}")
        methods = {}
        for row in _table(body):
            results, in_union, task = _results(row["result type"])
            method = InventoryMethod(
                name=row["method"],
                kind=KINDS[row["kind"]],
                direction=DIRECTIONS[row["direction"]],
                definition=row["definition"],
                params=_params(row["params type"]),
                results=results,
                results_in_union=in_union,
                task_result=task,
                result_link=RESULT_LINKS[row["result link"]],
            )
            if method.name in methods:
                raise ValueError(f"{m[1]}: {method.name} listed twice")
            methods[method.name] = method
        counts = {
            Kind.REQUEST: int(m[2]),
            Kind.NOTIFICATION: int(m[3]),
            Kind.INPUT_REQUEST: int(m[4]),
        }
        out[m[1]] = InventoryRevision(methods, counts)
    return out


@functools.cache
def inventory_churn() -> dict[tuple[str, str], tuple[set[str], set[str]]]:
    """§1: (old, new) -> (definition names added, names removed)."""
    out = {}
    for title, body in _split(_inventory_sections()["1"], "### ").items():
        m = re.fullmatch(r"(\S+) vs (\S+)", title)
        if m is None:
            raise ValueError(f"unexpected §1 heading {title!r}")
        churn = {}
        for line in body:
            item = re.fullmatch(r"- \*\*(Added|Removed) \((\d+)\)\*\*: (.*)", line.strip())
            if item is None:
                continue
            names = set(re.findall(r"`([^`]+)`", item[3]))
            if len(names) != int(item[2]):
                raise ValueError(f"{title}: {item[1]} says {item[2]}, lists {len(names)}")
            churn[item[1]] = names
        out[(m[2], m[1])] = (churn["Added"], churn["Removed"])
    return out
