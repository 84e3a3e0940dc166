"""`Client.from_config`: one client for a whole `mcpServers` configuration (the format Claude
Desktop, VS Code and Cursor use): each entry a stdio command (`command`, `args`, `env`, `cwd`)
or a remote server (`url`, `headers`), each connected in its own era."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def entry_options(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An `mcpServers` entry as a `Client`'s target and options (`target` among them)."""
    url = entry.get("url") or entry.get("serverUrl")
    command = entry.get("command")
    if isinstance(url, str) and url:
        options: dict[str, Any] = {"target": url}
        headers = entry.get("headers")
        if headers:
            options["headers"] = {str(k): str(v) for k, v in dict(headers).items()}
        return options
    if isinstance(command, str) and command:
        args = entry.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("an mcpServers entry's args must be a list of strings")
        options = {"target": [command, *args]}
        if entry.get("env"):
            options["env"] = {str(k): str(v) for k, v in dict(entry["env"]).items()}
        if entry.get("cwd"):
            options["cwd"] = str(entry["cwd"])
        return options
    raise ValueError("an mcpServers entry needs a 'command' (stdio) or a 'url' (HTTP)")
