"""Middleware: code run around every request a server answers.

Every request, the same in both eras and over every transport: the server's one request
pipeline (`ServerConnection.serve`, `Server.dispatch`) runs each request through the
middlewares to its handler.

A middleware is an object with async hooks, each `(call, call_next) -> result`: it may read or
replace `call.params`, answer without calling `call_next` (a result, or an exception: a
`ProtocolError` is the JSON-RPC error sent; any other exception is -32603 with its message
unless the server masks details, logged once), and sees the result `call_next` returns. Subclass `Middleware` and override what you need:

- `on_message`: every request (the outermost hook),
- `on_request`: every request, inside `on_message`,
- per method: `on_call_tool`, `on_list_tools`, `on_read_resource`, `on_list_resources`,
  `on_list_resource_templates`, `on_get_prompt`, `on_list_prompts`, `on_complete`.

Middlewares run in the order added, the first outermost. Each sees every request in one shape,
`call.method`, `call.params`, `call.ctx` and the result: the public (latest revision's) models
where the public revision has the method, plain JSON data (params) and a `WireResult` where it
does not (`initialize`, a legacy session's own methods, every extension's methods); the
Middleware page of the docs (servers/middleware.md, "What middleware sees") has the details.
Notifications are not requests: no middleware sees them.
"""

from mcpio.middleware._base import Call, CallNext, Middleware, MiddlewareFn, chain
from mcpio.middleware._caching import ResponseCachingMiddleware
from mcpio.middleware._errors import ErrorMappingMiddleware
from mcpio.middleware._logging import LoggingMiddleware, MethodTiming, TimingMiddleware
from mcpio.middleware._rate_limit import RateLimitMiddleware, by_client, by_principal

__all__ = [
    "Call",
    "CallNext",
    "ErrorMappingMiddleware",
    "LoggingMiddleware",
    "MethodTiming",
    "Middleware",
    "MiddlewareFn",
    "RateLimitMiddleware",
    "ResponseCachingMiddleware",
    "TimingMiddleware",
    "by_client",
    "by_principal",
    "chain",
]
