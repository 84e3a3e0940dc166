"""Every public name of `mcpio` (the hand-written runtime, `mcp_wire_runtime` included) has a
docstring, in the one style the API reference renders: prose, with examples only as doctests
under an `Examples:` section; and every doctest runs and passes.

Public names are those of api-surface.txt (scripts/api_surface.py): each public module, what it
defines (classes, functions), and the public methods and properties each class's body defines,
or a mixin of it does (`class_members`; a docstring inherited from the method it overrides
counts).
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from tests.support.surface import api_surface

SURFACE = api_surface()
MODULES = [m for m in SURFACE.public_modules() if m.startswith(("mcpio", "mcp_wire_runtime"))]
HOMES = SURFACE.public_homes([importlib.import_module(m) for m in SURFACE.public_modules()])
# Every module of the runtime, private ones too: their doctests run as well.
WALKED = [
    info.name
    for package in ("mcp_wire_runtime", "mcpio")
    for info in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}.")
]
ALL_MODULES = sorted({"mcp_wire_runtime", "mcpio", *WALKED} - {"mcpio.__main__"})  # it runs the CLI


def checked_here(obj: Any, module: ModuleType) -> bool:
    """Whether `module` answers for `obj`'s docstring: it defines it, or re-exports it from a
    private module (a public module's own names are checked there)."""
    return obj.__module__ == module.__name__ or obj.__module__ not in MODULES


OTHER_STYLES = re.compile(r"^\s*(:param\b|:returns?:|:rtype:|-{3,}\s*$)", re.MULTILINE)


def members(cls: type) -> Iterator[tuple[str, Any]]:
    """The public methods and properties a class's own body (or a mixin's) defines, with their
    docstring as `inspect.getdoc` finds it: inherited from an overridden method too."""
    for name, value in SURFACE.class_members(cls, HOMES):
        if isinstance(value, property):
            yield name, value.__doc__
        elif isinstance(value, classmethod | staticmethod) or inspect.isfunction(value):
            yield name, inspect.getdoc(getattr(cls, name))


def undocumented(module: ModuleType) -> Iterator[str]:
    if not module.__doc__:
        yield module.__name__
    for name in SURFACE.defined_names(module):
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not checked_here(obj, module):
            continue  # a re-export of a public module's name: checked there
        own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        if not own:
            yield f"{module.__name__}.{name}"
        if inspect.isclass(obj):
            yield from (f"{module.__name__}.{name}.{m}" for m, doc in members(obj) if not doc)


def docstrings(module: ModuleType) -> Iterator[tuple[str, str]]:
    yield module.__name__, module.__doc__ or ""
    for name in SURFACE.defined_names(module):
        obj = getattr(module, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and checked_here(obj, module):
            yield f"{module.__name__}.{name}", inspect.getdoc(obj) or ""


def test_every_public_name_has_a_docstring() -> None:
    missing = [name for module in MODULES for name in undocumented(importlib.import_module(module))]
    assert missing == [], f"{len(missing)} public names without a docstring"


def test_docstrings_are_in_one_style() -> None:
    """No Sphinx fields or NumPy underlines (the reference renders Google-style sections), and a
    `>>>` example only inside an `Examples:` section, where the doctests below run it."""
    wrong = []
    for module in MODULES:
        for name, doc in docstrings(importlib.import_module(module)):
            if OTHER_STYLES.search(doc):
                wrong.append(f"{name}: Sphinx or NumPy markup")
            if ">>>" in doc.split("Examples:", 1)[0]:
                wrong.append(f"{name}: an example outside an Examples: section")
    assert wrong == []


@pytest.mark.parametrize("module", ALL_MODULES)
def test_the_doctests_pass(module: str) -> None:
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(importlib.import_module(module), module):
        runner.run(test)
    assert runner.failures == 0, f"{module}: {runner.failures} failing doctest example(s)"


def test_the_doctests_are_there() -> None:
    finder = doctest.DocTestFinder()
    examples = {
        module: sum(len(t.examples) for t in finder.find(importlib.import_module(module), module))
        for module in ("mcpio", "mcpio.server._server", "mcpio.auth._resource")
    }
    assert all(examples.values()), examples


def opens_with_a_summary(doc: str) -> bool:
    """PEP 257: one line, then (if there is more) a blank line."""
    lines = inspect.cleandoc(doc).splitlines()
    return bool(lines) and (len(lines) == 1 or not lines[1].strip())


def parameters(fn: Any) -> int:
    """How many parameters a caller names (self, cls, *args and **kwargs not counted)."""
    try:
        found = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 0
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return len([p for p in found if p.name not in ("self", "cls") and p.kind not in variadic])


def described(module: ModuleType) -> Iterator[tuple[str, Any]]:
    """The classes, functions, methods and properties `module` answers for, by name."""
    for name in SURFACE.defined_names(module):
        obj = getattr(module, name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and checked_here(obj, module):
            yield f"{module.__name__}.{name}", obj
            if inspect.isclass(obj):
                for member, value in SURFACE.class_members(obj, HOMES):
                    if isinstance(value, property):
                        yield f"{module.__name__}.{name}.{member}", value.fget
                    elif isinstance(value, classmethod | staticmethod):
                        yield f"{module.__name__}.{name}.{member}", value.__func__
                    elif inspect.isfunction(value):
                        yield f"{module.__name__}.{name}.{member}", value


def test_every_public_docstring_opens_with_a_one_line_summary() -> None:
    """And a function or class of more than two parameters has an `Args:` section."""
    wrong = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        if not opens_with_a_summary(module.__doc__ or ""):
            wrong.append(f"{module_name}: no one-line summary")
        for name, obj in described(module):
            doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else inspect.getdoc(obj)
            if not opens_with_a_summary(doc or ""):
                wrong.append(f"{name}: no one-line summary")
            init = obj.__init__ if inspect.isclass(obj) else obj
            args = "Args:" in (doc or "") or "Args:" in (inspect.getdoc(init) or "")
            if parameters(init) > 2 and not args:
                wrong.append(f"{name}: more than two parameters and no Args: section")
    assert wrong == []
