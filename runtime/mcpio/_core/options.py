"""The keyword options that pass through one call to another (`Server.connect` ->
`ServerConnection`; `Context.sample`), typed for `Unpack`: a misspelled option is an error
pyright reports in the caller's code, not a `TypeError` at run time. Each mirrors what it
reaches; tests/test_consumer_typing.py keeps the two the same. The HTTP host's are in
`mcpio.http._options`."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from mcpio._core.authorization import AuthCheck
    from mcpio._core.hints import CacheHint
    from mcpio._core.principal import Principal


class ToolOptions(TypedDict, total=False):
    """A tool's options, as `Server.tool` takes them and the tool's entry keeps them.

    Attributes:
        title: A human-readable title.
        description: What the tool does (default: the function's docstring).
        input_schema: A JSON Schema for the arguments, enforced (default: the type hints').
        output_schema: A JSON Schema for the structured result, instead of the return's.
        annotations: Tool annotations (`readOnlyHint`, `destructiveHint`, ...).
        meta: The tool's `_meta`.
        structured_output: False: no output schema nor structured content; None: inferred.
        icons: The tool's icons.
        task: Whether the tool runs as a task: "forbidden" (default), "optional" or "required".
        defer_task: Answer in the request until `ctx.become_task()`, then go on as a task.
        run_in_thread: Run a sync handler in a worker thread (default), else on the event loop.
        retry: "safe": a queued task of this tool may run again after a worker is lost.
        tags: Its tags, for `Server.enable`/`disable` (`{"admin"}`).
        timeout: Seconds a call may run; beyond them the call is a failed result.
        version: Its version: several of one name are served, the highest by default.
        enabled: False: hidden and uncallable until `Server.enable` names it.
        auth: Who may see and call it: a check (`require_scopes("admin")`) or a list of them,
            all to pass (`mcpio._core.authorization`).
    """

    title: str | None
    description: str | None
    input_schema: Mapping[str, Any] | None
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None
    structured_output: bool | None
    icons: Sequence[Any] | None
    task: Literal["forbidden", "optional", "required"]
    defer_task: bool
    run_in_thread: bool
    retry: Literal["never", "safe"]
    tags: Collection[str] | None
    timeout: float | None
    version: str | int | None
    enabled: bool
    auth: AuthCheck | Sequence[AuthCheck] | None


class ResourceOptions(TypedDict, total=False):
    """A resource's or template's options, as `Server.resource(_template)` takes them.

    The entry keeps them as registered.

    Attributes:
        name: Its name (default: the function's).
        title: A display name.
        description: What it holds (default: the function's docstring).
        mime_type: Its MIME type.
        icons: Its icons.
        annotations: Resource annotations (`audience`, `priority`, `lastModified`).
        meta: Its `_meta`.
        run_in_thread: Run a sync handler in a worker thread (default), else on the event loop.
        cache: Its reads' cache hint (default: the server's for `resources/read`).
        tags: Its tags, for `Server.enable`/`disable`.
        version: Its version: several at one URI are served, the highest by default.
        enabled: False: hidden and unreadable until `Server.enable` names it.
        auth: Who may see and read it: a check or a list of them (as a tool's).
        unscreened: Template parameters whose values may hold `..`, an absolute path or NUL
            (every other one's value is refused with them: `mcpio._core.path_screen`).
    """

    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    icons: Sequence[Any] | None
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None
    run_in_thread: bool
    cache: CacheHint | None
    tags: Collection[str] | None
    version: str | int | None
    enabled: bool
    auth: AuthCheck | Sequence[AuthCheck] | None
    unscreened: Collection[str]


class PromptOptions(TypedDict, total=False):
    """A prompt's options, as `Server.prompt` takes them and the entry keeps them.

    Attributes:
        title: A display name.
        description: What it is for (default: the function's docstring).
        icons: Its icons.
        meta: Its `_meta`.
        run_in_thread: Run a sync handler in a worker thread (default), else on the event loop.
        tags: Its tags, for `Server.enable`/`disable`.
        version: Its version: several of one name are served, the highest by default.
        enabled: False: hidden until `Server.enable` names it.
        auth: Who may see and get it: a check or a list of them (as a tool's).
    """

    title: str | None
    description: str | None
    icons: Sequence[Any] | None
    meta: Mapping[str, Any] | None
    run_in_thread: bool
    tags: Collection[str] | None
    version: str | int | None
    enabled: bool
    auth: AuthCheck | Sequence[AuthCheck] | None


class VisibilityCriteria(TypedDict, total=False):
    """What `Server.enable`/`disable` and the session's `ctx.enable_components` match.

    A component matches when it meets every criterion given.

    Attributes:
        names: Names, or a resource's URI or a template's URI template.
        tags: Tags (one is enough).
        version: A version (`version=` of the decorators).
        components: Kinds: "tool", "resource", "template", "prompt".
    """

    names: Collection[str] | None
    tags: Collection[str] | None
    version: str | int | None
    components: Collection[str] | None


class ConnectionOptions(TypedDict, total=False):
    """`ServerConnection`'s keyword options (see there)."""

    principal: Principal | None
    modern: bool
    listen_until: float
    listen_queue: int


class SamplingOptions(TypedDict, total=False):
    """`Context.sample`'s options beyond messages and max tokens: the fields of
    `sampling/createMessage`'s params, by their wire names (`tools` and `toolChoice` from
    2025-11-25 on)."""

    systemPrompt: str
    temperature: float
    stopSequences: Sequence[str]
    modelPreferences: Any  # a `ModelPreferences` model or its JSON object
    includeContext: Literal["none", "thisServer", "allServers"]
    metadata: dict[str, Any]
    tools: Sequence[Any]
    toolChoice: Any


def check_names(what: str, given: Mapping[str, Any], known: type) -> None:
    """`TypeError` for an option `known` (a TypedDict) does not name, suggesting the closest
    one: `Unpack` makes a misspelling a type error in checked code, this one everywhere."""
    names = known.__optional_keys__ | known.__required_keys__  # type: ignore[attr-defined]
    for option in given.keys() - names:
        close = difflib.get_close_matches(option, names, n=1)
        hint = f"did you mean {close[0]}=?" if close else f"it takes {', '.join(sorted(names))}"
        raise TypeError(f"{what}: no option {option!r}: {hint}")
