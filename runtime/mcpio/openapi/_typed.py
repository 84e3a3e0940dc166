"""What the modules `mcp-codegen openapi` writes are made of: their models' base class, a
request with each argument where the document puts it, the answer read as the declared type,
and the one call that serves every function as a tool."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic_core import to_jsonable_python

from mcpio.openapi._calls import answer_of, send_parts

if TYPE_CHECKING:
    import httpx

# A `mcpio.Server`: its layer is above this one, which it imports (`Server.from_openapi`).
Server = Any

_READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})


class ApiModel(BaseModel):
    """The base of a generated module's models.

    Each is built on first use (a module of a thousand operations imports fast), keeps members
    the document does not name, and is filled by name or alias.
    """

    model_config = ConfigDict(defer_build=True, extra="allow", populate_by_name=True)


def _jsonable(value: Any) -> Any:
    """A value as JSON data: a model with the members it was given, by their wire names."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}  # pyright: ignore
    return to_jsonable_python(value)


def _present(values: Mapping[str, Any] | None) -> dict[str, Any]:
    """The values given (None: left out), as JSON data."""
    return {k: _jsonable(v) for k, v in (values or {}).items() if v is not None}


async def request(
    client: httpx.AsyncClient,
    method: str,
    path: str,
    *,
    path_values: Mapping[str, Any] | None = None,
    query: Mapping[str, Any] | None = None,
    unexploded: Collection[str] = (),
    headers: Mapping[str, Any] | None = None,
    cookies: Mapping[str, Any] | None = None,
    body: Any = None,
    members: Mapping[str, Any] | None = None,
    content_type: str | None = None,
) -> httpx.Response:
    """Call `method path` through `client`, each value where the document puts it.

    Args:
        client: The API's client.
        method: The HTTP method.
        path: The path template (`/pets/{petId}`).
        path_values: The path parameters' values, by name.
        query: The query parameters' (an array as repeated keys, `a=1&a=2`).
        unexploded: Query parameters whose arrays are joined instead (`a=1,2`).
        headers: The header parameters'.
        cookies: The cookie parameters'.
        body: The request body (a model, or JSON data).
        members: The body's members, each an argument of its own (instead of `body`).
        content_type: The body's content type.

    A value of None is left out.
    """
    if members is not None:
        given = _present(members)
        body = given if given or body is None else body
    parts = send_parts(
        method,
        path,
        _present(path_values),
        _present(query),
        frozenset(unexploded),
        _present(headers),
        _present(cookies),
        None if body is None else _jsonable(body),
        content_type,
    )
    return await client.request(**parts)


@functools.lru_cache(maxsize=1024)
def _adapter(shape: Any) -> TypeAdapter[Any]:
    return TypeAdapter(shape)


def read_result(response: httpx.Response, shape: Any) -> Any:
    """The success response's JSON, read as `shape`.

    Raises:
        pydantic.ValidationError: It is not a `shape`.
        mcpio.ToolError: Any other status, with the status and body.
    """
    data = answer_of(response)
    return data if shape is Any else _adapter(shape).validate_python(data)


Function = Callable[..., Awaitable[Any]]


def add_functions(
    server: Server, client: httpx.AsyncClient, functions: Sequence[tuple[str, str, Function]]
) -> None:
    """Serve each `(name, method, function)` of a generated module as a tool of `server`.

    Args:
        server: The `mcpio.Server` to serve them on.
        client: Each function's first argument (the API's client).
        functions: Tool name, HTTP method and function, for each operation; the function's
            other arguments are the tool's, its return type the tool's output.
    """
    for name, method, fn in functions:
        server.tool(
            name,
            annotations={"readOnlyHint": method in _READ_ONLY},
        )(_bound(fn, client))


def _bound(fn: Function, client: httpx.AsyncClient) -> Function:
    """`fn` with `client` given: its signature and type hints without the first parameter
    (whose annotation names httpx, which the module imports for type checkers only)."""

    async def bound(**arguments: Any) -> Any:
        return await fn(client, **arguments)

    signature = inspect.signature(fn)
    first, *parameters = signature.parameters.values()
    rest = {k: v for k, v in fn.__annotations__.items() if k != first.name}
    holder = SimpleNamespace(__annotations__=rest, __globals__=fn.__globals__)  # type: ignore[attr-defined]
    bound.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    bound.__annotations__ = get_type_hints(holder, include_extras=True)
    bound.__name__ = bound.__qualname__ = fn.__name__
    bound.__doc__ = fn.__doc__
    return bound
