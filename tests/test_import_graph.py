"""The runtime's modules import one another in one direction only: no cycle, counting every
import statement (at module level, inside functions, and under `if TYPE_CHECKING:`), so that
no deferred import hides one. Package `__init__` modules that only re-export are left out."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "runtime"
PACKAGE = "mcpio"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The runtime modules `name` imports, by any statement anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            if target in known and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    # The packages whose __init__ only re-exports (lazily) point at everything: left out.
    reexports = {"mcpio", "mcpio.wire"}
    return {m: imports_of(m, p, known) - reexports for m, p in found.items() if m not in reexports}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first walk (each reported once, from its smallest name)."""
    found: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                found.add(tuple(path))
            elif nxt > start and nxt not in path:
                walk(start, nxt, [*path, nxt])

    for start in sorted(edges):
        walk(start, start, [start])
    return [list(c) for c in sorted(found)]


def test_the_graph_is_read() -> None:
    edges = graph()
    assert "mcpio.server" in edges and "mcpio.handlers" in edges["mcpio.server"]


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_the_inspector_is_the_top_layer() -> None:
    """`mcpio.inspect` uses the runtime; no other runtime module imports it but the `mcpio`
    command (`mcpio.cli`, `python -m mcpio`), which is above it."""
    edges = graph()
    inspect = {m for m in edges if m.startswith("mcpio.inspect")}
    assert {"mcpio.inspect.checks", "mcpio.inspect.relay", "mcpio.inspect.cli"} <= inspect
    assert all(
        not (deps & inspect)
        for m, deps in edges.items()
        if m not in inspect | {"mcpio.__main__", "mcpio.cli"}
    )
    assert {
        m for m in inspect for dep in edges[m] if dep in {"mcpio.server", "mcpio.connection"}
    } == set()
