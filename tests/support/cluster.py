"""Helpers for tests that run real processes over loopback: instances of
examples/everything_server.py, an nginx in front of them and a Redis, each a subprocess with its
config, logs and data in a tmp dir, on a free port (retried when the port is taken meanwhile),
stopped by its PID.

nginx and redis-server must be installed (`scripts/ensure-services.sh`, run by `make test`);
without them the tests that need them fail, saying so.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT, free_port

EVERYTHING = ROOT / "examples" / "everything_server.py"
STARTUP_SECONDS = 20.0
STOP_SECONDS = 5.0
SBIN = "/usr/sbin:/usr/local/sbin:/sbin"
# The head of every nginx.conf the process tests write (a `str.format` template: `tmp`, the
# test's directory for nginx's files); each appends its upstreams and server, and closes `http`.
NGINX_HEAD = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
"""


def binary(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=SBIN)
    if found is None:
        pytest.fail(
            f"{name} is not installed: run scripts/ensure-services.sh (make test does)",
            pytrace=False,
        )
    return found


def nginx_binary() -> str:
    return binary("nginx")


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    port: int

    def tail(self, lines: int = 20) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(STOP_SECONDS)

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(STOP_SECONDS)


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def wait_listening(processes: list[Process]) -> list[Process]:
    """Those of `processes` that exited before listening (a port taken meanwhile, most likely);
    fails on a process that neither listens nor exits in time."""
    deadline = time.monotonic() + STARTUP_SECONDS
    waiting = list(processes)
    exited: list[Process] = []
    while waiting:
        for process in list(waiting):
            if process.popen.poll() is not None:
                waiting.remove(process)
                exited.append(process)
            elif listening(process.port):
                waiting.remove(process)
        if waiting and time.monotonic() > deadline:
            names = ", ".join(f"{p.name}:\n{p.tail()}" for p in waiting)
            pytest.fail(f"not listening after {STARTUP_SECONDS:.0f} s: {names}", pytrace=False)
        if waiting:
            time.sleep(0.05)
    return exited


def _port_taken(process: Process) -> bool:
    return "address already in use" in process.tail().lower()


def start_instances(
    tmp: Path,
    specs: list[tuple[str, str | None]],
    processes: list[Process],
    extra: Sequence[str] = (),
) -> list[Process]:
    """One everything server per (name, MCPIO_STATE_KEY or None), all started at once, each
    with the command-line arguments `extra` too."""

    def launch(name: str, key: str | None) -> Process:
        env = {k: v for k, v in os.environ.items() if k != "MCPIO_STATE_KEY"}
        if key is not None:
            env["MCPIO_STATE_KEY"] = key
        port = free_port()
        log = tmp / f"{name}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [sys.executable, str(EVERYTHING), "http", "--host", "127.0.0.1"]
                + ["--port", str(port), *extra],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        process = Process(name, popen, log, port)
        processes.append(process)
        return process

    started = {name: launch(name, key) for name, key in specs}
    keys = dict(specs)
    for _attempt in range(3):
        exited = wait_listening(list(started.values()))
        if not exited:
            return [started[name] for name, _ in specs]
        for process in exited:
            if not _port_taken(process):
                pytest.fail(f"{process.name} exited:\n{process.tail()}", pytrace=False)
            started[process.name] = launch(process.name, keys[process.name])
    pytest.fail("could not find free ports for the instances", pytrace=False)


def start_nginx(tmp: Path, config: Callable[[int], str], processes: list[Process]) -> Process:
    """nginx in the foreground (`daemon off;` belongs in `config(port)`, the whole nginx.conf
    for a listening port), its prefix, logs and temp paths in `tmp`."""
    nginx = nginx_binary()
    for _attempt in range(3):
        port = free_port()
        conf = tmp / "nginx.conf"
        conf.write_text(config(port), encoding="utf-8")
        log = tmp / "nginx-error.log"
        with (tmp / "nginx.out").open("wb") as out:
            popen = subprocess.Popen(
                [nginx, "-p", str(tmp), "-c", str(conf), "-e", str(log)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        process = Process("nginx", popen, log, port)
        processes.append(process)
        if not wait_listening([process]):
            return process
        if not _port_taken(process):
            pytest.fail(f"nginx exited:\n{process.tail()}", pytrace=False)
    pytest.fail("could not find a free port for nginx", pytrace=False)


def start_redis(tmp: Path, processes: list[Process], port: int | None = None) -> Process:
    """redis-server on loopback with its own config and dir in `tmp`, no persistence. Given a
    `port` (a restart), that port or a failure; else a free one."""
    redis = binary("redis-server")
    data = tmp / "redis"
    data.mkdir(exist_ok=True)
    for _attempt in range(1 if port is not None else 3):
        chosen = port if port is not None else free_port()
        conf = data / "redis.conf"
        conf.write_text(
            f"bind 127.0.0.1\nport {chosen}\ndir {data}\nsave ''\nappendonly no\n"
            "protected-mode yes\ndaemonize no\n",
            encoding="utf-8",
        )
        log = data / "redis.log"
        with log.open("ab") as out:
            popen = subprocess.Popen(
                [redis, str(conf), "--save", "", "--appendonly", "no"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        process = Process("redis", popen, log, chosen)
        processes.append(process)
        if not wait_listening([process]):
            return process
        if not _port_taken(process):
            pytest.fail(f"redis-server exited:\n{process.tail()}", pytrace=False)
    pytest.fail("could not start redis-server on a free port", pytrace=False)


def start_workers(
    tmp: Path, names: list[str], processes: list[Process], redis_url: str, extra: Sequence[str] = ()
) -> list[Process]:
    """One `mcpio worker examples/everything_server.py` per name on the Redis at `redis_url`,
    each with the arguments `extra` too, returned once each says it takes tasks (its `port`:
    0, it listens on none)."""
    started: list[Process] = []
    for name in names:
        log = tmp / f"{name}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [sys.executable, "-m", "mcpio", "worker", str(EVERYTHING), "--redis", redis_url]
                + list(extra),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        process = Process(name, popen, log, 0)
        processes.append(process)
        started.append(process)
    deadline = time.monotonic() + STARTUP_SECONDS
    for process in started:
        while worker_name(process) is None:
            if process.popen.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{process.name} did not start:\n{process.tail()}", pytrace=False)
            time.sleep(0.05)
    return started


def worker_name(process: Process) -> str | None:
    """The instance name a worker announced (its lease holder name), None before it did."""
    for line in process.tail(50).splitlines():
        if line.startswith("mcpio: worker ") and " taking tasks " in line:
            return line.split()[2]
    return None
