"""What `Client(...)` connects to: a .py file, a command line as one string, a URL with headers
or a bearer token, a transport it enters itself; and roots given as strings or `Root` models."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, Context, McpError, Server
from mcpio.latest import public as pub
from mcpio.transports.http_client import HttpTransport
from tests.support import serve_app

pytestmark = pytest.mark.anyio

SERVER = """
from mcpio import Server

server = Server("adder")


@server.tool
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    server.run()
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "adder.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


async def added(client: Client) -> int:
    with anyio.fail_after(60):
        async with client:
            return await client.call_tool("add", {"a": 2, "b": 3}, result_type=int)


async def test_a_python_file_runs_with_this_interpreter(
    script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(script.parent)
    monkeypatch.setenv("PATH", "")  # no `python` on PATH: sys.executable runs it
    assert await added(Client("adder.py")) == 5


async def test_a_command_line_string_whose_program_is_found(script: Path) -> None:
    assert await added(Client(shlex.join([sys.executable, "-u", str(script)]))) == 5


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing.py", "unsupported target 'missing.py': no such Python file"),
        (
            "no-such-program-35 --stdio",
            "unsupported target 'no-such-program-35 --stdio': not an http(s) URL, an existing "
            ".py file, nor a command line whose first word is a program on PATH (give a list "
            "of strings)",
        ),
        ("python 'unclosed", 'unsupported target "python \'unclosed": No closing quotation'),
    ],
)
def test_ambiguous_strings_are_refused_at_once(target: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        Client(target)
    assert str(refused.value) == message


def test_headers_and_a_token_are_for_urls_only(script: Path) -> None:
    for options in ({"headers": {"X-Team": "a"}}, {"auth": "secret"}):
        with pytest.raises(ValueError, match="for an http\\(s\\) URL target"):
            Client(str(script), **options)  # type: ignore[arg-type]


def echo_server() -> Server:
    server = Server("echo")

    @server.tool
    def seen(ctx: Context) -> str:
        """The request's Authorization and X-Team headers."""
        headers = ctx.headers
        return f"{headers.get('authorization')} / {headers.get('x-team')}"

    return server


async def seen(client: Client) -> str:
    with anyio.fail_after(60):
        async with client:
            return await client.call_tool("seen", {}, result_type=str)


async def test_headers_and_a_bearer_token_go_on_every_http_request() -> None:
    async with serve_app(echo_server().http_app()) as served:
        url = f"{served.url}/mcp"
        answer = await seen(Client(url, headers={"X-Team": "blue"}, auth="s3cret"))
        assert answer == "Bearer s3cret / blue"
        for mode in ("2026-07-28", "legacy"):
            answer = await seen(Client(url, mode=mode, headers={"X-Team": "red"}))
            assert answer == "None / red"


def guarded(app: Any, token: str) -> Any:
    """`app` behind a gate that answers 401 to a request without `Bearer <token>`."""

    async def gate(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or ())
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return gate


async def test_a_refused_token_fails_at_once_with_its_status() -> None:
    async with serve_app(guarded(echo_server().http_app(), "good")) as served:
        url = f"{served.url}/mcp"
        assert await seen(Client(url, auth="good")) == "Bearer good / None"
        with pytest.raises(McpError) as failed:
            await seen(Client(url, auth="bad"))
    assert failed.value.data["status"] == 401


async def test_a_transport_is_entered_by_the_client() -> None:
    async with serve_app(echo_server().http_app()) as served:
        transport = HttpTransport(f"{served.url}/mcp", headers={"X-Team": "green"})
        assert not transport.entered
        assert await seen(Client(transport)) == "None / green"


async def test_an_entered_transport_is_used_as_it_is() -> None:
    async with serve_app(echo_server().http_app()) as served:
        async with HttpTransport(f"{served.url}/mcp", headers={"X-Team": "gold"}) as transport:
            assert transport.entered
            assert await seen(Client(transport)) == "None / gold"


def roots_server() -> Server:
    server = Server("roots")

    @server.tool
    async def roots(ctx: Context) -> list[str]:
        listed = await ctx.list_roots()
        return [f"{r.uri} {r.name}" for r in listed.roots]

    return server


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_roots_as_strings_or_models(mode: str, tmp_path: Path) -> None:
    given = ["file:///srv/data", str(tmp_path), pub.Root(uri="file:///x", name="x")]
    with anyio.fail_after(60):
        async with Client(roots_server(), mode=mode, roots=given) as client:
            answer = await client.call_tool("roots", {}, result_type=list[str])
    assert answer == ["file:///srv/data None", f"{tmp_path.as_uri()} None", "file:///x x"]
