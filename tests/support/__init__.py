"""Plain helpers the tests share (their fixtures are in conftest.py): where the project and the
official inputs are, each revision's IR and official schema, a free loopback port, waiting for a
condition (`until`, instead of sleeping), an ASGI app under a real uvicorn on loopback
(`serve_app`), 2026-07-28 frames and their HTTP headers, a result's text, and the README's
Python snippets."""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
import socket
import textwrap
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import uvicorn
from hypothesis.internal.conjecture import providers as _hypothesis_providers

import mcp_wire
from codegen.ir import Revision
from codegen.pipeline import Project, load_revision
from mcpio.http._serve import GracefulServer, uvicorn_config

ROOT = Path(__file__).resolve().parent.parent.parent
SHARED = ROOT.parent / "shared"
MIRROR = SHARED / "mcp-spec" / "schema"
EXAMPLES = SHARED / "mcp-spec" / "examples"
PEERS = ROOT / "tests" / "peers"
REALSERVERS = (
    ROOT / "tests" / "realservers"
)  # published MCP servers (tests/interop/test_real_servers.py)
PROJECT = Project(ROOT)
REVISIONS = tuple(PROJECT.pins())
STARTUP_SECONDS = 10.0  # the bound on a uvicorn of `serve_app` starting to accept connections
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = "application/json, text/event-stream"


@functools.cache
def revision_ir(name: str) -> Revision:
    return load_revision(PROJECT, PROJECT.pins()[name])[0]


# Each pinned extension on each revision it is built on, as "<revision>+<name>" (its schema is
# checked like a revision's: the models are mcp_wire.<revision>.ext.<name>).
EXTENSIONS = {
    f"{rev}+{pin.name}": (rev, pin)
    for pin in PROJECT.extension_pins().values()
    for rev in REVISIONS
    if rev in pin.built_on
}
SCHEMAS = (*REVISIONS, *EXTENSIONS)


@functools.cache
def official_schema(name: str) -> dict:
    """A revision's official schema, or an extension's ("<revision>+<name>")."""
    if name in EXTENSIONS:
        # the shared mirror's copy, else the one `make fetch` brought from the pinned source
        ext = EXTENSIONS[name][1].name
        path = SHARED / "mcp-spec" / "ext" / ext / "schema.json"
        if not path.is_file():
            path = ROOT / "schema" / "ext" / ext / "schema.json"
    else:
        path = MIRROR / name / "schema.json"
    return json.loads(path.read_text(encoding="utf-8"))


def models_module(name: str) -> ModuleType:
    """The generated models of a revision, or of a revision with an extension ("<rev>+<name>")."""
    if name in EXTENSIONS:
        rev, pin = EXTENSIONS[name]
        return importlib.import_module(f"{mcp_wire.revision(rev).__name__}.ext.{pin.name}")
    return mcp_wire.revision(name)


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def until(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.01) -> Any:
    """What `predicate` (a function, or a coroutine function) returns once that is true: asked
    at once, then every `interval` seconds; TimeoutError when it is still false after `timeout`
    seconds. For a condition no event announces."""
    try:
        with anyio.fail_after(timeout):
            while True:
                value = predicate()
                if inspect.isawaitable(value):
                    value = await value
                if value:
                    return value
                await anyio.sleep(interval)
    except TimeoutError:
        name = getattr(predicate, "__qualname__", repr(predicate))
        raise TimeoutError(f"{name} still false after {timeout} s") from None


