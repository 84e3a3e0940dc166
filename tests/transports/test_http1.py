"""The lean HTTP/1.1 client under `HttpTransport` (`mcpio.transports._http1`), against a scripted
socket server: keep-alive reuse, the per-origin connection cap, the User-Agent, chunked and
read-until-close bodies, headers as received, an early close, a refused connection, header
injection refused; and when the transport takes httpx's path instead (a proxy from the
environment)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpio.transports._http1 import ConnectError, Http1Client, RemoteProtocolError
from mcpio.transports.http_client import HttpTransport, _lean_fits

pytestmark = pytest.mark.anyio

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def scripted(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A server on 127.0.0.1 running `handler` per connection: its URL, and one entry per
    connection accepted."""
    accepted: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp", accepted
    finally:
        server.close()


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head, await reader.readexactly(length)


async def echo_keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while not reader.at_eof():
        try:
            _, body = await read_request(reader)
        except asyncio.IncompleteReadError:
            return
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(body))
        writer.write(b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n" + body)
        await writer.drain()


async def test_connections_are_kept_alive_and_reused() -> None:
    async with scripted(echo_keep_alive) as (url, accepted):
        client = Http1Client()
        responses = []
        for n in range(3):
            response = await client.send("POST", httpx.URL(url), {"X-N": str(n)}, b"hello %d" % n)
            assert response.status_code == 200 and response.is_success
            assert response.complete == b"hello %d" % n
            await response.aclose()
            responses.append(response)
        assert len(accepted) == 1
        response = responses[-1]
        # headers: joined by name for reading, as received for a relay
        assert response.headers["set-cookie"] == "a=1, b=2"
        assert (b"Set-Cookie", b"b=2") in response.raw_headers
        await client.aclose()


async def test_a_chunked_body_streams_and_a_body_until_close_ends_with_the_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head, _ = await read_request(reader)
        if b"chunked" in head:
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n")
            writer.write(b"Connection: close\r\n\r\n")
            for part in (b"data: one\n\n", b"data: two\n\n"):
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
                await asyncio.sleep(0.01)
            writer.write(b"0\r\n\r\n")
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nthe whole body")
        await writer.drain()

    async with scripted(handler) as (url, _):
        client = Http1Client()
        response = await client.send("GET", httpx.URL(url), {"X-Want": "chunked"})
        assert b"".join([chunk async for chunk in response.aiter_bytes()]) == (
            b"data: one\n\ndata: two\n\n"
        )
        await response.aclose()
        response = await client.send("GET", httpx.URL(url), {})
        assert b"".join([chunk async for chunk in response.aiter_bytes()]) == b"the whole body"
        await response.aclose()
        await client.aclose()


async def test_an_early_close_and_a_refused_connection_are_connection_errors() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
        await writer.drain()

    async with scripted(hang_up) as (url, _):
        client = Http1Client()
        response = await client.send("POST", httpx.URL(url), {}, b"x")
        with pytest.raises(RemoteProtocolError):
            async for _ in response.aiter_bytes():
                pass
        await response.aclose()
        await client.aclose()
    with pytest.raises(ConnectError):
        await Http1Client().send("POST", httpx.URL(url), {}, b"x")  # the server is gone


async def test_a_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    async with scripted(echo_keep_alive) as (url, accepted):
        client = Http1Client()
        with pytest.raises(ValueError, match="invalid HTTP header"):
            await client.send("POST", httpx.URL(url), {"X-Evil": "a\r\nInjected: 1"}, b"x")
        await client.aclose()


async def test_a_proxy_from_the_environment_takes_the_httpx_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = httpx.URL("http://example.test/mcp")
    assert _lean_fits(url)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert not _lean_fits(url)
    assert _lean_fits(httpx.URL("https://example.test/mcp"))  # no proxy for https
    monkeypatch.setenv("NO_PROXY", "example.test")
    assert _lean_fits(url)
    monkeypatch.delenv("NO_PROXY")
    async with HttpTransport(str(url)) as transport:
        assert transport._lean is None and transport._http is not None


async def test_a_reader_slower_than_the_body_gets_all_of_it() -> None:
    """Body bytes that arrive while the reader holds the last ones (past the high-water mark,
    reading paused) are taken before waiting again, and none are dropped at the end (a slow
    reader: the inspect relay passing a large answer on)."""
    body = bytes(range(256)) * 8192  # 2 MiB

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
        for start in range(0, len(body), 65536):
            writer.write(body[start : start + 65536])
            await writer.drain()
        await writer.drain()

    async with scripted(handler) as (url, _):
        client = Http1Client()
        response = await client.send("GET", httpx.URL(url), {})
        received: list[bytes] = []
        with anyio.fail_after(20):
            async for chunk in response.aiter_bytes():
                received.append(chunk)
                await asyncio.sleep(0.005)  # a reader awaiting its own writes
        assert b"".join(received) == body
        await response.aclose()
        await client.aclose()


async def test_the_user_agent_is_sent_unless_the_headers_name_one() -> None:
    heads: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while not reader.at_eof():
            try:
                head, _ = await read_request(reader)
            except asyncio.IncompleteReadError:
                return
            heads.append(head.lower())
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()

    async with scripted(handler) as (url, _):
        client = Http1Client(user_agent="mcpio/1.2.3")
        for headers in ({}, {"user-AGENT": "mine/1"}):
            await (await client.send("GET", httpx.URL(url), headers)).aclose()
        await client.aclose()
    assert heads[0].count(b"user-agent:") == 1 and b"user-agent: mcpio/1.2.3\r\n" in heads[0]
    assert heads[1].count(b"user-agent:") == 1 and b"user-agent: mine/1\r\n" in heads[1]


async def test_the_transport_sends_mcpio_and_its_version_as_user_agent() -> None:
    from mcpio._version import __version__

    heads: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head, _ = await read_request(reader)
        heads.append(head)
        writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    async with scripted(handler) as (url, _):
        async with HttpTransport(url) as transport:
            transport.era = "modern"
            await transport.send(b'{"jsonrpc":"2.0","method":"notifications/x"}')
    assert f"User-Agent: mcpio/{__version__}\r\n".encode() in heads[0]


async def test_no_more_connections_to_an_origin_than_the_cap_and_every_request_answered() -> None:
    open_now = 0
    most = 0

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now, most
        open_now += 1
        most = max(most, open_now)
        try:
            while not reader.at_eof():
                try:
                    _, body = await read_request(reader)
                except asyncio.IncompleteReadError:
                    return
                await asyncio.sleep(0.02)  # requests pile up meanwhile
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                await writer.drain()
        finally:
            open_now -= 1

    async def one(client: Http1Client, url: str, n: int) -> bytes:
        response = await client.send("POST", httpx.URL(url), {}, b"call %d" % n)
        try:
            return await response_body(response)
        finally:
            await response.aclose()

    async with scripted(slow) as (url, accepted):
        client = Http1Client(max_connections=3)
        bodies = await asyncio.gather(*(one(client, url, n) for n in range(12)))
        await client.aclose()
    assert bodies == [b"call %d" % n for n in range(12)]
    assert most == 3 and len(accepted) == 3  # three opened, then kept and reused


async def test_a_request_waiting_for_a_connection_can_be_cancelled() -> None:
    release = asyncio.Event()

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _, body = await read_request(reader)
        await release.wait()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        await echo_keep_alive(reader, writer)

    async with scripted(held) as (url, accepted):
        client = Http1Client(max_connections=1)
        first = asyncio.create_task(client.send("POST", httpx.URL(url), {}, b"first"))
        await asyncio.sleep(0.05)
        with pytest.raises(TimeoutError):  # the one connection is busy: it waits, then gives up
            async with asyncio.timeout(0.1):
                await client.send("POST", httpx.URL(url), {}, b"second")
        release.set()
        response = await first
        assert await response_body(response) == b"first"
        await response.aclose()
        response = await client.send("POST", httpx.URL(url), {}, b"third")  # its turn came back
        assert await response_body(response) == b"third"
        await response.aclose()
        await client.aclose()
    assert len(accepted) == 1
    with pytest.raises(ValueError):
        Http1Client(max_connections=0)


async def response_body(response: Any) -> bytes:
    return b"".join([chunk async for chunk in response.aiter_bytes()])
