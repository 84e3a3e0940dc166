"""The server: `Server`, the registry of tools, resources, prompts and methods.

Beside it, what a server is made with: the handler's `Context` and its elicitation answers,
custom HTTP routes, the notification bus that reaches other instances, the sealer of
`requestState` they share, and `Extension`, the interface of a protocol extension (Tasks,
Skills and MCP Apps are served through it; `Server.add_extension` serves your own).
"""

from mcpio._core.bus import Bus, BusUnavailable, LocalBus, RedisBus
from mcpio._core.context import MAX_ANSWER_BYTES, Context, MethodHandler
from mcpio._core.elicitation import Accepted, Cancelled, Declined
from mcpio._core.extension import CallNextTool, Extension, ToolCall
from mcpio._core.options import PromptOptions, ResourceOptions, ToolOptions, VisibilityCriteria
from mcpio._core.routes import HttpRequest, HttpResponse, Route
from mcpio._core.sealing import Sealer
from mcpio.server._server import Lifespan, Server, task_required
from mcpio.server._transform import ArgTransform, forward, forward_raw

__all__ = [
    "MAX_ANSWER_BYTES",
    "Accepted",
    "ArgTransform",
    "Bus",
    "BusUnavailable",
    "CallNextTool",
    "Cancelled",
    "Context",
    "Declined",
    "Extension",
    "HttpRequest",
    "HttpResponse",
    "Lifespan",
    "LocalBus",
    "MethodHandler",
    "PromptOptions",
    "RedisBus",
    "ResourceOptions",
    "Route",
    "Sealer",
    "Server",
    "ToolCall",
    "ToolOptions",
    "VisibilityCriteria",
    "forward",
    "forward_raw",
    "task_required",
]
