"""The server's dispatch core alone: CPU time per `tools/call` from a request's bytes to its
answer's bytes, without a process, a pipe or an HTTP stack.

A benchmark, not a test: it prints figures (Markdown) and exits 0. Three paths, each timing
``CALLS`` calls of an ``echo(text: str) -> str`` tool (one text block, no structured content, as
the stdio and HTTP benches' peers answer), after ``WARMUP`` calls:

* ``connection, modern``: `Server.connect(transport, modern=True).on_request(raw, peek)` of a
  2026-07-28 request, a new connection per request and the peek made by the caller (as the HTTP
  app does), the answer handed to a transport that keeps it;
* ``connection, legacy``: the same on a 2025-11-25 session (initialized first);
* ``stdio session, modern`` / ``legacy``: the stdio server's whole loop in one process: the
  framing (`LineStream`), the session's read loop, peek, dispatch and the answer's line, one call
  in flight (the next line is read once the answer was written);
* ``http app, modern`` / ``legacy``: the ASGI app (`Server.http_app()`) called in-process with
  one POST's scope and a body that arrives whole, as uvicorn hands it over, the answer's two ASGI
  messages kept: the HTTP layer (headers, Host and Origin, routing, body, guard, answer) around
  the dispatch, without a server stack; legacy on a session opened by `initialize` first;
* ``http app + bearer JWT``: the same with authorization on (`ResourceServerAuth` over a
  `JwtVerifier`, an RS256 token from a JWKS served on loopback by this process), one token for
  every call as a client sends it; its ratio to ``http app`` is printed after the table;
* the stdio process: the stdio bench's servers, ours (``peers/mcpio_server.py``,
  `Server.run_stdio`) and the official SDK's (``peers/sdk_server.py``, mcp 2.3.0), each in its
  own process over real pipes, driven by the same minimal blocking client (frames prepared
  beforehand, one call in flight); the server's CPU time from ``/proc`` (10 ms ticks: ``CALLS``
  of a few thousand make it precise to a few per cent), and the ratio SDK / mcpio.

Figures are the server's CPU time per call (this process's ``time.process_time``, or the server
process's), the median over ``ROUNDS`` rounds (min..max), so that the load of other processes on
the machine counts little. ``--profile`` prints a cProfile of one round of each in-process path
instead.

``--instructions`` counts instead the machine instructions per call of each in-process path,
under valgrind's callgrind (``bench/callgrind.py``: two runs in a child process, their
difference, a figure the machine's load does not move). About a minute per path
(``MCPGEN_BENCH_PATHS``, comma-separated names, picks some). ``--baseline REV[,REV...]``
measures the paths again on the tree of each git revision (exported to a scratch folder, its own ``bench/dispatch.py`` driving
its own ``mcpio``; a path it has not: "—"), and this tree's ratio to it.

    MCPGEN_BENCH_CALLS=5000 MCPGEN_BENCH_ROUNDS=5 .venv/bin/python bench/dispatch.py
    .venv/bin/python bench/dispatch.py --instructions
    MCPGEN_BENCH_PATHS="http app,http app + bearer JWT" \
        .venv/bin/python bench/dispatch.py --instructions --baseline main,7866a05^
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path, and bench/http.py would hide the
# standard library's `http` package, which httpx and PyJWT need.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # (this folder's callgrind alone)
import callgrind  # noqa: E402

del sys.path[0]

from mcpio import Server  # noqa: E402
from mcpio._core.negotiate import peek_any  # noqa: E402
from mcpio.transports._lines import LineStream  # noqa: E402

CALLS = int(os.environ.get("MCPGEN_BENCH_CALLS", "5000"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_ROUNDS", "5"))
WARMUP = 500
ERAS = ("modern", "legacy")
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ECHO = {"name": "echo", "arguments": {"text": "hello"}}


def make_server() -> Server:
    server = Server("bench", "1.0")

    @server.tool(structured_output=False)
    async def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Echo the text back."""
        return text

    return server


