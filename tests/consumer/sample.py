# pyright: strict
"""What another project writes against mcpgen, type-checked with `pyright --strict`.

tests/test_consumer_typing.py runs pyright (strict, this folder's pyrightconfig.json) on this file
and requires 0 errors; each `reveal_type(...)  # expect: T` line must reveal exactly T, which
proves that the typed codec API hands back each revision's own types. The test also runs it.

Two revisions, by hand: every kind of message (request, notification, result response, error
response) of 2025-11-25 (legacy era) and 2026-07-28 (modern era), encoded, decoded again with
the typed codec API and narrowed; the mcpio runtime's main names; the friendlier accessors;
authorization (a resource server's verifiers, an OAuth client).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import reveal_type

import mcp_wire
import mcpio
from mcp_wire import MessageBuildError, ProtocolError
from mcp_wire import v2024_11_05 as oldest
from mcp_wire import v2025_11_25 as legacy
from mcp_wire import v2026_07_28 as modern
from mcp_wire.v2025_11_25.codec import InitializeResultResponse
from mcp_wire.v2026_07_28.codec import Codec2026_07_28, ErrorFrame
from mcp_wire.v2026_07_28.ext import tasks
from mcp_wire_runtime import JSONValue
from mcpio import (
    Call,
    Client,
    Context,
    CurrentContext,
    CurrentHeaders,
    Depends,
    Image,
    IntrospectionVerifier,
    JwtVerifier,
    MemoryTokenStore,
    Message,
    Middleware,
    OAuth,
    Principal,
    Redirect,
    ResourceError,
    ResourceServerAuth,
    Server,
    TokenVerifier,
    ToolError,
    ToolResult,
    get_context,
    get_http_headers,
)
from mcpio.auth import AuthContext, require_scopes, restrict_tag
from mcpio.client import from_config, proxy_server
from mcpio.middleware import CallNext
from mcpio.server import (
    ArgTransform,
    CallNextTool,
    Extension,
    MethodHandler,
    PromptOptions,
    ResourceOptions,
    ToolCall,
    ToolOptions,
    VisibilityCriteria,
    forward,
)

# --- 2026-07-28 (modern): every kind of message, by hand ----------------------------------------

codec = mcp_wire.codec("2026-07-28")
reveal_type(codec)  # expect: Codec2026_07_28

envelope = modern.RequestMetaObject(
    io_modelcontextprotocol_protocolVersion="2026-07-28",
    io_modelcontextprotocol_clientCapabilities=modern.ClientCapabilities(),
    io_modelcontextprotocol_clientInfo=modern.Implementation(name="sample", version="1.0"),
)
call = modern.CallToolRequest(
    jsonrpc="2.0",
    id=1,
    method="tools/call",
    params=modern.CallToolRequestParams(name="add", arguments={"a": 1, "b": 2}, meta=envelope),
)
progress = modern.ProgressNotification(
    jsonrpc="2.0",
    method="notifications/progress",
    params=modern.ProgressNotificationParams(progressToken="p-1", progress=1, total=2),
)
answer = modern.CallToolResultResponse(
    jsonrpc="2.0",
    id=1,
    result=modern.CallToolResult(
        content=[modern.TextContent(type="text", text="3")], resultType="complete"
    ),
)
failure = modern.JSONRPCErrorResponse(
    jsonrpc="2.0", id=1, error=modern.Error(code=-32602, message="unknown tool")
)
unsupported = modern.UnsupportedProtocolVersionError(
    jsonrpc="2.0",
    id=2,
    error=modern.UnsupportedProtocolVersionErrorError(
        code=-32022,
        message="unsupported protocol version",
        data=modern.UnsupportedProtocolVersionErrorErrorData(
            requested="1999-01-01", supported=["2026-07-28"]
        ),
    ),
)

# ... decoded again, typed by the codec, narrowed by the user.
message = codec.decode(codec.encode(call))
if isinstance(message, modern.CallToolRequest):
    reveal_type(message.params.name)  # expect: str
    reveal_type(codec.envelope(message))  # expect: Envelope[ClientCapabilities, Implementation]
    reveal_type(codec.envelope(message).client_info)  # expect: Implementation | None
# Tool arguments are JSON values: plain Python data, read back as it was written.
arguments: dict[str, JSONValue] = {"a": [1, 2.5, None, {"b": True}], "c": "x"}
typed = modern.CallToolRequestParams(name="add", arguments=arguments, meta=envelope)
kept: dict[str, JSONValue] | None = typed.arguments
assert kept == arguments
notice = codec.decode(codec.encode(progress))
if isinstance(notice, modern.ProgressNotification):
    reveal_type(notice.params.progressToken)  # expect: str | int
response = codec.decode_response(codec.encode(answer), "tools/call")
# expect: CallToolResultResponse | JSONRPCErrorResponse | UnsupportedProtocolVersionError | MissingRequiredClientCapabilityError | HeaderMismatchError
reveal_type(response)
if isinstance(response, ErrorFrame):
    reveal_type(response.error.code)  # expect: int
else:
    reveal_type(response.result)  # expect: InputRequiredResult | CallToolResult
for raw in (codec.encode(failure), codec.encode(unsupported)):
    error = codec.decode_response(raw, "tools/list")
    if isinstance(error, modern.UnsupportedProtocolVersionError):
        reveal_type(error.error.data.supported)  # expect: list[str]
listing = b'{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"t","inputSchema":{}}, {"x":1}]}}'
page = codec.decode_response(listing, "tools/list", lenient=True)
# expect: LenientResponse[ListToolsResultResponse] | JSONRPCErrorResponse | UnsupportedProtocolVersionError | MissingRequiredClientCapabilityError | HeaderMismatchError
reveal_type(page)

# The builders return their frames, the modern envelope stamped from keywords.
built = codec.request("tools/call", {"name": "add"}, id=4, client_capabilities={})
reveal_type(built)  # expect: CallToolRequest
notified = codec.notification("notifications/progress", {"progressToken": 1, "progress": 2})
reveal_type(notified)  # expect: ProgressNotification
reveal_type(codec.response(4, "tools/call", {"content": []}))  # expect: CallToolResultResponse
refused = codec.error(4, -32022, "no", {"requested": "x", "supported": []})
reveal_type(refused)  # expect: UnsupportedProtocolVersionError
reveal_type(mcp_wire.envelope(built))  # expect: Envelope[Any, Any] | None

# --- 2026-07-28 with the Tasks extension: its methods and task results, typed ----------------

with_tasks = codec.with_extensions("io.modelcontextprotocol/tasks")
reveal_type(with_tasks)  # expect: Codec2026_07_28Tasks
poll = with_tasks.request("tasks/get", {"taskId": "t-1"}, id=8, client_capabilities={})
reveal_type(poll)  # expect: GetTaskRequest
reveal_type(poll.params.taskId)  # expect: str
update = with_tasks.request(
    "tasks/update", {"taskId": "t-1", "inputResponses": {"q": {"action": "decline"}}}, id=9
)
reveal_type(update)  # expect: UpdateTaskRequest
cancel = with_tasks.request("tasks/cancel", {"taskId": "t-1"}, id=10)
reveal_type(cancel)  # expect: CancelTaskRequest
task = {"resultType": "task", "taskId": "t-1", "status": "working", "createdAt": "now",
        "lastUpdatedAt": "now", "ttlMs": None}  # fmt: skip
created = with_tasks.decode_response(
    with_tasks.encode(with_tasks.response(8, "tools/call", task)), "tools/call"
)
if not isinstance(created, ErrorFrame):
    reveal_type(created.result)  # expect: InputRequiredResult | CallToolResult | CreateTaskResult
    if isinstance(created.result, tasks.CreateTaskResult):
        # expect: Literal['working', 'input_required', 'completed', 'failed', 'cancelled']
        reveal_type(created.result.status)
        reveal_type(created.result.ttlMs)  # expect: int | None
state = {
    **task,
    "resultType": "complete",
    "status": "completed",
    "result": {"content": [{"type": "text", "text": "done"}]},
}
got = with_tasks.decode_response(
    with_tasks.encode(with_tasks.response(8, "tasks/get", state)), "tasks/get"
)
if not isinstance(got, ErrorFrame):
    if isinstance(got.result, tasks.GetTaskResultCompleted):
        reveal_type(got.result.status)  # expect: Literal['completed']
status = with_tasks.notification("notifications/tasks", {**task, "status": "cancelled"})
reveal_type(status)  # expect: TaskStatusNotification
called_with_tasks = with_tasks.encode(with_tasks.response(8, "tools/call", {"content": []}))
# expect: CallToolResultResponse | JSONRPCErrorResponse | UnsupportedProtocolVersionError | MissingRequiredClientCapabilityError | HeaderMismatchError
reveal_type(with_tasks.decode_response(called_with_tasks, "tools/call"))
# What the extension leaves alone is the revision codec's, inherited: its builders and errors.
late = with_tasks.error(4, -32022, "no", {"requested": "x", "supported": []})
reveal_type(late)  # expect: UnsupportedProtocolVersionError
reveal_type(with_tasks.envelope(poll).client_capabilities)  # expect: ClientCapabilities

# --- 2026-07-28 with MCP Apps: the revision's codec, every typed method inherited ------------

with_apps = codec.with_extensions("io.modelcontextprotocol/ui")
reveal_type(with_apps)  # expect: Codec2026_07_28Apps
revision_codec: Codec2026_07_28 = with_apps  # a subclass of the revision's codec
called_with_apps = with_apps.encode(with_apps.response(8, "tools/call", {"content": []}))
on_apps = with_apps.decode_response(called_with_apps, "tools/call")
# expect: CallToolResultResponse | JSONRPCErrorResponse | UnsupportedProtocolVersionError | MissingRequiredClientCapabilityError | HeaderMismatchError
reveal_type(on_apps)
if not isinstance(on_apps, ErrorFrame):
    reveal_type(on_apps.result)  # expect: InputRequiredResult | CallToolResult
reveal_type(with_apps.request("tools/list", {}, id=11))  # expect: ListToolsRequest
reveal_type(with_apps.with_extensions("io.modelcontextprotocol/ui"))  # expect: Codec2026_07_28Apps

# --- 2026-07-28 with both: one codec, typed as the extension that changes the typed API ---------

both = codec.with_extensions("io.modelcontextprotocol/ui", "io.modelcontextprotocol/tasks")
reveal_type(both)  # expect: Codec2026_07_28Tasks
reveal_type(both.request("tasks/get", {"taskId": "t-1"}, id=12))  # expect: GetTaskRequest

# --- 2025-11-25 (legacy): the same, with the handshake -------------------------------------------

old = mcp_wire.codec("2025-11-25")
reveal_type(old)  # expect: Codec2025_11_25
initialize = legacy.InitializeRequest(
    jsonrpc="2.0",
    id=1,
    method="initialize",
    params=legacy.InitializeRequestParams(
        protocolVersion="2025-11-25",
        capabilities=legacy.ClientCapabilities(),
        clientInfo=legacy.Implementation(name="sample", version="1.0"),
    ),
)
initialized = legacy.InitializedNotification(jsonrpc="2.0", method="notifications/initialized")
welcome = InitializeResultResponse(
    jsonrpc="2.0",
    id=1,
    result=legacy.InitializeResult(
        protocolVersion="2025-11-25",
        capabilities=legacy.ServerCapabilities(),
        serverInfo=legacy.Implementation(name="server", version="1.0"),
    ),
)
refusal = legacy.JSONRPCErrorResponse(
    jsonrpc="2.0", id=1, error=legacy.Error(code=-32600, message="already initialized")
)

first = old.decode(old.encode(initialize))
if isinstance(first, legacy.InitializeRequest):
    reveal_type(first.params.clientInfo.name)  # expect: str
second = old.decode(old.encode(initialized))
if isinstance(second, legacy.InitializedNotification):
    reveal_type(second.method)  # expect: Literal['notifications/initialized']
third = old.decode_response(old.encode(welcome), "initialize")
# expect: InitializeResultResponse | JSONRPCErrorResponse | URLElicitationRequiredError
reveal_type(third)
if isinstance(third, InitializeResultResponse):
    reveal_type(third.result.serverInfo)  # expect: Implementation
fourth = old.decode_response(old.encode(refusal), "initialize")
if isinstance(fourth, legacy.JSONRPCErrorResponse):
    reveal_type(fourth.error.message)  # expect: str
called = old.encode(old.response(2, "tools/call", {"content": []}))
# expect: CallToolResultResponse | JSONRPCErrorResponse | URLElicitationRequiredError
reveal_type(old.decode_response(called, "tools/call"))
reveal_type(old.request("ping", id=5))  # expect: PingRequest
reveal_type(mcp_wire.envelope(first))  # expect: Envelope[Any, Any] | None

# An older revision's frame is a subclass of the schema's class of the same name.
older = mcp_wire.codec("2024-11-05").decode(
    old.encode(initialize).replace(b"2025-11-25", b"2024-11-05")
)
if isinstance(older, oldest.InitializeRequest):
    reveal_type(older)  # expect: InitializeRequestFrame


def chosen_at_run_time(name: str) -> None:
    """A revision known only at run time: the base class, its methods untyped."""
    reveal_type(mcp_wire.codec(name))  # expect: Codec


# Mistakes: a builder's is a ValueError, what the wire brings is a ProtocolError.
try:
    codec.request("tools/call", {}, id=6)
except MessageBuildError as mistake:
    reveal_type(mistake.errors)  # expect: list[dict[str, Any]]
try:
    codec.decode(b"{")
except ProtocolError as bad:
    reveal_type(bad.code)  # expect: int

# One version, the distribution's.
reveal_type(mcp_wire.__version__)  # expect: str
reveal_type(mcpio.__version__)  # expect: str

# --- the runtime ---------------------------------------------------------------------------------

server = Server("sample", "1.0")


@server.tool()
async def add(a: int, b: int, ctx: Context) -> str:
    """Adds two numbers."""
    return f"{a + b} ({ctx.revision})"


@server.tool
def subtract(a: int, b: int) -> int:
    """A bare decorator keeps the function's own type."""
    return a - b


