"""The server: `Server`, the registry of tools, resources, prompts and methods, and what serves
a connection (`Server.connect`), its listen streams and mounted servers."""

from mcpio._core.context import Context
from mcpio.server._server import Lifespan, Server, task_required

__all__ = ["Context", "Lifespan", "Server", "task_required"]
