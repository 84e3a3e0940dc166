"""Streamable HTTP ``tools/call`` throughput, latency and server CPU per request under ``wrk``:
mcpio against the floor (a bare ASGI app), the official Python SDK (mcp==2.3.0) and FastMCP, on
both of uvicorn's server stacks; server memory per idle session and per open listen stream; then
one mcpio instance against two behind nginx.

A benchmark, not a test: it prints figures (Markdown) and exits 0 whether or not a goal is met.
It exits non-zero when a tool is missing (wrk, nginx: ``scripts/ensure-services.sh`` installs
them), a server does not start, or an answer is wrong: before timing, every setup must echo a
request's text back (through nginx, from each instance), and a timed run must see no non-2xx
answer.

The servers (``bench/peers/``, each one uvicorn worker with the same settings, ``uvicorn_peer.py``,
and each answering with JSON): ``http_floor_server.py``, a bare ASGI app answering fixed bytes
(what the server stack costs) or, with ``--json``, ``json.loads`` of the call and ``json.dumps``
of its echo (the least a JSON-RPC server does); ``http_mcpio_server.py`` (ours);
``http_sdk_server.py`` (the SDK) and ``http_fastmcp_server.py`` (FastMCP), each in its JSON
response mode, stateless, or with ``--stateful`` its session mode. ``mcpio + bearer JWT`` is
ours with authorization on (``--auth``): every request carries the same RS256 access token,
issued by ``jwt_issuer.py`` (which serves the JWKS), verified once and then taken from the
verifier's cache, which is what a server with auth runs on every request after a client's
first. Each stack is measured in
turn, every server on it in the same run: ``h11`` with asyncio's loop, and ``httptools`` with
uvloop (``--http`` of every peer).

Two requests, each a trivial ``echo(text)`` tool call: a 2026-07-28 (modern, stateless) one, the
same bytes every time: a POST with ``Content-Type``, ``Accept``, ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers and the ``_meta`` envelope in its params; and a legacy
session's (2025-11-25, after one ``initialize``: ``Mcp-Session-Id`` and ``MCP-Protocol-Version``
headers, a new id per request, since a session refuses an id still in flight). ``wrk`` (a Lua
script written to a temporary file) runs ``THREADS`` threads and ``CONNECTIONS`` connections for
``SECONDS`` seconds after a 1 s warm-up; its latency distribution gives p50 and p99 (closed loop:
a connection sends its next request when the answer arrives, so at a fixed number of
connections latency is about connections / rate).

Besides the rates, the server side's CPU time per request is measured (user + system time of the
server processes, nginx's included, over the timed run, from /proc): it is what a request costs,
and it hardly moves when other work on the machine takes CPU from the servers, which rates and
latencies do. The ratios (mcpio / json floor, SDK / mcpio, FastMCP / mcpio, mcpio with a bearer
JWT / without) are of these.

Memory (on httptools): each server in its session mode opens ``MEMORY_COUNT`` idle legacy
sessions (initialize + initialized, kept), and mcpio holds ``MEMORY_COUNT`` modern
``subscriptions/listen`` streams open (each acknowledged); the figure is the growth of the
server's VmRSS (/proc/PID/status) over them, per session or stream, after 20 opened first.

On a machine with two CPUs or more, the server comparison pins wrk to one CPU and the server to
another (wrk needs most of a core to load a Python server; unpinned, they take each other's time
slices and the figures wander more). The scale-out section (httptools) is not pinned: its point
is to let two instances use more than one core, which on a 2-CPU machine they share with wrk and
nginx, so do not expect 2x there.

    MCPGEN_BENCH_SECONDS=10           seconds per timed run (default 5)
    MCPGEN_BENCH_CONNECTIONS=32       wrk connections (default 32; 2 threads)
    MCPGEN_BENCH_HTTP_ROUNDS=1        timed runs per setup, medians reported (default 1)
    MCPGEN_BENCH_MEMORY_COUNT=1000    sessions and listen streams held open (default 1000)
    MCPGEN_BENCH_PIN=0                pin nothing (default: pin when there are 2 CPUs or more)
    MCPGEN_BENCH_HTTP_ONLY=httptools  that stack's server comparison only (no memory, no
                                      scale-out): about a minute, for repeated runs
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path, and its name would hide the
# standard library's `http` package, which httpx needs (imported in `check`, after this).
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

PEERS = Path(__file__).resolve().parent / "peers"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TEXT = "hello from wrk"
SECONDS = float(os.environ.get("MCPGEN_BENCH_SECONDS", "5"))
CONNECTIONS = int(os.environ.get("MCPGEN_BENCH_CONNECTIONS", "32"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_HTTP_ROUNDS", "1"))
MEMORY_COUNT = int(os.environ.get("MCPGEN_BENCH_MEMORY_COUNT", "1000"))
ONLY = os.environ.get("MCPGEN_BENCH_HTTP_ONLY")  # one stack's comparison alone
MEMORY_WARMUP = 20
THREADS = 2
WARMUP_SECONDS = 1.0
STARTUP_SECONDS = 20.0
CPUS = sorted(os.sched_getaffinity(0))
PIN = os.environ.get("MCPGEN_BENCH_PIN", "1") != "0" and len(CPUS) >= 2
ALL_CPUS = set(CPUS)
WRK_CPUS = {CPUS[0]} if PIN else ALL_CPUS
SERVER_CPUS = {CPUS[1]} if PIN else ALL_CPUS
TICKS = os.sysconf("SC_CLK_TCK")
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}


def body(text: str, id: int = 1) -> str:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"_meta": meta, "name": "echo", "arguments": {"text": text}}
    frame = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
    return json.dumps(frame, separators=(",", ":"))


LUA = """\
wrk.method = "POST"
wrk.body = {body}
{headers}
{requests}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK-RESULT %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
"""


# A legacy session refuses a request id still in flight on it: each request gets its own id.
UNIQUE_IDS = """\
local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("base", threads * 1000000000)
end
local sent = 0
request = function()
  sent = sent + 1
  return wrk.format(nil, nil, nil, {before} .. (base + sent) .. {after})
