"""Middleware: code around each request a server answers through its handler table (tools,
resources, prompts, completion, and methods added with `Server.method`), the same in both eras
and over every transport, in the public (latest revision's) models.

A middleware is an object with async hooks, each `(call, call_next) -> result`: it may read or
replace `call.params`, answer without calling `call_next` (a result, or an exception: a
`ProtocolError` is the JSON-RPC error sent; any other exception is -32603, logged once), and
sees the result `call_next` returns. Subclass `Middleware` and override what you need:

- `on_message`: every request (the outermost hook),
- `on_request`: every request, inside `on_message`,
- per method: `on_call_tool`, `on_list_tools`, `on_read_resource`, `on_list_resources`,
  `on_list_resource_templates`, `on_get_prompt`, `on_list_prompts`, `on_complete`.

Middlewares run in the order added, the first outermost. What they do not see: the lifecycle
(`initialize`, `ping`, `logging/setLevel`, subscriptions), `server/discover`,
`subscriptions/listen`, the task methods (`tasks/*`) and notifications. A tool call answered with
a task returns `TaskCreated` (its `record`); a tool's failure is a `CallToolResult` with
`isError`, not an exception.
"""

from mcpio.middleware.base import Call, CallNext, Middleware, MiddlewareFn, chain
from mcpio.middleware.caching import ResponseCachingMiddleware
from mcpio.middleware.errors import ErrorMappingMiddleware
from mcpio.middleware.logging import LoggingMiddleware, TimingMiddleware
from mcpio.middleware.rate_limit import RateLimitMiddleware

__all__ = [
    "Call",
    "CallNext",
    "ErrorMappingMiddleware",
    "LoggingMiddleware",
    "Middleware",
    "MiddlewareFn",
    "RateLimitMiddleware",
    "ResponseCachingMiddleware",
    "TimingMiddleware",
    "chain",
]
