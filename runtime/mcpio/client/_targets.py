"""What a `Client` target string names, and what a root given as a string is.

A string target is, in this order:

- an http(s) URL: Streamable HTTP (or 2024-11-05 HTTP+SSE) to that endpoint;
- an existing file whose name ends in `.py`: that script, run by the current interpreter
  (`sys.executable`), over stdio;
- a command line (split as a POSIX shell would, `shlex`) whose first word is a program
  `shutil.which` finds (on `PATH`, or a path to an executable file): that command, over stdio
  (`"npx -y @modelcontextprotocol/server-everything"`, `"uv run server.py"`).

Anything else (a `.py` file that does not exist, a program not found) is a `ValueError`, raised
by `Client(...)` itself: give a list of strings to run exactly that command.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def is_url(target: str) -> bool:
    """Whether a client target is an http(s) URL."""
    return target.startswith(("http://", "https://"))


def command_for(target: str) -> list[str]:
    """The command a string target (not an http(s) URL) runs over stdio; see the module."""
    script = Path(target)
    if target.endswith(".py") and script.is_file():
        return [sys.executable, str(script.resolve())]
    try:
        words = shlex.split(target)
    except ValueError as exc:
        raise ValueError(f"unsupported target {target!r}: {exc}") from None
    if words and shutil.which(words[0]) is not None:
        return words
    if target.endswith(".py"):
        raise ValueError(f"unsupported target {target!r}: no such Python file")
    raise ValueError(
        f"unsupported target {target!r}: not an http(s) URL, an existing .py file, nor a "
        "command line whose first word is a program on PATH (give a list of strings)"
    )


def root_of(value: Any) -> Any:
    """A root as the client answers `roots/list`: a string is a URI (`file:///srv`), or a
    filesystem path made an absolute `file://` URI; anything else is left to validation."""
    if isinstance(value, str):
        uri = value if _SCHEME.match(value) else Path(value).resolve().as_uri()
        return {"uri": uri}
    return value
