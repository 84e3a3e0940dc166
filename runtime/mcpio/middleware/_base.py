"""The middleware mechanism: `Call`, the `Middleware` base class and `chain`.

See the package's docstring for what middleware sees.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mcpio._core.context import Context


@dataclass
class Call:
    """One request on its way through the middlewares.

    Args:
        method: The request's JSON-RPC method.
        params: The public params model (`CallToolRequestParams`, ...); None when it has none.
        ctx: The request's context.
        text_answer: A tool's string answer and the result model made of it for the
            middlewares (the server's own bookkeeping: see `Server.dispatch`).
        handler: The handler the connection serves the request with (its own methods: the
            lifecycle, `subscriptions/listen`); None: the server's handler table's.
    """

    method: str
    params: Any  # the public params model (`CallToolRequestParams`, ...); None when it has none
    ctx: Context
    # A tool's string answer and the result model made of it for the middlewares (the server's
    # own bookkeeping: see `Server.dispatch`).
    text_answer: tuple[Any, Any] | None = field(default=None, repr=False, compare=False)
    # The handler the connection serves the request with (its own methods: the lifecycle,
    # `subscriptions/listen`); None: the server's handler table's.
    handler: Handler | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str | None:
        """What the request names: the tool or prompt, the resource's URI; else None."""
        for attribute in ("name", "uri"):
            value = getattr(self.params, attribute, None)
            if isinstance(value, str):
                return value
        return None


CallNext = Callable[[Call], Awaitable[Any]]
Handler = Callable[[Context, Any], Awaitable[Any]]

_HOOKS = {
    "tools/call": "on_call_tool",
    "tools/list": "on_list_tools",
    "resources/read": "on_read_resource",
    "resources/list": "on_list_resources",
    "resources/templates/list": "on_list_resource_templates",
    "prompts/get": "on_get_prompt",
    "prompts/list": "on_list_prompts",
    "completion/complete": "on_complete",
}


HOOKED_METHODS = frozenset(_HOOKS)  # the methods with a hook of their own


class Middleware:
    """A pass-through middleware: override the hooks you need (see the module docstring)."""

    # Per class: method ("" for those without a hook of their own) -> the hooks it overrides
    # for it (`_plan`).
    _plans: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._plans = {}

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        step = call_next
        for hook in reversed(_plan(type(self), call.method)):
            step = _bind(getattr(self, hook), step)
        return await step(call)

    async def on_message(self, call: Call, call_next: CallNext) -> Any:
        """Every request (the outermost hook); call `call_next(call)` to go on."""
        return await call_next(call)

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Every request, after `on_message`; call `call_next(call)` to go on."""
        return await call_next(call)

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        """`tools/call`: `call.name` is the tool; raise `ToolError` for a failed result."""
        return await call_next(call)

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        """`tools/list`."""
        return await call_next(call)

    async def on_read_resource(self, call: Call, call_next: CallNext) -> Any:
        """`resources/read`."""
        return await call_next(call)

    async def on_list_resources(self, call: Call, call_next: CallNext) -> Any:
        """`resources/list`."""
        return await call_next(call)

    async def on_list_resource_templates(self, call: Call, call_next: CallNext) -> Any:
        """`resources/templates/list`."""
        return await call_next(call)

    async def on_get_prompt(self, call: Call, call_next: CallNext) -> Any:
        """`prompts/get`."""
        return await call_next(call)

    async def on_list_prompts(self, call: Call, call_next: CallNext) -> Any:
        """`prompts/list`."""
        return await call_next(call)

    async def on_complete(self, call: Call, call_next: CallNext) -> Any:
        """`completion/complete`."""
        return await call_next(call)


MiddlewareFn = Callable[[Call, CallNext], Awaitable[Any]]


def _plan(cls: type[Middleware], method: str) -> tuple[str, ...]:
    """The hooks `cls` overrides for a request of `method`, outermost first (the others only
    pass the call on, so they are not run at all)."""
    key = method if method in HOOKED_METHODS else ""  # (bounded: whatever methods clients send)
    plan = cls._plans.get(key)
    if plan is None:
        names = ["on_message", "on_request"]
        if key:
            names.append(_HOOKS[key])
        base = Middleware.__dict__
        plan = tuple(name for name in names if getattr(cls, name) is not base[name])
        cls._plans[key] = plan
    return plan


def acts_on(middleware: MiddlewareFn, method: str) -> bool:
    """Whether `middleware` may do anything for a request of `method`: False only for a
    `Middleware` that overrides none of the hooks a request of `method` runs."""
    if not isinstance(middleware, Middleware):
        return True
    cls = type(middleware)
    return cls.__call__ is not Middleware.__call__ or bool(_plan(cls, method))


def chain(middlewares: Sequence[MiddlewareFn], last: CallNext) -> CallNext:
    """`last` wrapped in `middlewares`, the first outermost."""
    step = last
    for middleware in reversed(middlewares):
        step = _wrap(middleware, step)
    return step


def _bind(hook: MiddlewareFn, call_next: CallNext) -> CallNext:
    async def step(call: Call) -> Any:
        return await hook(call, call_next)

    return step


def _wrap(middleware: MiddlewareFn, call_next: CallNext) -> CallNext:
    # A plain function (no coroutine of its own around the middleware's: one step fewer).
    if isinstance(middleware, Middleware) and type(middleware).__call__ is Middleware.__call__:
        return _hooked(middleware, call_next)

    def step(call: Call) -> Awaitable[Any]:
        return middleware(call, call_next)

    return step


def _hooked(middleware: Middleware, call_next: CallNext) -> CallNext:
    """A `Middleware` that only runs its hooks: one hook for a request's method is called as
    it is (what `Middleware.__call__` would run, without its steps around it)."""
    cls = type(middleware)

    def step(call: Call) -> Awaitable[Any]:
        plan = _plan(cls, call.method)
        if len(plan) == 1:
            hook: MiddlewareFn = getattr(middleware, plan[0])
            return hook(call, call_next)
        return middleware(call, call_next)

    return step
