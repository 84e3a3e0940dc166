"""What a handler can do while it serves one request, the same in both eras: ask the client for
input (elicitation, sampling, roots), report progress, log.

Asking differs underneath. A legacy session sends the client real requests and waits. A modern
server may not send requests: a question without an answer ends the handler with an
`input_required` result; the client answers and retries, and the handler runs again from the
start, this time finding the answer. Handlers must therefore be safe to re-run up to their last
question (ask first, act after). Questions asked together (`ctx.ask({...})`) travel in one round.
"""

from __future__ import annotations

import copy
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

import anyio
import pydantic
from pydantic import BaseModel

from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    ProtocolError,
)
from mcpio._core.elicitation import Accepted, Cancelled, Declined, answer_of, form_of
from mcpio._core.jsonrpc import plain
from mcpio._core.schema_check import violation
from mcpio._core.visibility import Outer, change_session, rules
from mcpio.latest import MISSING_CAPABILITY
from mcpio.latest import REVISION as PUBLIC_REVISION
from mcpio.latest import public as pub

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpio._core.options import SamplingOptions, VisibilityCriteria
    from mcpio._core.principal import Principal

log = logging.getLogger("mcpio")

T = TypeVar("T")
_NO_TYPE: Any = object()  # `elicit` without a response type
_NO_HEADERS: Mapping[str, str] = MappingProxyType({})


class HeaderFields(Protocol):
    """The HTTP request's header fields, as the transport keeps them."""

    def as_mapping(self) -> Mapping[str, str]:
        """The header fields by lowercase name."""
        ...


#: An HTTP request: its header fields, the legacy session's id (None on 2026-07-28), and whom
#: per-client bounds count (`Context.client_key`).
HttpRequest = tuple[HeaderFields, str | None, str]

#: The HTTP request being answered, set by the HTTP app in the task that answers it (so the
#: handler's `ctx.headers` and `ctx.session_id` read its own request; unset on stdio). A legacy
#: session's POST names its requests by id instead (`LegacySession.http_requests`).
HTTP_REQUEST: ContextVar[HttpRequest | None] = ContextVar("mcpio_http_request", default=None)

#: The context of the request being answered, set by `Server.dispatch` around its handler and
#: reset after it (`mcpio._core.dependencies.get_context`).
CURRENT_CONTEXT: ContextVar[Context | None] = ContextVar("mcpio_context", default=None)

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# The client capability each kind of input request needs.
CAPABILITY_OF = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
URL_ELICITATION_SINCE = "2025-11-25"  # the first revision with URL-mode elicitation


@dataclass(frozen=True)
class Elicit:
    """Ask the user for structured input (form mode)."""

    message: str
    requested_schema: Mapping[str, Any]
    method = "elicitation/create"

    def params(self) -> dict[str, Any]:
        """The `elicitation/create` params this question sends."""
        return {"message": self.message, "requestedSchema": dict(self.requested_schema)}


@dataclass(frozen=True)
class Sample:
    """Ask the client's model for a message.

    Args:
        messages: The conversation to continue (`SamplingMessage` models or their JSON).
        max_tokens: The most tokens the model may generate (`maxTokens`).
        options: The request's other fields, by their wire names (`systemPrompt`,
            `temperature`, ...).
    """

    messages: Sequence[Any]
    max_tokens: int
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    method = "sampling/createMessage"

    def params(self) -> dict[str, Any]:
        """The `sampling/createMessage` params this question sends."""
        return {
            "messages": [plain(m) for m in self.messages],
            "maxTokens": self.max_tokens,
            **self.options,
        }


@dataclass(frozen=True)
class ListRoots:
    """Ask the client for its roots."""

    method = "roots/list"

    def params(self) -> dict[str, Any]:
        """The `roots/list` params this question sends (none)."""
        return {}


