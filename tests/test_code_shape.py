"""The runtime's hand-written code keeps the shape a reader can follow: no function over 60
lines (its docstring counted), and calls laid out by black, never packed several arguments to a
line behind `# fmt: skip`. A test checks one behaviour: none holds ten asserts or more (a
scenario too costly to run per check runs once per module, `tests/support/once.py`, and each
check reads what it saw)."""

from __future__ import annotations

import ast

from tests.support import ROOT

RUNTIME = ROOT / "runtime"  # mcpio and mcp_wire_runtime
TESTS = ROOT / "tests"
MAX_FUNCTION_LINES = 60
MAX_ASSERTS = 9


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines a function spans, from its `def` to its last line."""
    return (node.end_lineno or node.lineno) - node.lineno + 1


def test_no_function_is_over_60_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({code_lines(node)})"
        for path in sorted(RUNTIME.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and code_lines(node) > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_no_formatting_is_switched_off() -> None:
    marked = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted(RUNTIME.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "# fmt: skip" in line or "# fmt: off" in line
    ]
    assert marked == []


def test_no_test_holds_ten_asserts_or_more() -> None:
    crowded = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({count})"
        for path in sorted(TESTS.rglob("test_*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test")
        and (count := sum(isinstance(n, ast.Assert) for n in ast.walk(node))) > MAX_ASSERTS
    ]
    assert crowded == []