@dataclass
class Served:
    """An ASGI app under uvicorn on 127.0.0.1: the server, its port, and an event set once it
    has stopped serving."""

    web: uvicorn.Server
    port: int
    stopped: anyio.Event

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@asynccontextmanager
async def serve_app(app: Any, port: int | None = None, **options: Any) -> AsyncIterator[Served]:
    """`app` served by a uvicorn in this event loop on 127.0.0.1:`port` (a free one by default),
    configured as `Server.run_http` configures it (`uvicorn_config`, whose keyword `options` this
    takes), from the moment it accepts connections; told to exit when the block ends, and waited
    for."""
    chosen = free_port() if port is None else port
    served = Served(
        GracefulServer(uvicorn_config(app, "127.0.0.1", chosen, **options)), chosen, anyio.Event()
    )

    async def serve() -> None:
        try:
            await served.web.serve()
        finally:
            served.stopped.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(serve)
        await until(lambda: served.web.started or served.stopped.is_set(), STARTUP_SECONDS)
        if not served.web.started:
            raise RuntimeError(f"uvicorn did not start on port {chosen} (see its log)")
        try:
            yield served
        finally:
            served.web.should_exit = True


def modern(id: int | None, method: str, **params: Any) -> dict[str, Any]:
    """A 2026-07-28 request (a notification when `id` is None), its envelope in `_meta`."""
    frame: dict[str, Any] = {
        "jsonrpc": "2.0",
        "method": method,
        "params": {"_meta": ENVELOPE, **params},
    }
    if id is not None:
        frame["id"] = id
    return frame


def headers_for(frame: dict[str, Any], **extra: str) -> dict[str, str]:
    """The HTTP headers of a 2026-07-28 frame: its protocol version, method and name."""
    headers = {"content-type": "application/json", "accept": ACCEPT, "mcp-protocol-version": MODERN}
    if "id" in frame:
        headers["mcp-method"] = frame["method"]
        params = frame.get("params", {})
        if frame["method"] in ("tools/call", "prompts/get"):
            headers["mcp-name"] = params["name"]
        elif frame["method"] == "resources/read":
            headers["mcp-name"] = params["uri"]
    headers.update(extra)
    return headers


def initialize(version: str = "2025-11-25") -> dict[str, Any]:
    """A legacy `initialize` request (id 0) of a client that can answer elicitations."""
    params = {
        "protocolVersion": version,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def text_of(result: Any) -> str:
    """The text of a result's only content block (a tool result or a prompt message)."""
    content = result.content
    if isinstance(content, list):
        assert len(content) == 1, content
        content = content[0]
    assert content.type == "text", content
    return content.text


async def first(stream: Any) -> Any:
    """The first item of an async iterator (a subscription)."""
    async for item in stream:
        return item
    raise AssertionError("the stream ended before its first item")


# ---------------------------------------------------------------------- the README's snippets

README = ROOT / "README.md"
_FENCE = re.compile(r"^( *)```python\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!-- readme-check: (file (\S+)|define\b[^>]*) -->\s*$")


@dataclass(frozen=True)
class Snippet:
    """A fenced `python` block of README.md (see tests/test_readme.py for the markers)."""

    line: int  # where its fence opens in README.md
    code: str
    file: str | None  # written as this file, not run
    define: bool  # run as a module, not as __main__


def readme_snippets() -> list[Snippet]:
    text = README.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        found.append(
            Snippet(
                line=text.count("\n", 0, match.start()) + 1,
                code=textwrap.dedent(match.group(2)),
                file=marker.group(2) if marker else None,
                define=bool(marker and marker.group(1).startswith("define")),
            )
        )
    return found


async def request_body(receive: Any) -> bytes:
    """An ASGI request's whole body, read from its `http.request` messages."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


# Hypothesis (6.13x on) also draws string and number constants it finds in every local module
# loaded (`_get_local_constants`): a derandomized run's instances then change with any edit to
# the code and with which modules a run has loaded, so the differential suites (draws a function
# of the schema alone) drew other instances in a whole run than alone, and after unrelated
# edits. Every test's draws here are a function of the test alone.
_hypothesis_providers._get_local_constants = lambda: _hypothesis_providers.Constants(  # type: ignore[attr-defined]
    integers=_hypothesis_providers.SortedSet(),
    floats=_hypothesis_providers.SortedSet(key=_hypothesis_providers.float_to_int),
    bytes=_hypothesis_providers.SortedSet(),
    strings=_hypothesis_providers.SortedSet(),
)