reveal_type(subtract)  # expect: (a: int, b: int) -> int


@server.tool
def count(word: str) -> ToolResult:
    """A whole result: content, structured content, `_meta`, the error flag."""
    if not word:
        return ToolResult("give a word", is_error=True)
    return ToolResult(f"{len(word)} letters", structured_content={"letters": len(word)})


reveal_type(count("owl").result())  # expect: CallToolResult


@server.prompt
def chat(topic: str) -> list[Message]:
    return [Message(f"About {topic}?"), Message("Gladly.", role="assistant")]


reveal_type(chat("owls")[1].message())  # expect: PromptMessage


@server.resource("notes://today")
def today() -> str:
    raise ResourceError("no notes yet")  # its message, as it is, for the client


class Audit(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext) -> object:
        reveal_type(call.ctx.lifespan)  # expect: Any
        return await call_next(call)


server.add_middleware(Audit())


class Usage(Extension):
    """A protocol extension of the user's own (`Server.add_extension`)."""

    id = "com.example/usage"

    def settings(self) -> Mapping[str, object]:
        return {"report": True}

    def methods(self) -> Mapping[str, MethodHandler]:
        async def report(ctx: Context, params: dict[str, object]) -> dict[str, object]:
            return {"revision": ctx.revision}

        return {"usage/report": report}

    async def call_tool(self, call: ToolCall, call_next: CallNextTool) -> object:
        reveal_type(call.entry.options)  # expect: ToolOptions
        return await call_next(call)


