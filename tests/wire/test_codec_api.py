"""The consumer-facing codec API: typed per revision, schema classes, the envelope view, builder
mistakes as `MessageBuildError`, and `import mcp_wire` staying cheap.

(What a type checker sees is tests/test_consumer_typing.py; this is what holds at run time.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

import mcp_wire
from codegen.ir import Kind
from mcp_wire import MessageBuildError, ProtocolError
from mcp_wire_runtime.codec import Codec, Envelope
from tests.support import REVISIONS, revision_ir

MODERN = [r for r in REVISIONS if revision_ir(r).era == "modern"]
LEGACY = [r for r in REVISIONS if revision_ir(r).era == "legacy"]


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()


# --- the typed API's run-time side -----------------------------------------------------------------


@pytest.mark.parametrize("rev", REVISIONS)
def test_each_revision_has_its_own_codec_class_and_unions(rev: str) -> None:
    codec = mcp_wire.codec(rev)
    module = sys.modules[type(codec).__module__]
    assert type(codec).__name__ == "Codec" + rev.replace("-", "_")
    assert isinstance(codec, Codec) and codec.revision == rev
    # The unions the typed API names are importable (for annotations) and match the tables.
    assert set(module.RequestFrame.__args__) == set(codec.requests.values())
    assert set(module.NotificationFrame.__args__) == set(codec.notifications.values())
    assert set(module.ResultFrame.__args__) == set(codec.responses.values())
    errors = {codec.error_response, *codec.error_frames.values()}
    assert set(getattr(module.ErrorFrame, "__args__", (module.ErrorFrame,))) == errors
    # isinstance works with them, as the sample narrows
    raw = dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "no"}})
    assert isinstance(codec.decode(raw), module.ErrorFrame)


def test_import_mcp_wire_loads_no_pydantic() -> None:
    code = "import sys, mcp_wire; print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))"  # noqa: E501
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "[]"


# --- finding: decoded frames are the schema's classes ------------------------------------------


@pytest.mark.parametrize("rev", REVISIONS)
def test_every_request_and_notification_frame_is_the_schemas_class(rev: str) -> None:
    """Where a revision's schema keeps jsonrpc/id apart (JSONRPCRequest), the codec's frame adds
    them to a subclass of the schema's own class: `isinstance(msg, InitializeRequest)` holds."""
    codec = mcp_wire.codec(rev)
    models = sys.modules[f"{mcp_wire.revision(rev).__name__}.models"]
    for m in revision_ir(rev).methods:
        if m.kind is Kind.INPUT_REQUEST:
            continue
        frames = codec.requests if m.kind is Kind.REQUEST else codec.notifications
        schema_class = getattr(models, m.message)
        assert issubclass(frames[m.name], schema_class), (rev, m.name)


@pytest.mark.parametrize("rev", LEGACY)
def test_a_legacy_initialize_decodes_to_an_initialize_request(rev: str) -> None:
    codec = mcp_wire.codec(rev)
    package = mcp_wire.revision(rev)
    raw = dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": rev,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
    )
    message = codec.decode(raw)
    assert isinstance(message, package.InitializeRequest)
    assert message.params.clientInfo.name == "c"


# --- finding: the modern envelope by plain names ---------------------------------------------------


def enveloped(rev: str) -> tuple[Codec, Any, Any]:
    """`rev`'s codec, its IR's envelope keys, and a tools/call request with a full envelope."""
    codec = mcp_wire.codec(rev)
    env_ir = revision_ir(rev).meta_envelope
    assert env_ir is not None
    request = codec.request(
        "tools/call",
        {"name": "t", "_meta": {env_ir.log_level_key: "debug"}},
        id=1,
        client_capabilities={"roots": {}},
        client_info={"name": "c", "version": "1"},
    )
    return codec, env_ir, request


