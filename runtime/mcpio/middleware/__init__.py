"""Middleware: code around each request a server answers, every one of them, the same in both
eras and over every transport: the server's one request pipeline (`ServerConnection.serve`,
`Server.dispatch`) runs each request through the middlewares to its handler.

A middleware is an object with async hooks, each `(call, call_next) -> result`: it may read or
replace `call.params`, answer without calling `call_next` (a result, or an exception: a
`ProtocolError` is the JSON-RPC error sent; any other exception is -32603, logged once), and
sees the result `call_next` returns. Subclass `Middleware` and override what you need:

- `on_message`: every request (the outermost hook),
- `on_request`: every request, inside `on_message`,
- per method: `on_call_tool`, `on_list_tools`, `on_read_resource`, `on_list_resources`,
  `on_list_resource_templates`, `on_get_prompt`, `on_list_prompts`, `on_complete`.

Middlewares run in the order added, the first outermost. What a middleware sees of each request
(`call.method`, `call.params`, `call.ctx` and the result):

- the handler table's methods (tools, resources, prompts, completion, `Server.method`'s) and
  `server/discover`: the public (latest revision's) params and result models;
- `subscriptions/listen` (2026-07-28): its public params; the call returns when the stream ends,
  with `SubscriptionsListenResult` (ended by the server), None (the connection closed or its
  reader fell behind: nothing is sent) or the error it ended with; a client that stops
  listening cancels it;
- `initialize` and a legacy session's `ping`, `logging/setLevel`, `resources/subscribe` and
  `resources/unsubscribe` (methods the public revision does not have): the negotiated revision's
  own params model (None for a `ping` without params) and a `WireResult` (`mcpio._core.handlers`: the
  result as plain JSON data in that revision's shape); `ctx.revision` is the negotiated one, and
  a middleware that fails `initialize` leaves the connection without a session;
- the task methods (`tasks/get`, `tasks/update`, `tasks/cancel`; legacy also `tasks/result`,
  `tasks/list`): the params as plain data (a `dict`, the `_meta` envelope included on
  2026-07-28) and a `WireResult`; on 2026-07-28 their `ctx.client_capabilities` and
  `ctx.client_info` are read from that envelope;
- a modern request that needs input: the `InputRequired` exception (the client is asked, then
  retries, and the middlewares see the retry); a tool call answered with a task: `TaskCreated`
  (its `record`); a tool's failure: a `CallToolResult` with `isError`, not an exception.

Notifications are not requests: no middleware sees them.
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
