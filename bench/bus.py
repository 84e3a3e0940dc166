"""Change notifications to many listeners: one instance (the in-process `LocalBus`) against three
instances behind nginx sharing a Redis notification bus (`RedisBus`).

A benchmark, not a test: it prints figures (Markdown) and exits 0. It exits non-zero when a tool
is missing (nginx, redis-server: ``scripts/ensure-services.sh`` installs them), a process does
not start, or a delivery is wrong: every listener must receive every notification exactly once.

The servers are examples/everything_server.py over HTTP (one uvicorn worker each, admitting
``LISTENERS`` listen streams from one client: ``bench/peers/bus_server.py``); in the Redis
setup they share ``MCPIO_STATE_KEY`` and ``--redis``, and nginx (one worker, round-robin) is in
front of them. ``LISTENERS`` modern ``subscriptions/listen`` streams (``toolsListChanged``) are
opened through the front (so spread over the instances); the trigger is the
``test_trigger_tool_change`` tool, called through the front too (so mostly on another instance
than a given listener's). The listeners and the caller are this process (asyncio, httpx).

- latency: ``TRIGGERS`` calls one after another, each once every listener has the previous
  notice; a notice's latency runs from just before the call is sent to its receipt by a
  listener (p50, p99, max over all listeners and triggers; "other instance": the listeners
  not on the instance that served the call). It includes this process reading 200 streams.
- throughput: ``BURST`` calls back to back (each sent when the previous one is answered),
  notifications delivered per second from the first call's send to the last receipt.

    MCPGEN_BENCH_LISTENERS=200   listen streams (default 200)
    MCPGEN_BENCH_TRIGGERS=30     latency triggers (default 30)
    MCPGEN_BENCH_BURST=50        throughput triggers (default 50)
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# Run as a script, this file's folder comes first on sys.path, and bench/http.py would hide the
# standard library's `http` package, which httpx needs.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import anyio  # noqa: E402
import httpx  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# examples/everything_server.py, admitting LISTENERS streams from one client
BUS_SERVER = ROOT / "bench" / "peers" / "bus_server.py"
MODERN = "2026-07-28"
LISTENERS = int(os.environ.get("MCPGEN_BENCH_LISTENERS", "200"))
TRIGGERS = int(os.environ.get("MCPGEN_BENCH_TRIGGERS", "30"))
BURST = int(os.environ.get("MCPGEN_BENCH_BURST", "50"))
INSTANCES = 3
STARTUP_SECONDS = 20.0
STEP_SECONDS = 60.0
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
CHANGED = b"notifications/tools/list_changed"

NGINX_CONF = """\
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
    upstream mcp {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_read_timeout 1h;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


class BenchError(Exception):
    pass


def tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")
    if found is None:
        raise BenchError(f"{name} is not installed: run scripts/ensure-services.sh")
    return found


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


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    out: Path
    port: int

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


@dataclass
class Processes:
    tmp: Path
    started: list[Process] = field(default_factory=list)

    def start(self, name: str, argv: list[str], port: int, env: dict[str, str] | None = None):
        out = self.tmp / f"{name}.log"
        with out.open("wb") as sink:
            popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, env=env
            )
        process = Process(name, popen, out, port)
        self.started.append(process)
        deadline = time.monotonic() + STARTUP_SECONDS
        while not listening(port):
            if popen.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"{name} did not start:\n{process.tail()}")
            time.sleep(0.05)
        return process

    def instance(self, name: str, extra: list[str], key: str) -> Process:
        port = free_port()
        argv = [sys.executable, str(BUS_SERVER), str(LISTENERS), "http", "--port", str(port)]
        argv += extra
        return self.start(name, argv, port, {**os.environ, "MCPIO_STATE_KEY": key})

    def redis(self) -> Process:
        port = free_port()
        data = self.tmp / "redis"
        data.mkdir()
        argv = [tool("redis-server"), "--bind", "127.0.0.1", "--port", str(port)]
        argv += ["--dir", str(data), "--save", "", "--appendonly", "no"]
        return self.start("redis", argv, port)

    def nginx(self, upstreams: list[Process]) -> Process:
        port = free_port()
        servers = "\n".join(f"        server 127.0.0.1:{p.port};" for p in upstreams)
        conf = self.tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=self.tmp, port=port, servers=servers))
        argv = [tool("nginx"), "-p", str(self.tmp), "-c", str(conf)]
        argv += ["-e", str(self.tmp / "nginx-error.log")]
        return self.start("nginx", argv, port)

    def stop(self) -> None:
        for process in reversed(self.started):
            process.stop()