def frame(id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode()


def modern_call(id: int) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return frame(id, "tools/call", {**ECHO, "_meta": meta})


def legacy_call(id: int) -> bytes:
    return frame(id, "tools/call", ECHO)


INITIALIZE = frame(
    0,
    "initialize",
    {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1.0"},
    },
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


class Kept:
    """A transport that keeps what the server sends (only `send` is used)."""

    on_frame = None

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    async def receive(self) -> bytes:
        raise AssertionError("not read")

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def aclose(self) -> None:
        pass


def check(answer: bytes, era: str) -> None:
    result = json.loads(answer)["result"]
    if result["content"] != [{"type": "text", "text": "hello"}]:
        raise SystemExit(f"error: unexpected answer {answer[:200]!r}")
    if era == "modern" and result.get("resultType") != "complete":
        raise SystemExit(f"error: no resultType in {answer[:200]!r}")


Round = Callable[[int], Awaitable[None]]


async def connection_path(era: str) -> Round:
    server = make_server()
    transport = Kept()
    sent = transport.sent
    if era == "modern":
        raw = modern_call(1)
        env = peek_any(raw)
        connect = server.connect

        async def run_modern(calls: int) -> None:
            for _ in range(calls):
                await connect(transport, modern=True).on_request(raw, env)
            check(sent[-1], era)
            sent.clear()

        return run_modern
    connection = server.connect(transport)
    await connection.on_request(INITIALIZE, peek_any(INITIALIZE))
    await connection.on_notification(INITIALIZED, peek_any(INITIALIZED))
    raw = legacy_call(1)
    env = peek_any(raw)
    on_request = connection.on_request

    async def run(calls: int) -> None:
        for _ in range(calls):
            await on_request(raw, env)
        check(sent[-1], era)
        sent.clear()

    return run


async def stdio_path(era: str) -> Round:
    """The stdio server's loop over an in-process byte stream: each line is handed over once the
    previous answer has been written (one call in flight)."""
    server = make_server()
    loop = asyncio.get_running_loop()
    state: dict[str, Any] = {"left": 0, "busy": False, "wrote": None, "done": None}
    line = (modern_call(1) if era == "modern" else legacy_call(1)) + b"\n"
    handshake = [INITIALIZE + b"\n", INITIALIZED + b"\n"] if era == "legacy" else []
    last: list[bytes] = []

    async def read() -> bytes:
        if handshake:
            return handshake.pop(0)
        while state["left"] == 0 or state["busy"]:
            state["wrote"] = loop.create_future()
            await state["wrote"]
        state["left"] -= 1
        state["busy"] = True
        return line

    async def write(data: bytes) -> None:
        last[:] = [data]
        if data.startswith(b'{"jsonrpc":"2.0","id":0'):
            return  # the initialize answer
        state["busy"] = False
        if state["left"] == 0:
            state["done"].set_result(None)
        else:
            wake = state["wrote"]
            if wake is not None and not wake.done():
                wake.set_result(None)

    async def close() -> None:
        pass

    transport = LineStream(read, write, close)
    serving = asyncio.ensure_future(server.serve(transport))
    del serving  # runs for the life of the loop

    async def run(calls: int) -> None:
        state["done"] = loop.create_future()
        state["left"] = calls
        wake = state["wrote"]
        if wake is not None and not wake.done():
            wake.set_result(None)
        await state["done"]
        check(last[0], era)

    return run


def http_scope(body: bytes, extra: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5555),
        "server": ("127.0.0.1", 8000),
    }


async def http_path(
    era: str,
    server: Server | None = None,
    *,
    auth: Any = None,
    extra_headers: list[tuple[bytes, bytes]] | None = None,
) -> Round:
    """One POST at a time through the ASGI app, its body whole in the first message."""
    app = (server or make_server()).http_app(auth=auth)
    always = extra_headers or []
    loop = asyncio.get_running_loop()
    answer: list[bytes] = []
    start: list[dict[str, Any]] = []

    async def post(body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
        first = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            if first:
                return first.pop()
            await loop.create_future()  # the client never goes away
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start[:] = [message]
            else:
                answer[:] = [message.get("body", b"")]

        await app(http_scope(body, [*extra, *always]), receive, send)

    if era == "modern":
        raw = modern_call(1)
        extra = [
            (b"mcp-protocol-version", MODERN.encode()),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", b"echo"),
        ]

        async def run_modern(calls: int) -> None:
            for _ in range(calls):
                await post(raw, extra)
            check(answer[0], era)

        return run_modern
    await post(INITIALIZE, [])
    session = dict(start[0]["headers"])[b"mcp-session-id"]
    extra = [(b"mcp-session-id", session), (b"mcp-protocol-version", LEGACY.encode())]
    await post(INITIALIZED, extra)
    counter = iter(range(1, 1 << 62))

    async def run(calls: int) -> None:
        for _ in range(calls):
            await post(legacy_call(next(counter)), extra)  # a session refuses an id in flight
        check(answer[0], era)

    return run


# A child under callgrind signs with the key its parent made (PEM): the search for a new key's
# primes takes a count of instructions that differs from run to run by far more than the calls.
ISSUER_KEY = "MCPGEN_BENCH_ISSUER_KEY"


def issuer_key(pem: str | None = None) -> Any:
    """An RS256 signing key: the PEM's, else a new one."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    if pem is not None:
        return serialization.load_pem_private_key(pem.encode(), None)
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def issuer_pem() -> str:
    """A new signing key as unencrypted PEM (PKCS #8)."""
    from cryptography.hazmat.primitives import serialization

    return (
        issuer_key()
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )


class Issuer:
    """An issuer's JWKS on 127.0.0.1 (served in this event loop), and tokens signed by its one
    RS256 key."""

    def __init__(self) -> None:
        import jwt

        self.key = issuer_key(os.environ.get(ISSUER_KEY))
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        self.jwks = json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig"}]}).encode()
        self.url = ""

    async def start(self) -> None:
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
        answer = head + b"content-length: %d\r\n\r\n" % len(self.jwks) + self.jwks

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"

    def token(self, audience: str) -> str:
        import jwt

        claims = {"iss": self.url, "aud": audience, "sub": "alice", "scope": "mcp:read"}
        claims["exp"] = int(time.time()) + 3600
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "k1"})


# Seconds the verifier may take to fetch the JWKS: under callgrind (`--instructions`), some 50x
# slower, making its httpx client and the GET took 5.6 s on a busy machine, past the default
# 5 s; the initialize then failed (503) and no session id came back.
KEYS_TIMEOUT = 600.0


async def http_auth_path(era: str) -> Round:
    """`http_path` with authorization on: every call carries the same bearer JWT."""
    from mcpio.auth import JwtVerifier, ResourceServerAuth

    issuer = Issuer()
    await issuer.start()
    resource = "http://127.0.0.1:8000/mcp"
    verifier = JwtVerifier(
        issuer=issuer.url, audience=resource, jwks_uri=f"{issuer.url}/jwks", timeout=KEYS_TIMEOUT
    )
    token = issuer.token(resource)
    # The keys fetched before the first request: a legacy session's initialize, which must
    # succeed, then costs no fetch (nor does any warm-up call).
    if await verifier(token) is None:
        raise SystemExit("error: the issuer's token is refused")
    auth = ResourceServerAuth(verifier, resource, [issuer.url])
    bearer = (b"authorization", b"Bearer " + token.encode())
    return await http_path(era, make_server(), auth=auth, extra_headers=[bearer])


PEERS = Path(__file__).resolve().parent / "peers"
SERVERS = {"mcpio": PEERS / "mcpio_server.py", "mcp 2.3.0": PEERS / "sdk_server.py"}


def server_cpu(pid: int) -> float:
    """A process's user + system CPU seconds so far (Linux /proc)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Process:
    """The bench's stdio server in its own process, spoken to with blocking reads and writes."""

    def __init__(self, server: str, era: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVERS[server])], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        if era == "legacy":
            self.ask(INITIALIZE)
            self.stdin.write(INITIALIZED + b"\n")
        self.line = (modern_call(1) if era == "modern" else legacy_call(1)) + b"\n"
        self.era = era

    def ask(self, frame: bytes) -> bytes:
        self.stdin.write(frame if frame.endswith(b"\n") else frame + b"\n")
        self.stdin.flush()
        return self.stdout.readline()

    def run(self, calls: int) -> float:
        """The server's CPU µs per call over `calls` calls."""
        start = server_cpu(self.process.pid)
        answer = b""
        for _ in range(calls):
            answer = self.ask(self.line)
        used = server_cpu(self.process.pid) - start
        check(answer, self.era)
        return used / calls * 1e6

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(timeout=30)


