"""The rules `mcpio inspect` checks, each with its severity and the spec section it comes from,
and `Finding`, one violation seen on one frame."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]
Direction = Literal["client->server", "server->client"]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    spec: str  # the spec section the rule comes from
    summary: str


_BASIC = "basic#messages"
_LIFECYCLE = "basic/lifecycle"
_HTTP = "basic/transports#streamable-http"
_PROGRESS = "basic/utilities/progress"
# The MCP Apps extension (io.modelcontextprotocol/ui), specified in its own repository.
_APPS = "ext-apps: specification/2026-01-26/apps"
_APP_MIME = "text/html;profile=mcp-app"
# The Skills extension (io.modelcontextprotocol/skills), a SEP with no schema in the revisions.
_SKILLS = "SEP-2640: io.modelcontextprotocol/skills"

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule("frame.json", "error", _BASIC, "a frame that is not a JSON-RPC 2.0 message"),
        Rule("frame.too-large", "warning", "basic/transports#stdio", "a frame past 16 MiB"),
        Rule("frame.schema", "error", _BASIC, "the frame does not decode under its revision"),
        Rule(
            "frame.unknown-member",
            "error",
            _BASIC,
            "a member a closed object (additionalProperties false) does not define",
        ),
        Rule("method.unknown", "error", _BASIC, "a method the revision does not have"),
        Rule("method.direction", "error", _BASIC, "a method sent in a direction it does not go"),
        Rule("revision.unknown", "warning", _LIFECYCLE, "a protocol version no revision names"),
        Rule(
            "lifecycle.before-initialize",
            "warning",
            f"{_LIFECYCLE}#initialization",
            "a request before initialization completed (only ping and logging may precede it)",
        ),
        Rule("request.id-reused", "error", _BASIC, "a request id already in flight"),
        Rule("response.unknown-id", "error", _BASIC, "a response to an id never requested"),
        Rule("response.duplicate", "error", _BASIC, "a request answered twice"),
        Rule(
            "capability.server",
            "error",
            f"{_LIFECYCLE}#capability-negotiation",
            "a request or notification the server's declared capabilities do not allow",
        ),
        Rule(
            "capability.client",
            "error",
            f"{_LIFECYCLE}#capability-negotiation",
            "a request or notification the client's declared capabilities do not allow",
        ),
        Rule(
            "progress.unknown-token",
            "error",
            _PROGRESS,
            "a progress notification for a token that was never issued",
        ),
        Rule(
            "stream.after-response",
            "warning",
            _HTTP,
            "a message on a POST's event stream after every request the POST carried was "
            "answered (the server should close the stream then)",
        ),
        Rule(
            "progress.after-response",
            "error",
            _PROGRESS,
            "a progress notification for a request already answered",
        ),
        Rule(
            "progress.not-increasing",
            "error",
            _PROGRESS,
            "a progress value not greater than the token's previous one",
        ),
        Rule(
            "request.unanswered",
            "error",
            "basic#responses",
            "a request neither answered nor cancelled by the end of the session",
        ),
        Rule(
            "tool.output-schema",
            "error",
            "server/tools#output-schema",
            "a tools/call result whose structuredContent breaks the tool's outputSchema",
        ),
        Rule(
            "logging.no-opt-in",
            "error",
            "server/utilities/logging",
            "a 2026-07-28 log message while no request in flight opted in (_meta logLevel)",
        ),
        Rule(
            "resource.not-subscribed",
            "error",
            "server/resources#subscriptions",
            "a resource update for a URI the client did not subscribe to",
        ),
        Rule("result.type", "error", "basic#result-type", "a 2026-07-28 result without resultType"),
        Rule(
            "result.input-required",
            "error",
            "basic/multi-round-trip",
            "input_required answered to a method that may not ask for input",
        ),
        Rule(
            "input.request-state",
            "error",
            "basic/multi-round-trip",
            "a retry's requestState that the server never issued (it must be echoed exactly)",
        ),
        Rule(
            "http.header-mismatch",
            "error",
            f"{_HTTP}#headers",
            "an MCP-Protocol-Version, Mcp-Method or Mcp-Name header missing or unlike the body",
        ),
        Rule(
            "http.param-header",
            "error",
            f"{_HTTP}#custom-headers",
            "a tools/call whose Mcp-Param-* headers do not mirror its x-mcp-header arguments",
        ),
        Rule(
            "http.protocol-version-header",
            "warning",
            f"{_HTTP}#protocol-version-header",
            "a legacy request after initialize without the negotiated MCP-Protocol-Version",
        ),
        Rule(
            "apps.tool-meta",
            "error",
            _APPS,
            "a tool's _meta.ui that is no McpUiToolMeta or names no ui:// resource",
        ),
        Rule(
            "apps.resource-mime",
            "error",
            _APPS,
            f"a ui:// resource not served as {_APP_MIME}",
        ),
        Rule(
            "apps.resource-meta",
            "error",
            _APPS,
            "a ui:// resource's _meta.ui (CSP, permissions) that is no McpUiResourceMeta",
        ),
        Rule(
            "apps.unlisted-resource",
            "error",
            _APPS,
            "a tool's _meta.ui.resourceUri that the server's resources/list does not list",
        ),
        Rule(
            "skills.shape",
            "error",
            _SKILLS,
            "a skills/list, skills/get or resources/directory/read request or result whose "
            "shape is not the extension's (params, skill entries, directory children)",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation: which rule, where in the frame (`path`, `$` for the whole frame), and
    why; `frame` is the frame's index in the session (set by whoever numbers frames)."""

    rule: str
    direction: Direction
    path: str
    message: str
    frame: int = -1

    @property
    def severity(self) -> Severity:
        """The severity of the finding's rule (`error`, `warning`, `info`)."""
        return RULES[self.rule].severity

    @property
    def spec(self) -> str:
        """Where the specification states the finding's rule."""
        return RULES[self.rule].spec

    def to_json(self) -> dict[str, Any]:
        """The finding as JSON data, with its severity and specification reference."""
        return {**asdict(self), "severity": self.severity, "spec": self.spec}

    def line(self) -> str:
        """The one-line form written to stderr or the log."""
        return (
            f"[{self.severity}] #{self.frame} {self.direction} {self.rule} at {self.path}: "
            f"{self.message} (spec: {self.spec})"
        )


def json_path(field: str | None) -> str:
    """A codec's field name (`params.arguments.a.1`) as a JSON path (`$.params.arguments.a.1`)."""
    return f"$.{field}" if field else "$"
