"""The codec of 2026-07-28 with the Tasks extension (`codec.with_extensions(...)`): every frame of
the extension decoded, typed, encoded back exactly and built; what the extension forbids
refused; and the plain codec left as it was (it refuses those frames).

The frames are written here, after the messages the extension's specification text shows.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcp_wire
from mcp_wire import MessageBuildError, ProtocolError
from mcp_wire.v2026_07_28 import codec as core_codec
from mcp_wire.v2026_07_28.ext import tasks
from mcp_wire.v2026_07_28.ext.tasks import codec as tasks_codec

TASKS = "io.modelcontextprotocol/tasks"
CAPABILITIES = {"extensions": {TASKS: {}}}
INFO = {"name": "sample", "version": "1.0"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
    "io.modelcontextprotocol/clientInfo": INFO,
}
PLAIN = mcp_wire.codec("2026-07-28")
EXT = PLAIN.with_extensions(TASKS)
TASK = {
    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "createdAt": "2026-07-28T10:30:00Z",
    "lastUpdatedAt": "2026-07-28T10:40:00Z",
    "ttlMs": 3_600_000,
    "pollIntervalMs": 5000,
}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Deploy to production?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}
BY_STATUS: dict[str, dict[str, Any]] = {
    "working": {"status": "working", "statusMessage": "building"},
    "input_required": {"status": "input_required", "inputRequests": {"confirm-1": ELICIT}},
    "completed": {
        "status": "completed",
        "result": {"content": [{"type": "text", "text": "deployed"}], "isError": False},
    },
    "failed": {"status": "failed", "error": {"code": -32603, "message": "internal error"}},
    "cancelled": {"status": "cancelled", "ttlMs": None},
}
GET_RESULT = {
    "working": tasks.GetTaskResultWorking,
    "input_required": tasks.GetTaskResultInputRequired,
    "completed": tasks.GetTaskResultCompleted,
    "failed": tasks.GetTaskResultFailed,
    "cancelled": tasks.GetTaskResultCancelled,
}
NOTIFICATION_PARAMS = {
    "working": tasks.TaskStatusNotificationParamsWorking,
    "input_required": tasks.TaskStatusNotificationParamsInputRequired,
    "completed": tasks.TaskStatusNotificationParamsCompleted,
    "failed": tasks.TaskStatusNotificationParamsFailed,
    "cancelled": tasks.TaskStatusNotificationParamsCancelled,
}


def request(id: int, method: str, params: dict[str, Any]) -> bytes:
    frame = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": ENVELOPE}}
    return json.dumps(frame).encode()


def response(id: int, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "result": result}).encode()


def same_json(raw: bytes, again: bytes) -> None:
    assert json.loads(again) == json.loads(raw)


def refused(call: Any, *codes: int) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        call()
    assert info.value.code in codes, info.value
    return info.value


# --- the codec ------------------------------------------------------------------------------


def test_with_extensions_gives_the_generated_codec_of_the_revision_with_it() -> None:
    assert type(EXT) is tasks_codec.Codec2026_07_28Tasks
    assert (EXT.revision, EXT.era, EXT.extension_ids) == ("2026-07-28", "modern", {TASKS})
    assert type(EXT.with_extensions(TASKS)) is type(EXT)  # asking again: the same codec
    assert type(EXT.with_extensions()) is type(EXT)
    assert type(PLAIN) is core_codec.Codec2026_07_28 and PLAIN.extension_ids == frozenset()
    small = mcp_wire.codec("2026-07-28").__class__(max_bytes=1000)
    assert small.with_extensions(TASKS).max_bytes == 1000  # the codec's settings carry over


def test_an_unknown_extension_is_a_clear_lookup_error() -> None:
    with pytest.raises(LookupError) as info:
        PLAIN.with_extensions("com.example/nope")
    assert str(info.value) == (
        "unknown extension 'com.example/nope' for revision 2026-07-28 "
        f"(known: {TASKS}, io.modelcontextprotocol/ui)"
    )
    with pytest.raises(
        LookupError, match=r"for revision 2025-11-25 \(known: io.modelcontextprotocol/ui\)"
    ):
        mcp_wire.codec("2025-11-25").with_extensions(TASKS)
    with pytest.raises(LookupError, match=r"for revision 2025-06-18 \(known: none\)"):
        mcp_wire.codec("2025-06-18").with_extensions(TASKS)
    with pytest.raises(TypeError, match="extension ids are strings"):
        PLAIN.with_extensions(b"io.modelcontextprotocol/tasks")  # type: ignore[arg-type]


# --- requests -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "frame", "params_class"),
    [
        ("tasks/get", {"taskId": TASK["taskId"]}, tasks.GetTaskRequest, tasks.GetTaskRequestParams),
        ("tasks/cancel", {"taskId": "t-1"}, tasks.CancelTaskRequest, tasks.CancelTaskRequestParams),
        (
            "tasks/update",
            {"taskId": "t-1", "inputResponses": {"confirm-1": {"action": "accept",
                                                              "content": {"ok": True}}}},
            tasks.UpdateTaskRequest,
            tasks.UpdateTaskRequestParams,
        ),
    ],
)  # fmt: skip
def test_task_requests_round_trip_and_build(
    method: str, params: dict[str, Any], frame: type, params_class: type
) -> None:
    raw = request(7, method, params)
    msg = EXT.decode(raw)
    assert type(msg) is frame and type(msg.params) is params_class
    assert type(EXT.decode(raw, strict=True)) is frame  # the envelope is no unknown member
    unknown = json.loads(raw)
    unknown["params"]["colour"] = "red"
    error = refused(lambda: EXT.decode(json.dumps(unknown), strict=True), -32602)
    assert error.data == {"unknown": ["params.colour"]}
    assert msg.params.taskId == params["taskId"]
    same_json(raw, EXT.encode(msg))
    built = EXT.request(method, params, id=7, client_capabilities=CAPABILITIES, client_info=INFO)
    assert type(built) is frame
    same_json(raw, EXT.encode(built))
    env = EXT.envelope(built)  # the envelope rides as `_meta`, which these params do not declare
    assert (env.protocol_version, env.client_capabilities) == (
        "2026-07-28",
        EXT.envelope(msg).client_capabilities,
    )
    assert mcp_wire.envelope(msg) == env
    # The plain codec does not know the method.
    error = refused(lambda: PLAIN.decode(raw), -32601)
    assert error.data == {"method": method}
    with pytest.raises(ProtocolError):
        PLAIN.request(method, params, id=7)


def test_task_requests_are_validated() -> None:
    for method, params in (
        ("tasks/get", {}),
        ("tasks/get", {"taskId": 7}),
        ("tasks/update", {"taskId": "t"}),  # inputResponses is required
        ("tasks/update", {"taskId": "t", "inputResponses": {"a": {"action": "maybe"}}}),
        ("tasks/cancel", {"task": "t"}),
    ):
        refused(lambda m=method, p=params: EXT.decode(request(1, m, p)), -32602)
        with pytest.raises(MessageBuildError):
            EXT.request(method, params, id=1)


# --- results --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", list(BY_STATUS))
def test_tasks_get_results_are_typed_by_status(status: str) -> None:
    result = {"resultType": "complete", **TASK, **BY_STATUS[status]}
    raw = response(3, result)
    msg = EXT.decode_response(raw, "tasks/get")
    assert type(msg.result) is GET_RESULT[status]
    assert msg.result.status == status and msg.result.taskId == TASK["taskId"]
    same_json(raw, EXT.encode(msg))
    same_json(raw, EXT.encode(EXT.response(3, "tasks/get", result)))
    refused(lambda: PLAIN.decode_response(raw, "tasks/get"), -32601)


def test_a_task_result_is_told_by_its_status_and_read_like_any_result() -> None:
    # The status picks the variant: the error names what that variant lacks, nothing else.
    raw = response(3, {"resultType": "complete", **TASK, "status": "completed"})
    error = refused(lambda: EXT.decode_response(raw, "tasks/get"), -32600)
    assert [e["field"] for e in error.data["errors"]] == ["result.completed.result"]
    # As every result of the revision: no resultType (an older peer) reads as complete, unset,
    # and is written.
    raw = response(3, {**TASK, "status": "working"})
    msg = EXT.decode_response(raw, "tasks/get")
    assert type(msg.result) is tasks.GetTaskResultWorking and msg.result.resultType == "complete"
    assert "resultType" not in msg.result.model_fields_set
    assert json.loads(EXT.encode(msg))["result"]["resultType"] == "complete"


def test_an_input_required_task_carries_the_core_input_requests() -> None:
    result = {"resultType": "complete", **TASK, **BY_STATUS["input_required"]}
    msg = EXT.decode_response(response(3, result), "tasks/get")
    assert isinstance(msg.result, tasks.GetTaskResultInputRequired)
    question = msg.result.inputRequests["confirm-1"]
    assert type(question) is mcp_wire.revision("2026-07-28").ElicitRequest  # the core class


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "complete", **TASK, "status": "completed"},  # a completed task's result
        {"resultType": "complete", **TASK, "status": "failed"},  # a failed task's error
        {"resultType": "complete", **TASK, "status": "input_required"},  # its inputRequests
        {"resultType": "complete", **TASK, "status": "paused"},
        {"resultType": "complete", **{k: v for k, v in TASK.items() if k != "ttlMs"},
         "status": "working"},  # ttlMs is required (null: no limit)
        {"resultType": "task", **TASK, "status": "working"},  # tasks/get answers complete
        {"resultType": "complete", **TASK, "status": "working", "pollIntervalMs": 1.5},
    ],
)  # fmt: skip
def test_invalid_tasks_get_results_are_refused(result: dict[str, Any]) -> None:
    refused(lambda: EXT.decode_response(response(3, result), "tasks/get"), -32600, -32602)
    with pytest.raises(MessageBuildError):
        EXT.response(3, "tasks/get", result)


@pytest.mark.parametrize("method", ["tasks/update", "tasks/cancel"])
def test_update_and_cancel_answer_an_empty_complete_result(method: str) -> None:
    raw = response(4, {"resultType": "complete"})
    msg = EXT.decode_response(raw, method)
    cls = tasks.UpdateTaskResult if method == "tasks/update" else tasks.CancelTaskResult
    assert type(msg.result) is cls
    same_json(raw, EXT.encode(msg))
    assert (
        EXT.encode(EXT.response(4, method, {}))
        == b'{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete"}}'
    )
    refused(lambda: EXT.decode_response(response(4, {"resultType": "task"}), method), -32600)


# --- tools/call answered with a task --------------------------------------------------------


def test_tools_call_may_answer_a_task() -> None:
    created = {"resultType": "task", **TASK, "status": "working"}
    raw = response(2, created)
    msg = EXT.decode_response(raw, "tools/call")
    assert type(msg) is tasks_codec.CallToolResultResponse
    assert type(msg.result) is tasks.CreateTaskResult
    assert (msg.result.status, msg.result.ttlMs, msg.result.pollIntervalMs) == (
        "working",
        3_600_000,
        5000,
    )
    same_json(raw, EXT.encode(msg))
    built = EXT.response(2, "tools/call", created)
    assert type(built.result) is tasks.CreateTaskResult
    same_json(raw, EXT.encode(built))
    # The method's own results are read as before, with the extension or without.
    for result, cls in (
        ({"resultType": "complete", "content": []}, tasks.CallToolResult),
        ({"content": []}, tasks.CallToolResult),  # an older peer: no resultType
        ({"resultType": "input_required", "requestState": "s"}, tasks.InputRequiredResult),
    ):
        for codec in (EXT, PLAIN):
            assert type(codec.decode_response(response(2, result), "tools/call").result) is cls
    # Any method's result response, read without its method, may be a task.
    generic = EXT.decode(raw)
    assert type(generic) is tasks.JSONRPCResultResponse
    same_json(raw, EXT.encode(generic))


def test_the_plain_codec_refuses_a_task_result() -> None:
    raw = response(2, {"resultType": "task", **TASK, "status": "working"})
    error = refused(lambda: PLAIN.decode_response(raw, "tools/call"), -32600)
    assert error.message == "unrecognised resultType 'task'"
    refused(lambda: PLAIN.decode(raw), -32600)
    with pytest.raises(MessageBuildError):
        PLAIN.response(2, "tools/call", {"resultType": "task", **TASK, "status": "working"})
    # A frame of the extension's codec is not a message of the plain codec's revision.
    msg = EXT.decode_response(raw, "tools/call")
    refused(lambda: PLAIN.encode(msg), -32603)


def test_only_the_methods_the_extension_names_may_answer_a_task() -> None:
    task = {"resultType": "task", **TASK, "status": "working"}
    for method in ("prompts/get", "resources/read", "tools/list"):
        refused(lambda m=method: EXT.decode_response(response(2, task), m), -32600)
        with pytest.raises(MessageBuildError, match="resultType"):
            EXT.response(2, method, task)


def test_a_created_task_must_be_a_task() -> None:
    for broken in (
        {"resultType": "task", **TASK},  # no status
        {"resultType": "task", **TASK, "status": "sleeping"},
        {"resultType": "task", "status": "working"},
        {"resultType": "task", **TASK, "status": "working", "createdAt": 5},
    ):
        refused(lambda b=broken: EXT.decode_response(response(2, b), "tools/call"), -32600)


# --- notifications/tasks --------------------------------------------------------------------


@pytest.mark.parametrize("status", list(BY_STATUS))
def test_task_status_notifications_round_trip(status: str) -> None:
    params = {
        **TASK,
        **BY_STATUS[status],
        "_meta": {"io.modelcontextprotocol/subscriptionId": "s1"},
    }
    raw = json.dumps({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params}).encode()
    msg = EXT.decode(raw)
    assert type(msg) is tasks.TaskStatusNotification
    assert type(msg.params) is NOTIFICATION_PARAMS[status]
    same_json(raw, EXT.encode(msg))
    same_json(raw, EXT.encode(EXT.notification("notifications/tasks", params)))
    refused(lambda: PLAIN.decode(raw), -32601)


def test_a_task_status_notification_needs_its_status_members() -> None:
    params = {**TASK, "status": "completed"}  # a completed task's result is missing
    raw = json.dumps({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params})
    refused(lambda: EXT.decode(raw), -32602)
    with pytest.raises(MessageBuildError):
        EXT.notification("notifications/tasks", params)


# --- the core frames, through the extension's codec -----------------------------------------


def test_the_core_frames_read_and_write_the_same_through_the_extension_codec() -> None:
    raw = request(1, "tools/call", {"name": "add", "arguments": {"a": 1}})
    msg = EXT.decode(raw)
    assert type(msg) is type(PLAIN.decode(raw)) is tasks.CallToolRequest
    assert EXT.encode(msg) == PLAIN.encode(msg)
    listing = response(
        5, {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}
    )
    assert EXT.encode(EXT.decode_response(listing, "tools/list")) == PLAIN.encode(
        PLAIN.decode_response(listing, "tools/list")
    )


def test_with_result_types_still_recognises_values_untyped() -> None:
    # The older, untyped way (deprecated in favour of with_extensions): any result may carry it.
    with pytest.deprecated_call():
        loose = PLAIN.with_result_types("task")
    msg = loose.decode_response(response(2, {"resultType": "task", "content": []}), "tools/call")
    assert type(msg.result) is tasks.CallToolResult
