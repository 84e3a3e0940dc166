"""The server: `Server`, the registry of tools, resources, prompts and methods.

Beside it, what a server is made with: the handler's `Context` and its elicitation answers,
custom HTTP routes, the notification bus that reaches other instances, and the sealer of
`requestState` they share.
"""

from mcpio._core.bus import Bus, BusUnavailable, LocalBus, RedisBus
from mcpio._core.context import MAX_ANSWER_BYTES, Context
from mcpio._core.elicitation import Accepted, Cancelled, Declined
from mcpio._core.routes import HttpRequest, HttpResponse, Route
from mcpio._core.sealing import Sealer
from mcpio.server._server import Lifespan, Server, task_required

__all__ = [
    "MAX_ANSWER_BYTES",
    "Accepted",
    "Bus",
    "BusUnavailable",
    "Cancelled",
    "Context",
    "Declined",
    "HttpRequest",
    "HttpResponse",
    "Lifespan",
    "LocalBus",
    "RedisBus",
    "Route",
    "Sealer",
    "Server",
    "task_required",
]