server.add_extension(Usage())
options: ToolOptions = {"title": "Slow", "task": "optional"}


@server.tool(**options)
async def slow() -> str:
    return "done"


@server.tool(tags={"a"}, timeout=2.0, version="2", enabled=True)
async def tagged() -> str:
    return "tagged"


def ops_only(ctx: AuthContext) -> bool:
    return ctx.principal is not None and "ops" in ctx.principal.scopes


@server.tool(auth=[ops_only, require_scopes("deploy")])
def deploy() -> str:
    return "deployed"


@server.resource("data://secret", auth=restrict_tag("secret", scopes={"admin"}))
def secret() -> str:
    return "s"


async def minus_positive(x: int, y: int = 0) -> int:
    if x < 0:
        raise ToolError("x must be positive")
    result = await forward(x=x, y=y)
    reveal_type(result)  # expect: CallToolResult
    structured = result.structuredContent
    value = structured.get("result") if isinstance(structured, dict) else None
    return value if isinstance(value, int) else 0


server.add_transformed_tool(
    "subtract",
    name="minus",
    description="Subtract y from x.",
    tags={"math"},
    transform_args={"a": ArgTransform(name="x"), "b": ArgTransform(name="y", default=0)},
    transform_fn=minus_positive,
)
server.add_transformed_tool(
    "subtract", name="decrement", transform_args={"b": ArgTransform(hide=True, default=1)}
)


