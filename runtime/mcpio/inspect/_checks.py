"""The checker of one MCP session as seen on the wire: every frame, in either direction, is
decoded by the codec of the revision in use (found from the handshake, the request's `_meta`,
or, over HTTP, the headers) and held against the session's rules: the direction and kind of each
method from the dispatch tables, initialization order, request/response correlation, declared
capabilities, progress (live tokens, increasing), unanswered requests, structured tool output
against the tool's `outputSchema`, logging and resource-update opt-ins, `resultType` and
`input_required`, and the modern HTTP headers. The Skills extension's methods, which no codec
knows, are checked by `mcpio.inspect._skills`. A request and its answer are decoded by one codec
with every extension of the revision the request declares (a legacy session: its `initialize`);
the 2026-07-28 Tasks extension's methods and task answers with that extension too
(`mcpio.inspect._tasks`).

Members the schema leaves open (no `additionalProperties`, or `true`: capability objects, `_meta`,
results) are never findings; a member a closed object (`additionalProperties: false`) does not
define is. The answer to a request that was itself a violation is not flagged again for it.

The checker only reads: it never changes, drops or answers a frame.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_wire
from mcp_wire_runtime._peek import NAMED_BY
from mcp_wire_runtime.codec import MAX_MESSAGE_BYTES, Codec
from mcp_wire_runtime.errors import METHOD_NOT_FOUND, PARSE_ERROR, ProtocolError
from mcpio._core.negotiate import LEGACY, MODERN, PROTOCOL_VERSION_KEY, codec_of
from mcpio._core.protocol_rules import TASKS_EXTENSION, version_header_required
from mcpio.inspect import _apps as apps_rules
from mcpio.inspect import _skills as skills_rules
from mcpio.inspect import _tasks as tasks_rules
from mcpio.inspect._rules import Direction, Finding, json_path
from mcpio.inspect._stateful import (
    Shared,
    output_checked,
    output_violation,
    param_header_mismatch,
)
from mcpio.transports._http_rules import decode_header_value

CLIENT: Direction = "client->server"
SERVER: Direction = "server->client"

# What each method needs the *receiving* side to have declared (a path into its capabilities).
# Spec facts the dispatch tables do not carry: basic/lifecycle#capability-negotiation and each
# feature's "Capabilities" section.
SERVER_NEEDS: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "logging/setLevel": ("logging",),
    "completion/complete": ("completions",),
    # what a server sends needs its own declaration
    "notifications/tools/list_changed": ("tools", "listChanged"),
    "notifications/prompts/list_changed": ("prompts", "listChanged"),
    "notifications/resources/list_changed": ("resources", "listChanged"),
    "notifications/resources/updated": ("resources", "subscribe"),
    "notifications/message": ("logging",),
}
CLIENT_NEEDS: dict[str, tuple[str, ...]] = {
    "sampling/createMessage": ("sampling",),
    "roots/list": ("roots",),
    "elicitation/create": ("elicitation",),
    "notifications/roots/list_changed": ("roots", "listChanged"),
}
# Before initialization completes, only these may be sent (basic/lifecycle#initialization).
EARLY_REQUESTS = frozenset({"initialize", "ping"})
EARLY_SERVER_REQUESTS = frozenset({"ping"})
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"  # 2026-07-28's per-request logging opt-in
# Answered only when the server ends it; a transport closed under it carries no response
# (2026-07-28 SubscriptionsListenResult): open at the session's end is no unanswered request.
LONG_LIVED = frozenset({"subscriptions/listen"})


def opposite(direction: Direction) -> Direction:
    """The other direction of a frame (client to server, server to client)."""
    return SERVER if direction == CLIENT else CLIENT


@dataclass
class Pending:
    """A request in flight: what it asked, under which revision, with which client
    capabilities (the modern envelope's, or None)."""

    method: str
    revision: str | None
    client_capabilities: dict[str, Any] | None = None
    index: int = -1  # the request's frame in the session
    flagged: bool = False  # the request itself was a violation: its answer is not judged again
    token: str | None = None  # its progress token (a key)
    params: dict[str, Any] = field(default_factory=lambda: {})
    # The extensions its codec had (those it declared, the Tasks extension for its methods).
    extensions: frozenset[str] = frozenset()


@dataclass
class Token:
    """A progress token: the request it belongs to, whether that request is still live (not
    answered), and the last progress value reported for it."""

    request: tuple[Direction, str]
    live: bool = True
    last: float | None = None


@dataclass
class SessionState:
    revision: str | None = None  # the revision in use (legacy: negotiated; modern: latest seen)
    initialized: bool = False  # the server answered initialize
    client_ready: bool = False  # notifications/initialized seen
    client_capabilities: dict[str, Any] | None = None
    server_capabilities: dict[str, Any] | None = None
    pending: dict[tuple[Direction, str], Pending] = field(default_factory=lambda: {})
    answered: set[tuple[Direction, str]] = field(default_factory=lambda: set())
    tokens: dict[tuple[Direction, str], Token] = field(default_factory=lambda: {})
    subscribed: set[str] = field(default_factory=lambda: set())  # legacy resources/subscribe
    cancelled: set[tuple[Direction, str]] = field(default_factory=lambda: set())  # not answered


def _key(value: Any) -> str:
    """An id or progress token as a key: 1 and "1" are different ids."""
    return json.dumps(value)


def _obj(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def declared(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether `path` is declared: `("tools",)` present, `("tools", "listChanged")` true."""
    value: Any = capabilities
    for name in path:
        if type(value) is not dict or name not in value:
            return False
        value = value[name]
    return value is not False and value is not None if len(path) > 1 else True


def capability_defined(revision: str, model: str, name: str) -> bool:
    """Whether the revision's `model` (ServerCapabilities, ClientCapabilities) has `name`."""
    cls = getattr(mcp_wire.revision(revision).models, model)
    return any((f.alias or n) == name for n, f in cls.model_fields.items())


class Checker:
    """Checks one session's frames in the order they crossed the proxy."""

    def __init__(self, shared: Shared | None = None) -> None:
        self.state = SessionState()
        # What the checkers of one HTTP relay share (its modern exchanges are checked apart).
        self.shared = shared if shared is not None else Shared()
        self.issued_states = self.shared.issued_states

    # ------------------------------------------------------------------ entry point

    def check(
        self,
        direction: Direction,
        raw: bytes,
        headers: Mapping[str, str] | None = None,
        index: int = -1,
    ) -> list[Finding]:
        """The findings of one frame (`headers`: the HTTP request's, lowercase names, for a
        frame the client POSTed; `index`: its number in the session, which `finish` names)."""
        self.index = index
        if len(raw) > MAX_MESSAGE_BYTES:
            return [self.too_large(direction, len(raw))]
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return [Finding("frame.json", direction, "$", f"not JSON: {exc}")]
        if type(obj) is list:
            return list(self._batch(direction, obj, raw, headers))
        if type(obj) is not dict:
            return [Finding("frame.json", direction, "$", "not a JSON-RPC message")]
        return list(self._frame(direction, obj, raw, headers))

    def too_large(self, direction: Direction, size: int) -> Finding:
        """A frame past the 16 MiB limit, judged by its size alone."""
        return Finding("frame.too-large", direction, "$", f"{size} bytes, past {MAX_MESSAGE_BYTES}")

    def _batch(
        self,
        direction: Direction,
        items: list[Any],
        raw: bytes,
        headers: Mapping[str, str] | None,
    ) -> Iterator[Finding]:
        revision = self.state.revision or LEGACY[-1]
        codec = codec_of(revision)
        if not codec.batching:
            yield Finding("frame.schema", direction, "$", f"a batch: revision {revision} has none")
        for index, item in enumerate(items):
            for finding in self.check(direction, json.dumps(item).encode(), headers, self.index):
                path = "$" + f"[{index}]" + finding.path[1:]
                yield Finding(finding.rule, finding.direction, path, finding.message)

    def _frame(
        self,
        direction: Direction,
        obj: dict[str, Any],
        raw: bytes,
        headers: Mapping[str, str] | None,
    ) -> Iterator[Finding]:
        method = obj.get("method")
        if type(method) is str and "id" in obj:
            yield from self._request(direction, obj, method, raw, headers)
        elif type(method) is str:
            yield from self._notification(direction, obj, method, raw)
        elif "result" in obj or "error" in obj:
            yield from self._response(direction, obj, raw)
        else:
            yield from self._decode(direction, codec_of(self.state.revision or LEGACY[-1]), raw)

    def finish(self) -> list[Finding]:
        """What only the end of the session shows: each request still neither answered nor
        cancelled (on the request's frame), a listen stream left open apart."""
        found = [
            Finding(
                "request.unanswered",
                direction,
                "$.id",
                f"{pending.method} {json.loads(key)!r} was never answered nor cancelled",
                pending.index,
            )
            for (direction, key), pending in self.state.pending.items()
            if pending.method not in LONG_LIVED
        ]
        self.state.pending.clear()
        return found + apps_rules.unlisted(self.shared.apps)

    # ------------------------------------------------------------------ decoding

    def _decode(
        self, direction: Direction, codec: Codec, raw: bytes, method: str | None = None
    ) -> Iterator[Finding]:
        """The codec's verdict: errors for what it refuses. Members the schema leaves open are
        kept by the codec's models; a closed object's model refuses its unknown members."""
        try:
            if method is None:
                codec.decode(raw)
            else:
                codec.decode_response(raw, method)
        except ProtocolError as exc:
            yield from self._refusal(direction, exc, codec.revision)

    def _refusal(
        self, direction: Direction, exc: ProtocolError, revision: str
    ) -> Iterator[Finding]:
        if exc.code == PARSE_ERROR:
            yield Finding("frame.json", direction, "$", exc.message)
            return
        if exc.code == METHOD_NOT_FOUND:
            yield Finding("method.unknown", direction, "$.method", exc.message)
            return
        errors = exc.data.get("errors") if type(exc.data) is dict else None
        if not errors:
            yield Finding("frame.schema", direction, "$", f"{exc.message} ({revision})")
            return
        for error in errors:
            closed = error.get("type") == "extra_forbidden"
            yield Finding(
                "frame.unknown-member" if closed else "frame.schema",
                direction,
                json_path(error.get("field")),
                f"{error.get('message')} (revision {revision})",
            )

    # ------------------------------------------------------------------ requests

    def _request_revision(self, obj: dict[str, Any], method: str) -> str | None:
        params = _obj(obj.get("params"))
        version = _obj(params.get("_meta")).get(PROTOCOL_VERSION_KEY)
        if type(version) is str:
            return version if version in mcp_wire.REVISIONS else None
        if method == "initialize":
            requested = params.get("protocolVersion")
            return requested if requested in LEGACY else LEGACY[-1]
        return self.state.revision or LEGACY[-1]

    def _request(
        self,
        direction: Direction,
        obj: dict[str, Any],
        method: str,
        raw: bytes,
        headers: Mapping[str, str] | None,
    ) -> Iterator[Finding]:
        state = self.state
        revision = self._request_revision(obj, method)
        modern = revision in MODERN
        params = _obj(obj.get("params"))
        meta = _obj(params.get("_meta"))
        caps = _obj(meta.get("io.modelcontextprotocol/clientCapabilities")) if modern else None
        found: list[Finding] = []
        extensions: frozenset[str] = frozenset()
        if revision is not None:
            declared = caps if modern else state.client_capabilities
            codec = self._request_codec(revision, method, declared)
            extensions = codec.extension_ids
            if method in skills_rules.METHODS:  # no codec knows them
                found += skills_rules.request_findings(direction, method, obj.get("params"))
            else:
                found += self._decode(direction, codec, raw)
                found += self._direction(direction, codec, method, "$.method")
            if modern:
                state.revision = revision
        if headers is not None and direction == CLIENT:
            found += self._headers(obj, method, revision, headers)
        key = (direction, _key(obj.get("id")))
        if key in state.pending:
            found.append(Finding("request.id-reused", direction, "$.id", "still in flight"))
        pending = state.pending[key] = Pending(method, revision, caps, self.index, params=params)
        pending.extensions = extensions
        state.answered.discard(key)
        state.cancelled.discard(key)
        request_state = params.get("requestState")
        if modern and type(request_state) is str and request_state not in self.issued_states:
            found.append(
                Finding(
                    "input.request-state",
                    direction,
                    "$.params.requestState",
                    "never issued by the server in an input_required result",
                )
            )
        self._track(direction, method, params, pending, key)
        if not modern:
            found += self._early(direction, method)
        found += self._capability(direction, method, revision, "$.method")
        if method in skills_rules.METHODS and revision is not None:
            found += skills_rules.undeclared(direction, method, state.server_capabilities)
        tasks = TASKS_EXTENSION in extensions
        if tasks and revision is not None and method in tasks_rules.methods(revision):
            found += tasks_rules.undeclared_method(direction, method, state.server_capabilities)
        pending.flagged = any(f.severity == "error" for f in found)
        yield from found

    def _track(
        self,
        direction: Direction,
        method: str,
        params: dict[str, Any],
        pending: Pending,
        key: tuple[Direction, Any],
    ) -> None:
        """What a request changes of the session's state: its progress token, the client's
        capabilities (initialize), the subscribed resources."""
        state = self.state
        meta = _obj(params.get("_meta"))
        if "progressToken" in meta:
            pending.token = _key(meta["progressToken"])
            state.tokens[(direction, pending.token)] = Token(key)
        if method == "initialize" and direction == CLIENT:
            state.client_capabilities = _obj(params.get("capabilities"))
        uri = params.get("uri")
        if method == "resources/subscribe" and type(uri) is str:
            state.subscribed.add(uri)
        elif method == "resources/unsubscribe":
            state.subscribed.discard(uri)  # type: ignore[arg-type]

    @staticmethod
    def _request_codec(revision: str, method: str, caps: dict[str, Any] | None) -> Codec:
        """The revision's codec with every extension of it the request declares (`caps`: a
        modern request's `clientCapabilities`, a legacy session's), in one codec, and with
        the Tasks extension for its methods."""
        codec = codec_of(revision)
        declared = _obj((caps or {}).get("extensions"))
        wanted = {key for key in declared if key in codec.extensions}
        if method in tasks_rules.methods(revision):
            wanted.add(TASKS_EXTENSION)
        return codec.with_extensions(*wanted) if wanted else codec

    def _early(self, direction: Direction, method: str) -> Iterator[Finding]:
        state = self.state
        if direction == CLIENT and not state.initialized and method not in EARLY_REQUESTS:
            awaited = "the server answered initialize"
        elif direction == SERVER and not state.client_ready and method not in EARLY_SERVER_REQUESTS:
            awaited = "the client sent notifications/initialized"
        else:
            return
        yield Finding(
            "lifecycle.before-initialize", direction, "$.method", f"{method} before {awaited}"
        )

    def _direction(
        self, direction: Direction, codec: Codec, method: str, path: str
    ) -> Iterator[Finding]:
        spec = codec.methods.get(method)
        if spec is None or spec.kind == "input request":
            return  # the decode reported it (an input request is no method of its own)
        goes = spec.direction
        if goes != "both" and goes != direction:
            what = f"{method} goes {goes} in revision {codec.revision}"
            yield Finding("method.direction", direction, path, what)

    def _capability(
        self, direction: Direction, method: str, revision: str | None, path: str
    ) -> Iterator[Finding]:
        state = self.state
        if revision is None:
            return
        # Client->server requests need the server's declaration; what the server sends needs its
        # own (list-changed, logging) or, for its requests, the client's.
        if method in SERVER_NEEDS:
            side, caps, model = "server", state.server_capabilities, "ServerCapabilities"
            need = SERVER_NEEDS[method]
        elif method in CLIENT_NEEDS:
            side, caps, model = "client", state.client_capabilities, "ClientCapabilities"
            need = CLIENT_NEEDS[method]
        else:
            return
        if caps is None or not capability_defined(revision, model, need[0]):
            return  # not declared yet (no handshake seen), or not a capability in this revision
        if not declared(caps, need):
            what = f"{method} needs the {side} capability {'.'.join(need)}, not declared"
            yield Finding(f"capability.{side}", direction, path, what)

    def _headers(
        self,
        obj: dict[str, Any],
        method: str,
        revision: str | None,
        headers: Mapping[str, str],
    ) -> Iterator[Finding]:
        version_header = headers.get("mcp-protocol-version")
        if revision in MODERN:
            params = _obj(obj.get("params"))
            expected = {
                "mcp-protocol-version": _obj(params.get("_meta")).get(PROTOCOL_VERSION_KEY),
                "mcp-method": method,
            }
            if method in NAMED_BY:
                expected["mcp-name"] = params.get(NAMED_BY[method])
            if method == "tools/call":
                tool = self.shared.tools.get(str(params.get("name")), {})
                arguments = _obj(params.get("arguments"))
                mismatch = param_header_mismatch(tool, arguments, headers)
                if mismatch is not None:
                    yield Finding("http.param-header", CLIENT, "header mcp-param-*", mismatch)
            for name, value in expected.items():
                sent = headers.get(name)
                try:
                    seen = None if sent is None else decode_header_value(sent)
                except ProtocolError:
                    seen = sent
                if seen != value:
                    yield Finding(
                        "http.header-mismatch",
                        CLIENT,
                        f"header {name}",
                        f"{name}: {sent!r}, the body says {value!r}",
                    )
        elif (
            self.state.initialized
            and revision is not None
            and version_header_required(revision)
            and version_header != revision
        ):
            yield Finding(
                "http.protocol-version-header",
                CLIENT,
                "header mcp-protocol-version",
                f"{version_header!r}, the session negotiated {revision}",
            )

    # ------------------------------------------------------------------ notifications

    def _notification(
        self, direction: Direction, obj: dict[str, Any], method: str, raw: bytes
    ) -> Iterator[Finding]:
        state = self.state
        revision = state.revision or LEGACY[-1]
        codec = codec_of(revision)
        if method in tasks_rules.methods(revision):
            codec = tasks_rules.codec(revision) or codec
        yield from self._decode(direction, codec, raw)
        yield from self._direction(direction, codec, method, "$.method")
        if method == "notifications/initialized" and direction == CLIENT:
            state.client_ready = True
        params = _obj(obj.get("params"))
        if method == "notifications/progress":
            yield from self._progress(direction, params)
        elif method == "notifications/cancelled":
            # The sender's request is over (basic/utilities/cancellation): no answer is owed, but
            # one already under way may still arrive.
            key = (direction, _key(params.get("requestId")))
            if state.pending.pop(key, None) is not None:
                state.cancelled.add(key)
        elif method == "notifications/message" and revision in MODERN:
            yield from self._log_opt_in(direction)
        elif method == "notifications/resources/updated":
            yield from self._subscribed(direction, params.get("uri"), revision)
        yield from self._capability(direction, method, revision, "$.method")

    def _progress(self, direction: Direction, params: dict[str, Any]) -> Iterator[Finding]:
        """basic/utilities/progress: only for an active request's token, always increasing."""
        token = params.get("progressToken")
        issued = self.state.tokens.get((opposite(direction), _key(token)))
        path = "$.params.progressToken"
        if issued is None:
            asker = opposite(direction).split("->")[0]
            yield Finding(
                "progress.unknown-token",
                direction,
                path,
                f"{token!r} was never issued by a {asker} request",
            )
            return
        if not issued.live:
            yield Finding(
                "progress.after-response",
                direction,
                path,
                f"{token!r}: its request {json.loads(issued.request[1])!r} was already answered",
            )
        progress: Any = params.get("progress")
        if not isinstance(progress, int | float) or isinstance(progress, bool):
            return  # the decode reported it
        last = issued.last
        if last is not None and progress <= last:
            yield Finding(
                "progress.not-increasing",
                direction,
                "$.params.progress",
                f"{progress!r} after {last!r} for token {token!r}",
            )
        issued.last = progress

    def _log_opt_in(self, direction: Direction) -> Iterator[Finding]:
        """2026-07-28 (logging): no notifications/message without a live request's logLevel."""
        if direction != SERVER:
            return
        for (side, _), pending in self.state.pending.items():
            if side == CLIENT and LOG_LEVEL_KEY in _obj(pending.params.get("_meta")):
                return
        yield Finding(
            "logging.no-opt-in",
            direction,
            "$.method",
            f"no request in flight carries _meta {LOG_LEVEL_KEY}",
        )

    def _subscribed(self, direction: Direction, uri: Any, revision: str) -> Iterator[Finding]:
        """notifications/resources/updated only for a URI the client subscribed to
        (legacy: resources/subscribe; 2026-07-28: a live subscriptions/listen)."""
        if direction != SERVER:
            return
        uris = set(self.state.subscribed)
        for (side, _), pending in self.state.pending.items():
            if side == CLIENT and pending.method == "subscriptions/listen":
                wanted = _obj(pending.params.get("notifications")).get("resourceSubscriptions")
                uris.update(u for u in wanted or () if type(u) is str)
        if uri not in uris:
            yield Finding(
                "resource.not-subscribed", direction, "$.params.uri", f"{uri!r}: not subscribed"
            )

    # ------------------------------------------------------------------ responses

    def _response(self, direction: Direction, obj: dict[str, Any], raw: bytes) -> Iterator[Finding]:
        state = self.state
        if obj.get("id") is None and "error" in obj:  # an id the peer could not read
            yield from self._decode(direction, codec_of(state.revision or LEGACY[-1]), raw)
            return
        key = (opposite(direction), _key(obj.get("id")))
        pending = state.pending.pop(key, None)
        if pending is None and key in state.cancelled:  # crossed the cancellation
            state.cancelled.discard(key)
            state.answered.add(key)
            yield from self._decode(direction, codec_of(state.revision or LEGACY[-1]), raw)
            return
        if pending is None:
            rule = "response.duplicate" if key in state.answered else "response.unknown-id"
            what = "already answered" if key in state.answered else "no such request in flight"
            yield Finding(rule, direction, "$.id", f"id {obj.get('id')!r}: {what}")
            yield from self._decode(direction, codec_of(state.revision or LEGACY[-1]), raw)
            return
        state.answered.add(key)
        result = obj.get("result")
        revision = pending.revision
        token = state.tokens.get((key[0], pending.token)) if pending.token else None
        if token is not None and not (
            type(result) is dict and "task" in result or tasks_rules.is_task(result)
        ):
            token.live = False  # a task's token stays valid until the task ends
        if pending.flagged and "error" in obj:
            # the answer to a request that was itself a violation: only its own shape is judged
            yield from self._decode(direction, codec_of(revision or LEGACY[-1]), raw)
            return
        if pending.method == "initialize" and type(result) is dict:
            revision = self._negotiated(direction, result, revision)
            if revision != result.get("protocolVersion"):
                yield Finding(
                    "revision.unknown",
                    direction,
                    "$.result.protocolVersion",
                    f"{result.get('protocolVersion')!r} is no pinned legacy revision: "
                    f"checked as {revision}",
                )
        if revision is None:
            return  # asked under a revision no codec has: the error the server gave is its own
        if pending.method in skills_rules.METHODS:
            yield from self._decode(direction, codec_of(revision), raw)
            if "result" in obj:
                yield from skills_rules.result_findings(direction, pending.method, result)
        else:
            codec = codec_of(revision)
            extensions = set(pending.extensions)
            if revision in MODERN and tasks_rules.is_task(result):
                caps = pending.client_capabilities
                yield from tasks_rules.undeclared_task(direction, pending.method, caps)
                extensions.add(TASKS_EXTENSION)
            if extensions & codec.extensions.keys():
                codec = codec.with_extensions(*(extensions & codec.extensions.keys()))
            yield from self._decode(direction, codec, raw, pending.method)
        if type(result) is dict:
            yield from self._result(direction, pending, revision, result)

    def _negotiated(
        self, direction: Direction, result: dict[str, Any], asked: str | None
    ) -> str | None:
        state = self.state
        version = result.get("protocolVersion")
        state.initialized = True
        state.server_capabilities = _obj(result.get("capabilities"))
        if version in LEGACY:
            state.revision = version
            return version
        return asked

    def _result(
        self, direction: Direction, pending: Pending, revision: str, result: dict[str, Any]
    ) -> Iterator[Finding]:
        if pending.method == "server/discover":
            self.state.server_capabilities = _obj(result.get("capabilities"))
        yield from apps_rules.result_findings(
            direction, pending.method, result, self.shared.apps, pending.index
        )
        if pending.method == "tools/list":
            for tool in result.get("tools") or ():
                if type(tool) is dict and type(tool.get("name")) is str:
                    self.shared.tools[tool["name"]] = tool
        elif (
            pending.method == "tools/call"
            and result.get("resultType", "complete") == "complete"
            and not ("task" in result and "task" in pending.params)  # 2025-11-25: a task made
        ):
            tool = self.shared.tools.get(str(pending.params.get("name")))
            violation = output_violation(tool, result) if output_checked() else None
            if violation is not None:
                path, what = violation
                yield Finding("tool.output-schema", direction, path, what)
        if revision not in MODERN:
            return
        kind = result.get("resultType")
        if "resultType" not in result:
            yield Finding(
                "result.type", direction, "$.result", f"{pending.method} result lacks resultType"
            )
        spec = codec_of(revision).methods.get(pending.method)
        if kind == "input_required" and spec is not None and not spec.input_required:
            yield Finding(
                "result.input-required",
                direction,
                "$.result.resultType",
                f"{pending.method} may not answer input_required",
            )
        if kind == "input_required":
            if type(result.get("requestState")) is str:
                self.issued_states.add(result["requestState"])
            yield from self._input_requests(direction, pending, result)

    def _input_requests(
        self, direction: Direction, pending: Pending, result: dict[str, Any]
    ) -> Iterator[Finding]:
        caps = pending.client_capabilities or {}
        for name, request in _obj(result.get("inputRequests")).items():
            method = _obj(request).get("method")
            need = CLIENT_NEEDS.get(method) if type(method) is str else None
            if need is not None and not declared(caps, need):
                yield Finding(
                    "capability.client",
                    direction,
                    f"$.result.inputRequests.{name}.method",
                    f"{method} needs the client capability {'.'.join(need)}, "
                    "not declared in the request's clientCapabilities",
                )
