"""`mcpio dev server.py`: the server under the MCP Inspector (`npx`), which starts it over
stdio as `<this interpreter> -m mcpio run server.py`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

INSPECTOR = "@modelcontextprotocol/inspector"


def inspector_command(app: str, npx: str = "npx") -> list[str]:
    """The command that runs `app` under the MCP Inspector with `npx` (what `mcpio dev` starts)."""
    where, colon, attr = app.partition(":")
    target = str(Path(where).resolve()) + colon + attr
    return [npx, INSPECTOR, sys.executable, "-m", "mcpio", "run", target]


def run_inspector(app: str) -> int | list[str]:
    """The Inspector's exit status once it ends; without `npx` on PATH, its command, unrun."""
    npx = shutil.which("npx")
    if npx is None:
        return inspector_command(app)
    try:
        return subprocess.call(inspector_command(app, npx))
    except KeyboardInterrupt:
        return 130