@dataclass(frozen=True)
class ElicitUrl:
    """Ask the user to go to a URL (URL-mode elicitation, 2025-11-25 on).

    It is for an interaction that must not pass through the client (credentials, payment,
    consent).

    Args:
        message: Why the user is asked to go there.
        url: The URL to go to.
        elicitation_id: Names it on a legacy session (made up if not given), for
            `notifications/elicitation/complete`; 2026-07-28 has no such id (the request's
            `requestState` correlates).
    """

    message: str
    url: str
    elicitation_id: str | None = None
    method = "elicitation/create"

    def params(self) -> dict[str, Any]:
        """The URL-mode `elicitation/create` params this question sends."""
        params = {"mode": "url", "message": self.message, "url": self.url}
        if self.elicitation_id is not None:
            params["elicitationId"] = self.elicitation_id
        return params


Question = Elicit | Sample | ListRoots | ElicitUrl


class UrlElicitationRequired(ProtocolError):
    """Raise in a handler that cannot go on before the user completes interactions at URLs.

    `elicitations` are those interactions (`ElicitUrl`, each given an `elicitation_id` if it
    has none). Legacy: the error -32042 (`URLElicitationRequiredError`) carrying them; the
    client retries once they are done. 2026-07-28, which retired the error: an
    `input_required` round asking for them, after which the handler runs again.
    """

    def __init__(
        self,
        elicitations: Sequence[ElicitUrl],
        message: str = "this request needs the user to complete an interaction at a URL first",
    ) -> None:
        self.elicitations = [
            e if e.elicitation_id else replace(e, elicitation_id=str(uuid.uuid4()))
            for e in elicitations
        ]
        data = {"elicitations": [e.params() for e in self.elicitations]}
        super().__init__(URL_ELICITATION_REQUIRED, message, data)


