"""Building the project's two wheels and installing them into fresh virtual environments, as
another project would: nothing of the checkout on sys.path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import ROOT

TYPES = ROOT / "packaging" / "mcp-wire"


def clean_env() -> dict[str, str]:
    """This environment without what would let the checkout leak into the new one."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def built_wheels(out: Path) -> dict[str, Path]:
    """Build the `mcp-wire` and `mcpgen` wheels into `out`; each by its distribution's name."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
         str(TYPES), str(ROOT)],
        check=True, timeout=300, env=clean_env(),
    )  # fmt: skip
    (types,) = out.glob("mcp_wire-*.whl")
    (runtime,) = out.glob("mcpgen-*.whl")
    return {"mcp-wire": types, "mcpgen": runtime}


def installed(where: Path, requirement: str, *pip: str, interpreter: str = sys.executable) -> Path:
    """A fresh venv in `where` made by `interpreter`, `requirement` (a built wheel, with extras)
    installed into it: the other built wheels from the wheel's folder, the rest from the package
    index (`pip`: pip's further options); its python. The venv has no pip of its own: this
    environment's installs into it (`pip --python`), without ensurepip's seconds per venv."""
    target = where / "venv"
    subprocess.run(
        [interpreter, "-m", "venv", "--clear", "--without-pip", str(target)],
        check=True, timeout=120,
    )  # fmt: skip
    python = target / "bin" / "python"
    wheelhouse = Path(requirement.split("[", 1)[0]).parent
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--disable-pip-version-check", "--find-links", str(wheelhouse), *pip, requirement],
        check=True, timeout=300, cwd=where, env=clean_env(),
    )  # fmt: skip
    return python


def run_json(python: Path, where: Path, *args: str, timeout: float = 180) -> Any:
    """Run `python -I *args` in `where` (isolated: the checkout cannot leak in); it must succeed
    and print one JSON value, returned."""
    proc = subprocess.run(
        [str(python), "-I", *args],
        capture_output=True, text=True, timeout=timeout, cwd=where, env=clean_env(), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