def measure_process(server_name: str, era: str) -> list[float]:
    server = Process(server_name, era)
    try:
        server.run(WARMUP)
        return [server.run(CALLS) for _ in range(ROUNDS)]
    finally:
        server.close()


PATHS: dict[str, Callable[[str], Awaitable[Round]]] = {
    "connection": connection_path,
    "stdio session": stdio_path,
    "http app": http_path,
    "http app + bearer JWT": http_auth_path,
}


async def measure(name: str, era: str, profile: bool) -> list[float]:
    run = await PATHS[name](era)
    await run(WARMUP)
    if profile:
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        await run(CALLS)
        profiler.disable()
        print(f"\n## {name}, {era}: profile of {CALLS} calls\n")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
        return []
    figures = []
    for _ in range(ROUNDS):
        start = time.process_time()
        await run(CALLS)
        figures.append((time.process_time() - start) / CALLS * 1e6)
    return figures


ROOT = Path(__file__).resolve().parent.parent


def instructions(name: str, era: str, script: str = __file__, tree: Path | None = None) -> float:
    """Instructions per call of one in-process path (`callgrind.per_call`). `tree`: the source
    tree whose `mcpio` runs (None: the installed one)."""
    env = {}
    if tree is not None:  # its sources ahead of the installed ones (.pth entries come after)
        env["PYTHONPATH"] = os.pathsep.join(str(tree / part) for part in ("generated", "runtime"))
    return callgrind.per_call(script, ["--run", name, era], f"{name}, {era}", env)


