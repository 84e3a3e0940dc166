"""Task servers and workers in processes of their own, and what their logs say."""

from __future__ import annotations

import json
from typing import Any

import httpx

from mcpio.tasks._engine import TASKS_EXTENSION
from tests.support import ACCEPT, MODERN, until
from tests.support.cluster import Process

CAPS = {"extensions": {TASKS_EXTENSION: {}}, "elicitation": {}}


def url_of(process: Process) -> str:
    return f"http://127.0.0.1:{process.port}/mcp"


class Peer:
    """Raw 2026-07-28 requests to one URL (an instance, or nginx in front of them)."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.ids = iter(range(1, 1_000_000))

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """The request's result (fails on an error)."""
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": CAPS,
        }
        frame = {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": method,
            "params": {**params, "_meta": meta},
        }
        headers = {
            "content-type": "application/json",
            "accept": ACCEPT,
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
        }
        name = params.get("name", params.get("taskId"))
        if name is not None:
            headers["mcp-name"] = name
        response = await self.http.post(self.url, content=json.dumps(frame), headers=headers)
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("text/event-stream"):
            datas = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
            answer = [a for a in map(json.loads, datas) if a.get("id") == frame["id"]][0]
        else:
            answer = response.json()
        assert "result" in answer, answer
        return answer["result"]

    async def start(self, tool: str, **arguments: Any) -> str:
        created = await self.call("tools/call", name=tool, arguments=arguments)
        assert created["resultType"] == "task" and created["status"] == "working", created
        return created["taskId"]

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.call("tasks/get", taskId=task_id)

    async def reaches(self, task_id: str, status: str, timeout: float = 15.0) -> dict[str, Any]:
        async def there() -> dict[str, Any] | None:
            task = await self.get(task_id)
            return task if task["status"] == status else None

        return await until(there, timeout=timeout, interval=0.05)


def text(task: dict[str, Any]) -> str:
    return task["result"]["content"][0]["text"]


def runs_in_logs(workers: list[Process]) -> dict[str, list[tuple[str, str]]]:
    """Per task id, what the workers' logs say of it, in order per worker: ("run", worker) for
    each run started, (status, worker) for each run that ended."""
    seen: dict[str, list[tuple[str, str]]] = {}
    for worker in workers:
        for line in worker.log.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.split()
            if len(words) >= 5 and words[2] == "task" and words[-2] == "on":
                what = "run" if words[4] == "run" else words[4]
                seen.setdefault(words[3].rstrip(":"), []).append((what, worker.name))
    return seen


def handed_back(lines: list[tuple[str, str]]) -> int:
    """How many of a task's runs (`runs_in_logs`) a shutdown stopped and handed back (ended
    neither completed nor failed): each is given back to its `max_attempts`."""
    return sum(what in ("working", "input_required") for what, _ in lines)
