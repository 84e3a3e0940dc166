"""Who owns a task: the one rule for the key a task is stored under (`TaskRecord.owner`), which
every read, list, update and cancel must match.

- With authorization: the principal's subject (the same across sessions, instances and
  restarts).
- Without, on a legacy HTTP session: the session, as a digest of its `Mcp-Session-Id` (the id
  itself is a bearer secret and stays out of the store). Another session, and every 2026-07-28
  client, reads such a task as unknown; after the session ends (a restart ends them all) it is
  out of everyone's reach until its TTL drops it.
- Without, on 2026-07-28 (stateless: no session, nothing the server gave the client to prove
  who it is) and on stdio (one client per process): `None`, the anonymous owner. The task id
  (192 random bits) is then the capability: whoever holds it may read, update or cancel the
  task, and nobody can list anonymous tasks (2026-07-28 has no `tasks/list`; a legacy HTTP
  session lists only its own).
"""

from __future__ import annotations

import hashlib

from mcpio._core.context import Context
from mcpio._core.principal import Principal

SESSION_OWNER = "mcp-session:"


def task_owner(principal: Principal | None, session_id: str | None) -> str | None:
    """The owner of the tasks a request creates and may reach (see the module's docstring)."""
    if principal is not None:
        return principal.subject
    if session_id is None:
        return None
    return SESSION_OWNER + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def owner_of(ctx: Context) -> str | None:
    """The owner of the tasks `ctx`'s request creates and may reach."""
    return task_owner(ctx.principal, ctx.session_id)


def owner_principal(owner: str | None) -> Principal | None:
    """The principal a queued task's worker runs it as: none for an anonymous or a
    session-owned task (a session is no principal)."""
    if owner is None or (owner.startswith(SESSION_OWNER) and len(owner) == len(SESSION_OWNER) + 32):
        return None
    return Principal(owner)
