"""An `mcpServers` configuration (the format Claude Desktop, VS Code, Cursor and FastMCP use)
read: its entries, each a stdio command (`command`, `args`, `env`, `cwd`) or a remote server
(`url`, `headers`), and what `Client(config)` connects to.

A configuration of one server is that server, as its entry says (no proxy, no prefix); one of
several is a server that mounts a proxy of each under its name, made by `combined` (which
`mcpio.client._config` sets: it builds on `Client`, which cannot import it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mcpio.server._server import Server

# the entries of a configuration of several servers -> the server that mounts them
combined: Callable[[dict[str, dict[str, Any]]], Server] | None = None


def is_config(target: object) -> bool:
    """Whether a target is a whole configuration (a mapping with `mcpServers` or `servers`),
    not one entry."""
    return isinstance(target, Mapping) and ("mcpServers" in target or "servers" in target)


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
            # added to the allow-listed variables a stdio server inherits (`server_environment`)
            options["env"] = {str(k): str(v) for k, v in dict(entry["env"]).items()}
        if entry.get("cwd"):
            options["cwd"] = str(entry["cwd"])
        return options
    raise ValueError("an mcpServers entry needs a 'command' (stdio) or a 'url' (HTTP)")


def configured(
    config: Mapping[str, Any],
    headers: Mapping[str, str] | None,
    env: Mapping[str, str] | None,
    cwd: str | None,
) -> tuple[
    str | list[str] | Server, Mapping[str, str] | None, Mapping[str, str] | None, str | None
]:
    """What `Client(config)` connects to (a single server's own target, or the server
    mounting several) and its `headers`, `env` and `cwd`: the entry's, the given ones over
    them."""
    entries = servers_of(config)
    if len(entries) > 1:
        if combined is None:  # pragma: no cover - set whenever `mcpio.client` is imported
            raise ValueError("a configuration of several servers: use mcpio.client.from_config")
        return combined(entries), headers, env, cwd
    options = entry_options(next(iter(entries.values())))
    headers = {**options.get("headers", {}), **(headers or {})} or None
    env = {**options.get("env", {}), **(env or {})} or None
    target: str | list[str] = options["target"]
    return target, headers, env, cwd or options.get("cwd")
