"""How an exception raised while answering a request becomes what the client sees.

A tool's is a failed result the model reads; any other (a resource's, a prompt's, a
middleware's...) is a -32603 error. Either carries the exception's message unless the server
masks details (`Server(mask_error_details=True)`); `ToolError`'s and `ResourceError`'s message is
always the whole text. Each failure is logged once, naming the exception, with its traceback.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp_wire_runtime.errors import INTERNAL_ERROR, ProtocolError
from mcpio._core.context import InputRequired
from mcpio._core.errors import ConnectionClosed, ResourceError, ToolError
from mcpio.latest import public as pub

log = logging.getLogger("mcpio")

# What an exception may be that is no failure to report: the JSON-RPC error chosen, a question
# for the client (2026-07-28), or the client gone while the handler waited on it.
_PASSING = (ProtocolError, InputRequired, ConnectionClosed)


def passes_through(error: BaseException) -> bool:
    """Whether `error` goes on as it is (`_PASSING`, or a group of those: questions asked at
    once in a task group)."""
    if isinstance(error, BaseExceptionGroup):
        group: BaseExceptionGroup[BaseException] = error
        return all(passes_through(e) for e in group.exceptions)
    return isinstance(error, _PASSING)


def tool_failure(name: str, error: Exception, mask: bool) -> pub.CallToolResult:
    """An exception raised in a tool, as the failed result the model reads (logged once)."""
    return tool_result_error(_reported(f"Error calling tool {name!r}", error, mask))


def request_failure(method: str, params: Any, error: Exception, mask: bool) -> ProtocolError:
    """An exception raised answering a request (not in a tool: a tool's own is a failed result),
    as the -32603 error sent; a `ToolError` or `ResourceError` with its message as it is."""
    if isinstance(error, ToolError | ResourceError):
        return ProtocolError(INTERNAL_ERROR, str(error))
    return ProtocolError(INTERNAL_ERROR, _reported(_failed(method, params), error, mask))


def _failed(method: str, params: Any) -> str:
    """What failed, as the client is told: the tool, resource or prompt, else the method."""
    if method == "tools/call":
        return f"Error calling tool {getattr(params, 'name', None)!r}"
    if method == "resources/read":
        return f"Error reading resource {getattr(params, 'uri', None)!r}"
    if method == "prompts/get":
        return f"Error rendering prompt {getattr(params, 'name', None)!r}"
    return f"Error answering {method}"


def _reported(failed: str, error: Exception, mask: bool) -> str:
    """The failure's text for the client (with the exception's message unless `mask`), the
    failure logged with the exception named and its traceback."""
    log.error("%s: %r", failed, error, exc_info=error)
    detail = str(error) or type(error).__name__
    return failed if mask else f"{failed}: {detail}"


def tool_result_error(text: str, structured: Any = None) -> pub.CallToolResult:
    """A tool result marked `isError` with `text` (and `structured` content, if given)."""
    result = pub.CallToolResult(
        content=[pub.TextContent(type="text", text=text)], isError=True, resultType="complete"
    )
    if structured is not None:
        result.structuredContent = structured
    return result
