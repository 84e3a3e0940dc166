"""The Streamable HTTP host: the ASGI app that serves a `Server`, and its bounds.

`http_app` makes the ASGI app that serves a `Server` (both eras, its legacy sessions, admission
bounds, CORS, custom routes), `HttpOptions` its bounds, and `uvicorn_config` serves it with
uvicorn and a header timeout (the `http` extra, loaded on first use). It sits below
`mcpio.server`, which it serves through the `Hosting` and `Hosted` protocols; the HTTP pipes
(the client side) are in `mcpio.transports`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpio._core.extras import needs
from mcpio.http._app import Hosting, HttpApp, HttpOptions, http_app
from mcpio.http._options import HttpAppOptions, HttpServeOptions
from mcpio.http._sessions import Hosted

if TYPE_CHECKING:
    from mcpio.http._serve import uvicorn_config


def __getattr__(name: str) -> Any:
    if name != "uvicorn_config":
        raise AttributeError(f"module 'mcpio.http' has no attribute {name!r}")
    with needs("http", "serving over HTTP"):  # uvicorn at its top
        return importlib.import_module("mcpio.http._serve").uvicorn_config


__all__ = [
    "Hosted",
    "Hosting",
    "HttpApp",
    "HttpAppOptions",
    "HttpOptions",
    "HttpServeOptions",
    "http_app",
    "uvicorn_config",
]
