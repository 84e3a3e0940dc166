"""Streamable HTTP ``tools/call`` throughput and latency under ``wrk``: mcpio against the official
Python SDK (mcp==2.3.0), then one mcpio instance against two behind nginx.

A benchmark, not a test: it prints figures (Markdown) and exits 0 whether or not the goal is met.
It exits non-zero when a tool is missing (wrk, nginx: ``scripts/ensure-services.sh`` installs
them), a server does not start, or an answer is wrong: before timing, every setup must echo a
request's text back (through nginx, from each instance), and a timed run must see no non-2xx
answer.

The request is a 2026-07-28 (modern, stateless) ``tools/call`` of a trivial ``echo(text)`` tool,
the same bytes every time: a POST with ``Content-Type``, ``Accept``, ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers and the ``_meta`` envelope in its params. The servers:
``bench/peers/http_mcpio_server.py`` (ours) and ``bench/peers/http_sdk_server.py`` (the SDK in
JSON-response, stateless mode), each one uvicorn worker with the same settings; both answer with
JSON. ``wrk`` (one Lua script for all, written to a temporary file) runs ``THREADS`` threads and
``CONNECTIONS`` connections for ``SECONDS`` seconds after a 1 s warm-up; its latency distribution
gives p50 and p99 (closed loop: a connection sends its next request when the answer arrives, so
at a fixed number of connections latency is about connections / rate).

Besides the rates, the server side's CPU time per request is measured (user + system time of the
server processes, nginx's included, over the timed run, from /proc): it is what a request costs,
and it hardly moves when other work on the machine takes CPU from the servers, which rates and
latencies do.

On a machine with two CPUs or more, the server comparison pins wrk to one CPU and the server to
another (wrk needs most of a core to load a Python server; unpinned, they take each other's time
slices and the figures wander more). The scale-out section is not pinned: its point is to let
two instances use more than one core, which on a 2-CPU machine they share with wrk and nginx, so
do not expect 2x there.

    MCPGEN_BENCH_SECONDS=10       seconds per timed run (default 10)
    MCPGEN_BENCH_CONNECTIONS=32   wrk connections (default 32; 2 threads)
    MCPGEN_BENCH_HTTP_ROUNDS=1    timed runs per setup, medians reported (default 1)
    MCPGEN_BENCH_PIN=0            pin nothing (default: pin when there are 2 CPUs or more)
"""

from __future__ import annotations

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

# Run as a script, this file's folder comes first on sys.path, and its name would hide the
# standard library's `http` package, which httpx needs (imported in `check`, after this).
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