@server.resource(
    "docs://{path*}", tags={"docs"}, annotations={"priority": 1.0}, unscreened={"path"}
)
def doc(path: str) -> str:
    return path


@server.prompt(tags={"a"}, meta={"k": 1})
def greeting() -> str:
    return "hello"


def misspelled_registrations() -> None:
    """Never called: a misspelled tool or resource option is an error pyright reports (and a
    TypeError naming the right one when it runs)."""

    @server.tool(titel="typo")  # pyright: ignore[reportCallIssue, reportUntypedFunctionDecorator]
    async def tool() -> str:
        return ""

    @server.resource(  # pyright: ignore[reportUntypedFunctionDecorator]
        "docs://x", tagz=1  # pyright: ignore[reportCallIssue]
    )
    def resource() -> str:
        return ""

    server.disable(tag={"a"})  # pyright: ignore[reportCallIssue]


server.disable(tags={"a"}, components={"tool"})
server.enable(names={"tagged"}, only=True)
admin: VisibilityCriteria = {"tags": {"admin"}, "components": {"tool", "prompt"}}
server.disable(**admin)


async def focus(ctx: Context) -> None:
    await ctx.enable_components(only=True, **admin)
    await ctx.disable_components(names={"tagged"}, version=2)


resource_options: ResourceOptions = {"mime_type": "text/plain", "cache": None}
prompt_options: PromptOptions = {"title": "Greeting"}


