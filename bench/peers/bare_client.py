"""Benchmark driver for the floors under an MCP client over HTTP: see ``driver.py``.

    python bench/peers/bare_client.py --kind raw|httpx|aiohttp --url URL --mode legacy

Each kind POSTs the same ``tools/call`` frame (built by string formatting, no model) and reads
the echoed text out of ``json.loads`` of the answer: ``raw`` over asyncio streams (a request
written whole, the status line and headers split by hand, the body read by Content-Length; one
keep-alive connection per call in flight), ``httpx`` through ``httpx.AsyncClient.post``,
``aiohttp`` through ``aiohttp.ClientSession.post``. A legacy session is opened first (initialize
and notifications/initialized, untimed) and its ``Mcp-Session-Id`` sent with every call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from driver import Echo, WrongAnswer, main

from mcpio import Client

LEGACY = "2025-11-25"
MODERN_META = (
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"%s",'
    '"io.modelcontextprotocol/clientCapabilities":{}}'
)


def kind() -> str:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--kind", choices=("raw", "httpx", "aiohttp"), required=True)
    known, rest = parser.parse_known_args()
    sys.argv[1:] = rest
    return str(known.kind)


def handshake(url: str) -> dict[str, str]:
    """A legacy session (urllib, untimed): its headers for every call."""
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bare", "version": "1"},
        },
    }
    request = urllib.request.Request(url, json.dumps(init).encode(), base)
    with urllib.request.urlopen(request) as response:
        session = response.headers["mcp-session-id"]
        response.read()
    headers = {**base, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    with urllib.request.urlopen(urllib.request.Request(url, note, headers)) as response:
        response.read()
    return headers


def frame_of(mode: str) -> Callable[[int, str], bytes]:
    meta = "" if mode == "legacy" else "," + MODERN_META % mode

    def frame(id: int, text: str) -> bytes:
        args = json.dumps({"text": text})
        head = '{"jsonrpc":"2.0","id":' + str(id)
        return (
            head
            + ',"method":"tools/call","params":{"name":"echo","arguments":'
            + args
            + meta
            + "}}"
        ).encode()

    return frame


def text_of(body: bytes | str) -> str:
    answer = json.loads(body)
    try:
        return str(answer["result"]["content"][0]["text"])
    except (KeyError, IndexError, TypeError):
        raise WrongAnswer(f"not an echo: {answer!r}") from None


class RawPool:
    """Keep-alive connections, one per call in flight, over asyncio streams."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        lines = [f"POST {parts.path or '/'} HTTP/1.1", f"Host: {parts.netloc}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self.head = ("\r\n".join(lines) + "\r\nContent-Length: ").encode()
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, body: bytes) -> bytes:
        while self.idle and self.idle[-1][0].at_eof():  # closed by the server while idle
            self.idle.pop()[1].close()
        conn = self.idle.pop() if self.idle else await asyncio.open_connection(self.host, self.port)
        reader, writer = conn
        writer.write(b"%s%d\r\n\r\n%s" % (self.head, len(body), body))
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        answer = await reader.readexactly(length)
        self.idle.append(conn)
        return answer

    def close(self) -> None:
        for _, writer in self.idle:
            writer.close()


Post = Callable[[bytes], Awaitable[bytes | str]]


async def poster(which: str, url: str, headers: dict[str, str], stack: AsyncExitStack) -> Post:
    if which == "raw":
        pool = RawPool(url, headers)
        stack.callback(pool.close)
        return pool.post
    if which == "httpx":
        import httpx

        http = await stack.enter_async_context(httpx.AsyncClient())

        async def post_httpx(body: bytes) -> bytes:
            return (await http.post(url, content=body, headers=headers)).content

        return post_httpx
    import aiohttp

    session = await stack.enter_async_context(aiohttp.ClientSession())

    async def post_aiohttp(body: bytes) -> bytes:
        async with session.post(url, data=body, headers=headers) as response:
            return await response.read()

    return post_aiohttp


def connector(which: str) -> Any:
    @asynccontextmanager
    async def connect(command: list[str], mode: str) -> AsyncIterator[tuple[str, Echo]]:
        url = command[0]
        if mode == "legacy":
            headers, protocol = handshake(url), LEGACY
        else:
            protocol = mode
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": mode,
                "Mcp-Method": "tools/call",
                "Mcp-Name": "echo",
            }
        frame = frame_of(mode)
        ids = iter(range(1, 1 << 62))
        async with AsyncExitStack() as stack:
            post = await poster(which, url, headers, stack)

            async def echo(text: str) -> str:
                return text_of(await post(frame(next(ids), text)))

            yield protocol, echo

    return connect


if __name__ == "__main__":
    which = kind()
    sys.exit(main(f"bare-{which}", connector(which), Client.run))
