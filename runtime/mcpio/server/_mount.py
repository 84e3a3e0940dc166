"""`Server.mount(other, namespace=)`: one server re-serving another's tools, prompts, resources,
templates and completions, under a namespace or none, live (what the other offers when asked,
not a copy made at mount time).

Names: tool and prompt `x` become `<namespace>_x`; resource URIs and templates get the namespace
as their first path segment: `data://info` -> `data://<namespace>/info` (`scheme:rest` without an
authority -> `scheme:<namespace>/rest`), as FastMCP names them. Skills (SEP-2640) follow their
resources: `skills/list` merges every server's skills, each mounted one's URIs (the entry's and
its manifest's) namespaced like its resources (`skill://<namespace>/pdf-tools/SKILL.md`, a
skill path one segment deeper, its name unchanged), digests as they are; `skills/get` and
`resources/directory/read` go to the server whose namespace the URI names; the extension is
declared when any of them serves skills. Every call reaches the mounted
server through its own `dispatch`, so its middleware runs; its lifespan is entered with the
parent's; its task tools run as tasks of the parent's task engine (the one clients poll); its
change notifications reach the parent's listeners, renamed. The parent's `enable`/`disable` (and
a legacy session's `ctx.enable_components`) reach its components by the names the parent offers
them under, as if they were the parent's own; what the mounted server hides stays hidden.

Without a namespace (FastMCP's `mount(server)`), names are merged as they are. A name both the
parent and a mounted server (or two mounted servers) offer is a duplicate, handled as the
parent's `on_duplicate` says: "error" refuses the mount (`ValueError` naming both servers and
the name), "warn" (the default) warns and "replace" stays quiet, the server mounted last
answering it; "ignore": the first (the parent's own, else the earlier mount) answers. Names are
compared at mount time as registered then; a call, prompt or read is tried on each server in
that order until one knows the name (a proxy's names are known only when asked).
"""

from __future__ import annotations

import copy
import logging
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast

from mcp_wire_runtime.errors import INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError
from mcpio._core.context import Context, InputRequired, MethodHandler
from mcpio._core.extension import Extension
from mcpio._core.hub import TASK_IDS, Hub
from mcpio._core.paging import page
from mcpio._core.visibility import Outer
from mcpio.latest import public as pub
from mcpio.skills._format import EXTENSION as SKILLS_EXTENSION
from mcpio.skills._provider import DIRECTORY_READ, GET, LIST

# A `mcpio.server.Server` (not imported: the server imports this module).
Server = Any

# listing method -> (result field, the field naming an item, result model)
LISTINGS: dict[str, tuple[str, str, type[Any]]] = {
    "tools/list": ("tools", "name", pub.ListToolsResult),
    "prompts/list": ("prompts", "name", pub.ListPromptsResult),
    "resources/list": ("resources", "uri", pub.ListResourcesResult),
    "resources/templates/list": (
        "resourceTemplates",
        "uriTemplate",
        pub.ListResourceTemplatesResult,
    ),
}
_MAX_PAGES = 1000  # a listing that never ends is cut here
SKILLS_METHODS = (LIST, GET, DIRECTORY_READ)
log = logging.getLogger("mcpio")


def prefixed_uri(uri: str, namespace: str) -> str:
    """`data://info` -> `data://ns/info`; `urn:x` -> `urn:ns/x`; no scheme: `ns/uri`."""
    scheme, sep, rest = uri.partition("://")
    if sep:
        return f"{scheme}://{namespace}/{rest}"
    scheme, sep, rest = uri.partition(":")
    return f"{scheme}:{namespace}/{rest}" if sep else f"{namespace}/{uri}"


def unprefixed_uri(uri: str, namespace: str) -> str | None:
    """The mounted server's URI behind a parent's URI, or None when it is not under `namespace`."""
    for sep in ("://", ":"):
        scheme, found, rest = uri.partition(sep)
        if found and "/" not in scheme:
            if rest.startswith(namespace + "/"):
                return f"{scheme}{sep}{rest[len(namespace) + 1:]}"
            return None
    return uri[len(namespace) + 1 :] if uri.startswith(namespace + "/") else None


