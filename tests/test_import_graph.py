"""The runtime's modules import one another in one direction only: no cycle, counting every
import statement (at module level, inside functions, and under `if TYPE_CHECKING:`), so that
no deferred import hides one. Package `__init__` modules that only re-export are left out.
Every module sits in one layer of `LAYERS` and imports nothing from a layer above its own;
the maintainer's Layout page (docs/maintainers/layout.md) names the same layers in the same order.
"""

from __future__ import annotations

import ast
import re
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "runtime"
PACKAGES = ("mcp_wire_runtime", "mcpio")
LAYOUT = ROOT.parent / "docs" / "maintainers" / "layout.md"

# Bottom to top: each layer's modules (fnmatch patterns of dotted names).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("wire", ("mcp_wire_runtime", "mcp_wire_runtime.*", "mcpio._version")),
    ("core", ("mcpio._core", "mcpio._core.*", "mcpio.latest")),
    ("transports", ("mcpio.transports", "mcpio.transports.*")),
    ("auth", ("mcpio.auth", "mcpio.auth.*")),
    (
        "features",
        (
            "mcpio.apps",
            "mcpio.middleware",
            "mcpio.middleware.*",
            "mcpio.tasks",
            "mcpio.tasks.*",
            "mcpio.skills",
            "mcpio.skills.*",
            "mcpio.openapi",
            "mcpio.openapi.*",
        ),
    ),
    ("http host", ("mcpio.http", "mcpio.http.*")),
    ("server", ("mcpio.server", "mcpio.server.*")),
    ("client", ("mcpio.client", "mcpio.client.*")),
    ("inspect", ("mcpio.inspect", "mcpio.inspect.*")),
    ("commands", ("mcpio.cli", "mcpio.cli.*", "mcpio.__main__")),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {
        module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
    }


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
    reexports = {"mcpio", "mcp_wire_runtime"}
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
    assert "mcpio._core.handlers" in edges["mcpio.server._server"]


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_the_types_runtime_imports_nothing_of_mcpio() -> None:
    """`mcp_wire_runtime` ships in the `mcp-wire` distribution, which has no `mcpio`: any import of
    it, even deferred or for type checking only, would break that install."""
    found = modules()
    named = {
        m: sorted(t for t in imports_of(m, p, set(found)) if t.startswith("mcpio"))
        for m, p in found.items()
        if m.startswith("mcp_wire_runtime")
    }
    assert len(named) >= 10
    assert {m: t for m, t in named.items() if t} == {}


def test_the_inspector_is_the_top_layer() -> None:
    """`mcpio.inspect` uses the runtime; no other runtime module imports it but the `mcpio`
    command (`mcpio.cli`, `python -m mcpio`), which is above it."""
    edges = graph()
    inspect = {m for m in edges if m.startswith("mcpio.inspect")}
    assert {"mcpio.inspect._checks", "mcpio.inspect._relay", "mcpio.inspect._cli"} <= inspect
    assert all(
        not (deps & inspect)
        for m, deps in edges.items()
        if m not in inspect | {"mcpio.__main__", "mcpio.cli._main"}
    )
    assert {
        m
        for m in inspect
        for dep in edges[m]
        if dep in {"mcpio.server", "mcpio.server._connection"}
    } == set()


def layer_of(module: str) -> int:
    """The index in `LAYERS` of the one layer `module` sits in."""
    found = [
        i for i, (_, patterns) in enumerate(LAYERS) if any(fnmatchcase(module, p) for p in patterns)
    ]
    assert len(found) == 1, f"{module} sits in {len(found)} layers of LAYERS: name it in one"
    return found[0]


def test_no_package_cycle() -> None:
    """Packages (`mcpio.tasks`, `mcpio.http`, `mcpio.transports`, ...: each a node, top-level
    modules their own) import one another in one direction too."""
    packages: dict[str, set[str]] = {}
    for module, deps in graph().items():
        node = ".".join(module.split(".")[:2])
        packages.setdefault(node, set()).update(
            ".".join(d.split(".")[:2]) for d in deps if not d.startswith(node + ".") and d != node
        )
    assert cycles(packages) == []


def test_every_module_imports_only_its_own_layer_and_below() -> None:
    upward = [
        f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
        for m, deps in sorted(graph().items())
        for d in sorted(deps)
        if layer_of(d) > layer_of(m)
    ]
    assert upward == []


def test_the_layout_page_names_the_layers_in_their_order() -> None:
    layout = LAYOUT.read_text(encoding="utf-8")
    line = re.search(r"Layers, bottom to top: (.+?)\. ", layout.replace("\n", " "))
    assert line is not None, "the Layout page names no layers"
    assert re.findall(r"\*\*(.+?)\*\*", line.group(1)) == [name for name, _ in LAYERS]


def test_no_test_module_imports_another() -> None:
    """What test modules share lives in `tests/support/`, not in another test module."""
    tests = ROOT.parent / "tests"
    found = []
    for path in sorted(tests.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            found += [
                f"{path.relative_to(tests)} imports {name}"
                for name in names
                if name.startswith("tests.") and name.rpartition(".")[2].startswith("test_")
            ]
    assert found == []


def test_the_request_path_names_no_task_machinery() -> None:
    """Tasks is an extension the server plugs in (issue 48): the connection, its listen streams
    and the server's concerns import nothing of `mcpio.tasks`; only the facade that installs it,
    the task worker and the client side do."""
    edges = graph()
    naming = sorted(
        m for m, deps in edges.items() if not m.startswith("mcpio.tasks") and any(
            d == "mcpio.tasks" or d.startswith("mcpio.tasks.") for d in deps
        )
    )  # fmt: skip
    assert naming == [
        "mcpio.cli._worker",
        "mcpio.client._client",
        "mcpio.client._proxy",
        "mcpio.server._server",
    ]


def test_the_connection_sees_its_server_through_seven_members() -> None:
    tree = ast.parse((ROOT / "mcpio" / "server" / "_served.py").read_text(encoding="utf-8"))
    served = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Served")
    members = [n.name for n in served.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert members == [
        "identity",
        "limits",
        "hub",
        "sealer",
        "extensions",
        "dispatch",
        "capabilities_in",
    ]
