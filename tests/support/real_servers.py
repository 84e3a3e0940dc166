"""Published MCP servers nobody here wrote (tests/interop/test_real_servers.py): what each is
(its command, the tools it is asked to call with arguments made from their schemas, the prompts
it is asked for), the ways a client reaches it (`PATHS`: direct, through `mcpio inspect`; one
more, a proxy, is a connector away), and a tour of its operations with their outcomes.

The npm servers are pinned in tests/realservers/package.json (installed by the
`npm_realservers` fixture); the PyPI ones are in the dev extra (pyproject.toml)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import jsonschema

from mcpio import Client
from mcpio.server._mount import prefixed_uri, unprefixed_uri
from tests.support import PEERS, REALSERVERS, free_port, serve_app

NPM = REALSERVERS / "node_modules" / "@modelcontextprotocol"
BIN = Path(sys.executable).parent  # the PyPI servers' console scripts
MODERN, LEGACY = "2026-07-28", "legacy"
_sessions = itertools.count()


@dataclass(frozen=True)
class Places:
    """What the servers work on: a directory with a file (the filesystem server's root), a
    git repository with one commit, and a directory for the memory server's files."""

    root: Path
    repo: Path
    scratch: Path

    def fill(self, value: Any) -> Any:
        """`value` with `{root}` and `{repo}` in its strings replaced by the places."""
        if isinstance(value, str):
            return value.format(root=self.root, repo=self.repo)
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value


def make_places(base: Path) -> Places:
    root, repo, scratch = base / "root", base / "repo", base / "scratch"
    for directory in (root, repo, scratch):
        directory.mkdir()
    (root / "notes.txt").write_text("first line\nsecond line\n")
    (root / "sub").mkdir()
    (repo / "a.txt").write_text("hello\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    for args in (["init", "-q", "-b", "main"], ["add", "a.txt"], ["commit", "-qm", "first"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return Places(root, repo, scratch)


@dataclass(frozen=True)
class RealServer:
    """A published server: its stdio command (given the places), the tool calls and prompt
    gets of its tour (arguments may name `{root}` or `{repo}`), the tools whose answers change
    from call to call (the time now), and the eras it speaks."""

    name: str
    command: Callable[[Places], list[str]] | None  # over stdio (None: not toured so)
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    prompts: tuple[tuple[str, dict[str, str]], ...] = ()
    volatile: frozenset[str] = frozenset()
    modes: tuple[str, ...] = (LEGACY,)
    # over Streamable HTTP: the command serving it on a port (its endpoint: /mcp)
    http_command: Callable[[Places, int], list[str]] | None = None

    @property
    def transports(self) -> tuple[str, ...]:
        return (*(["stdio"] if self.command else []), *(["http"] if self.http_command else []))


def _node(package: str, *args: str) -> list[str]:
    return ["node", str(NPM / package / "dist" / "index.js"), *args]


def _memory(places: Places) -> list[str]:
    # its graph in a file of its own per session (the default is beside its code)
    store = places.scratch / f"memory-{next(_sessions)}.jsonl"
    return ["env", f"MEMORY_FILE_PATH={store}", *_node("server-memory")]


SERVERS: dict[str, RealServer] = {
    server.name: server
    for server in (
        RealServer(
            "filesystem",
            lambda p: _node("server-filesystem", str(p.root)),
            calls=(
                ("list_allowed_directories", {}),
                ("list_directory", {"path": "{root}"}),
                ("read_text_file", {"path": "{root}/notes.txt", "head": 1}),
                ("directory_tree", {"path": "{root}"}),
            ),
        ),
        RealServer(
            "memory",
            _memory,
            calls=(
                ("create_entities", {"entities": [{"name": "mcpio", "entityType": "project", "observations": ["tested"]}]}),  # noqa: E501  # fmt: skip
                ("read_graph", {}),
                ("search_nodes", {"query": "mcpio"}),
                ("open_nodes", {"names": ["mcpio"]}),
            ),
        ),
        RealServer(
            "everything",
            lambda p: _node("server-everything", "stdio"),
            calls=(
                ("echo", {"message": "hello"}),
                ("get-sum", {"a": 2, "b": 3}),
                ("get-structured-content", {"location": "Chicago"}),
                ("get-tiny-image", {}),
                ("get-annotated-message", {"messageType": "success"}),
                ("get-resource-links", {"count": 2}),
            ),
            prompts=(("simple-prompt", {}), ("args-prompt", {"city": "Paris"})),
            http_command=lambda p, port: _on_port(port, "server-everything", "streamableHttp"),
        ),
        # over HTTP it assigns no session id (every request judged alone by the inspector);
        # its PDFs: those under the root (none), not its default (a remote one)
        RealServer(
            "pdf",
            None,
            calls=(("list_pdfs", {}),),
            http_command=lambda p, port: _on_port(port, "server-pdf", str(p.root)),
        ),
        RealServer(
            "time",
            lambda p: [str(BIN / "mcp-server-time"), "--local-timezone", "UTC"],
            calls=(
                ("get_current_time", {"timezone": "UTC"}),
                ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),  # noqa: E501  # fmt: skip
            ),
            volatile=frozenset({"get_current_time"}),
            modes=(LEGACY, MODERN),
        ),
        RealServer(
            "git",
            lambda p: [str(BIN / "mcp-server-git"), "--repository", str(p.repo)],
            calls=(
                ("git_status", {"repo_path": "{repo}"}),
                ("git_log", {"repo_path": "{repo}", "max_count": 1}),
                ("git_branch", {"repo_path": "{repo}", "branch_type": "local"}),
            ),
            modes=(LEGACY, MODERN),
        ),
        # listed only (its one tool and prompt fetch a URL: the network), in one era (the
        # other two servers of its SDK cover both)
        RealServer("fetch", lambda p: [str(BIN / "mcp-server-fetch")], modes=(MODERN,)),
    )
}


def _on_port(port: int, package: str, *args: str) -> list[str]:
    # the preload binds them to 127.0.0.1: left alone they listen on every interface
    node, *rest = _node(package, *args)
    return ["env", f"PORT={port}", node, "--require", str(REALSERVERS / "loopback.cjs"), *rest]


# ------------------------------------------------------------------ the tour


@dataclass
class Naming:
    """How the client names a server's tools, prompts and resources: as they are, or (a server
    mounted by `from_config`) under its namespace."""

    namespace: str | None = None

    def name(self, name: str) -> str:
        return name if self.namespace is None else f"{self.namespace}_{name}"

    def uri(self, uri: str) -> str:
        return uri if self.namespace is None else prefixed_uri(uri, self.namespace)

    def own(self, item: dict[str, Any]) -> dict[str, Any] | None:
        """A listed item (plain data) as the server itself names it; None if not its."""
        if self.namespace is None:
            return item
        for key in ("uri", "uriTemplate", "name"):  # a resource's name is no key of it
            if key in item:
                local = self._local(key, item[key])
                return None if local is None else {**item, key: local}
        return item

    def _local(self, key: str, value: str) -> str | None:
        assert self.namespace is not None
        if key == "name":
            prefix = self.namespace + "_"
            return value[len(prefix) :] if value.startswith(prefix) else None
        return unprefixed_uri(value, self.namespace)


@dataclass
class Tour:
    """Each operation's outcome (plain data; `None` for a volatile one), and the operations
    that failed, with why."""

    outcomes: dict[str, Any] = field(default_factory=lambda: {})
    failures: dict[str, str] = field(default_factory=lambda: {})

    @property
    def operations(self) -> int:
        return len(self.outcomes) + len(self.failures)

    async def run(self, operation: str, action: Callable[[], Any], keep: bool = True) -> Any:
        try:
            value = await action()
        except Exception as exc:  # an operation that failed is told, not raised
            self.failures[operation] = f"{type(exc).__name__}: {exc}"
            return None
        self.outcomes[operation] = plain(value) if keep else None
        return value


def plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


LISTINGS = (
    ("tools", "list_tools", "tools"),
    ("prompts", "list_prompts", "prompts"),
    ("resources", "list_resources", "resources"),
    ("resources", "list_resource_templates", "resourceTemplates"),
)


async def every_item(client: Client, method: str, field: str) -> list[Any]:
    """A listing, every page of it."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await getattr(client, method)(cursor)
        items += getattr(page, field)
        cursor = page.nextCursor
        if not cursor:
            return items


async def handshake(client: Client, done: Tour) -> None:
    """The connection's first operation: the legacy handshake (made on connecting), or a
    2026-07-28 server's `server/discover` (what it is and offers)."""

    async def met() -> Any:
        if client.server_info is None:
            await client.discover()
        return client.server_info

    await done.run("initialize" if not client.modern else "server/discover", met)


async def listings(client: Client, done: Tour) -> dict[str, list[dict[str, Any]]]:
    """Each listing the server offers (its capabilities say), every page, as plain data."""
    offered = plain(client.server_capabilities) or {}
    found: dict[str, list[dict[str, Any]]] = {}
    for capability, method, member in LISTINGS:
        if offered.get(capability) is None:
            continue  # a listing the server does not offer is no operation of it

        async def listed(method: str = method, member: str = member) -> list[dict[str, Any]]:
            return [plain(i) for i in await every_item(client, method, member)]

        found[member] = await done.run(method, listed) or []
    return found


def owned(found: dict[str, list[dict[str, Any]]], naming: Naming) -> dict[str, list[Any]]:
    """A server's own items of merged listings, as it names them."""
    return {
        field: [own for item in items if (own := naming.own(item)) is not None]
        for field, items in found.items()
    }


async def tour(
    client: Client,
    server: RealServer,
    places: Places,
    found: dict[str, list[dict[str, Any]]],
    done: Tour,
    naming: Naming | None = None,
) -> Tour:
    """The rest of `server`'s tour through `client`, after its listings (`found`, as it names
    its items): its calls (arguments checked against the listed schemas first), a read of each
    listed resource, its prompts."""
    naming = naming or Naming()
    schemas = {t["name"]: t["inputSchema"] for t in found.get("tools", [])}
    for tool, arguments in server.calls:
        args = places.fill(arguments)

        async def call(tool: str = tool, args: Any = args) -> Any:
            jsonschema.validate(args, schemas[tool])
            result = await client.call_tool(naming.name(tool), args)
            if result.isError:
                raise AssertionError(f"{tool} answered an error: {plain(result)}")
            return result

        await done.run(f"tools/call {tool}", call, keep=tool not in server.volatile)
    for resource in found.get("resources", [])[:8]:
        uri = resource["uri"]
        await done.run(f"resources/read {uri}", lambda uri=uri: _read(client, naming, uri))
    for prompt, arguments in server.prompts:
        name = naming.name(prompt)
        await done.run(f"prompts/get {prompt}", lambda n=name, a=arguments: client.get_prompt(n, a))
    return done


async def _read(client: Client, naming: Naming, uri: str) -> Any:
    result = plain(await client.read_resource(naming.uri(uri)))
    for content in result["contents"]:
        content["uri"] = naming.own({"uri": content["uri"]})["uri"]  # type: ignore[index]
    return result


# ------------------------------------------------------------------ the paths


@dataclass
class Session:
    """A client connected along a path, and where that path recorded the inspector's
    transcript (None: no inspector on it)."""

    client: Client
    transcript: Path | None = None


def inspected(command: list[str], transcript: Path) -> list[str]:
    return [sys.executable, "-m", "mcpio", "inspect", "--jsonl", str(transcript), "--", *command]


@asynccontextmanager
async def direct(target: list[str] | str, mode: str, scratch: Path) -> AsyncIterator[Session]:
    """The client straight to the server (a stdio command or an HTTP endpoint)."""
    async with Client(target, mode=mode, stderr=subprocess.DEVNULL) as client:
        yield Session(client)


@asynccontextmanager
async def through_inspect(
    target: list[str] | str, mode: str, scratch: Path
) -> AsyncIterator[Session]:
    """Through `mcpio inspect` (`-- command` for stdio; `--upstream URL --listen` for HTTP)."""
    transcript = scratch / f"inspect-{next(_sessions)}.jsonl"
    if isinstance(target, list):
        command = inspected(target, transcript)
        async with Client(command, mode=mode, stderr=subprocess.DEVNULL) as client:
            yield Session(client, transcript)
        return
    port = free_port()
    relay = [sys.executable, "-m", "mcpio", "inspect", "--jsonl", str(transcript)]
    relay += ["--upstream", target, "--listen", str(port)]
    with running(relay, port):
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            yield Session(client, transcript)


@asynccontextmanager
async def through_proxy(
    target: list[str] | str, mode: str, scratch: Path
) -> AsyncIterator[Session]:
    """Through `proxy_server` in this process (not among `PATHS` yet: issue 50's proxy work)."""
    from mcpio.client import proxy_server

    async with Client(proxy_server(target), mode=mode) as client:
        yield Session(client)


CONNECTORS: dict[str, Callable[..., Any]] = {
    "direct": direct,
    "inspect": through_inspect,
    "proxy": through_proxy,
}


# ------------------------------------------------------------------ the TypeScript SDK client

TS_TOUR = PEERS / "ts_real_tour.mjs"  # its tour (the SDK: tests/peers/package.json)


@asynccontextmanager
async def ts_reach(
    path: str, target: list[str] | str, scratch: Path
) -> AsyncIterator[dict[str, Any]]:
    """How the TypeScript client reaches `target` (a stdio command or an HTTP endpoint) along
    `path`, as its tour's plan says it (`stdio`: a command; `url`), and where the inspector's
    transcript goes (`transcript`, on that path only). The proxy is `proxy_server` served over
    HTTP by this process (no interpreter to start: the tour's time is the servers')."""
    if path == "proxy":
        from mcpio.client import proxy_server

        proxy = proxy_server(target)
        async with serve_app(proxy.http_app()) as served:
            yield {"url": f"{served.url}/mcp"}
    elif path == "direct":
        yield {"stdio": target} if isinstance(target, list) else {"url": target}
    elif isinstance(target, list):
        transcript = scratch / f"inspect-{next(_sessions)}.jsonl"
        yield {"stdio": inspected(target, transcript), "transcript": transcript}
    else:
        transcript, port = scratch / f"inspect-{next(_sessions)}.jsonl", free_port()
        relay = [sys.executable, "-m", "mcpio", "inspect", "--jsonl", str(transcript)]
        with running([*relay, "--upstream", target, "--listen", str(port)], port):
            yield {"url": f"http://127.0.0.1:{port}/mcp", "transcript": transcript}


async def ts_tour(reach: dict[str, Any], server: RealServer, places: Places) -> Tour:
    """`server`'s tour by the TypeScript SDK client, in one node process (`ts_real_tour.mjs`):
    its handshake, listings, calls, reads and prompts, as `tour` makes them."""
    node = shutil.which("node")
    assert node is not None, "node (>= 20) must be on PATH"
    plan = {
        **{k: v for k, v in reach.items() if k != "transcript"},
        "calls": [[tool, places.fill(arguments)] for tool, arguments in server.calls],
        "prompts": [list(prompt) for prompt in server.prompts],
        "volatile": sorted(server.volatile),
        "reads": 8,
    }
    done = await anyio.run_process(
        [node, str(TS_TOUR), json.dumps(plan)], cwd=PEERS, check=False, stderr=subprocess.PIPE
    )
    assert done.returncode == 0, done.stderr.decode()
    told = json.loads(done.stdout.decode().splitlines()[-1])
    return Tour(told["outcomes"], told["failures"])


@contextmanager
def running(command: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`command` (an HTTP server) running until the block ends, accepting on `port` first;
    stopped with SIGINT (then killed)."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ)
    )
    try:
        deadline = time.monotonic() + 20
        while not _accepts(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command} does not accept on port {port}")
            time.sleep(0.05)
        yield process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def listening_hosts(port: int) -> set[str]:
    """The addresses (hex, as /proc/net/tcp* writes them) with a socket listening on `port`."""
    hosts: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            host, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                hosts.add(host)
    return hosts


def findings(transcript: Path) -> list[tuple[str, str, str]]:
    """(rule, direction, path) of each finding of an inspector's transcript."""
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert entries, f"{transcript}: nothing was recorded"
    return [(f["rule"], f["direction"], f["path"]) for e in entries for f in e["findings"]]