# the registries compared when a server is mounted without a namespace, by what they hold
_MERGED_TABLES = {
    "tool": "tools",
    "prompt": "prompts",
    "resource": "resources",
    "template": "templates",
}


@dataclass
class Mounted:
    server: Server
    namespace: str | None  # None: names merged as they are
    parent: Server  # the server it is mounted in

    @property
    def label(self) -> str:
        """What names this mount in logs and `Server.unavailable`: its namespace, else its
        server's name."""
        return self.namespace if self.namespace is not None else self.server.info.name

    def name(self, name: str) -> str:
        """A mounted tool's or prompt's name as the parent offers it (`namespace_name`)."""
        return name if self.namespace is None else f"{self.namespace}_{name}"

    def local_name(self, name: str) -> str | None:
        """The mounted server's own name for `name`, or None if it is not this mount's."""
        if self.namespace is None:
            return name
        prefix = self.namespace + "_"
        return name[len(prefix) :] if name.startswith(prefix) else None

    def uri(self, uri: str) -> str:
        """A mounted resource's URI as the parent offers it."""
        return uri if self.namespace is None else prefixed_uri(uri, self.namespace)

    def local_uri(self, uri: str) -> str | None:
        """The mounted server's own URI for `uri`, or None if it is not this mount's."""
        return uri if self.namespace is None else unprefixed_uri(uri, self.namespace)

    def context(self, ctx: Context) -> Context:
        """The request's context as the mounted server's handlers see it (its lifespan; the
        parent's visibility rules over its components)."""
        mine = copy.copy(ctx)
        mine.lifespan = self.server.lifespan_state
        mine._dispatch = self.server.dispatch  # pyright: ignore[reportPrivateUsage]
        outer = Outer(self.parent.visibility_rules, self.name, self.uri)
        mine._mounted_in = (outer, *ctx._mounted_in)  # pyright: ignore[reportPrivateUsage]
        return mine

    def renamed(self, item: Any, key: str) -> Any:
        """`item` (a tool, prompt, resource, ...) with its `key` member namespaced."""
        value = getattr(item, key)
        new = self.name(value) if key == "name" else self.uri(value)
        return item.model_copy(update={key: new})

    def skill_entry(self, entry: Any) -> Any:
        """A skill entry (plain data) with its URI and its manifest's namespaced."""
        if type(entry) is not dict:
            return entry
        renamed = dict(entry)
        if isinstance(entry.get("uri"), str):
            renamed["uri"] = self.uri(entry["uri"])
        if type(entry.get("resources")) is list:
            renamed["resources"] = [self.with_uri(item) for item in entry["resources"]]
        return renamed

    def with_uri(self, item: Any) -> Any:
        """A plain-data item (a manifest file, a directory child) with its `uri` namespaced."""
        if type(item) is not dict or not isinstance(item.get("uri"), str):
            return item
        return {**item, "uri": self.uri(item["uri"])}

    async def extension(self, ctx: Context, method: str, params: dict[str, Any]) -> Any:
        """The mounted server's answer to an extension's request (None: it serves none)."""
        handler = self.server.extension_methods.get(method)
        if handler is None:
            return None
        return await self.server.dispatch(self.context(ctx), method, params, handler)


class _Upward(Hub):
    """The mounted server's hub: what it announces goes to the parent's listeners, renamed."""

    def __init__(self, parent: Server, mounted: Mounted) -> None:
        super().__init__(mounted.server.info.name, mounted.server.capabilities)
        self._parent, self._mounted = parent, mounted

    async def publish(
        self, flag: str | None, method: str, params: dict[str, Any], uri: str | None = None
    ) -> None:
        if uri is not None and flag != TASK_IDS:
            uri = self._mounted.uri(uri)
            params = {**params, "uri": uri}
        await self._parent.hub.publish(flag, method, params, uri)