async def report(client: Client) -> dict[str, object]:
    return await client.extension_request("usage/report")


logo = Image(data=b"png")


async def ask(client: Client) -> str:
    tools = await client.list_tools()
    result = await client.call_tool(tools.tools[0].name, {"a": 1, "b": 2})
    return str(result.content[0])


# --- authorization: the server as a resource server, the client with OAuth -----------------------

RESOURCE = "https://mcp.example.com/mcp"


async def lookup(token: str) -> Principal | None:
    """A verifier of one's own (opaque tokens looked up somewhere)."""
    return Principal("svc", frozenset({"mcp:read"})) if token == "opaque" else None


verifiers: list[TokenVerifier] = [
    lookup,
    JwtVerifier(issuer="https://auth.example.com", audience=RESOURCE),
    IntrospectionVerifier(
        "https://auth.example.com/introspect", "mcp-server", "secret", audience=RESOURCE
    ),
]
auth = ResourceServerAuth(
    verifier=verifiers[1],
    resource=RESOURCE,
    authorization_servers=["https://auth.example.com"],
    scopes_supported=["mcp:read", "mcp:write"],
    required_scopes={"*": ["mcp:read"], "tools/call:deploy": ["mcp:write"]},
)
reveal_type(auth.metadata_url)  # expect: str
reveal_type(auth.challenge("insufficient_scope", ["mcp:write"]))  # expect: str


