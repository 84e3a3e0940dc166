"""The client's HTTP transport on 2026-07-28 (`ModernPost`, an era of `HttpTransport`): one
stateless POST per request, its routing headers (`MCP-Protocol-Version`, `Mcp-Method`,
`Mcp-Name`) and the `Mcp-Param-*` headers mirroring the arguments a tool marks `x-mcp-header`
(learned from `tools/list`); no session, and closing the POST is the cancellation."""

from __future__ import annotations

import logging
from typing import Any, cast

import pydantic_core

from mcp_wire_runtime._peek import Peek
from mcpio._core.jsonrpc import RequestId
from mcpio._core.negotiate import envelope_version
from mcpio.transports._http_answers import HttpAnswers
from mcpio.transports._http_inbox import Post
from mcpio.transports._http_rules import (
    NAMED_BY,
    ParamHeaders,
    encode_header_value,
    mirror_params,
    param_headers,
    plain_header_value,
    x_mcp_header_problem,
)

log = logging.getLogger("mcpio")

MAX_ROUTES = 256  # routing headers kept per (version, method, name) before the cache starts over


class ModernPost(HttpAnswers):
    """Requests and notifications as 2026-07-28 carries them."""

    def _init_modern(self) -> None:
        self.modern_version: str | None = None
        self.tool_headers: dict[str, ParamHeaders] = {}
        # (version, method, name) -> a modern request's headers but its `Mcp-Param-*` ones
        self._routing: dict[tuple[str, str, str | None], dict[str, str]] = {}

    async def _post_modern(
        self, id: RequestId, data: bytes, headers: dict[str, str], post: Post
    ) -> None:
        async with self._open("POST", self.url, headers, data) as response:
            await self._answered(id, post, response, headers)

    def _modern_headers(self, env: Peek, data: bytes, method: str, version: str) -> dict[str, str]:
        key = (version, method, env.name)
        routing = self._routing.get(key)
        if routing is None:
            routing = self._routing_headers(version, method, env.name)
            if len(self._routing) >= MAX_ROUTES:
                self._routing.clear()
            self._routing[key] = routing
        headers = {**routing}
        spec = self.tool_headers.get(env.name) if method == "tools/call" and env.name else None
        if spec:  # the tool's x-mcp-header parameters: only then are the params read
            params = pydantic_core.from_json(data).get("params")
            arguments = params.get("arguments") if type(params) is dict else None
            if type(arguments) is dict:
                headers.update(mirror_params(spec, cast(dict[str, Any], arguments)))
        return headers

    def _routing_headers(self, version: str, method: str, name: str | None) -> dict[str, str]:
        """The headers of a modern request but for its `Mcp-Param-*` ones."""
        headers = self._base_headers()
        for header, value in (("MCP-Protocol-Version", version), ("Mcp-Method", method)):
            plain = plain_header_value(value)
            if plain is not None:
                headers[header] = plain
        if name is not None and method in NAMED_BY:
            headers["Mcp-Name"] = encode_header_value(name)
        return headers

    def _notice_headers(self, frame: dict[str, Any], method: str) -> dict[str, str]:
        """The headers of a modern notification."""
        version = envelope_version(frame) or self.modern_version
        headers = self._base_headers()
        if plain_header_value(version):
            headers["MCP-Protocol-Version"] = cast(str, version)
        if plain_header_value(method):
            headers["Mcp-Method"] = method
        return headers

    def _learn_tools(
        self, frame: dict[str, Any], result: dict[str, Any], raw: bytes, modern: bool
    ) -> bytes:
        """Learn the tools' `Mcp-Param-*` headers from a `tools/list` result; on 2026-07-28 a
        tool whose `x-mcp-header` annotations are invalid is dropped from it."""
        tools = result.get("tools")
        if type(tools) is not list:
            return raw
        kept: list[Any] = []
        for tool in cast(list[Any], tools):
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is not str:
                kept.append(tool)
                continue
            schema = cast(dict[str, Any], tool).get("inputSchema")
            problem = x_mcp_header_problem(schema)
            if problem is not None:
                self.tool_headers.pop(name, None)
                if modern:
                    log.warning("dropped tool %r from tools/list: %s", name, problem)
                    continue
            else:
                headers = param_headers(schema)
                if headers:
                    self.tool_headers[name] = headers
                else:
                    self.tool_headers.pop(name, None)
            kept.append(tool)
        if len(kept) == len(tools):
            return raw
        return pydantic_core.to_json({**frame, "result": {**result, "tools": kept}})
