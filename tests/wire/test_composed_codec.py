"""Extensions composed into one codec (`codec.with_extensions(*ids)`): for every pinned revision,
any subset of the extensions that fit it, in any order; the codec with all of them reads and
writes a frame of each; a synthetic third extension (tests/support/echo_extension.py) composes
with both real ones, and one that conflicts (tests/support/rival_extension.py) is refused naming
both."""

from __future__ import annotations

import importlib
import itertools
import json
from typing import Any

import pytest

import mcp_wire
from mcp_wire.v2026_07_28 import codec as core_codec
from mcp_wire_runtime.codec import Codec
from mcp_wire_runtime.codec import plain as json_data
from mcp_wire_runtime.errors import ProtocolError
from tests.support import echo_extension, rival_extension

TASKS = "io.modelcontextprotocol/tasks"
UI = "io.modelcontextprotocol/ui"
MODERN = "2026-07-28"


def subsets(revision: str) -> list[tuple[str, ...]]:
    fitting = sorted(mcp_wire.codec(revision).extensions)
    return [s for n in range(len(fitting) + 1) for s in itertools.combinations(fitting, n)]


COMBINATIONS = [(r, s) for r in mcp_wire.REVISIONS for s in subsets(r)]
EXTENDED = [r for r in mcp_wire.REVISIONS if mcp_wire.codec(r).extensions]


def single(revision: str, extension: str) -> type[Codec]:
    """The generated codec class of one extension of a revision."""
    module = importlib.import_module(mcp_wire.codec(revision).extensions[extension])
    return type(module.CODEC)


def changed(ext: type[Codec], core: Codec, table: str) -> dict[str, Any]:
    """The entries of a table that an extension's codec class adds or changes."""
    theirs = getattr(core, table)
    return {k: v for k, v in getattr(ext, table).items() if theirs.get(k) != v}


def models(revision: str, name: str) -> Any:
    return importlib.import_module(f"{mcp_wire.revision(revision).__name__}.ext.{name}")


def test_the_combinations_are_every_subset_of_each_revision_s_extensions() -> None:
    assert len(COMBINATIONS) == 9  # 3 revisions without one, 2025-11-25: {}, {ui}; 2026-07-28: 4
    assert EXTENDED == ["2025-11-25", MODERN]


@pytest.mark.parametrize(("revision", "extensions"), COMBINATIONS)
def test_any_subset_composes_into_one_codec_whatever_the_order(
    revision: str, extensions: tuple[str, ...]
) -> None:
    revision_codec = mcp_wire.codec(revision)
    codec = revision_codec.with_extensions(*extensions)
    assert (codec.revision, codec.extension_ids) == (revision, frozenset(extensions))
    assert codec is revision_codec.with_extensions(*reversed(extensions))  # the same, cached
    assert codec is revision_codec.with_extensions(*extensions, *extensions)
    for extension in extensions:  # each one's codec class, what it changes all there
        ext = single(revision, extension)
        assert isinstance(codec, ext)
        assert changed(ext, revision_codec, "methods").items() <= codec.methods.items()
        assert changed(ext, revision_codec, "responses").items() <= codec.responses.items()
        assert ext.open_models <= codec.open_models and ext.own_modules <= codec.own_modules


def test_extensions_compose_one_at_a_time_too() -> None:
    plain = mcp_wire.codec(MODERN)
    both = plain.with_extensions(TASKS, UI)
    assert plain.with_extensions(UI).with_extensions(TASKS) is both
    assert both.with_extensions(UI) is both and both.with_extensions() is both
    assert type(both).__name__ == "Codec2026_07_28TasksApps"
    small = type(plain)(max_bytes=1000).with_extensions(UI, TASKS)
    assert type(small) is type(both) and small.max_bytes == 1000  # settings carry over


def tasks_frames(codec: Codec, revision: str) -> None:
    """A tasks/get request and a task answer to tools/call: built, written, read back."""
    tasks = models(revision, "tasks")
    caps = {"extensions": {TASKS: {}}}
    built = codec.request("tasks/get", {"taskId": "t1"}, id=1, client_capabilities=caps)
    read = codec.decode(codec.encode(built))
    assert type(read) is tasks.GetTaskRequest and read.params.taskId == "t1"
    task = tasks.CreateTaskResult(
        resultType="task",
        taskId="t1",
        status="working",
        createdAt="2026-01-01T00:00:00Z",
        lastUpdatedAt="2026-01-01T00:00:00Z",
        ttlMs=None,
    )
    raw = codec.encode(codec.response(2, "tools/call", task))
    assert codec.decode_response(raw, "tools/call", strict=True).result == task


