"""Credentials in an HTTP client's URL (`http://user:password@host/mcp`): `HttpTransport` sends
them as HTTP Basic on every request (as httpx does) and keeps them out of its `url`, reprs, log
lines, error messages and exceptions, and out of `mcpio inspect`'s transcript; `mcpio inspect
--upstream` refuses them with one line."""

from __future__ import annotations

import base64
import io
import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpio import Client, Server
from mcpio._core.errors import McpError
from mcpio.client._proxy import proxy_server
from mcpio.inspect._http_proxy import ProxyApp
from mcpio.inspect._replay import replay_transcript
from mcpio.inspect._transcript import Recorder, read_transcript
from mcpio.transports.http_client import HttpTransport
from tests.support import free_port, serve_app, text_of

pytestmark = pytest.mark.anyio

USER, PASSWORD = "alice", "s3cr@t pw"
USERINFO = "alice:s3cr%40t%20pw"  # as a URL carries them
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
LEAKS = ("s3cr", "alice", base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()[:12])


def leaked(text: str) -> list[str]:
    return [secret for secret in LEAKS if secret in text]


def small_server() -> Server:
    server = Server("creds", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    return server


@asynccontextmanager
async def recording(app: Any) -> AsyncIterator[tuple[int, list[dict[str, str]]]]:
    """`app` served, every request's headers (and its target as `:target`) recorded."""
    seen: list[dict[str, str]] = []

    async def recorder(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            seen.append({**headers, ":target": scope["raw_path"].decode()})
        await app(scope, receive, send)

    async with serve_app(recorder) as served:
        yield served.port, seen


@pytest.mark.parametrize("client", ["lean", "httpx"])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_userinfo_goes_as_basic_on_every_request(client: str, mode: str) -> None:
    async with recording(small_server().http_app()) as (port, seen):
        url = f"http://{USERINFO}@127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient(follow_redirects=False) as http:
            given = http if client == "httpx" else None
            async with Client(url, mode=mode, http=given) as mcp:
                await mcp.list_tools()
                assert text_of(await mcp.call_tool("echo", {"text": "hi"})) == "hi"
    assert len(seen) >= 2
    for headers in seen:
        assert headers["authorization"] == BASIC
        assert headers["host"] == f"127.0.0.1:{port}"
        assert not leaked(headers[":target"])


def test_the_transport_keeps_no_credentials_in_sight() -> None:
    transport = HttpTransport(f"http://{USERINFO}@127.0.0.1:9/mcp?x=1")
    assert str(transport.url) == "http://127.0.0.1:9/mcp?x=1"
    for shown in (repr(transport), repr(transport.url), str(transport.url)):
        assert not leaked(shown), shown
    # Only a user: sent with an empty password.
    assert HttpTransport("http://alice@127.0.0.1:9/mcp")._extra["Authorization"] == (
        "Basic " + base64.b64encode(b"alice:").decode()
    )


@pytest.mark.parametrize(
    "url",
    [
        f"ftp://{USERINFO}@127.0.0.1/mcp",
        f"http://{USERINFO}@/mcp",
        f"http://{USERINFO}@127.0.0.1:notaport/mcp",
    ],
)
def test_a_bad_url_is_refused_without_its_credentials(url: str) -> None:
    with pytest.raises(ValueError) as caught:
        HttpTransport(url)
    assert "URL" in str(caught.value) and not leaked(str(caught.value)), caught.value


def test_credentials_and_another_authorization_are_refused() -> None:
    url = f"http://{USERINFO}@127.0.0.1:9/mcp"
    for options in ({"headers": {"authorization": "Bearer t"}}, {"auth": object()}):
        with pytest.raises(ValueError, match="give one") as caught:
            HttpTransport(url, **options)  # type: ignore[arg-type]
        assert not leaked(str(caught.value))


def chain_of(error: BaseException | None) -> list[BaseException]:
    chain: list[BaseException] = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


async def test_a_failed_connection_names_no_credentials() -> None:
    url = f"http://{USERINFO}@127.0.0.1:{free_port()}/mcp"  # nothing listens there
    for mode in ("legacy", "2026-07-28"):
        with pytest.raises(Exception) as caught:
            async with Client(url, mode=mode, timeout=5, probe_timeout=5) as mcp:
                await mcp.list_tools()
        for exc in chain_of(caught.value):
            assert not leaked(f"{exc!s} {exc!r}"), exc
            if isinstance(exc, McpError):
                assert not leaked(json.dumps(exc.data, default=str))


async def test_log_lines_name_no_credentials(caplog: pytest.LogCaptureFixture) -> None:
    """A server refusing the session's DELETE: the transport logs it, without the URL's
    credentials."""
    app = small_server().http_app()

    async def refusing_delete(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "DELETE":
            await send({"type": "http.response.start", "status": 500, "headers": []})
            await send({"type": "http.response.body", "body": b"no"})
            return
        await app(scope, receive, send)

    caplog.set_level(logging.DEBUG)
    async with serve_app(refusing_delete) as served:
        url = f"http://{USERINFO}@127.0.0.1:{served.port}/mcp"
        async with Client(url, mode="legacy") as mcp:
            await mcp.list_tools()
    assert any("DELETE" in record.getMessage() for record in caplog.records), caplog.text
    assert not leaked(caplog.text), caplog.text


async def test_the_inspectors_transcript_holds_no_credentials() -> None:
    transcript = io.StringIO()
    recorder = Recorder(io.StringIO(), transcript)
    async with serve_app(small_server().http_app()) as upstream:
        async with serve_app(ProxyApp(f"{upstream.url}/mcp", recorder)) as proxy:
            url = f"http://{USERINFO}@127.0.0.1:{proxy.port}/mcp"
            for mode in ("legacy", "2026-07-28"):
                async with Client(url, mode=mode) as mcp:
                    await mcp.call_tool("echo", {"text": "hi"})
    assert len(recorder.entries) >= 4
    assert not leaked(transcript.getvalue()) and "authorization" not in transcript.getvalue()


def test_inspect_refuses_an_upstream_with_credentials() -> None:
    command = [sys.executable, "-m", "mcpio", "inspect", "--listen", str(free_port())]
    upstream = f"http://{USERINFO}@127.0.0.1:{free_port()}/mcp"
    done = subprocess.run(
        [*command, "--upstream", upstream], capture_output=True, text=True, timeout=30
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "credentials in the URL" in lines[0], done.stderr
    assert not leaked(done.stderr + done.stdout)


def test_the_client_keeps_no_credentials_in_sight() -> None:
    """`Client` keeps the URL without its user info (its target, the result cache's key): the
    credentials are held apart, never shown, and tell one user's cached results from another's."""
    url = f"http://{USERINFO}@127.0.0.1:9/mcp?x=1"
    client = Client(url)
    assert client._target == "http://127.0.0.1:9/mcp?x=1"
    assert client._server_key == "http://127.0.0.1:9/mcp?x=1"
    assert not leaked(repr(vars(client))), vars(client)
    other = Client("http://bob:pw@127.0.0.1:9/mcp?x=1")
    assert other._principal not in (client._principal, "", Client(client._target)._principal)
    assert Client(url)._principal == client._principal


def test_the_client_refuses_credentials_and_another_authorization() -> None:
    url = f"http://{USERINFO}@127.0.0.1:9/mcp"
    for options in ({"headers": {"Authorization": "Bearer t"}}, {"auth": "t"}):
        with pytest.raises(ValueError, match="give one") as caught:
            Client(url, **options)  # type: ignore[arg-type]
        assert not leaked(str(caught.value))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_proxied_client_sends_its_urls_credentials(mode: str) -> None:
    """`proxy_server(client)` builds its own client like the given one: with the credentials."""
    async with recording(small_server().http_app()) as (port, seen):
        target = Client(f"http://{USERINFO}@127.0.0.1:{port}/mcp", mode=mode)
        async with Client(proxy_server(target), mode="2026-07-28") as client:
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
    assert seen and all(headers["authorization"] == BASIC for headers in seen)
    assert not leaked(repr(vars(target)))


async def _transcript(where: Path) -> Path:
    transcript = where / "t.jsonl"
    with transcript.open("w") as jsonl:
        recorder = Recorder(io.StringIO(), jsonl)
        async with serve_app(small_server().http_app()) as upstream:
            async with serve_app(ProxyApp(f"{upstream.url}/mcp", recorder)) as proxy:
                async with Client(f"{proxy.url}/mcp", mode="legacy") as mcp:
                    await mcp.call_tool("echo", {"text": "hi"})
    return transcript


async def test_replay_sends_the_urls_credentials(tmp_path: Path) -> None:
    entries = read_transcript(await _transcript(tmp_path))
    async with recording(small_server().http_app()) as (port, seen):
        out = io.StringIO()
        url = f"http://{USERINFO}@127.0.0.1:{port}/mcp"
        assert await replay_transcript(entries, url, 10, out) == [], out.getvalue()
    assert out.getvalue() == "mcpio replay: 0 differences\n"
    assert len(seen) >= 3 and all(headers["authorization"] == BASIC for headers in seen)


async def test_replay_against_no_server_is_one_line_without_credentials(tmp_path: Path) -> None:
    transcript = await _transcript(tmp_path)
    server = f"http://{USERINFO}@127.0.0.1:{free_port()}/mcp"  # nothing listens there
    command = [sys.executable, "-m", "mcpio", "replay", str(transcript), "--server", server]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no answer from http://127.0.0.1:" in lines[0], done.stderr
    assert not leaked(done.stderr + done.stdout)