end
"""


def legacy_body(text: str, id: int = 1) -> str:
    params = {"name": "echo", "arguments": {"text": text}}
    frame = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
    return json.dumps(frame, separators=(",", ":"))


def legacy_headers(session: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LEGACY,
        "Mcp-Session-Id": session,
    }


def lua_script(session: str | None = None, extra: dict[str, str] | None = None) -> str:
    """wrk's script: the modern call, the same bytes every time; or, with a legacy `session`,
    its call with a new id each time. `extra`: more headers on every request."""
    sent = {**(HEADERS if session is None else legacy_headers(session)), **(extra or {})}
    headers = "\n".join(f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in sent.items())
    if session is None:
        return LUA.format(body=json.dumps(body(TEXT)), headers=headers, requests="")
    before, after = legacy_body(TEXT, id=1).split('"id":1', 1)
    requests = UNIQUE_IDS.format(before=json.dumps(before + '"id":'), after=json.dumps(after))
    return LUA.format(body=json.dumps(legacy_body(TEXT)), headers=headers, requests=requests)


class BenchError(Exception):
    pass


def tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None:
        raise BenchError(f"{name} is not installed: run scripts/ensure-services.sh")
    return found


def with_children(pid: int) -> list[int]:
    """`pid` and its direct children (nginx's workers)."""
    pids = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                pids.append(int(entry))
    return pids


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes `pids` so far."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / TICKS


def pin(pids: list[int], cpus: set[int]) -> None:
    """Every thread of the processes `pids` onto `cpus` (affinity is per thread on Linux)."""
    for pid in pids:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                os.sched_setaffinity(int(task), cpus)
            except OSError:
                pass


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    out: Path
    port: int = 0

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)

    def tail(self) -> str:
        return "\n".join(self.out.read_text(errors="replace").splitlines()[-15:])