# The largest answer a client may give to one of the server's questions (an elicitation,
# sampling or roots result, as its JSON): a legacy response frame, a 2026-07-28 `inputResponses`
# entry. `Server(max_answer_bytes=...)` changes it.
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class InputRequired(Exception):
    """Raised inside a modern handler that needs answers it does not have yet."""

    def __init__(self, requests: dict[str, Question]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = {k: {"method": q.method, "params": q.params()} for k, q in requests.items()}


class Inputs(Protocol):
    """How a handler's questions reach the client: real requests, or `input_required` rounds."""

    async def ask(self, questions: Mapping[str, Question]) -> dict[str, Any]:
        """The client's answers (raw result data), by key."""
        ...


class SentInputs:
    """Legacy: each question is a real server->client request on the session, sent together."""

    def __init__(self, send: Callable[[str, dict[str, Any]], Awaitable[BaseModel]]) -> None:
        self._send = send

    async def ask(self, questions: Mapping[str, Question]) -> dict[str, Any]:
        """Send every question as a request to the client, at once; their answers by key. A
        failure (the client's error answer, `McpError`; an answer that is no valid result,
        `ProtocolError`) is raised as it is, not inside an exception group."""
        if len(questions) == 1:
            ((key, question),) = questions.items()
            return {key: await self._send(question.method, question.params())}
        answers: dict[str, Any] = {}

        async def one(key: str, question: Question) -> None:
            answers[key] = await self._send(question.method, question.params())

        try:
            async with anyio.create_task_group() as tasks:
                for key, question in questions.items():
                    tasks.start_soon(one, key, question)
        except ExceptionGroup as group:
            raise _first_leaf(group) from None
        return answers


def _first_leaf(group: BaseExceptionGroup[Exception]) -> Exception:
    """The first exception of a group, nested groups looked into."""
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


class RetriedInputs:
    """Modern: the answers arrive with the retry; questions without one end this round."""

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = dict(answers)
        self.asked: list[str] = []  # the answered questions, in the order the handler asked

    async def ask(self, questions: Mapping[str, Question]) -> dict[str, Any]:
        """The answers the retry carries; raises `InputRequired` for the questions not yet
        answered."""
        answered = [key for key in questions if key in self.answers]
        self.asked.extend(k for k in answered if k not in self.asked)
        missing = {k: q for k, q in questions.items() if k not in self.answers}
        if missing:
            raise InputRequired(missing)
        return {key: self.answers[key] for key in questions}


class CallerStates:
    """2026-07-28: each identified caller's state (`Context.set_state`), kept across its
    requests in this process's memory, for the `limit` callers seen most recently."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._states: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def of(self, caller: str) -> dict[str, Any]:
        """The caller's state (made empty for a caller not seen, or no longer kept)."""
        state = self._states.pop(caller, None)
        if state is None:
            state = {}
        self._states[caller] = state
        while len(self._states) > self.limit:
            self._states.popitem(last=False)
        return state


class Context:
    """The request context, handed to every handler that declares a parameter of this type.

    The server makes it for each request; a handler reads what it holds (the arguments below,
    kept as attributes of the same names, and `headers`, `session_id`, `client_key`) and asks,
    reports and logs through its methods.

    Args:
        revision: The request's protocol revision.
        request_id: The request's JSON-RPC id.
        client_capabilities: What the client declared it can do.
        client_info: The client's `Implementation`, where it gave one.
        inputs: How questions reach the client (real requests, or `input_required` rounds).
        notify: Sends a notification (method, params) to the client.
        codec: The codec of the request's revision.
        progress_token: The request's progress token; None: no progress is sent.
        log_level: The lowest log level the client asked for; None: not asked.
        principal: Who the request's access token speaks for (HTTP with `auth=`); None
            without one.
        lifespan: What the server's lifespan yielded (`Server(lifespan=...)`).
        state: Legacy: the session's state (kept across its requests); 2026-07-28: this
            request's alone (stateless: the next request may reach another instance).
        dispatch: How the server answers a request of its own (`read_resource`); None: not
            made by a server.
    """

    # (class defaults, read on the few requests that use them: set by those)
    _questions = 0  # the questions asked so far
    # Tasks: set by the engine for a deferred one (`on_become_task`).
    _become_task: Callable[[], Awaitable[None]] | None = None
    # A mounted server's request: the servers it is mounted in, whose rules hide its components
    # too (`mcpio._core.visibility.Outer`, the innermost first).
    _mounted_in: tuple[Outer, ...] = ()
    # A transformed tool's call of its source: every component is seen (`enable`/`disable` aside).
    _sees_all = False

    def __init__(
        self,
        *,
        revision: str,
        request_id: str | int,
        client_capabilities: pub.ClientCapabilities,
        client_info: pub.Implementation | None,
        inputs: Inputs,
        notify: Callable[[str, dict[str, Any]], Awaitable[None]],
        codec: Codec,
        progress_token: str | int | None = None,
        log_level: str | None = None,
        principal: Principal | None = None,
        lifespan: Any = None,
        state: dict[str, Any] | None = None,
        dispatch: Callable[[Context, str, Any], Awaitable[Any]] | None = None,
    ) -> None:
        self.revision = revision
        self.request_id = request_id
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.progress_token = progress_token
        # Who the request's access token speaks for (HTTP with `auth=`); None without one.
        self.principal = principal
        self.lifespan = lifespan  # what the server's lifespan yielded (`Server(lifespan=...)`)
        # Legacy: the session's (kept across its requests); 2026-07-28: this request's alone
        # (stateless: the next request may reach another instance).
        self.state: dict[str, Any] = {} if state is None else state
        self._dispatch = dispatch
        request = self._request = HTTP_REQUEST.get()
        # The legacy HTTP session's id (`Mcp-Session-Id`); None on stdio and on 2026-07-28.
        self.session_id: str | None = None if request is None else request[1]
        # Whom per-client bounds count: "principal:<subject>" with authorization, else the peer's
        # address (an IPv6 peer's /64); None on stdio and in memory (one client per process).
        self.client_key: str | None = None if request is None else request[2]
        self._inputs = inputs
        self._notify = notify
        self._codec = codec
        self._log_level = log_level
        self.modern = isinstance(inputs, RetriedInputs)
        # Tasks: set as the request's context is made when the client accepts a task as the
        # answer (`Extension.open_request`).
        self.task_offer: Any = None

    def _answering(self, request: HttpRequest) -> None:
        """The HTTP request that carried the context's request, as the transport names it
        (a legacy session's POST), instead of `HTTP_REQUEST`'s."""
        self._request = request
        self.session_id, self.client_key = request[1], request[2]

    @property
    def codec(self) -> Codec:
        """The codec of the request's revision."""
        return self._codec

    @property
    def headers(self) -> Mapping[str, str]:
        """The HTTP request's header fields (read-only, lowercase names; empty on stdio)."""
        return _NO_HEADERS if self._request is None else self._request[0].as_mapping()

    # (class defaults: most requests use neither) Where `set_state` keeps an identified
    # caller's values on 2026-07-28 (set by the server for each request; None: the request's
    # `state`), and its `serializable=False` values (made on first use).
    callers: CallerStates | None = None
    _request_state: dict[str, Any] | None = None

    @property
    def client_id(self) -> str | None:
        """The OAuth client the request's access token was issued to (FastMCP's name).

        Its `client_id` claim, else `azp`; None without authorization.
        """
        if self.principal is None:
            return None
        claims = self.principal.claims
        found = claims.get("client_id") or claims.get("azp")
        return found if isinstance(found, str) else None

    @property
    def caller(self) -> str | None:
        """Who sends the request, the same across its requests (where `set_state` keeps).

        `principal:<subject>` with authorization (`principal:<issuer>|<subject>` when the token
        names its issuer), `process` on stdio and in memory (one client), else None (HTTP
        without authorization: nothing tells one client from another).
        """
        if self.principal is not None:
            issuer = self.principal.claims.get("iss")
            scope = f"{issuer}|" if isinstance(issuer, str) else ""
            return f"principal:{scope}{self.principal.subject}"
        return "process" if self._request is None else None

    def _state_for(self, caller: str | None) -> dict[str, Any]:
        """Legacy: the session's state; 2026-07-28: the caller's, where one is known (`caller`
        given, or `self.caller`), else this request's."""
        if caller is None:
            if not self.modern:
                return self.state
            caller = self.caller
        if caller is None or self.callers is None:
            return self.state
        return self.callers.of(caller)

    async def get_state(self, key: str, default: Any = None, *, caller: str | None = None) -> Any:
        """A value `set_state` kept (FastMCP's name); `default` if there is none.

        Args:
            key: The value's name.
            default: What to return when there is no value.
            caller: Whose value (see `set_state`).
        """
        if self._request_state is not None and key in self._request_state:
            return self._request_state[key]
        return self._state_for(caller).get(key, default)

    async def set_state(
        self, key: str, value: Any, *, serializable: bool = True, caller: str | None = None
    ) -> None:
        """Keep a value for later requests (FastMCP's name).

        Legacy: for the session's requests (`ctx.state`). 2026-07-28: for the caller's, where
        the caller is known (`caller`): the principal of an authorized request, the one client
        on stdio and in memory; over HTTP without authorization, for this request alone unless
        `caller` names one. Kept in this process's memory (a scaled-out server: in each
        instance's).

        Args:
            key: The value's name.
            value: The value (any object; mcpio keeps it as it is).
            serializable: False: for this request alone (FastMCP's meaning).
            caller: Whose value it is, as your code identifies the caller (an account, an API
                key's name): kept under that name in both eras.
        """
        if not serializable:
            if self._request_state is None:
                self._request_state = {}
            self._request_state[key] = value
            return
        if self._request_state is not None:
            self._request_state.pop(key, None)
        self._state_for(caller)[key] = value

    async def delete_state(self, key: str, *, caller: str | None = None) -> None:
        """Drop a value `set_state` kept (none: nothing happens).

        Args:
            key: The value's name.
            caller: Whose value (see `set_state`).
        """
        if self._request_state is not None:
            self._request_state.pop(key, None)
        self._state_for(caller).pop(key, None)

    def for_task(
        self,
        inputs: Inputs,
        status: Callable[[str], Awaitable[None]],
        progress: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> Context:
        """Return a copy of this context for inside a task (see `switch_to_task`).

        Questions go to the task's inputs, a progress message becomes its status message and,
        when the request had a progress token, the progress goes to `progress` too (as
        `notifications/progress` params); logs are dropped (tasks carry none).

        Args:
            inputs: The task's inputs, where its questions go.
            status: Sets the task's status message.
            progress: Takes the progress, as `notifications/progress` params.
        """
        clone = copy.copy(self)
        clone.switch_to_task(inputs, status, progress)
        return clone

    def switch_to_task(
        self,
        inputs: Inputs,
        status: Callable[[str], Awaitable[None]],
        progress: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> None:
        """Move the handler onto a task, in place (`for_task` makes a copy instead).

        Args:
            inputs: Where its questions now go.
            status: Takes its progress messages, as the task's status message.
            progress: Takes its progress, when the request had a progress token.
        """
        token = self.progress_token

        async def notify(method: str, params: dict[str, Any]) -> None:
            if method != "notifications/progress":
                return
            if isinstance(params.get("message"), str):
                await status(params["message"])
            if token is not None and progress is not None:
                try:
                    await progress(params)
                except Exception as exc:  # a client gone stops no task
                    log.debug("task progress not delivered: %s", exc)

        self._inputs, self._notify, self._become_task = inputs, notify, None
        if self.progress_token is None:
            self.progress_token = "task"  # progress messages reach the status message

    def on_become_task(self, hook: Callable[[], Awaitable[None]] | None) -> None:
        """Set what `become_task` awaits; None: `become_task` does nothing.

        The task engine sets it for a deferred task: it returns once the request was answered
        with a task.
        """
        self._become_task = hook

    async def become_task(self) -> None:
        """Answer the request with a task from here on, in a tool registered `defer_task=True`.

        The questions asked so far were answered in the request itself; the handler goes on in
        the background. Nothing happens when the client takes no task.
        """
        if self._become_task is not None:
            await self._become_task()

    def require(self, capability: str) -> None:
        """Fail the request unless the client declared `capability`.

        The failure is -32021 naming it in the modern era (declared for this request), -32601
        on a legacy session.
        """
        if getattr(self.client_capabilities, capability, None) is not None:
            return
        if self.modern:
            raise ProtocolError(
                MISSING_CAPABILITY,
                f"this request needs the client capability {capability!r}",
                {"requiredCapabilities": {capability: {}}},
            )
        raise ProtocolError(
            METHOD_NOT_FOUND, f"the client did not declare the {capability!r} capability"
        )

    def require_url_elicitation(self) -> None:
        """Fail the request unless URL-mode elicitation is possible in it.

        Its revision must have URL-mode elicitation and the client must have declared
        `elicitation.url` (else modern: -32021; legacy: -32601).
        """
        if self._codec.revision < URL_ELICITATION_SINCE:
            raise ProtocolError(
                METHOD_NOT_FOUND,
                f"URL-mode elicitation is not part of revision {self._codec.revision}",
                {"method": "elicitation/create"},
            )
        self.require("elicitation")
        elicitation = self.client_capabilities.elicitation
        if elicitation is not None and elicitation.url is not None:
            return
        if self.modern:
            raise ProtocolError(
                MISSING_CAPABILITY,
                "this request needs the client capability 'elicitation.url'",
                {"requiredCapabilities": {"elicitation": {"url": {}}}},
            )
        raise ProtocolError(
            METHOD_NOT_FOUND, "the client did not declare the 'elicitation.url' capability"
        )

    async def ask(self, questions: Mapping[str, Question]) -> dict[str, Any]:
        """Ask several questions at once (one round); answers by key, as public result models."""
        questions = {key: self._fit(q) for key, q in questions.items()}
        for question in questions.values():
            if question.method not in self._codec.methods:  # an older revision's client
                raise ProtocolError(
                    METHOD_NOT_FOUND,
                    f"{question.method} is not part of revision {self._codec.revision}",
                    {"method": question.method},
                )
            if isinstance(question, ElicitUrl):
                self.require_url_elicitation()
            else:
                self.require(CAPABILITY_OF[question.method])
        answers = await self._inputs.ask(questions)
        out: dict[str, Any] = {}
        for key, question in questions.items():
            kind: type[BaseModel] = self._codec.methods[question.method].result
            answer = answers[key]
            try:
                out[key] = (
                    answer if isinstance(answer, kind) else kind.model_validate(plain(answer))
                )
            except pydantic.ValidationError as exc:
                raise ProtocolError(
                    INVALID_PARAMS,
                    f"inputResponses.{key}: not a valid {question.method} result",
                    {
                        "field": f"inputResponses.{key}",
                        "errors": exc.errors(include_url=False, include_input=False),
                    },
                ) from None
        return out

    def _fit(self, question: Question) -> Question:
        """A URL elicitation as the era has it: an id on a legacy session, none in 2026-07-28."""
        if not isinstance(question, ElicitUrl):
            return question
        if self.modern:
            return replace(question, elicitation_id=None)
        if question.elicitation_id is None:
            return replace(question, elicitation_id=str(uuid.uuid4()))
        return question

    async def _one(self, question: Question, key: str | None) -> Any:
        if key is None:
            key = f"{question.method.split('/')[0]}-{self._questions}"
            self._questions += 1
        return (await self.ask({key: question}))[key]

    @overload
    async def elicit(
        self, message: str, requested_schema: Mapping[str, Any], *, key: str | None = None
    ) -> pub.ElicitResult: ...

    @overload
    async def elicit(
        self, message: str, *, response_type: type[T], key: str | None = None
    ) -> Accepted[T] | Declined | Cancelled: ...

    @overload
    async def elicit(
        self, message: str, *, response_type: Any, key: str | None = None
    ) -> Accepted[Any] | Declined | Cancelled: ...

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        response_type: Any = _NO_TYPE,
        key: str | None = None,
    ) -> Any:
        """Ask the user through the client (form mode).

        With `response_type` (a model, one value's type, or None: see
        `mcpio._core.elicitation`): `Accepted(data)` validated as that type, `Declined()` or
        `Cancelled()`. With a JSON Schema: the `ElicitResult`, its accepted content checked
        against the schema (-32602 if it does not fit).

        Args:
            message: The question, as the user reads it.
            requested_schema: The JSON Schema of the answer (without `response_type`).
            response_type: The type of the answer, its schema made from it.
            key: Names the question across `input_required` rounds (default: made from its
                order).
        """
        if response_type is not _NO_TYPE:
            form = form_of(response_type)
            result = await self._one(Elicit(message, form.schema), key)
            return answer_of(result, response_type, form)
        if requested_schema is None:
            raise TypeError("elicit needs a requested_schema or a response_type")
        result = await self._one(Elicit(message, requested_schema), key)
        if result.action == "accept" and result.content is not None:
            broken = violation(plain(result.content), requested_schema)
            if broken is not None:
                raise ProtocolError(
                    INVALID_PARAMS,
                    f"the client's elicitation answer does not fit requestedSchema: {broken}",
                )
        return result

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        elicitation_id: str | None = None,
        key: str | None = None,
    ) -> pub.ElicitResult:
        """Ask the user to go to `url` (URL mode; see `ElicitUrl`).

        The answer says whether they agreed to (`accept`), not that they finished: on a legacy
        session tell the client with `elicitation_complete(elicitation_id)` when the
        interaction is done.

        Args:
            message: Why the user is asked to go there.
            url: The URL to go to.
            elicitation_id: Its id on a legacy session (made up if not given).
            key: Names the question across `input_required` rounds.
        """
        return await self._one(ElicitUrl(message, url, elicitation_id), key)

    async def elicitation_complete(self, elicitation_id: str) -> None:
        """Send `notifications/elicitation/complete` for a URL elicitation.

        Only where the revision has it (2025-11-25; 2026-07-28 has not: nothing is sent).
        """
        if "notifications/elicitation/complete" in self._codec.notifications:
            await self._notify(
                "notifications/elicitation/complete", {"elicitationId": elicitation_id}
            )

    async def sample(
        self,
        messages: Sequence[Any],
        max_tokens: int,
        *,
        key: str | None = None,
        **options: Unpack[SamplingOptions],
    ) -> pub.CreateMessageResult:
        """Ask the client's model for a message.

        Args:
            messages: The conversation to continue (`SamplingMessage` models or their JSON).
            max_tokens: The most tokens the model may generate (`maxTokens`).
            key: Names the question across `input_required` rounds.
            **options: The request's other fields, by their wire names: `systemPrompt`,
                `temperature`, `stopSequences`, ... (`SamplingOptions`).
        """
        return await self._one(Sample(messages, max_tokens, dict(options)), key)

    async def list_roots(self, *, key: str | None = None) -> pub.ListRootsResult:
        """Ask the client for its roots.

        `key` names the question across `input_required` rounds.
        """
        return await self._one(ListRoots(), key)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress, if the client asked for it (a progress token in the request).

        Args:
            progress: The progress so far.
            total: The total it goes to, where known.
            message: A message for the user.
        """
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._notify("notifications/progress", params)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress: `progress` under the name FastMCP users know.

        Args:
            progress: The progress so far.
            total: The total it goes to, where known.
            message: A message for the user.
        """
        await self.progress(progress, total, message)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        """Send a `debug` log message (see `log`)."""
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        """Send an `info` log message (see `log`)."""
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        """Send a `warning` log message (see `log`)."""
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        """Send an `error` log message (see `log`)."""
        await self.log("error", data, logger)

    async def read_resource(self, uri: str) -> pub.ReadResourceResult:
        """Read one of this server's resources (or templates) as a client would.

        The read goes through the middlewares; -32602 when there is none at `uri`.
        """
        if self._dispatch is None:
            raise RuntimeError("this context reads no resources (not made by a server)")
        meta = {  # the envelope a modern request carries: this request's own client
            "io.modelcontextprotocol/protocolVersion": PUBLIC_REVISION,
            "io.modelcontextprotocol/clientCapabilities": plain(self.client_capabilities),
        }
        params = pub.ReadResourceRequestParams.model_validate({"uri": uri, "_meta": meta})
        result: pub.ReadResourceResult = await self._dispatch(self, "resources/read", params)
        return result

    async def enable_components(
        self, *, only: bool = False, **criteria: Unpack[VisibilityCriteria]
    ) -> None:
        """Show matching components to this legacy session alone, after the server's rules.

        As `Server.enable` does for every client; this session's client is told its lists
        changed. `RuntimeError` on 2026-07-28, which has no sessions.

        Args:
            only: Show these alone.
            **criteria: What to match (`VisibilityCriteria`): `names`, `tags`, `version`,
                `components`, as `Server.enable`'s.
        """
        await change_session(self.state, self.modern, self._notify, rules(True, criteria, only))

    async def disable_components(self, **criteria: Unpack[VisibilityCriteria]) -> None:
        """Hide matching components from this legacy session alone (see `enable_components`).

        Args:
            **criteria: What to match (`VisibilityCriteria`, as `Server.disable`'s).
        """
        await change_session(self.state, self.modern, self._notify, rules(False, criteria))

    async def reset_visibility(self) -> None:
        """Drop this legacy session's own rules (`enable_components`): the server's alone apply."""
        await change_session(self.state, self.modern, self._notify, None)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message to the client, if its level is at or above the one it asked for.

        Modern clients ask per request; without asking they get none.

        Args:
            level: The message's level (`debug`, `info`, `notice`, `warning`, `error`,
                `critical`, `alert`, `emergency`).
            data: The message: a string or any JSON value.
            logger: The name of the logger it comes from.
        """
        threshold = self._log_level
        if threshold is None and self.modern:
            return
        if threshold is not None and LEVELS.index(level) < LEVELS.index(threshold):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._notify("notifications/message", params)


MethodHandler = Callable[[Context, Any], Awaitable[Any]]
"""How a server answers a method: `(ctx, params) -> result`, in the public models."""