async def run_only(name: str, era: str, calls: int) -> None:
    run = await PATHS[name](era)
    await run(WARMUP)
    await run(calls)


def exported(revision: str, into: Path) -> Path:
    """This repository's tree at `revision` (`git archive`), unpacked into `into` (made)."""
    into.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def baseline_figure(name: str, era: str, tree: Path) -> float | None:
    """The path measured by the baseline tree's own bench (None: it has no such path)."""
    script = tree / "bench" / "dispatch.py"
    if f'"{name}":' not in script.read_text():
        return None
    return instructions(name, era, str(script), tree)


def count_instructions(baselines: list[str]) -> None:
    callgrind.check_valgrind()
    wanted = os.environ.get("MCPGEN_BENCH_PATHS")  # "http app,http app + bearer JWT": those only
    names = [name for name in PATHS if wanted is None or name in wanted.split(",")]
    os.environ.setdefault(ISSUER_KEY, issuer_pem())  # (the children's: one key for both runs)
    print("# Server dispatch core: machine instructions per tools/call (callgrind)\n")
    calls = callgrind.INSTRUCTION_CALLS
    print(f"{calls} and {6 * calls} calls, their difference, ", end="")
    print(f"PYTHONHASHSEED=0, Python {sys.version.split()[0]}\n")
    columns = ["this tree"] + [f"{cell} {rev}" for rev in baselines for cell in ("at", "this /")]
    print(f"| path | era | {' | '.join(columns)} |")
    print(f"|---|---|{'---:|' * len(columns)}")
    figures: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="mcpgen-baseline-") as scratch:
        trees = [exported(rev, Path(scratch, str(n))) for n, rev in enumerate(baselines)]
        for name in names:
            for era in ERAS:
                figures[name, era] = figure = instructions(name, era)
                cells = [f"{figure:,.0f}"]
                for tree in trees:
                    then = baseline_figure(name, era, tree)
                    cells += (
                        ["—", "—"] if then is None else [f"{then:,.0f}", f"{figure / then:.3f}"]
                    )
                print(f"| {name} | {era} | {' | '.join(cells)} |", flush=True)
    if {"http app", "http app + bearer JWT"} <= set(names):
        print(
            "\nWith authorization (a bearer JWT) / without, the HTTP app's instructions: ", end=""
        )
        ratios = [figures["http app + bearer JWT", era] / figures["http app", era] for era in ERAS]
        print(", ".join(f"{era} {ratio:.3f}x" for era, ratio in zip(ERAS, ratios, strict=True)))


async def main() -> None:
    profile = "--profile" in sys.argv
    print("# Server dispatch core: CPU µs per tools/call\n")
    print(f"{CALLS} calls per round, {ROUNDS} rounds, Python {sys.version.split()[0]}, ", end="")
    print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    if not profile:
        print("| path | era | CPU µs per call, median (min..max) |")
        print("|---|---|---:|")
    by_path: dict[tuple[str, str], float] = {}
    for name in PATHS:
        for era in ("modern", "legacy"):
            figures = await measure(name, era, profile)
            if figures:
                by_path[name, era] = median = statistics.median(figures)
                print(f"| {name} | {era} | {median:.1f} ({min(figures):.1f}..{max(figures):.1f}) |")
    if profile:
        return
    print("\nWith authorization (a bearer JWT) / without, the HTTP app's CPU per call: ", end="")
    ratios = [by_path["http app + bearer JWT", era] / by_path["http app", era] for era in ERAS]
    print(", ".join(f"{era} {ratio:.2f}x" for era, ratio in zip(ERAS, ratios, strict=True)))
    print("\n## The stdio server process over real pipes: server CPU µs per call\n")
    print("| era | mcpio | mcp 2.3.0 | SDK / mcpio |")
    print("|---|---:|---:|---:|")
    for era in ("modern", "legacy"):
        medians: list[float] = []
        cells: list[str] = []
        for server in SERVERS:
            figures = measure_process(server, era)
            medians.append(statistics.median(figures))
            cells.append(f"{medians[-1]:.0f} ({min(figures):.0f}..{max(figures):.0f})")
        print(f"| {era} | {' | '.join(cells)} | {medians[1] / medians[0]:.2f}x |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        asyncio.run(run_only(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    elif "--instructions" in sys.argv:
        given = sys.argv.index("--baseline") + 1 if "--baseline" in sys.argv else 0
        count_instructions(sys.argv[given].split(",") if given else [])
    else:
        asyncio.run(main())
