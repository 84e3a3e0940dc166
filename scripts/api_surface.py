"""The public API of the wheel's packages as text, one name (and signature) a line.

Every public module of `mcpio` (the hand-written runtime) and of `mcp_wire_runtime` (what the
generated code imports, and `mcp_wire` re-exports), and the top level of `mcp_wire`: the names each
defines (or lists in `__all__`),
classes with their constructor, bases and public members, functions with their signatures
(each overload too), other values by their type (type variables and loggers left out). The revisions' generated models are left out: they are the schema's, and
`make check` holds them. `api-surface.txt` is this text, checked in; tests/test_api_surface.py
fails when the code no longer matches it.

    python scripts/api_surface.py            # print it
    python scripts/api_surface.py --write    # rewrite api-surface.txt (`make api-surface`)
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import logging
import pkgutil
import re
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SURFACE = ROOT / "api-surface.txt"
# Module-level objects that are not API whatever their names: type variables and loggers.
NOT_API = (typing.TypeVar, typing.ParamSpec, logging.Logger)
HEADER = (
    "# The public API of mcpio, mcp_wire and mcp_wire_runtime (scripts/api_surface.py). A change\n"
    "# here is a change\n"
    "# of the public API: see docs/policies/versioning.md. Rewrite with `make api-surface`.\n"
)


def public_modules() -> list[str]:
    """`mcp_wire`, and `mcp_wire_runtime` and `mcpio` with each of their submodules without a
    leading underscore."""
    import mcp_wire_runtime
    import mcpio

    found = ["mcp_wire", "mcp_wire_runtime", "mcpio"]
    for package in (mcp_wire_runtime, mcpio):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                found.append(info.name)
    return sorted(found)


def defined_names(module: ModuleType) -> list[str]:
    """The public names a module's own source binds at its top level, in source order (what
    `__all__` lists instead, where the module has one)."""
    listed = getattr(module, "__all__", None)
    if listed is not None:
        return list(listed)
    tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return [n for n in dict.fromkeys(names) if not n.startswith("_")]


class _Raw:
    """An annotation shown as written (postponed annotations are strings: no quotes)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def signature(obj: Any) -> str:
    """`obj`'s signature as source would write it, or `(...)` where Python cannot tell."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = [_plain(p) for p in sig.parameters.values()]
    ret = sig.return_annotation
    sig = sig.replace(
        parameters=params, return_annotation=_Raw(ret) if isinstance(ret, str) else ret
    )
    return re.sub(r" at 0x[0-9a-fA-F]+", "", str(sig))  # no addresses in default values


def _plain(param: inspect.Parameter) -> inspect.Parameter:
    """A parameter with its annotation as written and a set default in a stable order."""
    if isinstance(param.annotation, str):
        param = param.replace(annotation=_Raw(param.annotation))
    if isinstance(param.default, set | frozenset):
        items = ", ".join(sorted(repr(item) for item in param.default))
        param = param.replace(default=_Raw(f"{type(param.default).__name__}({{{items}}})"))
    return param


def function_lines(name: str, fn: Any, indent: str = "") -> list[str]:
    kind = "async def" if inspect.iscoroutinefunction(fn) else "def"
    overloads = typing.get_overloads(fn) if inspect.isfunction(fn) else []
    return [f"{indent}{kind} {name}{signature(f)}" for f in overloads or [fn]]


def folded_bases(cls: type, homes: dict[int, str]) -> list[type]:
    """The bases of `cls` that are a part of it: public names in a private module, exported by no
    public module (the mixins of `Server`'s concerns), and theirs; their members are `cls`'s own
    to a user. A base with a private name (`_Media`) is not one: it is shown as a base."""
    found: list[type] = []
    for base in cls.__bases__:
        part = private(base.__module__) and not base.__name__.startswith("_")
        if part and id(base) not in homes:
            found += [base, *folded_bases(base, homes)]
    return found


def class_members(cls: type, homes: dict[int, str]) -> Iterator[tuple[str, Any]]:
    """The public names (and values) a class's own body defines, then those of its folded
    bases (`folded_bases`), each once."""
    seen: set[str] = set()
    for owner in (cls, *folded_bases(cls, homes)):
        for name, value in vars(owner).items():
            if not name.startswith("_") and name not in seen:
                seen.add(name)
                yield name, value


def member_lines(cls: type, homes: dict[int, str]) -> Iterator[str]:
    """The public members of a class (`class_members`): methods, properties, enum members."""
    for name, value in class_members(cls, homes):
        if isinstance(value, property):
            hint = signature(value.fget).rsplit(" -> ", 1)
            yield f"    property {name}" + (f": {hint[1]}" if len(hint) == 2 else "")
        elif isinstance(value, classmethod | staticmethod):
            kind = "classmethod" if isinstance(value, classmethod) else "staticmethod"
            yield from (
                f"    {kind} {line.strip()}" for line in function_lines(name, value.__func__)
            )
        elif inspect.isfunction(value):
            yield from function_lines(name, value, "    ")
        elif isinstance(cls, enum.EnumMeta) and isinstance(getattr(cls, name, None), cls):
            yield f"    {name} = {getattr(cls, name).value!r}"


def private(module_name: str) -> bool:
    """Whether a module is private: a part of its dotted name starts with an underscore."""
    return any(part.startswith("_") for part in module_name.split("."))


def public_homes(modules: list[ModuleType]) -> dict[int, str]:
    """Where each class or function that a private module defines is described: the public
    module with the longest name among those exporting it (`mcpio.server` for `Server`, which
    `mcpio` exports too)."""
    homes: dict[int, str] = {}
    for module in sorted(modules, key=lambda m: (-len(m.__name__), m.__name__)):
        for name in defined_names(module):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                if private(getattr(obj, "__module__", "") or "_"):
                    homes.setdefault(id(obj), module.__name__)
    return homes


def describe(module: ModuleType, name: str, homes: dict[int, str]) -> list[str]:
    obj = getattr(module, name)
    home = getattr(obj, "__module__", None)
    if home is not None and private(home):
        home = homes.get(id(obj), home)  # defined in a private module: its public home
    if (inspect.isclass(obj) or inspect.isfunction(obj)) and home != module.__name__:
        return [f"{name} = {home}.{name}"]  # a re-export: described at home
    if inspect.isclass(obj):
        folded = folded_bases(obj, homes)
        shown = [b for b in obj.__bases__ if b is not object and b not in folded]
        head = f"class {name}" + (f"({', '.join(b.__qualname__ for b in shown)})" if shown else "")
        return [head, f"    {name}{signature(obj)}", *member_lines(obj, homes)]
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return function_lines(name, obj)
    if isinstance(obj, ModuleType):
        return [f"{name}: module {obj.__name__}"]
    if isinstance(obj, NOT_API):
        return []
    kind = type(obj).__name__
    return [f"{name}: " + ("type alias" if kind.startswith("_") or "Alias" in kind else kind)]


def surface() -> str:
    lines = [HEADER]
    modules = [importlib.import_module(name) for name in public_modules()]
    homes = public_homes(modules)
    for module in modules:
        lines.append(f"\n## {module.__name__}\n")
        for name in defined_names(module):
            lines.extend(line + "\n" for line in describe(module, name, homes))
    return "".join(lines)


def main(argv: list[str]) -> int:
    text = surface()
    if argv[1:] == ["--write"]:
        SURFACE.write_text(text, encoding="utf-8")
        print(f"api_surface: wrote {SURFACE.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    elif argv[1:]:
        print("usage: api_surface.py [--write]", file=sys.stderr)
        return 2
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
