"""`from_config`: one client for a whole `mcpServers` configuration (the format Claude
Desktop, VS Code, Cursor and FastMCP use; read by `mcpio.client._entries`), as `Client(config)`
is for a mapping."""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from typing import Any

import mcpio.client._entries as _entries
from mcpio.client._client import Client
from mcpio.client._entries import servers_of
from mcpio.client._proxy import config_server

# `Client(config)` of several servers: the server mounting a proxy of each (see `_entries`)
_entries.combined = config_server


def from_config(config: str | PathLike[str] | Mapping[str, Any], **options: Any) -> Client:
    """Make one `Client` for every server of an `mcpServers` configuration.

    A single server is connected to as its entry says, its names as they are (FastMCP's
    behaviour). Several are each behind a proxy (`proxy_server`) in its own era, mounted under
    its name (`weather_forecast`, `data://weather/...`) on one in-process server that the client
    talks to. A stdio server gets the allow-listed part of this process's environment and its
    entry's `env` (`mcpio.transports.stdio.server_environment`). `Client(config)` does the same
    for a mapping. A server without a feature (no resources, no prompts) is left out of that
    listing; one that fails (its command does not start) is logged as a warning by name and
    left out until it answers, the others serving (`Server.unavailable` of
    `proxy_server(config)`, served with `Client(server)`, says which).

    Args:
        config: The configuration: a mapping, or a JSON file's path. Its `mcpServers` (VS
            Code's `servers`) entries are stdio commands (`command`, `args`, `env`, `cwd`) or
            remote servers (`url`, `headers`).
        **options: The `Client`'s (callbacks, ...).

    Raises:
        ValueError: The configuration cannot be read or has no entries, or server names
            would shadow each other's tools (`gh`, `gh_ent`: `Server.mount`).
    """
    return Client({"mcpServers": servers_of(config)}, **options)