@dataclass(frozen=True)
class Result:
    rate: float  # requests per second
    p50: float  # ms
    p99: float  # ms
    max: float  # ms
    cpu: float  # server-side CPU µs per request
    errors: int  # socket errors (connect, read, write, timeout)


@dataclass(frozen=True)
class Setup:
    name: str
    url: str
    servers: list[Process]  # whose CPU time counts (nginx: its workers too)
    cpus: set[int]  # where the servers run
    wrk_cpus: set[int]
    script: Path | None = None  # wrk's Lua script: None for the modern call's


class Bench:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.processes: list[Process] = []
        self.script = tmp / "tools_call.lua"
        self.script.write_text(lua_script(), encoding="utf-8")
        self.wrk = tool("wrk")
        self.nginx = tool("nginx")

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()

    def peer(self, name: str, script: str, *args: str) -> Process:
        """Start a peer; it prints its port on its first line once it listens."""
        out = self.tmp / f"{name}.out"
        with out.open("wb") as sink:
            popen = subprocess.Popen(
                [sys.executable, str(PEERS / script), *args],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        process = Process(name, popen, out)
        self.processes.append(process)
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            first = out.read_text(errors="replace").split("\n", 1)
            if len(first) == 2 and first[0].strip().isdigit():
                process.port = int(first[0])
                return process
            if popen.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"{name} did not start:\n{process.tail()}")
            time.sleep(0.05)

    def balancer(self, one: Process, two: list[Process]) -> Process:
        """nginx, one worker: `/one/mcp` -> `one` alone, `/mcp` -> round-robin over `two`."""

        def servers(group: list[Process]) -> str:
            return "\n".join(f"        server 127.0.0.1:{p.port};" for p in group)

        tmp = self.tmp
        port = free_port()
        conf = tmp / "nginx.conf"
        conf.write_text(
            f"""\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream one {{
{servers([one])}
        keepalive {CONNECTIONS * 2};
    }}
    upstream two {{
{servers(two)}
        keepalive {CONNECTIONS * 2};
    }}
    server {{
        listen 127.0.0.1:{port} backlog=1024;
        keepalive_requests 1000000;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_buffering off;
        add_header X-Upstream $upstream_addr always;
        location = /mcp {{ proxy_pass http://two; }}
        location = /one/mcp {{ proxy_pass http://one/mcp; }}
    }}
}}
""",
            encoding="utf-8",
        )
        out = tmp / "nginx.out"
        error_log = tmp / "nginx-error.log"
        with out.open("wb") as sink:
            popen = subprocess.Popen(
                [self.nginx, "-p", str(tmp), "-c", str(conf), "-e", str(error_log)],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        process = Process("nginx", popen, out, port)
        self.processes.append(process)
        deadline = time.monotonic() + STARTUP_SECONDS
        while not listening(port):
            if popen.poll() is not None or time.monotonic() > deadline:
                log = error_log.read_text(errors="replace") if error_log.exists() else ""
                raise BenchError(f"nginx did not start:\n{process.tail()}\n{log[-2000:]}")
            time.sleep(0.05)
        return process

    def run(self, setup: Setup, seconds: float) -> Result:
        pids = [pid for server in setup.servers for pid in with_children(server.pid)]
        pin(pids, setup.cpus)
        command = [self.wrk, f"-t{THREADS}", f"-c{CONNECTIONS}", f"-d{seconds:g}s"]
        command += ["--timeout", "5s", "-s", str(setup.script or self.script), setup.url]
        cpus = setup.wrk_cpus
        before = cpu_seconds(pids)
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=seconds + 30,
            preexec_fn=lambda: os.sched_setaffinity(0, cpus),
        )
        used = cpu_seconds(pids) - before
        line = next((x for x in done.stdout.splitlines() if x.startswith("WRK-RESULT ")), None)
        if done.returncode != 0 or line is None:
            raise BenchError(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        requests, duration, p50, p99, top, connect, read, write, status, timeout = (
            int(x) for x in line.split()[1:]
        )
        if status:
            raise BenchError(f"{status} non-2xx answers from {setup.url}:\n{done.stdout}")
        if not requests:
            raise BenchError(f"no answer from {setup.url} in {seconds:g} s:\n{done.stdout}")
        return Result(
            rate=requests / (duration / 1e6),
            p50=p50 / 1e3,
            p99=p99 / 1e3,
            max=top / 1e3,
            cpu=used * 1e6 / requests,
            errors=connect + read + write + timeout,
        )

    def measure(self, setups: list[Setup]) -> dict[str, list[Result]]:
        """Each setup warmed up, then timed ROUNDS times; the order alternates by round."""
        runs: dict[str, list[Result]] = {setup.name: [] for setup in setups}
        for setup in setups:
            self.run(setup, WARMUP_SECONDS)
        for round in range(ROUNDS):
            for setup in setups if round % 2 == 0 else setups[::-1]:
                print(f"timing {setup.name} ({SECONDS:g} s) ...", file=sys.stderr)
                runs[setup.name].append(self.run(setup, SECONDS))
        return runs


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def echoed(response: Any, id: int, text: str) -> bool:
    """Whether `response` is the echo tool's answer to request `id` sending `text`."""
    try:
        answer = response.json()
        return (
            response.status_code == 200
            and answer["id"] == id
            and answer["result"]["content"] == [{"type": "text", "text": text}]
            and answer["result"].get("resultType", "complete") == "complete"
            and not answer["result"].get("isError")
            # the same answer from every peer: one text block, no structured content
            and "structuredContent" not in answer["result"]
        )
    except (ValueError, KeyError, TypeError):
        return False


def check(
    url: str, upstreams: int = 1, fixed: bool = False, extra: dict[str, str] | None = None
) -> None:
    """Requests that must each echo their own text back, from `upstreams` distinct instances
    (a `fixed` answer: the benchmark's own request, answered); `extra`: more headers."""
    import httpx

    seen: set[str] = set()
    with httpx.Client(timeout=10, trust_env=False) as http:
        for n in range(2 * upstreams):
            text, id = (TEXT, 1) if fixed else (f"check {n} {url}", 7 + n)
            response = http.post(
                url, content=body(text, id=id), headers={**HEADERS, **(extra or {})}
            )
            if not echoed(response, id, text):
                raise BenchError(f"{url} answered wrongly: {response.status_code} {response.text}")
            seen.add(response.headers.get("x-upstream", url))
    if len(seen) != upstreams:
        raise BenchError(f"{url}: expected answers from {upstreams} instances, got {sorted(seen)}")


def check_refused(url: str) -> None:
    """A request without a token must be refused 401 (authorization is on)."""
    import httpx

    with httpx.Client(timeout=10, trust_env=False) as http:
        response = http.post(url, content=body(TEXT), headers=HEADERS)
    if response.status_code != 401:
        raise BenchError(f"{url} answered {response.status_code} without a token, not 401")


def open_session(http: Any, url: str) -> str:
    """A legacy (2025-11-25) session: initialize, then notifications/initialized; its id."""
    init = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1.0"},
    }
    frame = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    response = http.post(url, json=frame, headers=headers)
    session = response.headers.get("mcp-session-id")
    if response.status_code != 200 or not session:
        raise BenchError(f"{url}: initialize answered {response.status_code} {response.text}")
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = http.post(url, json=done, headers=legacy_headers(session))
    if response.status_code != 202:
        raise BenchError(f"{url}: initialized answered {response.status_code} {response.text}")
    return str(session)