def apps_frames(codec: Codec, revision: str) -> None:
    """A view's `ui/open-link` request written (a message of the codec's revision now), and a
    `resources/read` answer whose `_meta.ui` reads as the extension's resource metadata."""
    apps = models(revision, "apps")
    link = apps.McpUiOpenLinkRequest(method="ui/open-link", params={"url": "https://x.test/"})
    assert apps.McpUiOpenLinkRequest.model_validate_json(codec.encode(link)) == link
    ui = apps.McpUiResourceMeta(prefersBorder=True, csp={"connectDomains": ["https://x.test"]})
    content = {"uri": "ui://a/app.html", "mimeType": "text/html;profile=mcp-app", "text": "<p>"}
    content["_meta"] = {"ui": ui.model_dump(mode="json", by_alias=True, exclude_unset=True)}
    raw = codec.encode(codec.response(3, "resources/read", {"contents": [content]}))
    read = codec.decode_response(raw, "resources/read", strict=True).result.contents[0]
    assert apps.McpUiResourceMeta.model_validate(json_data(read.meta)["ui"]) == ui


FRAMES = {TASKS: tasks_frames, UI: apps_frames}


@pytest.mark.parametrize("revision", EXTENDED)
def test_the_codec_with_every_extension_reads_and_writes_a_frame_of_each(revision: str) -> None:
    plain = mcp_wire.codec(revision)
    codec = plain.with_extensions(*plain.extensions)
    for extension in sorted(plain.extensions):
        FRAMES[extension](codec, revision)


def test_without_an_extension_its_frames_are_not_the_revision_s() -> None:
    """What the composed codec reads and writes, the plain one refuses (the checks above are
    the extensions' doing)."""
    plain = mcp_wire.codec(MODERN)
    with pytest.raises(ProtocolError, match="not a message of revision 2026-07-28"):
        apps_frames(plain, MODERN)
    with pytest.raises(ProtocolError, match="tasks/get"):
        tasks_frames(plain, MODERN)
    with pytest.raises(ProtocolError, match="tasks/get"):
        tasks_frames(plain.with_extensions(UI), MODERN)


class WithSynthetic(core_codec.Codec2026_07_28):
    """The codec of 2026-07-28 that also knows the two synthetic extensions."""

    extensions = {
        **core_codec.Codec2026_07_28.extensions,
        echo_extension.ID: echo_extension.__name__,
        rival_extension.ID: rival_extension.__name__,
    }


SYNTHETIC = WithSynthetic()


def echo_frames(codec: Codec) -> None:
    built = codec.request("echo/say", {"text": "hi"}, id=4)
    assert type(codec.decode(codec.encode(built))) is echo_extension.EchoRequest
    answer = codec.response(4, "echo/say", {"resultType": "complete", "text": "hi"})
    read = codec.decode_response(codec.encode(answer), "echo/say", strict=True)
    assert read.result == echo_extension.EchoResult(resultType="complete", text="hi")


def test_a_synthetic_third_extension_composes_with_both_real_ones() -> None:
    codec = SYNTHETIC.with_extensions(UI, echo_extension.ID, TASKS)
    assert codec.extension_ids == {TASKS, UI, echo_extension.ID}
    assert isinstance(codec, WithSynthetic) and isinstance(
        codec, echo_extension.Codec2026_07_28Echo
    )
    assert codec is SYNTHETIC.with_extensions(TASKS, echo_extension.ID, UI)
    echo_frames(codec)
    tasks_frames(codec, MODERN)
    apps_frames(codec, MODERN)
    echo_frames(SYNTHETIC.with_extensions(echo_extension.ID))


def test_a_conflicting_extension_is_refused_naming_both() -> None:
    with pytest.raises(ValueError) as info:
        SYNTHETIC.with_extensions(TASKS, rival_extension.ID, UI)
    assert str(info.value) == (
        f"extensions {rival_extension.ID} and {TASKS} of revision 2026-07-28 conflict: "
        "they define responses['tools/call'] differently"
    )
    # Without Tasks it composes: the conflict is the two of them only.
    rival = SYNTHETIC.with_extensions(rival_extension.ID, UI, echo_extension.ID)
    assert rival.responses["tools/call"] is rival_extension.CallToolResultResponse


def test_an_unknown_extension_names_itself_and_the_revision() -> None:
    with pytest.raises(LookupError) as info:
        mcp_wire.codec("2025-11-25").with_extensions(UI, TASKS)
    assert str(info.value) == (f"unknown extension {TASKS!r} for revision 2025-11-25 (known: {UI})")


def test_a_composed_codec_encodes_what_each_extension_s_codec_encodes() -> None:
    """A frame built by one extension's own codec is written the same by the composed one."""
    tasks_only = mcp_wire.codec(MODERN).with_extensions(TASKS)
    both = mcp_wire.codec(MODERN).with_extensions(TASKS, UI)
    frame = tasks_only.request("tasks/cancel", {"taskId": "t9"}, id=9)
    assert json.loads(both.encode(frame)) == json.loads(tasks_only.encode(frame))
