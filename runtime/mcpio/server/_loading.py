"""The `Server` a command names: `path/to/file.py[:attr]` or `module:attr`.

Without `:attr`, the module's `server` if it is one, else its only `Server`. A file is imported
under its stem, not as `__main__` (its `if __name__ == "__main__":` block does not run), with
its folder first on `sys.path` (its sibling modules import)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from mcpio.server._server import Server


def load_server(app: str) -> Server:
    """The `Server` that `app` names (`path/to/file.py[:attr]` or `module:attr`); ValueError if
    none."""
    where, _, attr = app.partition(":")
    module = _import(where)
    if attr:
        found = getattr(module, attr, None)
        if not isinstance(found, Server):
            raise ValueError(f"{app}: {attr!r} is not an mcpio Server")
        return found
    named = getattr(module, "server", None)
    if isinstance(named, Server):
        return named
    servers = {name: v for name, v in vars(module).items() if isinstance(v, Server)}
    if len(servers) == 1:
        return next(iter(servers.values()))
    if not servers:
        raise ValueError(f"{where}: no mcpio Server in it (name one: {where}:attr)")
    raise ValueError(f"{where}: several Servers ({', '.join(sorted(servers))}): name one")


def _import(where: str) -> ModuleType:
    if not where.endswith(".py"):
        return importlib.import_module(where)
    path = Path(where).resolve()
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ValueError(f"{where}: no such Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module