def session_for(url: str) -> str:
    """A legacy session on `url` whose tools/call echoes, for wrk to call."""
    import httpx

    with httpx.Client(timeout=10, trust_env=False) as http:
        session = open_session(http, url)
        for n in range(2):
            text = f"legacy check {n}"
            response = http.post(
                url, content=legacy_body(text, id=5 + n), headers=legacy_headers(session)
            )
            if not echoed(response, 5 + n, text):
                raise BenchError(f"{url} answered wrongly: {response.status_code} {response.text}")
    return session


def rss(pid: int) -> int:
    """A process's resident set size in bytes (VmRSS of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise BenchError(f"no VmRSS for process {pid}")


def session_bytes(server: Process, count: int) -> float:
    """The server's RSS growth per idle legacy session, over `count` of them (after a few
    opened first, so that what the first session loads is not counted)."""
    import httpx

    url = f"http://127.0.0.1:{server.port}/mcp"
    with httpx.Client(timeout=10, trust_env=False) as http:
        for _ in range(MEMORY_WARMUP):
            open_session(http, url)
        before = rss(server.pid)
        for _ in range(count):
            open_session(http, url)
        return (rss(server.pid) - before) / count


async def open_listen(port: int, id: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A modern subscriptions/listen stream, open once the server acknowledged it."""
    params = {"_meta": json.loads(body(TEXT))["params"]["_meta"]}
    params["notifications"] = {"toolsListChanged": True}
    frame = {"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}
    payload = json.dumps(frame).encode()
    headers = {**HEADERS, "Mcp-Method": "subscriptions/listen"}
    del headers["Mcp-Name"]
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(payload)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
    seen = b""
    while b"notifications/subscriptions/acknowledged" not in seen:
        chunk = await asyncio.wait_for(reader.read(65536), 10)
        if not chunk:
            raise BenchError(f"listen stream {id} ended before its acknowledgement: {seen!r}")
        seen += chunk
    if not seen.startswith(b"HTTP/1.1 200"):
        raise BenchError(f"listen stream {id} answered {seen[:200]!r}")
    return reader, writer


async def listen_bytes(server: Process, count: int) -> float:
    """The server's RSS growth per open listen stream, over `count` of them."""
    streams = [await open_listen(server.port, id) for id in range(MEMORY_WARMUP)]
    before = rss(server.pid)
    streams += [await open_listen(server.port, MEMORY_WARMUP + id) for id in range(count)]
    grown = rss(server.pid) - before
    for _, writer in streams:
        writer.close()
    return grown / count


# ---------------------------------------------------------------------- report


def package(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "missing"


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def med(results: list[Result], field: str) -> float:
    return statistics.median(getattr(r, field) for r in results)


def spread(results: list[Result], field: str, fmt: str) -> str:
    values = [getattr(r, field) for r in results]
    figure = format(statistics.median(values), fmt)
    if len(values) > 1:
        figure += f" ({format(min(values), fmt)}..{format(max(values), fmt)})"
    return figure


def row(name: str, results: list[Result]) -> str:
    errors = sum(r.errors for r in results)
    return (
        f"| {name} | {spread(results, 'rate', ',.0f')} | {med(results, 'p50'):.2f} | "
        f"{med(results, 'p99'):.2f} | {max(r.max for r in results):.1f} | "
        f"{spread(results, 'cpu', ',.0f')} | {errors} |"
    )


SDK = f"mcp {package('mcp')}"
FASTMCP = f"FastMCP {package('fastmcp')}"
FIXED = "bare ASGI, fixed answer"
FLOOR = "bare ASGI, json.loads + json.dumps"
STACKS = {"h11": "h11 + asyncio loop", "httptools": "httptools + uvloop"}
WITH_AUTH = "mcpio + bearer JWT"
MODERN_NAMES = (FIXED, FLOOR, "mcpio", WITH_AUTH, SDK, FASTMCP)
AUDIENCE = "http://127.0.0.1/bench/mcp"  # (the one `http_mcpio_server.py --auth` requires)
LEGACY_NAMES = ("mcpio", SDK, FASTMCP)
HEADER = "| {} | req/s | p50 ms | p99 ms | max ms | CPU µs/req | socket errors |"
RULE = "|---|---:|---:|---:|---:|---:|---:|"


def legacy_name(name: str) -> str:
    return f"{name}, legacy session"


def ratio_table(rows: list[tuple[str, float, str]]) -> None:
    print("| ratio | value | goal |")
    print("|---|---:|---|")
    for name, ratio, goal in rows:
        print(f"| {name} | {ratio:.2f}x | {goal} |")
    print()


def goal(ratio: float, at_least: float | None = None, at_most: float | None = None) -> str:
    if at_least is not None:
        return f">= {at_least:g}x: {'met' if ratio >= at_least else 'missed'}"
    if at_most is not None:
        return f"<= {at_most:g}x: {'met' if ratio <= at_most else 'missed'}"
    return "none"


def stack_report(stack: str, runs: dict[str, list[Result]]) -> None:
    print(f"## {STACKS[stack]}: modern tools/call (stateless), one uvicorn worker each\n")
    print(HEADER.format("server"))
    print(RULE)
    for name in MODERN_NAMES:
        print(row(name, runs[name]))
    print()
    cpu = {name: med(runs[name], "cpu") for name in runs}
    ratio_table(
        [
            (
                "CPU per request, mcpio / json floor",
                cpu["mcpio"] / cpu[FLOOR],
                goal(cpu["mcpio"] / cpu[FLOOR], at_most=2.0) if stack == "httptools" else "none",
            ),
            ("CPU per request, mcpio / fixed-answer floor", cpu["mcpio"] / cpu[FIXED], "none"),
            (
                "CPU per request, SDK / mcpio",
                cpu[SDK] / cpu["mcpio"],
                goal(cpu[SDK] / cpu["mcpio"], 2.5),
            ),
            ("CPU per request, FastMCP / mcpio", cpu[FASTMCP] / cpu["mcpio"], "none"),
            (
                "CPU per request, mcpio with a bearer JWT / without",
                cpu[WITH_AUTH] / cpu["mcpio"],
                (
                    goal(cpu[WITH_AUTH] / cpu["mcpio"], at_most=1.2)
                    if stack == "httptools"
                    else "none"
                ),
            ),
            (
                "requests/s, mcpio / SDK",
                med(runs["mcpio"], "rate") / med(runs[SDK], "rate"),
                "none",
            ),
        ]
    )
    print(f"## {STACKS[stack]}: legacy session tools/call ({LEGACY}, stateful modes)\n")
    print(HEADER.format("server"))
    print(RULE)
    for name in LEGACY_NAMES:
        print(row(name, runs[legacy_name(name)]))
    print()
    ours = cpu[legacy_name("mcpio")]
    sdk, fastmcp = cpu[legacy_name(SDK)], cpu[legacy_name(FASTMCP)]
    ratio_table(
        [
            ("CPU per request, SDK / mcpio", sdk / ours, goal(sdk / ours, 2.0)),
            ("CPU per request, FastMCP / mcpio", fastmcp / ours, "none"),
        ]
    )


def report(
    stacks: dict[str, dict[str, list[Result]]],
    memory: list[tuple[str, str, float]],
    scale: dict[str, list[Result]],
    before: str,
) -> None:
    nginx = subprocess.run([tool("nginx"), "-v"], capture_output=True, text=True).stderr
    wrk = subprocess.run([tool("wrk"), "-v"], capture_output=True, text=True).stdout
    print(
        "# Streamable HTTP tools/call under wrk: mcpio vs the bare ASGI floor, the SDK, FastMCP\n"
    )
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"uvicorn {package('uvicorn')} (h11 {package('h11')}, httptools {package('httptools')}, "
        f"uvloop {package('uvloop')}), starlette {package('starlette')}, {SDK}, {FASTMCP}, "
        f"{nginx.strip().removeprefix('nginx version: ')}, {wrk.split(' Copyright')[0].strip()}; "
        f"{platform.system()} {platform.machine()}, {len(CPUS)} CPUs.  "
    )
    print(f"Load average (1, 5, 15 min): {before} before, {load()} after.  ")
    print(
        f"wrk: {THREADS} threads, {CONNECTIONS} connections, {SECONDS:g} s per run after a "
        f"{WARMUP_SECONDS:g} s warm-up, {ROUNDS} run(s) per setup (median, min..max); the "
        "request: one modern (2026-07-28) tools/call of echo, or a legacy session's "
        "(2025-11-25, a new id each time), answered with JSON.  "
    )
    pinned = (
        f"wrk on CPU {min(WRK_CPUS)}, the server on CPU {min(SERVER_CPUS)}"
        if PIN
        else "nothing pinned"
    )
    print(
        f"Server comparison: {pinned}; scale-out: nothing pinned. CPU µs/req: the server "
        "processes' user + system time per request (nginx's included). Compare CPU µs/req "
        "and the ratios of one run: rates move with the machine's load.\n"
    )
    for stack, runs in stacks.items():
        stack_report(stack, runs)

    print(f"## Memory ({STACKS['httptools']}): server RSS growth over {MEMORY_COUNT:,} held open\n")
    print(f"After {MEMORY_WARMUP} opened first and kept; VmRSS from /proc/PID/status.\n")
    print("| server | what | bytes each |")
    print("|---|---|---:|")
    for name, what, size in memory:
        print(f"| {name} | {what} | {size:,.0f} |")
    print()

    print(
        f"## Scale-out ({STACKS['httptools']}): mcpio instances behind nginx "
        "(round-robin, keep-alive upstreams)\n"
    )
    print(HEADER.format("setup") + " req/s vs 1 instance direct |")
    print(RULE + "---:|")
    base = med(next(iter(scale.values())), "rate")
    for name, results in scale.items():
        print(row(name, results) + f" {med(results, 'rate') / base:.2f}x |")
    print()


def url_of(process: Process) -> str:
    return f"http://127.0.0.1:{process.port}/mcp"


def second_line(process: Process) -> str:
    """A peer's second stdout line (`jwt_issuer.py`'s token), once written."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        lines = process.out.read_text(errors="replace").split("\n")
        if len(lines) > 2:
            return lines[1].strip()
        if time.monotonic() > deadline:
            raise BenchError(f"{process.name} wrote no second line:\n{process.tail()}")
        time.sleep(0.05)


def stack_runs(bench: Bench, stack: str) -> dict[str, list[Result]]:
    """Every server on `stack` (each its own process), checked, then timed in one round."""
    http = ("--http", stack)
    fixed = bench.peer(f"fixed-{stack}", "http_floor_server.py", *http)
    floor = bench.peer(f"floor-{stack}", "http_floor_server.py", "--json", *http)
    mcpio = bench.peer(f"mcpio-{stack}", "http_mcpio_server.py", *http)
    issuer = bench.peer(f"issuer-{stack}", "jwt_issuer.py", "--audience", AUDIENCE)
    issuer_url = f"http://127.0.0.1:{issuer.port}"
    with_auth = bench.peer(
        f"mcpio-auth-{stack}", "http_mcpio_server.py", *http, "--auth", issuer_url
    )
    sdk = bench.peer(f"sdk-{stack}", "http_sdk_server.py", *http)
    fastmcp = bench.peer(f"fastmcp-{stack}", "http_fastmcp_server.py", *http)
    sdk_s = bench.peer(f"sdk-stateful-{stack}", "http_sdk_server.py", "--stateful", *http)
    fastmcp_s = bench.peer(
        f"fastmcp-stateful-{stack}", "http_fastmcp_server.py", "--stateful", *http
    )
    check(url_of(fixed), fixed=True)
    modern = {FIXED: fixed, FLOOR: floor, "mcpio": mcpio, SDK: sdk, FASTMCP: fastmcp}
    for process in modern.values():
        if process is not fixed:
            check(url_of(process))
    setups = [Setup(name, url_of(p), [p], SERVER_CPUS, WRK_CPUS) for name, p in modern.items()]
    bearer = {"Authorization": f"Bearer {second_line(issuer)}"}
    check(url_of(with_auth), extra=bearer)
    check_refused(url_of(with_auth))
    script = bench.tmp / f"auth-{stack}.lua"
    script.write_text(lua_script(extra=bearer), encoding="utf-8")
    setups.append(Setup(WITH_AUTH, url_of(with_auth), [with_auth], SERVER_CPUS, WRK_CPUS, script))
    for name, process in (("mcpio", mcpio), (SDK, sdk_s), (FASTMCP, fastmcp_s)):
        script = bench.tmp / f"legacy-{process.name}.lua"
        script.write_text(lua_script(session_for(url_of(process))), encoding="utf-8")
        setups.append(
            Setup(legacy_name(name), url_of(process), [process], SERVER_CPUS, WRK_CPUS, script)
        )
    runs = bench.measure(setups)
    for process in (fixed, floor, mcpio, with_auth, issuer, sdk, fastmcp, sdk_s, fastmcp_s):
        process.stop()
    return runs


def memory_runs(bench: Bench) -> list[tuple[str, str, float]]:
    """RSS per idle legacy session (mcpio, the SDK, FastMCP) and per open listen stream."""
    capacity = ("--http", "httptools", "--capacity", str(MEMORY_COUNT + 2 * MEMORY_WARMUP))
    sizes: list[tuple[str, str, float]] = []
    peers = (("mcpio", "http_mcpio_server.py"), (SDK, "http_sdk_server.py"))
    for name, script in (*peers, (FASTMCP, "http_fastmcp_server.py")):
        print(f"opening {MEMORY_COUNT} legacy sessions on {name} ...", file=sys.stderr)
        server = bench.peer(f"memory-{script}", script, "--stateful", *capacity)
        sizes.append((name, "idle legacy session", session_bytes(server, MEMORY_COUNT)))
        server.stop()
    print(f"opening {MEMORY_COUNT} listen streams on mcpio ...", file=sys.stderr)
    server = bench.peer("memory-listen", "http_mcpio_server.py", *capacity)
    sizes.append(
        (
            "mcpio",
            "open subscriptions/listen stream",
            asyncio.run(listen_bytes(server, MEMORY_COUNT)),
        )
    )
    server.stop()
    return sizes


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-http-") as tmp:
        try:
            bench = Bench(Path(tmp))
        except BenchError as exc:
            print(f"bench/http.py: {exc}", file=sys.stderr)
            return 1
        before = load()
        if ONLY is not None:
            return only_stack(bench, ONLY, before)
        try:
            stacks = {stack: stack_runs(bench, stack) for stack in STACKS}
            memory = memory_runs(bench)
            fast = ("--http", "httptools")
            mcpio = bench.peer("mcpio", "http_mcpio_server.py", *fast)
            second = bench.peer("mcpio-2", "http_mcpio_server.py", *fast)
            nginx = bench.balancer(mcpio, [mcpio, second])
            base = f"http://127.0.0.1:{nginx.port}"
            check(url_of(mcpio))
            check(f"{base}/one/mcp")
            check(f"{base}/mcp", upstreams=2)
            scale = bench.measure(
                [
                    Setup("1 instance, direct", url_of(mcpio), [mcpio], ALL_CPUS, ALL_CPUS),
                    Setup(
                        "1 instance via nginx",
                        f"{base}/one/mcp",
                        [mcpio, nginx],
                        ALL_CPUS,
                        ALL_CPUS,
                    ),
                    Setup(
                        "2 instances via nginx",
                        f"{base}/mcp",
                        [mcpio, second, nginx],
                        ALL_CPUS,
                        ALL_CPUS,
                    ),
                ]
            )
        except BenchError as exc:
            print(f"bench/http.py: {exc}", file=sys.stderr)
            return 1
        finally:
            bench.stop()
        report(stacks, memory, scale, before)
    return 0


def only_stack(bench: Bench, stack: str, before: str) -> int:
    """`MCPGEN_BENCH_HTTP_ONLY`: one stack's server comparison, its report alone."""
    if stack not in STACKS:
        print(f"bench/http.py: no stack {stack!r} (one of {', '.join(STACKS)})", file=sys.stderr)
        return 1
    try:
        runs = stack_runs(bench, stack)
    except BenchError as exc:
        print(f"bench/http.py: {exc}", file=sys.stderr)
        return 1
    finally:
        bench.stop()
    print(f"load {before} before, {load()} after; {SECONDS:g} s, {ROUNDS} round(s)\n")
    stack_report(stack, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
