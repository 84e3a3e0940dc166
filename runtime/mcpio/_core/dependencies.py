"""The request's context and HTTP headers from anywhere inside a handler, and parameter defaults
that inject values per call: FastMCP's `get_context()`, `get_http_headers()`,
`CurrentContext()`, `CurrentHeaders()` and `Depends(fn)`.

A parameter whose default is one of these markers is left out of the input schema (as a
`Context` parameter is) and is given the marker's value at each call, resolved in the task that
answers the request.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Collection
from typing import Any, TypeVar, cast

import anyio.from_thread

from mcpio._core.context import CURRENT_CONTEXT, HTTP_REQUEST, Context

T = TypeVar("T")

# What `get_http_headers()` leaves out unless asked: FastMCP's list (headers about the hop or
# the body, credentials, and the MCP session), so what a handler forwards carries none of them.
WITHHELD_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "connection",
        "transfer-encoding",
        "upgrade",
        "te",
        "keep-alive",
        "expect",
        "accept",
        "authorization",
        "cookie",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "mcp-session-id",
    }
)


def get_context() -> Context:
    """The context of the request being answered, from anywhere inside its handler.

    Middlewares and the functions a handler calls see it too; `RuntimeError` outside a request.
    """
    ctx = CURRENT_CONTEXT.get()
    if ctx is None:
        raise RuntimeError("get_context() is only available while a request is answered")
    return ctx


def get_http_headers(
    include_all: bool = False, include: Collection[str] | None = None
) -> dict[str, str]:
    """The HTTP request's header fields by lowercase name; `{}` outside HTTP.

    Stdio and in-memory requests have none. The `WITHHELD_HEADERS` (credentials, the session id, hop and body headers) are left out
    unless `include_all`, or named in `include`.
    """
    ctx = CURRENT_CONTEXT.get()
    if ctx is not None:
        headers = ctx.headers
    else:
        request = HTTP_REQUEST.get()
        headers = {} if request is None else request[0].as_mapping()
    if include_all:
        return dict(headers)
    withheld = WITHHELD_HEADERS - {name.lower() for name in include or ()}
    return {name: value for name, value in headers.items() if name not in withheld}


class Dependency:
    """A parameter default whose value is resolved at each call (see the module)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    async def resolve(self) -> Any:
        """The value for this call: the function's result, awaited if it is awaitable.

        The function's own marker defaults are resolved first.
        """
        return await call_resolved(self.fn)

    def __repr__(self) -> str:
        return f"Depends({getattr(self.fn, '__qualname__', self.fn)!r})"


def Depends(fn: Callable[..., Awaitable[T]] | Callable[..., T]) -> T:  # noqa: N802 (FastMCP's)
    """A parameter default whose value is `fn()` at each call, sync or async (awaited).

    `fn`'s own parameters may have such defaults too (`CurrentContext()`, another `Depends`);
    they are resolved first. Typed as `fn`'s result so the parameter's annotation fits.
    """
    return cast(T, Dependency(fn))


def CurrentContext() -> Context:  # noqa: N802 (FastMCP's name)
    """A parameter default whose value is the request's `Context` (`get_context()`)."""
    return cast(Context, Dependency(get_context))


def CurrentHeaders() -> dict[str, str]:  # noqa: N802 (FastMCP's name)
    """A parameter default whose value is the HTTP request's headers; `{}` outside HTTP.

    `authorization` and `cookie` are included, as in FastMCP's (`get_http_headers` leaves
    them out).
    """
    return cast(dict[str, str], Dependency(_all_but_session_headers))


def _all_but_session_headers() -> dict[str, str]:
    return get_http_headers(include=("authorization", "cookie"))


def dependencies_of(fn: Callable[..., Any]) -> dict[str, Dependency]:
    """The parameters of `fn` whose default is a `Dependency`, by name."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return {}
    return {
        name: param.default
        for name, param in parameters.items()
        if isinstance(param.default, Dependency)
    }


async def call_resolved(fn: Callable[..., Any]) -> Any:
    """`fn()` with its marker defaults resolved; awaited when it returns an awaitable."""
    resolved = {name: await dep.resolve() for name, dep in dependencies_of(fn).items()}
    result = fn(**resolved)
    if inspect.isawaitable(result):
        result = await result
    return result


def resolving(
    fn: Callable[..., Any], is_async: bool, threaded: bool, context_param: str | None = None
) -> Callable[..., Any]:
    """`fn` itself when no parameter default is a `Dependency`; else a function of the same
    kind that resolves them at each call (but `context_param`, which the server fills). A sync
    one runs in a worker thread (`threaded`), where an async dependency is awaited on the event
    loop (`anyio.from_thread`); on the loop itself it can take none (`TypeError`)."""
    dependencies = dependencies_of(fn)
    dependencies.pop(context_param or "", None)
    if not dependencies:
        return fn
    if not is_async and not threaded and any(map(_awaits, dependencies.values())):
        raise TypeError(
            f"{getattr(fn, '__name__', fn)!r}: a sync handler with run_in_thread=False cannot "
            "await an async dependency: make it async, or drop run_in_thread=False"
        )
    if is_async:

        @functools.wraps(fn)
        async def resolved_async(**kwargs: Any) -> Any:
            for name, dep in dependencies.items():
                kwargs[name] = await dep.resolve()
            return await fn(**kwargs)

        return resolved_async

    @functools.wraps(fn)
    def resolved_sync(**kwargs: Any) -> Any:
        for name, dep in dependencies.items():
            kwargs[name] = _resolve_in_thread(dep)
        return fn(**kwargs)

    return resolved_sync


def _awaits(dep: Dependency) -> bool:
    """Whether resolving the dependency awaits: an async function, or markers of its own."""
    return inspect.iscoroutinefunction(dep.fn) or bool(dependencies_of(dep.fn))


def _resolve_in_thread(dep: Dependency) -> Any:
    """A dependency's value from a sync handler: a sync function's called here, an async one
    awaited on the event loop."""
    if not _awaits(dep):
        value = dep.fn()
        if not inspect.isawaitable(value):
            return value
        return anyio.from_thread.run(_awaited, value)
    return anyio.from_thread.run(dep.resolve)


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