PEERS = Path(__file__).resolve().parent / "peers"
MODERN = "2026-07-28"
TEXT = "hello from wrk"
SECONDS = float(os.environ.get("MCPGEN_BENCH_SECONDS", "10"))
CONNECTIONS = int(os.environ.get("MCPGEN_BENCH_CONNECTIONS", "32"))
ROUNDS = int(os.environ.get("MCPGEN_BENCH_HTTP_ROUNDS", "1"))
THREADS = 2
WARMUP_SECONDS = 1.0
GOAL = 2.0  # ours/SDK, at least
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
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK-RESULT %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
"""


def lua_script() -> str:
    headers = "\n".join(
        f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in HEADERS.items()
    )
    return LUA.format(body=json.dumps(body(TEXT)), headers=headers)


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

    def peer(self, name: str, script: str) -> Process:
        """Start a peer; it prints its port on its first line once it listens."""
        out = self.tmp / f"{name}.out"
        with out.open("wb") as sink:
            popen = subprocess.Popen(
                [sys.executable, str(PEERS / script)],
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
        command += ["--timeout", "5s", "-s", str(self.script), setup.url]
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


def check(url: str, upstreams: int = 1) -> None:
    """Requests that must each echo their own text back, from `upstreams` distinct instances."""
    import httpx

    seen: set[str] = set()
    with httpx.Client(timeout=10, trust_env=False) as http:
        for n in range(2 * upstreams):
            text = f"check {n} {url}"
            response = http.post(url, content=body(text, id=7 + n), headers=HEADERS)
            try:
                answer = response.json()
                ok = (
                    response.status_code == 200
                    and answer["id"] == 7 + n
                    and answer["result"]["content"] == [{"type": "text", "text": text}]
                    and answer["result"].get("resultType", "complete") == "complete"
                    and not answer["result"].get("isError")
                )
            except (ValueError, KeyError, TypeError):
                ok = False
            if not ok:
                raise BenchError(f"{url} answered wrongly: {response.status_code} {response.text}")
            seen.add(response.headers.get("x-upstream", url))
    if len(seen) != upstreams:
        raise BenchError(f"{url}: expected answers from {upstreams} instances, got {sorted(seen)}")


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


def verdict(ratio: float) -> str:
    return "met" if ratio >= GOAL else "missed"


def report(servers: dict[str, list[Result]], scale: dict[str, list[Result]], before: str) -> None:
    sdk = f"mcp {package('mcp')}"
    nginx = subprocess.run([tool("nginx"), "-v"], capture_output=True, text=True).stderr
    wrk = subprocess.run([tool("wrk"), "-v"], capture_output=True, text=True).stdout
    print("# Streamable HTTP tools/call under wrk: mcpio vs the official Python SDK\n")
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"uvicorn {package('uvicorn')} (h11 {package('h11')}, httptools {package('httptools')}, "
        f"uvloop {package('uvloop')}), starlette {package('starlette')}, {sdk}, "
        f"{nginx.strip().removeprefix('nginx version: ')}, {wrk.split(' Copyright')[0].strip()}; "
        f"{platform.system()} {platform.machine()}, {len(CPUS)} CPUs.  "
    )
    print(f"Load average (1, 5, 15 min): {before} before, {load()} after.  ")
    print(
        f"wrk: {THREADS} threads, {CONNECTIONS} connections, {SECONDS:g} s per run after a "
        f"{WARMUP_SECONDS:g} s warm-up, {ROUNDS} run(s) per setup (median, min..max); the "
        "request: one modern (2026-07-28) tools/call of echo, answered with JSON.  "
    )
    pinned = (
        f"wrk on CPU {min(WRK_CPUS)}, the server on CPU {min(SERVER_CPUS)}"
        if PIN
        else "nothing pinned"
    )
    print(
        f"Server comparison: {pinned}; scale-out: nothing pinned. CPU µs/req: the server "
        "processes' user + system time per request (nginx's included).\n"
    )

    header = "| {} | req/s | p50 ms | p99 ms | max ms | CPU µs/req | socket errors |"
    print("## Server: mcpio vs the SDK (one uvicorn worker each)\n")
    print(header.format("server"))
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, results in servers.items():
        print(row(name, results))
    print()
    ours, theirs = servers["mcpio"], servers[sdk]
    ratios = [
        ("requests/s (mcpio / SDK)", med(ours, "rate") / med(theirs, "rate")),
        ("p50 latency (SDK / mcpio)", med(theirs, "p50") / med(ours, "p50")),
        ("p99 latency (SDK / mcpio)", med(theirs, "p99") / med(ours, "p99")),
        ("CPU per request (SDK / mcpio)", med(theirs, "cpu") / med(ours, "cpu")),
    ]
    print(f"| ours vs SDK | ratio | goal >= {GOAL:g}x |")
    print("|---|---:|---|")
    for name, ratio in ratios:
        print(f"| {name} | {ratio:.2f}x | {verdict(ratio)} |")
    print()

    print("## Scale-out: mcpio instances behind nginx (round-robin, keep-alive upstreams)\n")
    print(header.format("setup") + " req/s vs 1 instance direct |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    base = med(next(iter(scale.values())), "rate")
    for name, results in scale.items():
        print(row(name, results) + f" {med(results, 'rate') / base:.2f}x |")
    print()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="mcpgen-bench-http-") as tmp:
        try:
            bench = Bench(Path(tmp))
        except BenchError as exc:
            print(f"bench/http.py: {exc}", file=sys.stderr)
            return 1
        before = load()
        try:
            mcpio = bench.peer("mcpio", "http_mcpio_server.py")
            sdk = bench.peer("sdk", "http_sdk_server.py")
            direct = {p.name: f"http://127.0.0.1:{p.port}/mcp" for p in (mcpio, sdk)}
            for url in direct.values():
                check(url)
            servers = bench.measure(
                [
                    Setup("mcpio", direct["mcpio"], [mcpio], SERVER_CPUS, WRK_CPUS),
                    Setup(f"mcp {package('mcp')}", direct["sdk"], [sdk], SERVER_CPUS, WRK_CPUS),
                ]
            )
            sdk.stop()
            second = bench.peer("mcpio-2", "http_mcpio_server.py")
            nginx = bench.balancer(mcpio, [mcpio, second])
            base = f"http://127.0.0.1:{nginx.port}"
            check(f"{base}/one/mcp")
            check(f"{base}/mcp", upstreams=2)
            scale = bench.measure(
                [
                    Setup("1 instance, direct", direct["mcpio"], [mcpio], ALL_CPUS, ALL_CPUS),
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
        report(servers, scale, before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