class Mounts:
    """A server's mounted servers and the handlers that serve them beside its own."""

    def __init__(self, parent: Server) -> None:
        self.parent = parent
        self.mounted: list[Mounted] = []
        self.own: dict[str, MethodHandler] = dict(parent.handlers)
        self._own_lifespan = parent.lifespan
        # the mounted servers (by `label`) whose last listing failed, with the error
        self.unavailable: dict[str, str] = {}
        for method in LISTINGS:
            parent.handlers[method] = self._lister(method)
        parent.handlers["tools/call"] = self._named("tools/call")
        parent.handlers["prompts/get"] = self._named("prompts/get")
        parent.handlers["resources/read"] = self._read
        parent.handlers["completion/complete"] = self._complete
        parent.add_extension(_Merged(self))
        parent.lifespan = self._lifespan
        # the parent's own skills (`Server.skills`, before or after mounting) answer from here
        self.own_extension: dict[str, MethodHandler] = {}
        for method in SKILLS_METHODS:
            own = parent.extension_methods.pop(method, None)
            if own is not None:
                self.own_extension[method] = own
        parent.extension_methods[LIST] = self._skills_list
        parent.extension_methods[GET] = self._skills_named(GET)
        parent.extension_methods[DIRECTORY_READ] = self._skills_named(DIRECTORY_READ)

    def add(self, server: Server, namespace: str | None) -> None:
        """Mount `server` under `namespace` (None: names merged); ValueError for a bad or taken
        namespace, or one that begins with another's and `_` (or the other way round), or (the
        parent's `on_duplicate="error"`) a name that a server mounted without one shares."""
        if server is self.parent or any(m.server is server for m in self.mounted):
            raise ValueError(f"{server.info.name!r} is mounted already (or mounts itself)")
        if namespace is None:
            self._check_merged(server)
        else:
            self._check_namespace(namespace)
        mounted = Mounted(server, namespace, self.parent)
        server.tasks = self.parent.tasks  # its task tools: tasks the parent's clients poll
        server.hub = _Upward(self.parent, mounted)
        # its failures are reported through the parent: masked if either server masks them
        server.mask_error_details = server.mask_error_details or self.parent.mask_error_details
        self.mounted.append(mounted)
        self._sync_task_support()

    def _check_namespace(self, namespace: str) -> None:
        if not namespace or any(c in namespace for c in "/: "):
            raise ValueError(f"namespace must be a non-empty word, not {namespace!r}")
        if any(m.namespace == namespace for m in self.mounted):
            raise ValueError(f"namespace {namespace!r} is taken")
        for other in self.mounted:
            if other.namespace is None:
                continue
            # `gh` and `gh_ent` would both name a tool `gh_ent_x` (`gh`'s `ent_x`, `gh_ent`'s
            # `x`): one would shadow the other, so such pairs are refused, in either order
            shorter, longer = sorted((other.namespace, namespace), key=len)
            if longer.startswith(shorter + "_"):
                raise ValueError(
                    f"namespace {namespace!r} clashes with the mounted {other.namespace!r}:"
                    f" tools and prompts named {longer}_... could be either's"
                )

    def _check_merged(self, server: Server) -> None:
        """The names `server` shares with the parent or another server mounted without a
        namespace, handled as the parent's `on_duplicate` says ("error": `ValueError`)."""
        policy = self.parent.on_duplicate
        holders = [self.parent, *(m.server for m in self.merged())]
        for kind, table in _MERGED_TABLES.items():
            for name in getattr(server, table):
                holder = next((h for h in holders if name in getattr(h, table)), None)
                if holder is None or policy in ("replace", "ignore"):
                    continue
                what = (
                    f"mounting {server.info.name!r} without a namespace: {kind} {name!r} is"
                    f" offered by both {holder.info.name!r} and {server.info.name!r}"
                )
                if policy == "error":
                    raise ValueError(f"{what}: give mount() a namespace, or rename one of them")
                warnings.warn(
                    f"{what}; {server.info.name!r}'s answers it (on_duplicate='error', "
                    "'replace' or 'ignore' to choose)",
                    UserWarning,
                    stacklevel=4,
                )

    def merged(self) -> list[Mounted]:
        """The servers mounted without a namespace, in the order they answer a shared name."""
        merged = [m for m in self.mounted if m.namespace is None]
        return merged if self.parent.on_duplicate == "ignore" else merged[::-1]

    async def _first(self, ctx: Context, method: str, params: Any) -> Any:
        """`method` answered by the first of the servers mounted without a namespace and the
        parent that knows its name or URI (the order `merged` and `on_duplicate` say)."""
        own = self.own[method]
        servers: list[Mounted | None] = list(self.merged())
        if self.parent.on_duplicate == "ignore":
            servers.insert(0, None)
        else:
            servers.append(None)
        for mounted in servers[:-1]:
            try:
                if mounted is None:
                    return await own(ctx, params)
                return await mounted.server.dispatch(mounted.context(ctx), method, params)
            except ProtocolError as exc:
                if not _unknown(exc):
                    raise
        last = servers[-1]
        if last is None:
            return await own(ctx, params)
        return await last.server.dispatch(last.context(ctx), method, params)

    def _sync_task_support(self) -> None:
        """The parent's options of each mounted task tool (the parent's listings and
        capabilities tell them)."""
        options = self.parent.tool_options
        for mounted in self.mounted:
            for name, entry in mounted.server.tools.items():
                if entry.options.get("task", "forbidden") != "forbidden":
                    options[mounted.name(name)] = entry.options
            for name, given in mounted.server.tool_options.items():
                options[mounted.name(name)] = given

    def offer(self, capabilities: dict[str, Any]) -> None:
        """The parent's capabilities and every mounted server's together: what any of them
        offers (a flag set where any sets it), nothing none does."""
        for mounted in self.mounted:
            theirs = mounted.server.capabilities().model_dump(by_alias=True, exclude_unset=True)
            _merge(capabilities, theirs)
        if self.own_extension or any(LIST in m.server.extension_methods for m in self.mounted):
            extensions = capabilities.setdefault("extensions", {})
            extensions.setdefault(SKILLS_EXTENSION, {"directoryRead": True})

    @asynccontextmanager
    async def _lifespan(self, server: Server) -> AsyncIterator[Any]:
        async with AsyncExitStack() as stack:
            for mounted in self.mounted:
                await stack.enter_async_context(mounted.server.running())
            state = None
            if self._own_lifespan is not None:
                state = await stack.enter_async_context(self._own_lifespan(server))
            yield state

    def _lister(self, method: str) -> MethodHandler:
        field, key, model = LISTINGS[method]

        async def handler(ctx: Context, params: Any) -> Any:
            items = await _every_item(self.own[method], ctx, field)
            for mounted in self.mounted:
                theirs = await self._listed_by(mounted, ctx, method, field)
                items += [mounted.renamed(item, key) for item in theirs]
            if any(m.namespace is None for m in self.mounted):
                items = self._deduplicated(items, key)
            if method == "tools/list":
                self._sync_task_support()
            listed, cursor = page(
                items,
                [getattr(i, key) for i in items],
                getattr(params, "cursor", None),
                size=self.parent.list_page_size,
                method=method,
                sealer=self.parent.sealer,
                subject=ctx.principal.subject if ctx.principal is not None else None,
            )
            hints = self.parent.cache_hints(method)
            return model(**{field: listed, "nextCursor": cursor, **hints})

        return handler

    async def _listed_by(
        self, mounted: Mounted, ctx: Context, method: str, field: str
    ) -> list[Any]:
        """A mounted server's part of a merged listing: nothing when it does not offer the
        feature, or when it fails (a proxy whose target did not start): logged by name and kept
        in `unavailable` until it answers again; the other servers' parts are listed still."""
        feature = method.split("/")[0]
        offered = mounted.server.capabilities().model_dump(exclude_unset=True)
        if offered.get(feature) is None:
            return []
        try:
            items = await _every_item(mounted.server.dispatch, ctx, field, method, mounted)
        except ProtocolError as exc:
            if exc.code != METHOD_NOT_FOUND:
                self._failed(mounted, exc.message)
            return []
        except InputRequired:  # a 2026-07-28 listing cannot ask the client anything
            self._failed(mounted, f"{method} asked the client for input")
            return []
        self.unavailable.pop(mounted.label, None)
        return items

    def _failed(self, mounted: Mounted, reason: str) -> None:
        if self.unavailable.get(mounted.label) != reason:
            log.warning("mounted server %r is left out: %s", mounted.label, reason)
        self.unavailable[mounted.label] = reason

    def _deduplicated(self, items: list[Any], key: str) -> list[Any]:
        """A merged listing with each name once: the one `_first` would answer with."""
        kept: dict[str, Any] = {}
        for item in items:  # the parent's own first, then each mount's in order
            name = getattr(item, key)
            if name not in kept or self.parent.on_duplicate != "ignore":
                kept[name] = item  # a later one replaces it in place
        return list(kept.values())

    def _named(self, method: str) -> MethodHandler:
        async def handler(ctx: Context, params: Any) -> Any:
            if not _own_name(self.parent, method, params.name):
                for mounted in self.mounted:
                    local = mounted.local_name(params.name)
                    if local is not None and mounted.namespace is not None:
                        mine = params.model_copy(update={"name": local})
                        return await mounted.server.dispatch(mounted.context(ctx), method, mine)
            return await self._first(ctx, method, params)

        return handler

    async def _read(self, ctx: Context, params: Any) -> Any:
        for mounted in self.mounted:
            local = mounted.local_uri(params.uri)
            if local is None or mounted.namespace is None:
                continue
            mine = params.model_copy(update={"uri": local})
            result = await mounted.server.dispatch(mounted.context(ctx), "resources/read", mine)
            contents = [c.model_copy(update={"uri": mounted.uri(c.uri)}) for c in result.contents]
            return result.model_copy(update={"contents": contents})
        return await self._first(ctx, "resources/read", params)

    async def _complete(self, ctx: Context, params: Any) -> Any:
        ref = params.ref
        for mounted in self.mounted:
            if ref.type == "ref/prompt":
                local = mounted.local_name(ref.name)
                known = mounted.namespace is not None or local in mounted.server.prompts
                update = {"name": local}
            else:
                local = mounted.local_uri(ref.uri)
                known = mounted.namespace is not None or local in mounted.server.templates
                update = {"uri": local}
            if local is not None and known:
                mine = params.model_copy(update={"ref": ref.model_copy(update=update)})
                return await mounted.server.dispatch(
                    mounted.context(ctx), "completion/complete", mine
                )
        return await self.own["completion/complete"](ctx, params)

    # ------------------------------------------------------------------ skills (SEP-2640)

    async def _skills_list(self, ctx: Context, params: Any) -> dict[str, Any]:
        """Every server's skills (the parent's, then each mount's, namespaced), paged here."""
        own = self.own_extension.get(LIST)
        serving = [m for m in self.mounted if LIST in m.server.extension_methods]
        if own is None and not serving:
            raise ProtocolError(METHOD_NOT_FOUND, f"method {LIST!r} is not served here")
        entries: list[Any] = []
        if own is not None:
            entries += await _every_skill(lambda p: own(ctx, p))
        for mounted in serving:
            theirs = await _every_skill(lambda p, m=mounted: m.extension(ctx, LIST, p))
            entries += [mounted.skill_entry(entry) for entry in theirs]
        cursor = params.get("cursor")
        if cursor is not None and type(cursor) is not str:
            raise ProtocolError(INVALID_PARAMS, "params.cursor must be a string")
        shown, next_cursor = page(
            entries,
            [str(_obj(e).get("uri")) for e in entries],
            cursor,
            size=self.parent.list_page_size,
            method=LIST,
            sealer=self.parent.sealer,
            subject=ctx.principal.subject if ctx.principal is not None else None,
        )
        result: dict[str, Any] = {"skills": shown}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if ctx.modern:
            result.update(self.parent.cache_hint(LIST).fields())
        return result

    def _skills_named(self, method: str) -> MethodHandler:
        """`skills/get` or `resources/directory/read`: answered by the server whose namespace
        the URI names (its URIs namespaced back), else by the parent's own skills."""

        async def handler(ctx: Context, params: Any) -> Any:
            uri = params.get("uri")
            for mounted in self.mounted if isinstance(uri, str) else ():
                local = mounted.local_uri(uri)
                if local is None or method not in mounted.server.extension_methods:
                    continue
                try:
                    result = dict(await mounted.extension(ctx, method, {**params, "uri": local}))
                except ProtocolError as exc:
                    if mounted.namespace is None and exc.code == INVALID_PARAMS:
                        continue  # not this merged server's: the next one's, or the parent's
                    raise
                if method == GET:
                    result["skill"] = mounted.skill_entry(result.get("skill"))
                else:
                    children = result.get("resources")
                    if type(children) is list:
                        result["resources"] = [mounted.with_uri(c) for c in children]
                return result
            own = self.own_extension.get(method)
            if own is None:
                raise ProtocolError(INVALID_PARAMS, f"no skill or directory here: {uri}")
            return await own(ctx, params)

        return handler


