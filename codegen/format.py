"""black + ruff over generated Python text, so output is formatted the same way on every machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import black

from codegen.errors import CodegenError

ROOT = Path(__file__).resolve().parent.parent
LINE_LENGTH = 100
_PY311 = black.TargetVersion.PY311  # pyright: ignore[reportPrivateImportUsage]
_BLACK_MODE = black.Mode(line_length=LINE_LENGTH, target_versions={_PY311})


def _ruff() -> list[str]:
    candidate = Path(sys.executable).with_name("ruff")
    return [str(candidate)] if candidate.exists() else [sys.executable, "-m", "ruff"]


def format_python(source: str, filename: str) -> str:
    """Fix imports and modern syntax with ruff, then format with black; raises on invalid code."""
    proc = subprocess.run(
        [*_ruff(), "check", "--fix", "--quiet", "--exit-zero", "--config", str(ROOT / "pyproject.toml"),
         "--stdin-filename", filename, "-"],
        input=source, capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    if proc.returncode != 0:
        raise CodegenError(f"ruff failed on {filename}: {proc.stderr.strip().splitlines()[-1:]}")
    try:
        return black.format_str(proc.stdout, mode=_BLACK_MODE)
    except black.InvalidInput as exc:  # pyright: ignore[reportPrivateImportUsage]
        raise CodegenError(f"generated {filename} is not valid Python: {exc}") from None
