"""The Tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`) as `mcpio inspect` checks
it: its methods (`tasks/get`, `tasks/update`, `tasks/cancel`, `notifications/tasks`) and its
`resultType: "task"` answers are no part of the core codec, so a frame that uses them is checked
with the extension's codec (`Codec.with_extensions`). A task answer to a request whose
`clientCapabilities` did not declare the extension is a `capability.client` finding, a tasks
method sent to a server whose capabilities do not declare it a `capability.server` one, as for
any undeclared use. (2025-11-25's tasks are core methods there: its own codec knows them.)"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from mcp_wire_runtime.codec import Codec
from mcpio._core.negotiate import codec_of
from mcpio._core.protocol_rules import TASKS_EXTENSION
from mcpio.inspect._rules import Direction, Finding


def codec(revision: str) -> Codec | None:
    """The revision's codec with the Tasks extension, None where it has none."""
    return _codec(revision)


def methods(revision: str) -> frozenset[str]:
    """The methods the extension adds to the revision (none where it has no extension)."""
    return _methods(revision)


@functools.cache
def _codec(revision: str) -> Codec | None:
    core = codec_of(revision)
    if TASKS_EXTENSION not in core.extensions:
        return None
    return core.with_extensions(TASKS_EXTENSION)


@functools.cache
def _methods(revision: str) -> frozenset[str]:
    extended = _codec(revision)
    if extended is None:
        return frozenset()
    return frozenset(extended.methods) - frozenset(codec_of(revision).methods)


def declares(capabilities: Mapping[str, Any] | None) -> bool:
    """Whether capabilities (a side's, or a request's `clientCapabilities`) declare it."""
    extensions = capabilities.get("extensions") if capabilities is not None else None
    return type(extensions) is dict and TASKS_EXTENSION in extensions


def is_task(result: Any) -> bool:
    """Whether a 2026-07-28 result is a task made of the request (`resultType: "task"`)."""
    return type(result) is dict and result.get("resultType") == "task"


def undeclared_method(
    direction: Direction, method: str, server_capabilities: Mapping[str, Any] | None
) -> Iterator[Finding]:
    """`capability.server` when the server's capabilities (None: not seen yet) do not declare
    the extension whose method this is."""
    if server_capabilities is not None and not declares(server_capabilities):
        what = f"{method} needs the server extension {TASKS_EXTENSION}, not declared"
        yield Finding("capability.server", direction, "$.method", what)


def undeclared_task(
    direction: Direction, method: str, client_capabilities: Mapping[str, Any] | None
) -> Iterator[Finding]:
    """`capability.client` for a task answer to a request that did not declare the extension
    in its `clientCapabilities`."""
    if not declares(client_capabilities):
        what = (
            f"{method} answered with a task: needs the client extension {TASKS_EXTENSION}, "
            "not declared in the request's clientCapabilities"
        )
        yield Finding("capability.client", direction, "$.result.resultType", what)
