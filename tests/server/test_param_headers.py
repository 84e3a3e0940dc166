"""SEP-2243 `Mcp-Param-*` headers, both sides of one set of rules (mcpio.transports._http_rules):
what the client mirrors from a `tools/call`'s arguments, and what the server checks against the
body (presence, characters, the base64 form, equality, integers compared as numbers), on their
own and between a real `Client` and a `Server` over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mcp_wire_runtime.errors import ProtocolError
from mcpio import Client, Server
from mcpio.latest import HEADER_MISMATCH
from mcpio.transports._http_rules import (
    ParamHeaders,
    check_params,
    encode_header_value,
    mirror_params,
    param_headers,
)
from tests.support import headers_for, modern, serve_app, text_of

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"},
        "where": {
            "type": "object",
            "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
        },
        "note": {"type": "string"},
    },
    "required": ["region"],
}
SPEC = param_headers(SCHEMA)


def received(headers: dict[str, str | list[str]]) -> Any:
    """`getlist` over a plain dict (names compared case-insensitively)."""
    lowered = {k.lower(): v for k, v in headers.items()}

    def getlist(name: str) -> list[str]:
        value = lowered.get(name.lower())
        if value is None:
            return []
        return value if isinstance(value, list) else [value]

    return getlist


def refused(spec: ParamHeaders, arguments: dict[str, Any], headers: dict[str, Any]) -> str:
    with pytest.raises(ProtocolError) as caught:
        check_params(spec, arguments, received(headers))
    assert caught.value.code == HEADER_MISMATCH
    return str(caught.value)


def test_the_annotations_read_from_a_schema() -> None:
    assert SPEC == (
        ("Mcp-Param-Count", ("count",)),
        ("Mcp-Param-Dry", ("dry",)),
        ("Mcp-Param-Region", ("region",)),
        ("Mcp-Param-Zone", ("where", "zone")),
    )
    # Annotations that break the rules: no header expected (clients drop such a tool).
    broken = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
    assert param_headers(broken) == ()


ODD_VALUES = ["us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", ""]


@pytest.mark.parametrize("region", ODD_VALUES)
def test_what_the_client_mirrors_the_server_accepts(region: str) -> None:
    arguments = {"region": region, "count": 42, "dry": False, "where": {"zone": "b"}}
    headers = mirror_params(SPEC, arguments)
    assert headers["Mcp-Param-Region"] == encode_header_value(region)
    assert (headers["Mcp-Param-Count"], headers["Mcp-Param-Dry"]) == ("42", "false")
    assert headers["Mcp-Param-Zone"] == "b"
    assert all(value.isascii() for value in headers.values())
    check_params(SPEC, arguments, received(dict(headers)))


def test_absent_and_null_arguments_have_no_header() -> None:
    arguments = {"region": "eu", "count": None}
    assert mirror_params(SPEC, arguments) == {"Mcp-Param-Region": "eu"}
    check_params(SPEC, arguments, received({"Mcp-Param-Region": "eu"}))


def test_integers_compare_as_numbers() -> None:
    for header in ("42", "42.0", "4.2e1", "=?base64?NDI=?="):
        check_params(SPEC, {"region": "x", "count": 42}, received({"mcp-param-region": "x", "Mcp-Param-Count": header}))  # fmt: skip
    check_params(SPEC, {"region": "x", "count": 42.0}, received({"mcp-param-region": "x", "Mcp-Param-Count": "42"}))  # fmt: skip
    for header in ("43", "forty-two", "NaN", "sNaN", ""):
        refused(SPEC, {"region": "x", "count": 42}, {"Mcp-Param-Region": "x", "Mcp-Param-Count": header})  # fmt: skip


def refused_region(header: Any, value: Any = "Hello") -> str:
    """Why the server refuses `header` as Mcp-Param-Region for a `region` argument of `value`."""
    return refused(SPEC, {"region": value}, {"Mcp-Param-Region": header})


def test_a_header_with_another_value_than_the_argument_is_refused() -> None:
    assert "does not match params.arguments.region" in refused_region("Goodbye")
    assert "does not match" in refused_region("hello")  # values are case-sensitive


def test_a_malformed_base64_header_is_refused() -> None:
    assert "malformed" in refused_region("=?base64?SGVsbG8?=")  # no padding
    assert "malformed" in refused_region("=?base64?SGVs!!!bG8=?=")  # not the base64 alphabet


def test_a_header_outside_visible_ascii_is_refused() -> None:
    assert "characters" in refused_region("Hellö")  # not visible ASCII: should have been base64
    assert "characters" in refused_region("a\x00b", "a\x00b")


def test_a_header_sent_twice_is_refused() -> None:
    assert "more than once" in refused_region(["Hello", "Hello"])


def test_a_missing_header_is_refused() -> None:
    assert "is missing" in refused(SPEC, {"region": "x"}, {})
    nested = {"region": "x", "where": {"zone": "z"}}
    assert "is missing" in refused(SPEC, nested, {"Mcp-Param-Region": "x"})


def test_a_header_with_no_argument_behind_it_is_refused() -> None:
    # A header with no argument behind it mirrors nothing the server will act on.
    headers = {"Mcp-Param-Region": "x", "Mcp-Param-Dry": "true"}
    assert "does not match" in refused(SPEC, {"region": "x"}, headers)


def test_booleans_and_literal_lookalikes() -> None:
    check_params(SPEC, {"region": "x", "dry": True}, received({"Mcp-Param-Region": "x", "Mcp-Param-Dry": "true"}))  # fmt: skip
    refused(SPEC, {"region": "x", "dry": True}, {"Mcp-Param-Region": "x", "Mcp-Param-Dry": "True"})
    refused(SPEC, {"region": "x", "dry": True}, {"Mcp-Param-Region": "x", "Mcp-Param-Dry": "1"})
    # Without both markers a value is literal text, base64-looking or not.
    check_params(SPEC, {"region": "SGVsbG8="}, received({"Mcp-Param-Region": "SGVsbG8="}))
    check_params(SPEC, {"region": "=?base64?SGVsbG8="}, received({"Mcp-Param-Region": "=?base64?SGVsbG8="}))  # fmt: skip
    # Surrounding whitespace is HTTP's, not the value's.
    check_params(SPEC, {"region": "x"}, received({"Mcp-Param-Region": "  x\t"}))


# ---------------------------------------------------------------------- over HTTP


def header_server() -> Server:
    server = Server("headers")

    @server.tool(input_schema=SCHEMA)
    def locate(region: str, **rest: Any) -> str:  # pyright: ignore[reportUnusedFunction]
        return f"{region} {json.dumps(rest, sort_keys=True)}"

    @server.tool()
    def plain(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    return server


async def test_a_client_and_a_server_agree_over_http() -> None:
    async with serve_app(header_server().http_app()) as served:
        async with Client(served.url + "/mcp", timeout=10) as client:
            assert client.revision == "2026-07-28"
            await client.list_tools()  # the client learns the annotations
            for region in ODD_VALUES:
                arguments = {"region": region, "count": 7, "dry": True, "where": {"zone": "ä"}}
                result = await client.call_tool("locate", arguments)
                assert not result.isError, result
                assert text_of(result).startswith(f"{region} ")


async def test_the_server_answers_a_mismatch_with_400_and_32020() -> None:
    frame = modern(1, "tools/call", name="locate", arguments={"region": "eu", "count": 3})
    good = headers_for(frame, **{"Mcp-Param-Region": "eu", "Mcp-Param-Count": "3"})
    async with serve_app(header_server().http_app()) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=10) as http:

            async def post(headers: dict[str, str], body: Any = frame) -> httpx.Response:
                return await http.post("/mcp", content=json.dumps(body), headers=headers)

            ok = await post(good)
            assert ok.status_code == 200 and "result" in ok.json(), ok.text
            cases = [
                {**good, "Mcp-Param-Region": "us"},
                {**good, "Mcp-Param-Count": "4"},
                {**good, "Mcp-Param-Region": "=?base64?ZXU?="},
                {k: v for k, v in good.items() if k != "Mcp-Param-Count"},
            ]
            for headers in cases:
                answer = await post(headers)
                assert answer.status_code == 400, (headers, answer.text)
                assert answer.json()["error"]["code"] == HEADER_MISMATCH
                assert answer.json()["id"] == 1
            # A tool without annotations: Mcp-Param-* headers are nobody's business.
            other = modern(2, "tools/call", name="plain", arguments={"text": "t"})
            answer = await post(headers_for(other, **{"Mcp-Param-Region": "x"}), other)
            assert answer.status_code == 200 and "result" in answer.json(), answer.text