def subscribed(instance: Process) -> None:
    """Waits until the instance accepts a listen (it has subscribed to Redis)."""
    body, headers = frame(0, "subscriptions/listen", notifications={"toolsListChanged": True})
    deadline = time.monotonic() + STARTUP_SECONDS
    with httpx.Client(timeout=5, trust_env=False) as http:
        while True:
            url = f"http://127.0.0.1:{instance.port}/mcp"
            with http.stream("POST", url, content=body, headers=headers) as response:
                if response.headers.get("content-type") == "text/event-stream":
                    return
            if time.monotonic() > deadline:
                raise BenchError(f"{instance.name} did not subscribe:\n{instance.tail()}")
            time.sleep(0.05)


def frame(id: int, method: str, **params: Any) -> tuple[str, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": ENVELOPE, **params}}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    return json.dumps(body), headers


@dataclass
class Listener:
    upstream: str = ""
    receipts: list[float] = field(default_factory=list)
    ready: bool = False


@dataclass
class Result:
    name: str
    latencies: list[float]  # ms, all
    elsewhere: list[float]  # ms, listeners on another instance than the call's
    per_second: float
    instances: int
    server_cpu: float = 0.0  # CPU seconds of the server side (instances, nginx, Redis)
    listener_cpu: float = 0.0  # CPU seconds of this process (listeners and caller)


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(processes: list[Process]) -> float:
    """User + system time of the processes (nginx: its workers too)."""
    total = 0
    for process in processes:
        pids = [process.popen.pid]
        children = Path(f"/proc/{process.popen.pid}/task/{process.popen.pid}/children")
        if children.exists():
            pids += [int(pid) for pid in children.read_text().split()]
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


class Run:
    """The listeners of one setup, and its triggers."""

    def __init__(self, url: str, servers: list[Process]) -> None:
        self.servers = servers
        self.url = url
        self.listeners = [Listener() for _ in range(LISTENERS)]
        self.received = 0
        self.wake = anyio.Event()
        self.failure: str | None = None

    async def listen(self, i: int, opened: anyio.Event) -> None:
        """One listen stream over a plain socket, its bytes scanned for the notice (httpx would
        cost this process several times what the servers spend on a notification)."""
        me = self.listeners[i]
        body, headers = frame(i, "subscriptions/listen", notifications={"toolsListChanged": True})
        url = urlsplit(self.url)
        head = f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head += f"content-length: {len(body)}\r\n\r\n"
        async with await anyio.connect_tcp(url.hostname or "", url.port or 80) as sock:
            await sock.send(head.encode() + body.encode())
            data = b""
            while b"\r\n\r\n" not in data:
                data += await sock.receive()
            response, data = data.split(b"\r\n\r\n", 1)
            for line in response.decode().split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.lower() == "x-upstream":
                    me.upstream = value.strip()
            me.upstream = me.upstream or self.url
            keep = len(CHANGED) - 1
            while True:
                if not me.ready and b"subscriptions/acknowledged" in data:
                    me.ready = True
                    if all(listener.ready for listener in self.listeners):
                        opened.set()
                found = data.count(CHANGED)
                if found:
                    now = time.perf_counter()
                    me.receipts += [now] * found
                    self.received += found
                    self.wake.set()
                    data = data[data.rindex(CHANGED) + len(CHANGED) :]
                if b'"error"' in data:
                    self.failure = f"listener {i} ended: {data[-300:]!r}"
                    self.wake.set()
                    opened.set()
                    return
                data = data[-keep:] + await sock.receive()

    async def until(self, count: int) -> None:
        with anyio.fail_after(STEP_SECONDS):
            while self.received < count and self.failure is None:
                self.wake = anyio.Event()
                await self.wake.wait()
        if self.failure is not None:
            raise BenchError(self.failure)

    async def trigger(self, http: httpx.AsyncClient, id: int) -> tuple[float, str]:
        body, headers = frame(id, "tools/call", name="test_trigger_tool_change")
        sent = time.perf_counter()
        response = await http.post(self.url, content=body, headers=headers)
        if response.status_code != 200 or "error" in response.json():
            raise BenchError(f"trigger {id}: {response.status_code} {response.text}")
        return sent, response.headers.get("x-upstream", self.url)

    async def measure(self, name: str, instances: int) -> Result:
        limits = httpx.Limits(max_connections=8, max_keepalive_connections=8)
        async with httpx.AsyncClient(timeout=STEP_SECONDS, limits=limits, trust_env=False) as http:
            async with anyio.create_task_group() as tasks:
                opened = anyio.Event()
                for i in range(LISTENERS):
                    tasks.start_soon(self.listen, i, opened)
                with anyio.fail_after(STEP_SECONDS):
                    await opened.wait()
                await self.until(0)
                homes = {listener.upstream for listener in self.listeners}
                if len(homes) != instances:
                    raise BenchError(f"{name}: listeners on {sorted(homes)}")
                await self.trigger(http, 1)  # warm-up
                await self.until(LISTENERS)
                server_cpu, listener_cpu = cpu_seconds(self.servers), time.process_time()
                sends: list[tuple[float, str]] = []
                for n in range(TRIGGERS):
                    sends.append(await self.trigger(http, 10 + n))
                    await self.until(LISTENERS * (n + 2))
                start = time.perf_counter()
                for n in range(BURST):
                    await self.trigger(http, 1000 + n)
                await self.until(LISTENERS * (1 + TRIGGERS + BURST))
                elapsed = max(listener.receipts[-1] for listener in self.listeners) - start
                server_cpu = cpu_seconds(self.servers) - server_cpu
                listener_cpu = time.process_time() - listener_cpu
                await anyio.sleep(0.2)  # anything extra would show now
                tasks.cancel_scope.cancel()
        expected = 1 + TRIGGERS + BURST
        counts = {len(listener.receipts) for listener in self.listeners}
        if counts != {expected}:
            raise BenchError(f"{name}: a listener got {sorted(counts)} notices, not {expected}")
        latencies: list[float] = []
        elsewhere: list[float] = []
        for listener in self.listeners:
            for (sent, upstream), got in zip(sends, listener.receipts[1:], strict=False):
                latencies.append((got - sent) * 1000)
                if upstream != listener.upstream:
                    elsewhere.append((got - sent) * 1000)
        rate = LISTENERS * BURST / elapsed
        return Result(name, latencies, elsewhere, rate, instances, server_cpu, listener_cpu)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(results: list[Result]) -> None:
    nginx = subprocess.run([tool("nginx"), "-v"], capture_output=True, text=True).stderr
    redis = subprocess.run([tool("redis-server"), "--version"], capture_output=True, text=True)
    print("# Change notifications to many listeners: in process vs Redis across instances\n")
    print(
        f"Python {platform.python_version()}, uvicorn {version('uvicorn')}, redis-py "
        f"{version('redis')}, {redis.stdout.split(' sha=')[0].strip()}, "
        f"{nginx.strip().removeprefix('nginx version: ')}; {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} CPUs (servers, nginx, Redis and the "
        "listeners share them).  "
    )
    print(
        f"{LISTENERS} listen streams (toolsListChanged) opened through the front; latency: "
        f"{TRIGGERS} tools/call triggers one at a time, from the call's send to each "
        f"listener's receipt; throughput: {BURST} triggers back to back. CPU: user + "
        "system time over both phases per notification delivered, of the server side "
        "(instances, nginx, Redis) and of this process (the listeners and the caller).\n"
    )
    print(
        "| setup | p50 ms | p99 ms | max ms | other instance p50 / p99 ms | "
        "delivered notifications/s | CPU µs/notification: servers / listeners |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    delivered = LISTENERS * (TRIGGERS + BURST)
    for r in results:
        other = (
            f"{pct(r.elsewhere, 0.5):.1f} / {pct(r.elsewhere, 0.99):.1f}"
            if r.elsewhere
            else "n/a (one instance)"
        )
        print(
            f"| {r.name} | {pct(r.latencies, 0.5):.1f} | {pct(r.latencies, 0.99):.1f} | "
            f"{max(r.latencies):.1f} | {other} | {r.per_second:,.0f} | "
            f"{r.server_cpu / delivered * 1e6:.0f} / {r.listener_cpu / delivered * 1e6:.0f} |"
        )
    print()


def main() -> int:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-bus-") as tmp:
        key = secrets.token_hex(32)
        try:
            local = Processes(Path(tmp) / "local")
            local.tmp.mkdir()
            try:
                one = local.instance("instance", [], key)
                print("timing one instance (LocalBus) ...", file=sys.stderr)
                run = Run(f"http://127.0.0.1:{one.port}/mcp", [one])
                results.append(anyio.run(run.measure, "1 instance, in process (LocalBus)", 1))
            finally:
                local.stop()
            shared = Processes(Path(tmp) / "redis")
            shared.tmp.mkdir()
            try:
                redis = shared.redis()
                url = f"redis://127.0.0.1:{redis.port}/0"
                instances = [
                    shared.instance(f"instance-{n}", ["--redis", url], key)
                    for n in range(INSTANCES)
                ]
                nginx = shared.nginx(instances)
                for instance in instances:
                    subscribed(instance)
                print(f"timing {INSTANCES} instances (RedisBus) ...", file=sys.stderr)
                run = Run(f"http://127.0.0.1:{nginx.port}/mcp", [redis, *instances, nginx])
                name = f"{INSTANCES} instances behind nginx, Redis (RedisBus)"
                results.append(anyio.run(run.measure, name, INSTANCES))
            finally:
                shared.stop()
        except BenchError as exc:
            print(f"bench/bus.py: {exc}", file=sys.stderr)
            return 1
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
