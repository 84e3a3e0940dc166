"""`mcpio install HOST server.py`: a host application's MCP configuration, written or updated.

Each host starts the server as `<this interpreter> -m mcpio run /abs/server.py[:attr]` over
stdio, the interpreter by its full path (the host knows nothing of virtual environments):

- `claude-desktop`: `claude_desktop_config.json` in Claude's folder (Linux:
  `$XDG_CONFIG_HOME/Claude`, by default `~/.config/Claude`; macOS:
  `~/Library/Application Support/Claude`; Windows: `%APPDATA%\\Claude`), under `mcpServers`;
- `cursor`: `~/.cursor/mcp.json` (every project's), under `mcpServers`;
- `vscode`: the workspace's `.vscode/mcp.json` (the current folder's, or `--workspace`), under
  `servers` with `"type": "stdio"` (VS Code's user configuration is a profile's file, not one
  path to name).

Other servers and settings in the file stay as they were; the old file is copied to
`<file>.bak` first. A file that is not a JSON object is refused, untouched. Both files are
written owner-only (0600, created so and swapped in atomically): they hold the servers' `env`
(`--env KEY=SECRET`) and `headers`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOSTS = ("claude-desktop", "cursor", "vscode")


class ConfigError(Exception):
    """A configuration that cannot be read or written: one line."""


@dataclass(frozen=True)
class Plan:
    """What installing would write: the file and its whole new text."""

    path: Path
    text: str
    replaced: bool  # the file held a server of that name already


def config_path(host: str, workspace: Path) -> Path:
    """The configuration file of `host` (`claude-desktop`, `cursor`, `vscode`) on this system."""
    home = Path.home()
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if host == "vscode":
        return workspace / ".vscode" / "mcp.json"
    if sys.platform == "darwin":
        folder = home / "Library" / "Application Support" / "Claude"
    elif sys.platform == "win32":
        folder = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    else:
        folder = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


def server_entry(host: str, app: str, env: dict[str, str]) -> dict[str, Any]:
    """How the host starts `app` (a path to a .py file, maybe with `:attr`)."""
    where, colon, attr = app.partition(":")
    target = str(Path(where).resolve()) + colon + attr
    entry: dict[str, Any] = {"command": sys.executable, "args": ["-m", "mcpio", "run", target]}
    if host == "vscode":
        entry = {"type": "stdio", **entry}
    if env:
        entry["env"] = dict(env)
    return entry


def plan(host: str, app: str, name: str, env: dict[str, str], workspace: Path) -> Plan:
    """What `mcpio install` would write: the host's file with the server `name` added or
    replaced."""
    path = config_path(host, workspace)
    try:
        config: Any = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{path} is not JSON ({exc}): left as it is") from None
    key = "servers" if host == "vscode" else "mcpServers"
    servers = config.get(key, {}) if isinstance(config, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: not a JSON object with a {key!r} object: left as it is")
    replaced = name in servers
    servers[name] = server_entry(host, app, env)
    config[key] = servers
    return Plan(path, json.dumps(config, indent=2) + "\n", replaced)


def write(planned: Plan) -> Path | None:
    """Write the plan (the old file copied to `<file>.bak` first); the backup's path. Both are
    readable by their owner only (0600): a host's configuration holds its servers' secrets
    (`env`, `headers`)."""
    path = planned.path
    backup = path.with_name(path.name + ".bak") if path.exists() else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if backup is not None:
            _write_private(backup, path.read_bytes())
        _write_private(path, planned.text.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from None
    return backup


def _write_private(path: Path, data: bytes) -> None:
    """Replace `path` atomically by a new file of `data`, mode 0600 from its creation (an
    existing file's looser mode goes with it; no moment where the secrets are readable)."""
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".mcpio-tmp")
    try:
        with os.fdopen(fd, "wb") as file:  # mkstemp: O_EXCL, mode 0600
            file.write(data)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
