"""Per-component authorization (FastMCP's `auth=` on tools, resources, templates and prompts): a
check, or several (all must pass), that says whether the request's caller may see and use the
component. One the caller may not use is unlisted and answers as unknown, as a hidden one does
(`mcpio._core.visibility`).

Checks run when the request has a caller to judge: over HTTP (its principal, None without a valid
token) or with a principal given in process; over stdio and in memory without one (the local
user) they are skipped, as FastMCP skips them over stdio. A check is a plain function of an
`AuthContext`; one that raises denies (logged once per failure), so a broken check fails closed.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from mcpio._core.principal import Principal

log = logging.getLogger("mcpio")


@dataclass(frozen=True)
class AuthContext:
    """What a check judges: the caller and the component.

    Args:
        principal: Whom the request's access token speaks for (None: no valid token).
        component: The component's definition as listed (`Tool`, `Resource`, ...).
        tags: The component's tags.
    """

    principal: Principal | None
    component: Any
    tags: frozenset[str]


#: A check: True lets the caller see and use the component.
AuthCheck = Callable[[AuthContext], bool]


@dataclass(frozen=True)
class _RequireScopes:
    scopes: frozenset[str]
    tag: str | None = None  # only components with this tag (`restrict_tag`)

    def __call__(self, ctx: AuthContext) -> bool:
        if self.tag is not None and self.tag not in ctx.tags:
            return True
        return ctx.principal is not None and self.scopes <= ctx.principal.scopes


def require_scopes(*scopes: str) -> AuthCheck:
    """A check that the caller's token grants every one of `scopes` (FastMCP's)."""
    return _RequireScopes(frozenset(scopes))


def restrict_tag(tag: str, *, scopes: Collection[str]) -> AuthCheck:
    """A check that a component tagged `tag` needs every one of `scopes` (others pass)."""
    return _RequireScopes(frozenset(scopes), tag)


def checks_of(what: str, auth: Any) -> tuple[AuthCheck, ...]:
    """A component's `auth=` as a tuple of checks; `TypeError` naming the fix for a misuse."""
    if auth is None:
        return ()
    found: Sequence[Any] = auth if isinstance(auth, list | tuple) else (auth,)
    for check in found:
        if not callable(check):
            raise TypeError(f"{what}: auth is a check or a list of them (auth=require_scopes('x'))")
        if _is_coroutine_function(check):
            raise TypeError(f"{what}: an auth check is a plain function (not async) in mcpio")
    return tuple(found)


def _is_coroutine_function(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (the method, not callability)
    )


def permitted(entry: Any, principal: Principal | None) -> bool:
    """Whether every check of `entry`'s `auth=` lets `principal` use it."""
    auth = entry.options.get("auth")
    if auth is None:
        return True
    checks = auth if isinstance(auth, list | tuple) else (auth,)
    judged = AuthContext(principal, entry.definition, frozenset(entry.options.get("tags") or ()))
    for check in checks:  # pyright: ignore[reportUnknownVariableType]
        try:
            if not check(judged):
                return False
        except Exception:
            name = entry.definition.name
            log.warning("auth check %r of %s failed: denied", check, name, exc_info=True)
            return False
    return True
