"""How a `Client` reaches its server: the target made a transport (`open_transport`: an http(s)
URL, a command or `.py` file over stdio, a transport, a `Server` in memory; see
`mcpio.client._targets` for strings), and the revision agreed on it (`negotiate`).

`mode="auto"` probes with `server/discover` and falls back to the legacy `initialize` handshake
on any error other than an unsupported-version answer that names a modern revision we share
(or, with `auth`, a refused authorization); `"legacy"` goes straight to `initialize`; a revision
string speaks exactly that revision."""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio

import mcp_wire
from mcp_wire_runtime.codec import Codec
from mcpio._core import ext_methods
from mcpio._core.context import URL_ELICITATION_SINCE
from mcpio._core.errors import McpError, NegotiationError, RequestTimeout
from mcpio._core.extras import needs
from mcpio._core.jsonrpc import raise_error
from mcpio._core.negotiate import LEGACY, MODERN, fit
from mcpio._core.redact import Secret, split_credentials
from mcpio._core.transport import Transport
from mcpio.client._inputs import Callbacks
from mcpio.client._targets import command_for, is_url
from mcpio.latest import UNSUPPORTED_VERSION
from mcpio.latest import public as pub

if TYPE_CHECKING:
    import httpx

    from mcpio._core.principal import Principal
    from mcpio.server._server import Server
    from mcpio.transports.http_client import Auth

#: Whom a `Client(server)` connection is served for (the server's `auth=` checks judge them):
#: a proxy's connection to an in-process server sets its downstream caller (None: the local user).
IN_PROCESS_CALLER: ContextVar[Principal | None] = ContextVar(
    "mcpio_in_process_caller", default=None
)


class Client(Protocol):
    """What negotiation reads and sets on `mcpio.Client`."""

    mode: str
    codec: Codec | None
    timeout: float | None
    probe_timeout: float
    info: pub.Implementation
    server_info: pub.Implementation | None
    server_capabilities: pub.ServerCapabilities | None
    instructions: str | None
    _auth: Auth | None
    _callbacks: Callbacks

    def capabilities(self, modern: bool, revision: str | None = None) -> dict[str, Any]:
        """The capabilities this client declares (modern: in every request's `_meta`)."""
        ...

    def _use(self, revision: str) -> None: ...

    async def _exchange(
        self,
        codec: Codec,
        method: str,
        params: Any,
        timeout: float | None,
        id: int | None = None,
        *,
        cancel: bool = True,
    ) -> bytes: ...

    async def _send(self, data: bytes) -> None: ...

    def _discovered(self, result: pub.DiscoverResult) -> pub.DiscoverResult: ...


def checked_target(
    target: str | Sequence[str] | Transport | Server,
    mode: str,
    auth: Auth | str | None,
    headers: Mapping[str, str] | None,
) -> tuple[Sequence[str] | Transport | Server | str, Secret | None]:
    """The target to connect to (a command string or a file made argv: `mcpio.client._targets`; a URL
    without its `user:password@`) and those credentials as an HTTP Basic `Authorization` value,
    kept apart so that they never show; `ValueError` for a mode that is no revision, credentials
    for a target that is no URL, or credentials both in the URL and in `auth`/`headers`."""
    if mode not in ("auto", "legacy", *mcp_wire.REVISIONS):
        raise ValueError(f"mode must be 'auto', 'legacy' or one of {', '.join(mcp_wire.REVISIONS)}")
    url = isinstance(target, str) and is_url(target)
    if (headers or isinstance(auth, str)) and not url:
        raise ValueError("headers= and auth='token' are for an http(s) URL target")
    if isinstance(target, str) and not url:
        return command_for(target), None
    if not isinstance(target, str):
        return target, None
    plain, basic = split_credentials(target)
    given = any(k.lower() == "authorization" for k in headers or {})
    if basic is not None and (auth is not None or given):
        raise ValueError("credentials in the URL and auth= or an Authorization header: give one")
    return plain, basic


async def open_transport(
    target: Sequence[str] | Transport | Server | str,
    stack: AsyncExitStack,
    *,
    headers: Mapping[str, str],
    auth: Auth | None,
    http: httpx.AsyncClient | None,
    spawn: Mapping[str, Any],
    basic: Secret | None = None,
) -> Transport:
    """The transport to a checked target, its cleanup pushed on `stack` where it has one
    (`basic`: the URL's credentials, `checked_target`'s, sent on every HTTP request)."""
    from mcpio.server._server import Server

    if isinstance(target, Server):
        from mcpio.transports.memory import memory_pair

        mine, theirs = memory_pair()
        tasks = await stack.enter_async_context(anyio.create_task_group())
        tasks.start_soon(_serve_in_process, target, theirs, IN_PROCESS_CALLER.get())
        return mine
    if isinstance(target, str) and is_url(target):
        with needs("http", "mcpio's HTTP transport"):
            from mcpio.transports.http_client import HttpTransport

        sent = dict(headers) if basic is None else {**headers, "Authorization": basic.reveal()}
        transport = HttpTransport(target, headers=sent, auth=auth, http=http)
        return await stack.enter_async_context(transport)
    if isinstance(target, Sequence) and not isinstance(target, str):
        from mcpio.transports.stdio import spawn as spawn_process

        command = cast(Sequence[Any], target)
        return await spawn_process([str(part) for part in command], **spawn)
    if hasattr(target, "receive") and hasattr(target, "send"):
        # a transport that is an async context manager is entered (and left) here, unless
        # it says it is open already (`HttpTransport.entered`)
        if hasattr(target, "__aenter__") and not getattr(target, "entered", False):
            return await stack.enter_async_context(cast(Any, target))
        return cast(Transport, target)
    raise ValueError(
        f"unsupported target {target!r}: give an http(s) URL, a .py file, a command "
        "(a list of strings, or a string: see mcpio.client._targets), a transport, a Server "
        'or an mcpServers configuration ({"mcpServers": {...}}: see from_config)'
    )


