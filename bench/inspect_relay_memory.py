"""Peak memory of `mcpio inspect`'s HTTP relay passing one large JSON answer (issue 31): the
relay (a process of its own, `python -m mcpio inspect --upstream ... --listen ...`) between a
client that reads the answer as it streams and an upstream that writes it in 1 MiB pieces.

A measurement, not a test: it prints the relay's resident memory before the request and its
peak (VmHWM from /proc) after it, and checks the client received every byte.

    .venv/bin/python bench/inspect_relay_memory.py [--mb 300] [--python PATH]

`--python`: the interpreter whose `mcpio` runs the relay (another checkout's venv, to compare).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, and bench/http.py would hide the
# standard library's http package.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import httpx  # noqa: E402

UPSTREAM = """
import sys, uvicorn
SIZE = int(sys.argv[2]) << 20
PIECE = b"x" * (1 << 20)

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    head = b'{"jsonrpc":"2.0","id":1,"result":{"blob":"'
    tail = b'"}}'
    size = str(len(head) + SIZE + len(tail)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", size)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": head, "more_body": True})
    for _ in range(SIZE >> 20):
        await send({"type": "http.response.body", "body": PIECE, "more_body": True})
    await send({"type": "http.response.body", "body": tail})

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port} after {seconds} s")


def memory_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise SystemExit(f"no {field} for {pid}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    up_port, relay_port = free_port(), free_port()
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM, str(up_port), str(args.mb)])
    relay = subprocess.Popen(
        [args.python, "-m", "mcpio", "inspect", "--upstream", f"http://127.0.0.1:{up_port}/mcp",
         "--listen", f"127.0.0.1:{relay_port}", "--log", os.devnull],
    )  # fmt: skip
    try:
        wait_port(up_port)
        wait_port(relay_port)
        before = memory_kib(relay.pid, "VmRSS")
        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        headers = {"content-type": "application/json", "accept": "application/json"}
        received = 0
        started = time.monotonic()
        with httpx.stream(
            "POST", f"http://127.0.0.1:{relay_port}/mcp", content=ping, headers=headers,
            timeout=600,
        ) as response:  # fmt: skip
            for chunk in response.iter_raw():
                received += len(chunk)
        seconds = time.monotonic() - started
        peak = memory_kib(relay.pid, "VmHWM")
        expected = (args.mb << 20) + len('{"jsonrpc":"2.0","id":1,"result":{"blob":""}}')
        print(f"relay: {args.python}")
        print(f"answer: {args.mb} MiB JSON; received {received} bytes (expected {expected})")
        print(f"relay RSS before: {before / 1024:.1f} MiB; peak (VmHWM): {peak / 1024:.1f} MiB")
        print(f"peak - before: {(peak - before) / 1024:.1f} MiB; relayed in {seconds:.2f} s")
        return 0 if received == expected else 1
    finally:
        for process in (relay, upstream):
            process.send_signal(signal.SIGINT)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    sys.exit(main())
