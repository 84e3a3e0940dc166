"""scripts/api_surface.py loaded as a module (it is a script, not a package)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from tests.support import ROOT


def api_surface() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "api_surface", ROOT / "scripts" / "api_surface.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
