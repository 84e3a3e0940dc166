"""The Skills extension's methods (SEP-2640, `io.modelcontextprotocol/skills`) as `mcpio inspect`
checks them: `skills/list`, `skills/get` and `resources/directory/read` have no schema in the
pinned revisions, so they are known here rather than by a codec. Sent to a server that declared
the extension (`capabilities.extensions`, in its initialize result or `server/discover`), they
are checked for the shape mcpio's runtime gives them (`mcpio.skills`, `mcpio.client._skills`:
params, skill entries, directory listings); sent to one that did not, they are
`capability.server` findings, as any method the server's declarations do not allow."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mcpio.client._skills import SkillError, entry_of
from mcpio.inspect._rules import Direction, Finding
from mcpio.skills._format import EXTENSION
from mcpio.skills._provider import DIRECTORY_READ, GET, LIST

METHODS = frozenset({LIST, GET, DIRECTORY_READ})
SHAPE = "skills.shape"


def _obj(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def undeclared(
    direction: Direction, method: str, server_capabilities: Mapping[str, Any] | None
) -> Iterator[Finding]:
    """`capability.server` when the server's capabilities (None: not seen yet) do not declare
    the extension, or `directoryRead` for `resources/directory/read`."""
    if server_capabilities is None:
        return
    extensions = _obj(server_capabilities.get("extensions"))
    if EXTENSION not in extensions:
        what = f"{method} needs the server extension {EXTENSION}, not declared"
        yield Finding("capability.server", direction, "$.method", what)
    elif method == DIRECTORY_READ and _obj(extensions[EXTENSION]).get("directoryRead") is not True:
        what = f"{method} needs the server extension {EXTENSION} with directoryRead, not declared"
        yield Finding("capability.server", direction, "$.method", what)


def request_findings(direction: Direction, method: str, params: Any) -> Iterator[Finding]:
    """A request's shape: sent by the client, params an object with a string `cursor` (if any)
    and, but for `skills/list`, a non-empty string `uri`."""
    if direction != "client->server":
        yield Finding("method.direction", direction, "$.method", f"{method} goes client->server")
    if params is None:
        params = {}
    if type(params) is not dict:
        yield Finding(SHAPE, direction, "$.params", "params must be an object")
        return
    if "cursor" in params and type(params["cursor"]) is not str:
        yield Finding(SHAPE, direction, "$.params.cursor", "cursor must be a string")
    uri = params.get("uri")
    if method != LIST and (type(uri) is not str or not uri):
        yield Finding(SHAPE, direction, "$.params.uri", "uri must be a non-empty string")


def result_findings(direction: Direction, method: str, result: Any) -> Iterator[Finding]:
    """A result's shape: skill entries as `mcpio.client._skills.entry_of` reads them (a URI
    naming a SKILL.md, its frontmatter, a manifest of uri, digest and size), a directory's
    children as objects with a `uri`, `nextCursor` a string."""
    if type(result) is not dict:
        return  # the JSON-RPC envelope's own check reports it
    if "nextCursor" in result and type(result["nextCursor"]) is not str:
        yield Finding(SHAPE, direction, "$.result.nextCursor", "nextCursor must be a string")
    if method == GET:
        yield from _entry(direction, "$.result.skill", result.get("skill"))
        return
    member = "skills" if method == LIST else "resources"
    items = result.get(member)
    if type(items) is not list:
        yield Finding(SHAPE, direction, f"$.result.{member}", f"{member} must be an array")
        return
    for at, item in enumerate(items):
        path = f"$.result.{member}.{at}"
        if method == LIST:
            yield from _entry(direction, path, item)
        elif type(_obj(item).get("uri")) is not str:
            yield Finding(SHAPE, direction, path, "a directory child must be an object with a uri")


def _entry(direction: Direction, path: str, data: Any) -> Iterator[Finding]:
    try:
        entry_of(data)
    except SkillError as exc:
        yield Finding(SHAPE, direction, path, str(exc))
