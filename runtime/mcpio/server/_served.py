"""What a connection needs of the server it serves (`Served`), in seven members: the pipeline
(`dispatch`), the extensions, the capabilities per revision, the hub, the sealer, what the server
says of itself (`Identity`) and the bounds it sets on a client's answers (`Limits`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from mcpio._core.context import Context, MethodHandler
from mcpio._core.extension import Extensions
from mcpio._core.hub import Hub
from mcpio._core.sealing import Sealer
from mcpio.latest import public as pub


class Identity:
    """What a server says of itself: its info (`serverInfo`), its instructions, and the `_meta`
    stamped on a modern result that sets none (made again when the info is replaced)."""

    def __init__(self, info: pub.Implementation, instructions: str | None) -> None:
        self.instructions = instructions
        self.info = info

    @property
    def info(self) -> pub.Implementation:
        """The server's `Implementation`."""
        return self._info

    @info.setter
    def info(self, info: pub.Implementation) -> None:
        self._info = info
        #: The `_meta` of a modern result that sets none (shared: never change it in place).
        self.result_meta = pub.ResultMetaObject(io_modelcontextprotocol_serverInfo=info)
        #: `result_meta` as JSON, written into each modern result that sets no `_meta`.
        self.result_meta_json: bytes = type(self.result_meta).__pydantic_serializer__.to_json(
            self.result_meta, by_alias=True, exclude_unset=True
        )

    def info_data(self) -> dict[str, Any]:
        """The info as plain JSON data."""
        return self._info.model_dump(mode="json", by_alias=True, exclude_unset=True)


@dataclass
class Limits:
    """How long the server waits for its own requests (legacy questions), and the largest
    answer a client may give to one."""

    request_timeout: float
    max_answer_bytes: int


class Served(Protocol):
    """What a connection needs of the server it serves (`mcpio.Server`)."""

    @property
    def identity(self) -> Identity:
        """What the server says of itself."""
        ...

    @property
    def limits(self) -> Limits:
        """The bounds of its questions to clients."""
        ...

    @property
    def hub(self) -> Hub:
        """This instance's listeners and legacy sessions, and its notification bus."""
        ...

    @property
    def sealer(self) -> Sealer:
        """Signs and checks `requestState` and cursors with the server's key."""
        ...

    @property
    def extensions(self) -> Extensions:
        """The extensions served: their methods and the hooks of the request path."""
        ...

    async def dispatch(
        self, ctx: Context, method: str, params: Any, handler: MethodHandler | None = None
    ) -> Any:
        """A request's result through the middlewares and its handler (`Server.dispatch`)."""
        ...

    def capabilities_in(self, revision: str) -> dict[str, Any]:
        """The capabilities reported in `revision` (plain data)."""
        ...
