"""A synthetic extension of 2026-07-28, `com.example/rival`, that conflicts with the Tasks
extension: it answers `tools/call` with a response frame of its own (Tasks has another), so the
two cannot be one codec."""

from __future__ import annotations

from mcp_wire.v2026_07_28 import codec as _core
from mcp_wire.v2026_07_28 import models as m

ID = "com.example/rival"


class CallToolResultResponse(m.CallToolResultResponse):
    """A result response to `tools/call`, the rival's own."""


class Codec2026_07_28Rival(_core.Codec2026_07_28):
    """Codec of revision 2026-07-28 with the extension com.example/rival."""

    responses = {**_core.Codec2026_07_28.responses, "tools/call": CallToolResultResponse}
    own_modules = _core.Codec2026_07_28.own_modules | {__name__}
    extension_ids = frozenset({ID})


CODEC = Codec2026_07_28Rival()
