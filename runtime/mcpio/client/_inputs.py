"""What a server asks of the client, answered through the client's callbacks (elicitation,
URL elicitation, sampling, roots), in both eras: a legacy server->client request, a modern
`input_required` round (`input_rounds`: answered, then retried with the answers and the sealed
`requestState`), a task's `inputRequests`, a 2025-11-25 -32042 error's URLs."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel

from mcp_wire_runtime.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    ProtocolError,
)
from mcpio._core.context import ElicitUrl
from mcpio._core.jsonrpc import plain
from mcpio._core.protocol_rules import MAX_INPUT_ROUNDS
from mcpio._core.url_check import url_problem
from mcpio.client._targets import root_of
from mcpio.latest import public as pub

log = logging.getLogger("mcpio")
#: The `inputRequests` key of the 2026-07-28 question a callback is answering (None: a legacy
#: server's request); a proxy asks its own client under the same key.
ANSWERING: ContextVar[str | None] = ContextVar("mcpio_answering", default=None)

Elicitation = Callable[[Any], Awaitable[pub.ElicitResult | Mapping[str, Any]]]
ElicitationUrl = Callable[[ElicitUrl], Awaitable[pub.ElicitResult | Mapping[str, Any]]]
Sampling = Callable[
    [pub.CreateMessageRequestParams], Awaitable[pub.CreateMessageResult | Mapping[str, Any]]
]
Roots = Callable[[], Awaitable[pub.ListRootsResult | Sequence[Any]]]


@dataclass
class Callbacks:
    """The client's answers to what a server may ask; None: not offered."""

    elicitation: Elicitation | None = None
    elicit_url: ElicitationUrl | None = None
    sampling: Sampling | None = None
    roots: Roots | Sequence[Any] | None = None


@functools.cache
def input_required(cls: type) -> bool:
    """Whether a result of this class asks for input (an ABC `isinstance` per call, else)."""
    return issubclass(cls, pub.InputRequiredResult)


async def input_rounds(
    method: str,
    data: dict[str, Any],
    result: Any,
    again: Callable[[dict[str, Any]], Awaitable[Any]],
    callbacks: Callbacks,
) -> Any:
    """The result of a request whose first round answered `result` (`input_required`): the
    questions answered through `callbacks`, the request sent `again` with the answers, until a
    round answers something else (at most `MAX_INPUT_ROUNDS` rounds)."""
    for _ in range(MAX_INPUT_ROUNDS):
        answers = await answer_all(callbacks, result.inputRequests or {})
        data = retry_params(data, answers, result.requestState)
        result = await again(data)
        if not input_required(type(result)):
            return result
    raise ProtocolError(INTERNAL_ERROR, f"{method}: more than {MAX_INPUT_ROUNDS} input rounds")


def retry_params(data: Any, answers: dict[str, Any], state: str | None) -> dict[str, Any]:
    """A request's params for its retry after `input_required`: the answers, and the state the
    server sealed, in place of the last round's."""
    retry = {k: v for k, v in data.items() if k not in ("inputResponses", "requestState")}
    if answers:
        retry["inputResponses"] = answers
    if state is not None:
        retry["requestState"] = state
    return retry


async def answer_all(callbacks: Callbacks, requests: Mapping[str, Any]) -> dict[str, Any]:
    """Every question of a round (public request models, by key) answered at once."""
    answers: dict[str, Any] = {}

    async def one(key: str, request: Any) -> None:
        ANSWERING.set(key)  # (this task's own)
        answers[key] = plain(await answer(callbacks, request.method, request.params))

    async with anyio.create_task_group() as tasks:
        for key, request in requests.items():
            tasks.start_soon(one, key, request)
    return answers


async def answer(callbacks: Callbacks, method: str, params: Any) -> BaseModel:
    """The callback's answer to what the server asks, as the public result model."""
    if method == "elicitation/create" and getattr(params, "mode", None) == "url":
        return await _elicit_url(callbacks, params)
    if method == "elicitation/create" and callbacks.elicitation is not None:
        return pub.ElicitResult.model_validate(plain(await callbacks.elicitation(params)))
    if method == "sampling/createMessage" and callbacks.sampling is not None:
        return pub.CreateMessageResult.model_validate(plain(await callbacks.sampling(params)))
    if method == "roots/list" and callbacks.roots is not None:
        roots = callbacks.roots
        value: Any = await roots() if callable(roots) else roots
        if not isinstance(value, pub.ListRootsResult):
            listed = [root_of(plain(r)) for r in value]
            value = pub.ListRootsResult.model_validate({"roots": listed})
        return value
    raise ProtocolError(METHOD_NOT_FOUND, f"this client does not answer {method}")


async def _elicit_url(callbacks: Callbacks, params: Any) -> BaseModel:
    if callbacks.elicit_url is None:
        raise ProtocolError(INVALID_PARAMS, "this client does not take URL-mode elicitation")
    problem = url_problem(params.url)
    if problem is not None:  # not shown to the user: declined for them
        log.warning("a URL elicitation of the server declined: %s", problem)
        return pub.ElicitResult.model_validate({"action": "decline"})
    extra = params.model_extra or {}
    asked = ElicitUrl(params.message, params.url, extra.get("elicitationId"))
    return pub.ElicitResult.model_validate(plain(await callbacks.elicit_url(asked)))


async def url_elicitations(callbacks: Callbacks, error: Any) -> None:
    """A -32042 answer (2025-11-25): its URLs go to `elicit_url` (the request still fails
    with that `McpError`; retry it once the user is done)."""
    if error is None or error.code != URL_ELICITATION_REQUIRED or callbacks.elicit_url is None:
        return
    data = plain(getattr(error, "data", None))
    items = data.get("elicitations") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else []:
        fields: dict[str, Any] = item if isinstance(item, dict) else {}
        message, url, known = fields.get("message"), fields.get("url"), fields.get("elicitationId")
        problem = url_problem(url) if isinstance(message, str) else "no message"
        if problem is not None or not isinstance(message, str):
            log.warning("a URL elicitation of the server refused: %s", problem)
            continue
        await callbacks.elicit_url(
            ElicitUrl(message, str(url), known if isinstance(known, str) else None)
        )