@pytest.mark.parametrize("via", ["codec", "mcp_wire"])
@pytest.mark.parametrize("rev", MODERN)
def test_the_envelope_reads_by_plain_names(rev: str, via: str) -> None:
    codec, _, request = enveloped(rev)
    view = codec.envelope(request) if via == "codec" else mcp_wire.envelope(request)
    assert isinstance(view, Envelope)
    assert view.protocol_version == rev
    assert view.client_capabilities.model_dump(exclude_unset=True) == {"roots": {}}
    assert view.client_info is not None and view.client_info.name == "c"
    assert view.log_level == "debug"


@pytest.mark.parametrize("rev", MODERN)
def test_the_envelope_of_params_is_the_envelope_of_their_meta(rev: str) -> None:
    codec, _, request = enveloped(rev)
    assert codec.envelope(request.params) == codec.envelope(request.params.meta)


@pytest.mark.parametrize("rev", MODERN)
def test_the_envelope_s_wire_form_is_unchanged(rev: str) -> None:
    codec, env_ir, request = enveloped(rev)
    meta = json.loads(codec.encode(request))["params"]["_meta"]
    assert meta == {
        env_ir.protocol_version_key: rev,
        env_ir.client_capabilities_key: {"roots": {}},
        env_ir.client_info_key: {"name": "c", "version": "1"},
        env_ir.log_level_key: "debug",
    }


@pytest.mark.parametrize("rev", MODERN)
def test_a_bare_request_s_envelope_has_no_client_info_or_log_level(rev: str) -> None:
    codec = mcp_wire.codec(rev)
    bare = codec.envelope(codec.request("tools/list", id=2))
    assert (bare.client_info, bare.log_level) == (None, None)


@pytest.mark.parametrize("rev", MODERN)
def test_a_notification_has_no_envelope(rev: str) -> None:
    # Things without an envelope: None from mcp_wire.envelope, ValueError from the codec.
    codec = mcp_wire.codec(rev)
    notification = codec.notification("notifications/progress", {"progressToken": 1, "progress": 1})
    assert mcp_wire.envelope(notification) is None
    with pytest.raises(ValueError, match="no _meta envelope"):
        codec.envelope(notification)


def test_legacy_requests_have_no_envelope() -> None:
    codec = mcp_wire.codec(LEGACY[-1])
    request = codec.request("tools/list", id=1)
    assert mcp_wire.envelope(request) is None
    with pytest.raises(ValueError, match="has no per-request _meta envelope"):
        codec.envelope(request)
    with pytest.raises(TypeError, match="not a message of a pinned MCP revision"):
        mcp_wire.envelope({"_meta": {}})


# --- finding: a builder's mistake is a ValueError, not a wire error ---------------------------------


def _build_error(call: Any, *args: Any, **kwargs: Any) -> MessageBuildError:
    with pytest.raises(MessageBuildError) as info:
        call(*args, **kwargs)
    error = info.value
    assert isinstance(error, ValueError) and not isinstance(error, ProtocolError)
    assert error.message and "\n" not in error.message
    return error


@pytest.mark.parametrize("rev", [LEGACY[0], LEGACY[-1], *MODERN])
def test_builders_raise_message_build_error_for_invalid_arguments(rev: str) -> None:
    codec = mcp_wire.codec(rev)
    missing = _build_error(codec.request, "tools/call", {}, id=1)
    assert missing.method == "tools/call"
    assert [e["field"] for e in missing.errors] == ["params.name"]
    assert f"cannot build a tools/call request of revision {rev}: params.name" in missing.message
    assert _build_error(codec.request, "tools/call", {"name": 5}, id=1).errors[0]["type"]
    assert (
        "must be a model or a mapping" in _build_error(codec.request, "tools/call", 5, id=1).message
    )
    _build_error(codec.notification, "notifications/progress", {"progress": 1})
    _build_error(codec.response, 1, "tools/call", {"content": "not a list"})
    assert (
        "must be a model or a mapping"
        in _build_error(codec.response, 1, "tools/list", None).message
    )
    wrong_id: Any = 1.5
    _build_error(codec.error, wrong_id, -32600, "bad id")
    # A method the revision lacks stays the ProtocolError a peer would answer.
    with pytest.raises(ProtocolError) as caught:
        codec.request("nope/nope", {}, id=1)
    assert caught.value.code == -32601