class _Merged(Extension):
    """A server's mounts, as what it offers: its own and its mounted servers' (`Mounts.offer`)."""

    id = "io.github.mcpio/mounts"  # (declares nothing: it has no settings)

    def __init__(self, mounts: Mounts) -> None:
        self.mounts = mounts

    def offer(self, capabilities: dict[str, Any]) -> None:
        self.mounts.offer(capabilities)

    async def prepare(self, ctx: Context) -> None:
        for mounted in self.mounts.mounted:  # (what a mounted proxy offers, learned)
            await mounted.server.extensions.prepare(ctx)


def _merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    """`other`'s capabilities added to `into`'s: each member either has, a flag true where
    either's is."""
    for key, value in other.items():
        mine = into.get(key)
        if isinstance(mine, dict) and isinstance(value, Mapping):
            into[key] = merged = dict(cast(dict[str, Any], mine))
            _merge(merged, cast(Mapping[str, Any], value))
        elif key not in into or (value is True and mine is not True):
            into[key] = copy.deepcopy(value)


def _obj(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


async def _every_skill(ask: Callable[[dict[str, Any]], Any]) -> list[Any]:
    """Every entry of a `skills/list`, its pages followed (`ask`: one page's result)."""
    entries: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        result = _obj(await ask({"cursor": cursor} if cursor else {}))
        entries += list(result.get("skills") or ())
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return entries


def _unknown(exc: ProtocolError) -> bool:
    """Whether an error says the name or URI asked for is not the server's (or the server has
    no such feature at all)."""
    if exc.code == METHOD_NOT_FOUND:
        return True
    return exc.code == INVALID_PARAMS and exc.message.startswith(
        ("unknown tool", "unknown prompt", "resource not found")
    )


def _own_name(server: Server, method: str, name: str) -> bool:
    if method == "tools/call":
        return name in server.tools or name in server.pending_transforms
    return name in server.prompts


async def _every_item(
    handler: Callable[..., Any],
    ctx: Context,
    field: str,
    method: str | None = None,
    mounted: Mounted | None = None,
) -> list[Any]:
    """Every item of a listing, its pages followed (`method` given: through a server's
    `dispatch`, with the mounted server's context)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        params = pub.PaginatedRequestParams.model_construct(cursor=cursor) if cursor else None
        if mounted is not None:
            result = await handler(mounted.context(ctx), method, params)
        else:
            result = await handler(ctx, params)
        items += list(getattr(result, field) or ())
        cursor = result.nextCursor
        if cursor is None:
            break
    return items
