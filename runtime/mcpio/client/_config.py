"""`from_config`: one client for a whole `mcpServers` configuration (the format Claude
Desktop, VS Code and Cursor use): each entry a stdio command (`command`, `args`, `env`, `cwd`)
or a remote server (`url`, `headers`), each connected in its own era."""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any, cast

from mcpio.client._client import Client
from mcpio.client._proxy import entry_options, proxy_server
from mcpio.server._server import Server


def servers_of(config: str | PathLike[str] | Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The entries of a configuration (a mapping, or a JSON file's path): its `mcpServers`
    (VS Code's `servers`), by name."""
    if not isinstance(config, Mapping):
        try:
            config = json.loads(Path(config).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read the configuration {str(config)!r}: {exc}") from None
    if not isinstance(config, Mapping):
        raise ValueError("a configuration is a JSON object")
    servers = config.get("mcpServers", config.get("servers"))
    if not isinstance(servers, Mapping) or not servers:
        raise ValueError("the configuration has no 'mcpServers' entries")
    entries: dict[str, dict[str, Any]] = {}
    for name, entry in cast(Mapping[str, Any], servers).items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"mcpServers.{name}: an entry is a JSON object")
        entry_options(cast(Mapping[str, Any], entry))  # checked now, not at the first call
        entries[str(name)] = dict(cast(Mapping[str, Any], entry))
    return entries


def from_config(config: str | PathLike[str] | Mapping[str, Any], **options: Any) -> Client:
    """Make one `Client` for every server of an `mcpServers` configuration.

    Each server is behind a proxy (`proxy_server`) in its own era, mounted under its name
    (`weather_forecast`, `data://weather/...`) on one in-process server that the client talks
    to. A stdio server gets the allow-listed part of this process's environment and its entry's
    `env` (`mcpio.transports.stdio.server_environment`).

    Args:
        config: The configuration: a mapping, or a JSON file's path. Its `mcpServers` (VS
            Code's `servers`) entries are stdio commands (`command`, `args`, `env`, `cwd`) or
            remote servers (`url`, `headers`).
        **options: The `Client`'s (callbacks, ...).

    Raises:
        ValueError: The configuration cannot be read or has no entries, or server names
            would shadow each other's tools (`gh`, `gh_ent`: `Server.mount`).
    """
    combined = Server("mcpServers")
    for name, entry in servers_of(config).items():
        combined.mount(proxy_server(entry, name=name), namespace=name)
    return Client(combined, **options)
