"""A synthetic extension of 2026-07-28, `com.example/echo`, written by hand as the generator
writes one: its models, its method table and its codec class, a subclass of the revision's codec
that adds the request `echo/say` (and its result) to the revision's tables. It composes with the
real extensions (`Codec.with_extensions`)."""

from __future__ import annotations

from typing import Literal

from mcp_wire.v2026_07_28 import codec as _core
from mcp_wire.v2026_07_28 import models as m
from mcp_wire_runtime.base import WireModel
from mcp_wire_runtime.codec import MethodSpec

ID = "com.example/echo"


class EchoRequestParams(WireModel):
    text: str


class EchoRequest(WireModel):
    id: m.RequestId
    jsonrpc: Literal["2.0"]
    method: Literal["echo/say"]
    params: EchoRequestParams


class EchoResult(WireModel):
    resultType: Literal["complete"]
    text: str


class EchoResultResponse(WireModel):
    jsonrpc: Literal["2.0"]
    id: m.RequestId
    result: EchoResult


class Codec2026_07_28Echo(_core.Codec2026_07_28):
    """Codec of revision 2026-07-28 with the extension com.example/echo."""

    methods = {
        **_core.Codec2026_07_28.methods,
        "echo/say": MethodSpec(
            name="echo/say",
            kind="request",
            direction="client->server",
            message=EchoRequest,
            params=EchoRequestParams,
            params_required=True,
            results=(EchoResult,),
            result=EchoResult,
            input_required=False,
            cacheable=False,
        ),
    }
    requests = {**_core.Codec2026_07_28.requests, "echo/say": EchoRequest}
    responses = {**_core.Codec2026_07_28.responses, "echo/say": EchoResultResponse}
    own_modules = _core.Codec2026_07_28.own_modules | {__name__}
    extension_ids = frozenset({ID})


CODEC = Codec2026_07_28Echo()
