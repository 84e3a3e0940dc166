"""`mcpio dev server.py`: the server under the MCP Inspector (`npx`), which starts it over
stdio as `<this interpreter> -m mcpio run server.py`. Outside a terminal (an IDE's task, a
script) npx is given `-y`: its question whether to install the Inspector would wait forever."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

INSPECTOR = "@modelcontextprotocol/inspector"


def inspector_command(app: str, npx: str = "npx", *, assume_yes: bool = False) -> list[str]:
    """The command that runs `app` under the MCP Inspector with `npx` (what `mcpio dev` starts);
    `assume_yes`: npx installs the Inspector without asking."""
    where, colon, attr = app.partition(":")
    target = str(Path(where).resolve()) + colon + attr
    yes = ["-y"] if assume_yes else []
    return [npx, *yes, INSPECTOR, sys.executable, "-m", "mcpio", "run", target]


def run_inspector(app: str) -> int | list[str]:
    """The Inspector's exit status once it ends; without `npx` on PATH, its command, unrun."""
    npx = shutil.which("npx")
    if npx is None:
        return inspector_command(app)
    try:
        return subprocess.call(inspector_command(app, npx, assume_yes=not interactive()))
    except KeyboardInterrupt:
        return 130


def interactive() -> bool:
    """Whether standard input is a terminal (someone there to answer npx)."""
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # no file behind it (replaced, closed)
        return False
