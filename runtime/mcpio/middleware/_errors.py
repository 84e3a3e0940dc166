"""`ErrorMappingMiddleware`: handler exceptions turned into the JSON-RPC errors you choose.

A tool's exceptions are failed results already: see `Server.tool`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp_wire_runtime.errors import ProtocolError
from mcpio.middleware._base import Call, CallNext, Middleware

Mapper = Callable[[Exception], ProtocolError]


class ErrorMappingMiddleware(Middleware):
    """A middleware that turns the exceptions its mapping names into JSON-RPC errors.

    The mapping is like `{KeyError: lambda e: ProtocolError(-32602, f"no such item: {e}")}`: the
    first entry whose type the exception is an instance of makes the error sent; other
    exceptions pass unchanged.
    """

    def __init__(self, mapping: Mapping[type[Exception], Mapper]) -> None:
        self.mapping = dict(mapping)

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Turn the exceptions the map names into their JSON-RPC errors."""
        try:
            return await call_next(call)
        except ProtocolError:
            raise
        except Exception as exc:
            for kind, make in self.mapping.items():
                if isinstance(exc, kind):
                    raise make(exc) from exc
            raise
