"""Load with the limits of issue 31 on (slow): 50 clients x 100 calls against a server process
of its own, half of them legacy sessions (2025-11-25), half stateless 2026-07-28 clients. Of
each client's calls 10% are malformed (not JSON, not JSON-RPC, an unknown method, missing
params, the wrong Content-Type), 5% are abrupt disconnects (a slow call's POST whose
connection is closed before its answer), 10% are task calls (a 64 KiB result kept for the
task's 3 s TTL, fetched with `tasks/result` or `tasks/get`) and the rest echo calls.

Every valid request is answered exactly once, with its own answer; every malformed one is
refused (an HTTP 4xx or a JSON-RPC error); the server survives the disconnects; after the TTL
(and the sessions' DELETE) the server holds no task and no session, and its memory is back
near its baseline. The figures are printed (`pytest -s`)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpio.tasks._engine import TASKS_EXTENSION
from mcpio.transports._sse import SseParser
from tests.support import ACCEPT, ENVELOPE, ROOT, free_port, headers_for, initialize, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CLIENTS = 50
CALLS = 100
LEGACY = "2025-11-25"
TASK_ENVELOPE = {
    **ENVELOPE,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
}


def memory_mib(pid: int) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values


@asynccontextmanager
async def load_server(log: Path) -> AsyncIterator[tuple[str, int]]:
    """The server on a free port; its stderr in `log`."""
    port = free_port()
    with log.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "peers" / "load_server.py"), str(port)],
            stderr=err,
        )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return True
        except OSError:
            assert process.poll() is None, log.read_text()
            return False

    try:
        await until(listening, 30, interval=0.05)
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        assert process.poll() is None, "the server died under load"
        process.terminate()
        process.wait(10)


def answers_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC answers in an HTTP answer (JSON, or the frames of an event stream)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        frames = [json.loads(e.data) for e in SseParser().feed(response.content) if e.data]
    else:
        frames = [response.json()]
    return [f for f in frames if "method" not in f]


class Tally:
    def __init__(self) -> None:
        self.answered: Counter[tuple[int, int]] = Counter()  # (client, id) -> answers
        self.sent: set[tuple[int, int]] = set()
        self.refused = 0
        self.disconnected = 0
        self.wrong: list[str] = []


class Caller:
    """One client: its own connection pool and, legacy, its session."""

    def __init__(self, number: int, base: str, tally: Tally) -> None:
        self.number = number
        self.url = f"{base}/mcp"
        self.legacy = number % 2 == 0
        self.tally = tally
        self.http = httpx.AsyncClient(timeout=60)
        self.headers: dict[str, str] = {}
        self.next_id = 1

    async def open(self) -> None:
        if not self.legacy:
            return
        opened = await self.http.post(self.url, json=initialize(LEGACY), headers={"accept": ACCEPT})
        self.headers = {
            "accept": ACCEPT,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": LEGACY,
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.http.post(self.url, json=initialized, headers=self.headers)

    async def close(self) -> None:
        if self.legacy:
            await self.http.delete(self.url, headers=self.headers)
        await self.http.aclose()

    def frame(self, method: str, envelope: dict[str, Any] = ENVELOPE, **params: Any) -> Any:
        id, self.next_id = self.next_id, self.next_id + 1
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        frame["params"] = params if self.legacy else {"_meta": envelope, **params}
        return frame

    def headers_of(self, frame: dict[str, Any]) -> dict[str, str]:
        if self.legacy:
            return self.headers
        if frame["method"].startswith("tasks/"):
            return headers_for(frame, **{"mcp-name": str(frame["params"].get("taskId"))})
        return headers_for(frame)

    async def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Send a valid request; its one answer (each answer counted)."""
        key = (self.number, frame["id"])
        self.tally.sent.add(key)
        response = await self.http.post(self.url, json=frame, headers=self.headers_of(frame))
        answers = answers_of(response)
        for answer in answers:
            self.tally.answered[(self.number, answer.get("id"))] += 1  # type: ignore[index]
        if len(answers) != 1 or answers[0].get("id") != frame["id"]:
            self.tally.wrong.append(f"{key}: {response.status_code} {answers}")
            return {}
        return answers[0]

    async def echo(self, n: int) -> None:
        text = f"c{self.number}-{n}"
        answer = await self.request(self.frame("tools/call", name="echo", arguments={"text": text}))
        if answer.get("result", {}).get("content", [{}])[0].get("text") != text:
            self.tally.wrong.append(f"echo {text}: {answer}")

    async def task(self, n: int) -> None:
        text = f"t{self.number}-{n}"
        arguments = {"text": text}
        if self.legacy:
            created = await self.request(
                self.frame("tools/call", name="bulky", arguments=arguments, task={"ttl": 3_000})
            )
            task_id = created.get("result", {}).get("task", {}).get("taskId")
            done = await self.request(self.frame("tasks/result", taskId=task_id))
            result = done.get("result", {})
        else:
            call = self.frame("tools/call", TASK_ENVELOPE, name="bulky", arguments=arguments)
            task_id = (await self.request(call)).get("result", {}).get("taskId")
            result = {}
            for _ in range(200):
                got = await self.request(self.frame("tasks/get", TASK_ENVELOPE, taskId=task_id))
                if got.get("result", {}).get("status") == "completed":
                    result = got["result"]["result"]
                    break
                await anyio.sleep(0.05)
        if not result.get("content", [{}])[0].get("text", "").startswith(text + " xxx"):
            self.tally.wrong.append(f"task {text}: {str(result)[:200]}")

    async def malformed(self, n: int) -> None:
        kind = (n // 10) % 5
        headers = dict(self.headers_of(self.frame("tools/call", name="echo")))
        body: bytes
        if kind == 0:
            body = b'{"jsonrpc": "2.0", "id": 1, "method": '
        elif kind == 1:
            body = b'{"hello": "world"}'
        elif kind == 2:
            body = json.dumps(self.frame("no/such/method")).encode()
            headers["mcp-method"] = "no/such/method"
        elif kind == 3:
            body = json.dumps(self.frame("tools/call", arguments={"text": 1})).encode()
        else:
            body = json.dumps(self.frame("tools/call", name="echo")).encode()
            headers["content-type"] = "text/plain"
        headers.setdefault("content-type", "application/json")
        response = await self.http.post(self.url, content=body, headers=headers)
        errors = [a for a in answers_of(response) if "error" in a] if response.content else []
        if response.status_code >= 400 or errors:
            self.tally.refused += 1
        else:
            self.tally.wrong.append(f"malformed {kind} accepted: {response.status_code}")

    async def disconnect(self, n: int) -> None:
        """A slow call's POST on a raw connection closed right after it is sent."""
        frame = self.frame("tools/call", name="slow", arguments={"text": "gone"})
        body = json.dumps(frame).encode()
        head = ["POST /mcp HTTP/1.1", f"host: {self.url.split('/')[2]}",
                f"content-length: {len(body)}"]  # fmt: skip
        head += [f"{k}: {v}" for k, v in self.headers_of(frame).items()]
        if "content-type" not in self.headers_of(frame):
            head.append("content-type: application/json")
        host, port = self.url.split("/")[2].split(":")
        stream = await anyio.connect_tcp(host, int(port))
        await stream.send(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await anyio.sleep(0.01)
        await stream.aclose()
        self.tally.disconnected += 1

    async def run(self) -> None:
        await self.open()
        for n in range(CALLS):
            if n % 10 == 0:
                await self.malformed(n)
            elif n % 20 == 5:
                await self.disconnect(n)
            elif n % 10 == 3:
                await self.task(n)
            else:
                await self.echo(n)
        await self.close()


async def held(base: str) -> dict[str, int]:
    async with httpx.AsyncClient(timeout=30) as http:
        return (await http.get(f"{base}/debug/held")).json()


async def test_fifty_clients_with_malformed_requests_and_disconnects(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with load_server(log) as (base, pid):
        warm = Tally()
        for number in (0, 1):  # each era once: imports, caches, the first task
            caller = Caller(number, base, warm)
            await caller.open()
            await caller.echo(0)
            await caller.task(0)
            await caller.close()
        assert warm.wrong == [], warm.wrong
        await anyio.sleep(4.5)  # the warm-up's tasks expire and are swept
        baseline = memory_mib(pid)["VmRSS"]
        tally = Tally()
        started = time.monotonic()
        async with anyio.create_task_group() as group:
            for number in range(CLIENTS):
                group.start_soon(Caller(number, base, tally).run)
        seconds = time.monotonic() - started
        during = memory_mib(pid)
        holding = await held(base)
        await anyio.sleep(5.0)  # past the 3 s TTL, and a sweep
        after = await held(base)
        rss_after = memory_mib(pid)["VmRSS"]
        valid = len(tally.sent)
        once = sum(1 for key in tally.sent if tally.answered[key] == 1)
        print(
            f"\n{CLIENTS} clients x {CALLS} calls in {seconds:.1f} s: {valid} valid requests, "
            f"{once} answered exactly once, {len(tally.wrong)} wrong; {tally.refused} malformed "
            f"refused; {tally.disconnected} abrupt disconnects\n"
            f"server RSS: baseline {baseline:.1f} MiB, right after the load "
            f"{during['VmRSS']:.1f} MiB (peak {during['VmHWM']:.1f} MiB), holding {holding}; "
            f"5 s later (TTL 3 s) {rss_after:.1f} MiB, holding {after}"
        )
        assert tally.wrong == [], tally.wrong[:5]
        assert once == valid and set(tally.answered) <= tally.sent
        assert tally.refused == CLIENTS * CALLS // 10
        assert tally.disconnected == CLIENTS * CALLS // 20
        assert after == {"tasks": 0, "sessions": 0}
        assert rss_after - baseline < 40, f"{rss_after - baseline:.1f} MiB above the baseline"
    logged = log.read_text()
    print(f"server log: {len(logged.splitlines())} lines")
    assert "Traceback" not in logged, logged[-3000:]
