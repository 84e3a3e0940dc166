"""Publish a directory of Agent Skills on a server (SEP-2640's server side).

The extension `io.modelcontextprotocol/skills`: a directory of Agent Skills published as
`skill://` resources with `skills/list`, `skills/get` and `resources/directory/read`.

    server = Server("docs")
    server.skills("skills/")        # skills/pdf-processing/SKILL.md -> skill://pdf-processing/SKILL.md

Each file of a skill is a resource (SKILL.md as `text/markdown`, named and described from its
frontmatter); each skill's entry lists every file with its size and sha256 digest. The
directory is read at registration and again while the server runs (every `watch_interval`
seconds, and before answering a skills request when that long has passed): a changed file is
announced with `notifications/resources/updated`, an added or removed one with
`notifications/resources/list_changed`. What cannot be published is skipped with a warning
on the `mcpio.skills` logger (see `mcpio.skills._scan`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import anyio

from mcp_wire_runtime.errors import INVALID_PARAMS, ProtocolError
from mcpio._core.context import Context, MethodHandler
from mcpio._core.extension import Extension
from mcpio._core.handlers import resource_entry
from mcpio._core.hints import CacheHint
from mcpio._core.paging import page
from mcpio._core.sealing import Sealer
from mcpio.latest import public as pub
from mcpio.skills._format import EXTENSION, SKILL_FILE, digest
from mcpio.skills._scan import Catalog, SkillFile, publishable, scan


class Publisher(Protocol):
    """What a `SkillsDirectory` needs of the server it is published on (`mcpio.Server`)."""

    resources: dict[str, Any]
    extension_methods: dict[str, MethodHandler]
    list_page_size: int | None
    sealer: Sealer

    def add_extension(self, extension: Extension) -> None:
        """Serves `extension` (calling its `added`)."""
        ...

    def remove_resource(self, uri: str, *, notify: bool = True) -> bool:
        """Unregisters the resource at `uri` (announcing `list_changed` if `notify`)."""
        ...

    async def notify_resources_changed(self) -> None:
        """Announces `notifications/resources/list_changed`."""
        ...

    async def notify_resource_updated(self, uri: str) -> None:
        """Announces `notifications/resources/updated` for `uri` to its subscribers."""
        ...

    def cache_hint(self, method: str | None = None) -> CacheHint:
        """The caching hint (`ttlMs`, `cacheScope`) of a modern result of `method`."""
        ...


log = logging.getLogger("mcpio.skills")

LIST, GET, DIRECTORY_READ = "skills/list", "skills/get", "resources/directory/read"


class SkillsDirectory(Extension):
    """The skills under `directory`, published on a server by `attach` (`Server.skills`).

    It is the server's Skills extension (SEP-2640, a `mcpio.server.Extension`).

    Args:
        directory: The skills directory: each skill is a directory in it (at any depth) holding
            a SKILL.md.
        scheme: The URI scheme of the published resources (`skill`).
        watch_interval: Seconds between looks for changes while the server runs (None: only
            `refresh` looks, and a skills request after a read found a file changed).

    Raises:
        ValueError: When `directory` is not a directory, or `watch_interval` is not positive.
    """

    id = EXTENSION

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        scheme: str = "skill",
        watch_interval: float | None = 1.0,
    ) -> None:
        self.root = Path(directory).absolute()
        if not self.root.is_dir():
            raise ValueError(f"skills directory {str(self.root)!r} is not a directory")
        if watch_interval is not None and watch_interval <= 0:
            raise ValueError("watch_interval must be positive (or None)")
        self.scheme = scheme
        self.watch_interval = watch_interval
        self.catalog = Catalog()
        self._scanned = 0.0
        self._stale = False  # a read found a file changed since the last look
        self._server: Publisher | None = None
        self._lock = anyio.Lock()

    # ------------------------------------------------------------------ publishing

    def attach(self, server: Publisher) -> None:
        """Publish the skills on `server`.

        Their resources, the extension's methods and capability, and the watch of the directory
        while the server runs.

        Raises:
            RuntimeError: When this directory is published already, or `server` publishes a
                skills directory already (one per server).
        """
        if self._server is not None:
            raise RuntimeError("a SkillsDirectory is published on one server")
        methods = _own_methods(server)
        if LIST in methods:
            raise RuntimeError("this server publishes a skills directory already (one per server)")
        server.add_extension(self)

    def added(self, server: Any) -> None:
        """Publish the resources and the methods (see `attach`)."""
        self._server = server
        self._install(self._scan())
        methods = _own_methods(server)
        methods[LIST] = self._list
        methods[GET] = self._get
        methods[DIRECTORY_READ] = self._directory_read

    def settings(self) -> Mapping[str, Any] | None:
        """The extension's settings: `directoryRead` is served."""
        return {"directoryRead": True}

    def lifespan(self, server: Any) -> contextlib.AbstractAsyncContextManager[None] | None:
        """The watch of the directory while the server runs (with a `watch_interval`)."""
        return _watching(self) if self.watch_interval is not None else None

    def _scan(self) -> Catalog:
        catalog = scan(self.root, self.scheme, self.catalog.files)
        for warning in catalog.warnings:
            if warning not in self.catalog.warnings:
                log.warning("skills: %s", warning)
        self._scanned, self._stale = time.monotonic(), False
        return catalog

    def _install(self, catalog: Catalog) -> tuple[bool, list[str]]:
        """Make `catalog` the published one: whether the set of files changed, and the URIs
        of files whose content did."""
        server = self._server
        assert server is not None
        before = self.catalog.files
        for uri in before.keys() - catalog.files.keys():
            server.remove_resource(uri, notify=False)
        for uri, file in catalog.files.items():
            if before.get(uri) != file:
                server.resources[uri] = self._entry(catalog, file)
        self.catalog = catalog
        changed = [
            u for u, f in catalog.files.items() if u in before and before[u].digest != f.digest
        ]
        return before.keys() != catalog.files.keys(), changed

    def _entry(self, catalog: Catalog, file: SkillFile) -> Any:
        skill = catalog.skills.get(file.uri)  # its SKILL.md
        name = skill.frontmatter["name"] if skill is not None else file.path.name
        description = skill.frontmatter["description"] if skill is not None else None

        def read() -> str | bytes:
            return self._read(file)

        entry = resource_entry(
            read,
            Context,
            uri=file.uri,
            name=name,
            description=description,
            mime_type=file.mime_type,
        )
        if isinstance(entry.definition, pub.Resource):
            entry.definition.size = file.size
        return entry

    def _read(self, file: SkillFile) -> str | bytes:
        """A file's bytes now (text for text types), never from outside its skill's directory
        nor a dot file (a symlink may have changed since the last look)."""
        real = publishable(file.path, file.home)
        if real is None:
            raise ProtocolError(INVALID_PARAMS, f"resource not found: {file.uri}")
        try:
            data = real.read_bytes()
        except OSError:
            raise ProtocolError(INVALID_PARAMS, f"resource not found: {file.uri}") from None
        if len(data) != file.size or digest(data) != file.digest:
            self._stale = True  # changed since the last look: the next skills request looks
        if file.mime_type.startswith("text/") or file.path.name == SKILL_FILE:
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return data

    # ------------------------------------------------------------------ changes

    async def refresh(self) -> bool:
        """Read the directory again and announce what changed; whether anything did."""
        async with self._lock:
            catalog = await anyio.to_thread.run_sync(self._scan)
            listed, changed = self._install(catalog)
        server = self._server
        if server is not None:
            if listed:
                await server.notify_resources_changed()
            for uri in changed:
                await server.notify_resource_updated(uri)
        return listed or bool(changed)

    async def _fresh(self) -> Catalog:
        interval = self.watch_interval
        due = interval is not None and time.monotonic() - self._scanned >= interval
        if due or self._stale:
            await self.refresh()
        return self.catalog

    async def watch(self) -> None:
        """Look for changes every `watch_interval` seconds, until cancelled."""
        interval = self.watch_interval or 1.0
        while True:
            await anyio.sleep(interval)
            try:
                await self.refresh()
            except Exception:  # a failed look is logged; the next one tries again
                log.exception("skills: reading %s failed", self.root)

    # ------------------------------------------------------------------ the methods

    async def _list(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        catalog = await self._fresh()
        server = self._server
        assert server is not None
        records = list(catalog.skills.values())
        shown, cursor = page(
            records,
            [record.uri for record in records],
            _cursor(params),
            size=server.list_page_size,
            method=LIST,
            sealer=server.sealer,
            subject=ctx.principal.subject if ctx.principal is not None else None,
        )
        result: dict[str, Any] = {"skills": [record.entry() for record in shown]}
        if cursor is not None:
            result["nextCursor"] = cursor
        return self._cacheable(ctx, LIST, result)

    async def _get(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        uri = _uri(params)
        record = (await self._fresh()).skills.get(uri)
        if record is None:
            raise ProtocolError(
                INVALID_PARAMS, f"not a skill this server serves: {uri}", {"uri": uri}
            )
        return self._cacheable(ctx, GET, {"skill": record.entry()})

    async def _directory_read(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        uri = _uri(params)
        children = (await self._fresh()).directories.get(uri)
        if children is None:
            raise ProtocolError(INVALID_PARAMS, f"not a directory resource: {uri}", {"uri": uri})
        server = self._server
        assert server is not None
        shown, cursor = page(
            children,
            [child["uri"] for child in children],
            _cursor(params),
            size=server.list_page_size,
            method=DIRECTORY_READ + uri,
            sealer=server.sealer,
        )
        result: dict[str, Any] = {"resources": shown}
        if cursor is not None:
            result["nextCursor"] = cursor
        return self._cacheable(ctx, DIRECTORY_READ, result)

    def _cacheable(self, ctx: Context, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """2026-07-28's list-caching attributes (SEP-2549) on a modern result."""
        server = self._server
        if ctx.modern and server is not None:
            result.update(server.cache_hint(method).fields())
        return result


def _own_methods(server: Publisher) -> dict[str, MethodHandler]:
    """Where the server's own skills handlers go: a server that mounts others answers the
    skills methods with every server's skills (`mcpio.server._mount`) and keeps its own apart."""
    mounts = getattr(server, "_mounts", None)
    return mounts.own_extension if mounts is not None else server.extension_methods


def _uri(params: Mapping[str, Any]) -> str:
    uri = params.get("uri")
    if type(uri) is not str or not uri:
        raise ProtocolError(INVALID_PARAMS, "params.uri must be a non-empty string")
    return uri


def _cursor(params: Mapping[str, Any]) -> str | None:
    cursor = params.get("cursor")
    if cursor is not None and type(cursor) is not str:
        raise ProtocolError(INVALID_PARAMS, "params.cursor must be a string")
    return cursor


@contextlib.asynccontextmanager
async def _watching(skills: SkillsDirectory) -> AsyncIterator[None]:
    """`skills.watch` running while inside."""
    task = asyncio.get_running_loop().create_task(skills.watch())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