def asgi() -> object:
    return server.http_app(auth=auth, max_sessions=10, cors_origins=["https://app.example"])


def misspelled() -> None:
    """Never called: each misspelled option is an error pyright reports (were it not, the
    ignore comment would be unnecessary, itself an error under this config)."""
    server.http_app(max_sesions=10)  # pyright: ignore[reportCallIssue]
    server.run_http("127.0.0.1", 8000, max_conections=10)  # pyright: ignore[reportCallIssue]
    server.run("http", port=8000, cors_origin=["x"])  # pyright: ignore[reportCallIssue]
    server.run("http", stream_queue="many")  # pyright: ignore[reportArgumentType]


async def misspelled_sampling(ctx: Context) -> None:
    """Never called: a misspelled sampling option is an error pyright reports."""
    await ctx.sample(["hi"], 10, temprature=0.5)  # pyright: ignore[reportCallIssue]
    await ctx.sample(["hi"], 10, systemPrompt="be brief", temperature=0.2)


@server.tool()
async def whoami(ctx: Context) -> str:
    principal = ctx.principal
    reveal_type(principal)  # expect: Principal | None
    if principal is None:
        return "anonymous"
    reveal_type(principal.scopes)  # expect: frozenset[str]
    reveal_type(principal.expires_at)  # expect: float | None
    return principal.subject


# FastMCP's context names: markers typed as the values they inject.
def tenant_of(headers: dict[str, str] = CurrentHeaders()) -> str:  # noqa: B008
    return headers.get("x-tenant", "none")


@server.tool
async def visits(
    ctx: Context = CurrentContext(), tenant: str = Depends(tenant_of)  # noqa: B008
) -> int:
    reveal_type(get_context())  # expect: Context
    reveal_type(get_http_headers(include={"authorization"}))  # expect: dict[str, str]
    reveal_type(ctx.client_id)  # expect: str | None
    count: int = await ctx.get_state(f"visits:{tenant}", 0) + 1
    await ctx.set_state(f"visits:{tenant}", count, caller=ctx.caller)
    await ctx.delete_state("old")
    return count


async def open_browser(url: str) -> Redirect:
    """The browser step: show `url`, wait for the redirect, hand back what it carried."""
    return Redirect.from_url(url)


async def signed_in() -> str:
    user = OAuth(redirect=open_browser, client_id="app", scope="mcp:read", store=MemoryTokenStore())
    machine = OAuth(grant="client_credentials", client_id="batch", client_secret="secret")
    async with Client(RESOURCE, auth=user) as client, Client(RESOURCE, auth=machine) as other:
        return await ask(client) + await ask(other)


def composed() -> Server:
    """FastMCP's composition shapes: a mount without a namespace, a whole `mcpServers`
    configuration proxied."""
    config = {"mcpServers": {"weather": {"url": "https://weather.example/mcp"}}}
    parent = Server("parent", on_duplicate="error")
    parent.mount(Server("child"))
    parent.mount(proxy_server(config), namespace="remote")
    return parent


async def configured() -> str:
    """A whole configuration as a client's target; FastMCP's `auth="oauth"`."""
    config = {"mcpServers": {"local": {"command": "python3", "args": ["server.py"]}}}
    async with Client(config) as client, Client(RESOURCE, auth="oauth") as other:
        async with from_config(config, timeout=30) as third:
            return await ask(client) + await ask(other) + await ask(third)


def lazy_attributes() -> None:
    """A revision as an attribute of the package, after `import mcp_wire` alone."""
    block = mcp_wire.v2026_07_28.TextContent(type="text", text="hi")
    reveal_type(block)  # expect: TextContent
    reveal_type(mcp_wire.v2024_11_05.REVISION)  # expect: Literal['2024-11-05']


def latest_alias() -> None:
    """The latest pinned revision's models, whichever revision that is."""
    from mcp_wire.latest import models

    reveal_type(models.TextContent(type="text", text="hi"))  # expect: TextContent