async def _serve_in_process(server: Server, transport: Transport, caller: Principal | None) -> None:
    """`server` serving one in-process connection, for `caller` (its `auth=` checks judge them)."""
    async with server.running():
        await server.connect(transport, principal=caller).run()


async def negotiate(client: Client) -> None:
    """Agree on a revision with the server, as `client.mode` says (see the module)."""
    mode = client.mode
    if mode in MODERN:
        client._use(mode)
    elif mode in LEGACY or mode == "legacy":
        await initialize(client, LEGACY[-1] if mode == "legacy" else mode, exact=mode != "legacy")
    else:
        await _auto(client)


async def _auto(client: Client) -> None:
    try:
        client._use(MODERN[-1])
        discovered = await probe(client)
    except McpError as exc:
        data = exc.data if isinstance(exc.data, dict) else {}
        supported = data.get("supported")  # pyright: ignore[reportUnknownMemberType]
        shared = [v for v in MODERN if isinstance(supported, list) and v in supported]
        if exc.code == UNSUPPORTED_VERSION and shared:
            client._use(shared[-1])
            await probe(client)
            return
        status = data.get("status")  # pyright: ignore[reportUnknownMemberType]
        if client._auth is not None and (
            status in (401, 403) or exc.message.startswith("authorization failed")
        ):
            raise  # the server wants authorization we could not get: not an old server
        await initialize(client, LEGACY[-1], exact=False)
    except RequestTimeout:
        await initialize(client, LEGACY[-1], exact=False)
    else:
        shared = [v for v in MODERN if v in discovered.supportedVersions]
        if shared:
            client._use(shared[-1])
        elif any(v in LEGACY for v in discovered.supportedVersions):
            await initialize(client, LEGACY[-1], exact=False)
        else:
            raise NegotiationError(
                f"no shared revision: the server speaks {discovered.supportedVersions}"
            )


async def probe(client: Client) -> pub.DiscoverResult:
    """`server/discover` as the era probe: a legacy server may never answer it, and is then
    not told about it (before `initialize` it should hear nothing else)."""
    codec = client.codec
    assert codec is not None
    raw = await client._exchange(codec, "server/discover", None, client.probe_timeout, cancel=False)
    response = codec.decode_response(raw, "server/discover")
    raise_error(response)
    return client._discovered(response.result)


async def initialize(client: Client, version: str, *, exact: bool) -> None:
    """The legacy handshake in `version` (`exact`: or fail; else the legacy revision the server
    offers instead), the server's info and capabilities kept on the client."""
    client._use(version)
    codec = mcp_wire.codec(version)
    models = mcp_wire.revision(version)
    capabilities = client.capabilities(False)
    if version < URL_ELICITATION_SINCE and client._callbacks.elicitation is None:
        capabilities.pop("elicitation", None)  # URL mode alone: nothing to offer there
    params = {
        "protocolVersion": version,
        "capabilities": {
            **fit(models.ClientCapabilities, capabilities),
            **ext_methods.legacy_extensions(capabilities),  # MCP Apps' there too
        },
        "clientInfo": fit(models.Implementation, client.info.model_dump(exclude_unset=True)),
    }
    raw = await client._exchange(codec, "initialize", params, client.timeout)
    response = codec.decode_response(raw, "initialize")
    raise_error(response)
    offered = response.result.protocolVersion
    if offered != version:
        if exact or offered not in LEGACY:
            raise NegotiationError(f"asked for {version}, the server offered {offered}")
        codec = mcp_wire.codec(offered)
        client._use(offered)
        response = codec.decode_response(raw, "initialize")
    result = response.result
    caps = result.capabilities.model_dump(mode="json", by_alias=True, exclude_unset=True)
    client.server_capabilities = pub.ServerCapabilities.model_validate(
        fit(pub.ServerCapabilities, caps)
    )
    client.server_info = pub.Implementation.model_validate(
        fit(pub.Implementation, result.serverInfo.model_dump(mode="json", exclude_unset=True))
    )
    client.instructions = result.instructions
    await client._send(codec.encode(codec.notification("notifications/initialized")))


def server_key(target: Any) -> str:
    """Who answers, for the result cache: a URL, a command line, else the object itself."""
    if isinstance(target, str):
        return target
    if isinstance(target, Sequence):
        return shlex.join(str(part) for part in cast(Sequence[Any], target))
    return f"{type(target).__name__}@{id(target):x}"


def principal(auth: Any, headers: Mapping[str, str], basic: Secret | None = None) -> str:
    """Whose private results these are: a digest of the fixed credentials (`basic`: the URL's),
    the auth object's identity, or "" (no credentials: the local user, over stdio or in memory)."""
    if basic is not None:
        return "basic:" + hashlib.sha256(basic.reveal().encode()).hexdigest()
    if isinstance(auth, str):
        return "bearer:" + hashlib.sha256(auth.encode()).hexdigest()
    if auth is not None:
        return f"auth:{id(auth):x}"
    given = {k.lower(): v for k, v in headers.items()}.get("authorization")
    return "" if given is None else "header:" + hashlib.sha256(given.encode()).hexdigest()
