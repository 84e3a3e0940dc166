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
    stamped on a modern result that sets none (made once per info)."""

    def __init__(self, info: pub.Implementation, instructions: str | None) -> None:
        self.info = info
        self.instructions = instructions
        self._stamp: tuple[pub.ResultMetaObject, bytes] | None = None

    @property
    def result_meta(self) -> pub.ResultMetaObject:
        """The `_meta` of a modern result that sets none: the server's info (shared: never
        change it in place)."""
        return self._result_stamp()[0]

    @property
    def result_meta_json(self) -> bytes:
        """`result_meta` as JSON (written into each modern result that sets no `_meta`)."""
        return self._result_stamp()[1]

    def info_data(self) -> dict[str, Any]:
        """The info as plain JSON data."""
        return self.info.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def _result_stamp(self) -> tuple[pub.ResultMetaObject, bytes]:
        stamp = self._stamp
        if stamp is None or stamp[0].io_modelcontextprotocol_serverInfo is not self.info:
            meta = pub.ResultMetaObject(io_modelcontextprotocol_serverInfo=self.info)
            json = type(meta).__pydantic_serializer__.to_json(
                meta, by_alias=True, exclude_unset=True
            )
            stamp = self._stamp = (meta, json)
        return stamp


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
