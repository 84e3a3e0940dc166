"""A server with every fixture the official MCP conformance suite calls, for both eras.

    python examples/everything_server.py stdio
    python examples/everything_server.py http --port 8000
    python examples/everything_server.py http --port 8001 --redis redis://127.0.0.1:6379/0
    python examples/everything_server.py http --port 8000 --auth-issuer https://auth.example.com \
        --resource http://127.0.0.1:8000/mcp --scope mcp:read

Behind a load balancer, give every instance the same `MCPIO_STATE_KEY` (hex, 32 bytes or more)
so any instance can open the `requestState` another one sealed, and the same `--redis` URL so
a change one instance announces reaches the listen streams of all.

With `--auth-issuer` (HTTP only; `pip install 'mcpgen[auth]'`) the server is an OAuth resource
server: it accepts JWT access tokens of that issuer for `--resource` (its own URL), and every
request needs the `--scope`s given (none by default).

With `--skills DIR` it also publishes the Agent Skills under DIR (SEP-2640, `mcpio.skills`).

The same handlers serve legacy sessions (2024-11-05 .. 2025-11-25, where a question to the client
is a real request) and 2026-07-28 requests (where it becomes an `input_required` round).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio

from mcpio import (
    Context,
    Elicit,
    JwtVerifier,
    ListRoots,
    ProtocolError,
    ResourceServerAuth,
    Sample,
    Server,
    ToolError,
)
from mcpio.latest import public as pub
from mcpio.server import Sealer
from mcpio.tasks import TaskStoreError, open_task_store

IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = Server("mcp-conformance-test-server", "1.0.0")


def text(value: str) -> pub.TextContent:
    return pub.TextContent(type="text", text=value)


def image() -> pub.ImageContent:
    return pub.ImageContent(type="image", data=IMAGE, mimeType="image/png")


def embedded(uri: str, mime_type: str, body: str) -> pub.EmbeddedResource:
    contents = pub.TextResourceContents(uri=uri, mimeType=mime_type, text=body)
    return pub.EmbeddedResource(type="resource", resource=contents)


# ---------------------------------------------------------------------- content tools


@server.tool()
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> list[pub.ContentBlock]:
    """Returns an image (a 1x1 PNG)."""
    return [image()]


@server.tool()
def test_audio_content() -> list[pub.ContentBlock]:
    """Returns audio (a minimal WAV)."""
    return [pub.AudioContent(type="audio", data=AUDIO, mimeType="audio/wav")]


@server.tool()
def test_embedded_resource() -> list[pub.ContentBlock]:
    """Returns an embedded text resource."""
    return [
        embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")
    ]


@server.tool()
def test_multiple_content_types() -> list[pub.ContentBlock]:
    """Returns text, an image and an embedded resource."""
    data = json.dumps({"test": "data", "value": 123}, separators=(",", ":"))
    return [
        text("Multiple content types test:"),
        image(),
        embedded("test://mixed-content-resource", "application/json", data),
    ]


@server.tool()
async def test_error_handling() -> str:
    """Always fails, as a tool result marked isError."""
    raise ToolError("This tool intentionally returns an error for testing")


# ---------------------------------------------------------------------- logging and progress


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages while it runs."""
    for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.log("info", step)
        await anyio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs only when the request asks for log messages."""
    await ctx.log("info", "Logging evaluated")
    return "Logging evaluated"


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100; answers with the progress token."""
    for done in (0, 50, 100):
        await ctx.progress(done, 100, f"Completed step {done} of 100")
        if done < 100:
            await anyio.sleep(0.05)
    return str(ctx.progress_token if ctx.progress_token is not None else 0)


@server.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Streams progress, never a request, then completes."""
    await ctx.progress(1, 1, "streaming")
    return "Streaming complete"


# ---------------------------------------------------------------------- questions to the client


@server.tool()
async def test_sampling(ctx: Context, prompt: str) -> str:
    """Asks the client's model to answer the prompt."""
    message = {"role": "user", "content": {"type": "text", "text": prompt}}
    result = await ctx.sample([message], 100)
    return f"LLM response: {getattr(result.content, 'text', '')}"


@server.tool()
async def test_elicitation(ctx: Context, message: str) -> str:
    """Asks the user for a username and an email address."""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await ctx.elicit(message, schema)
    return f"User response: action={result.action}, content={json.dumps(result.content or {})}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks for a form whose fields carry defaults (SEP-1034)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    result = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return (
        f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}"
    )


def _titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks for every kind of enum field (SEP-1330)."""
    options = ["option1", "option2", "option3"]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": options,
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": _titled(
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ),
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": options},
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "anyOf": _titled(
                        ("value1", "First Choice"),
                        ("value2", "Second Choice"),
                        ("value3", "Third Choice"),
                    )
                },
            },
        },
        "required": [],
    }
    result = await ctx.elicit("Please select options from the enum fields", schema)
    return (
        f"Elicitation completed: action={result.action}, content={json.dumps(result.content or {})}"
    )


@server.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability."""
    ctx.require("sampling")
    return "Success"


NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@server.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks for the user's name, then greets them."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Hello, {(answer.content or {}).get('name', 'unknown')}!"


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    question = {
        "role": "user",
        "content": {"type": "text", "text": "What is the capital of France?"},
    }
    answer = await ctx.sample([question], 100, key="capital_question")
    return f"Sampling result: {getattr(answer.content, 'text', '')}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client for its roots."""
    answer = await ctx.list_roots(key="client_roots")
    return f"Found {len(answer.roots)} root(s)"


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation; the answer comes back with the sealed request state."""
    answer = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    return f"state-ok: requestState validated ({answer.action})"


@server.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks for a confirmation; an altered request state is refused."""
    answer = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    return f"confirmed: {answer.action}"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks three questions in one round."""
    greeting = {"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}
    answers = await ctx.ask(
        {
            "user_name": Elicit("What is your name?", NAME_SCHEMA),
            "greeting": Sample([greeting], 50),
            "client_roots": ListRoots(),
        }
    )
    name = (answers["user_name"].content or {}).get("name", "unknown")
    said = getattr(answers["greeting"].content, "text", "")
    return f"Name: {name}; Greeting: {said}; Roots: {len(answers['client_roots'].roots)}"


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks two questions, one round each."""
    first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
    color_schema = {
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"],
    }
    second = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
    name = (first.content or {}).get("name")
    return f"Multi-round complete for {name} who likes {(second.content or {}).get('color')}"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what the client declared it can answer."""
    caps = ctx.client_capabilities
    questions: dict[str, Any] = {}
    if caps.elicitation is not None:
        questions["confirm"] = Elicit("Please confirm", CONFIRM_SCHEMA)
    if caps.sampling is not None:
        hello = {"role": "user", "content": {"type": "text", "text": "Say hello"}}
        questions["hello"] = Sample([hello], 20)
    if caps.roots is not None:
        questions["client_roots"] = ListRoots()
    answers = await ctx.ask(questions)
    return f"capabilities-ok: received {', '.join(sorted(answers))}"


# ---------------------------------------------------------------------- list changes


def test_dynamic_tool() -> str:
    """Exists only while the tool list is being changed."""
    return "dynamic"


@server.tool()
async def test_trigger_tool_change() -> str:
    """Changes the tool list and says so to every listener."""
    server.tool()(test_dynamic_tool)
    server.remove_tool("test_dynamic_tool", notify=False)  # one notification, sent here
    await server.notify_tools_changed()
    return "tool list changed"


@server.tool()
async def test_trigger_prompt_change() -> str:
    """Says the prompt list changed to every listener."""
    await server.notify_prompts_changed()
    return "prompt list changed"


# ---------------------------------------------------------------------- schema fixtures

# Served verbatim in every revision: $defs with an $anchor, allOf/anyOf, if/then/else.
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(description="Tool with JSON Schema 2020-12 features", input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    return "received " + json.dumps(arguments, sort_keys=True)


# Arguments a 2026-07-28 HTTP client mirrors into Mcp-Param-* headers (the server checks them).
HEADER_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "dry_run": {"type": "boolean", "x-mcp-header": "DryRun"},
    },
    "required": ["region"],
}


@server.tool(input_schema=HEADER_PARAMS)
def test_header_params(region: str, priority: int | None = None, dry_run: bool = False) -> str:
    """Echoes the arguments its Mcp-Param-Region, -Priority and -DryRun headers mirror."""
    return f"region={region} priority={priority} dry_run={dry_run}"


# ---------------------------------------------------------------------- tasks (2025-11-25 native
# tasks and the 2026-07-28 Tasks extension): the fixtures of the suite's tasks-* scenarios

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


@server.tool()
def greet(name: str) -> str:
    """Greets by name (never a task)."""
    return f"Hello, {name}!"


@server.tool(task="optional")
async def slow_compute(ctx: Context, seconds: float = 1, label: str = "") -> str:
    """Sleeps `seconds`, then answers (a task when the client takes tasks)."""
    await ctx.progress(0, seconds, f"computing {label}".strip())
    await anyio.sleep(seconds)
    return f"computed {label} after {seconds} s".replace("  ", " ")


@server.tool(task="optional", retry="safe")
async def retried_compute(ctx: Context, seconds: float = 1, label: str = "") -> str:
    """As slow_compute, but safe to run again from the start: a queued task of it survives its
    worker's death or shutdown (run again by another worker)."""
    await ctx.progress(0, seconds, f"computing {label}".strip())
    await anyio.sleep(seconds)
    return f"computed {label} after {seconds} s".replace("  ", " ")


@server.tool(task="required")
async def failing_job() -> str:
    """Reports a tool error after about a second (only as a task)."""
    await anyio.sleep(1)
    raise ToolError("the job failed")


@server.tool(task="optional")
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error (the task turns failed)."""
    raise ProtocolError(-32603, "the job hit an internal error")


@server.tool(task="optional")
async def confirm_delete(ctx: Context, filename: str) -> str:
    """Asks for confirmation, then deletes (nothing: a fixture)."""
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM)
    if answer.action != "accept" or not (answer.content or {}).get("confirm"):
        return f"kept {filename}"
    return f"deleted {filename}"


@server.tool(task="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once."""
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
    }
    answers = await ctx.ask(
        {"first": Elicit("First input?", schema), "second": Elicit("Second input?", schema)}
    )
    names = [str((a.content or {}).get("name")) for a in answers.values()]
    return "got " + " and ".join(names)


@server.tool(task="required", defer_task=True)
async def test_tool_with_task(ctx: Context) -> str:
    """Asks for a name within the request, then goes on as a task."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answer = await ctx.elicit("What is your name?", schema, key="user_name")
    await ctx.become_task()
    await anyio.sleep(0.2)
    return f"Hello, {(answer.content or {}).get('name')}!"


# ---------------------------------------------------------------------- resources


@server.resource(
    "test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary",
    name="static-binary",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
def static_binary() -> pub.BlobResourceContents:
    return pub.BlobResourceContents(uri="test://static-binary", mimeType="image/png", blob=IMAGE)


@server.resource(
    "test://watched-resource",
    name="watched-resource",
    description="A resource that auto-updates every 3 seconds",
    mime_type="text/plain",
)
def watched_resource() -> str:
    return "Watched resource content"


@server.resource_template(
    "test://template/{id}/data",
    name="template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
def template(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# ---------------------------------------------------------------------- prompts


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:  # noqa: N803 (the wire name)
    """A prompt that embeds a resource"""
    return [
        embedded(resourceUri, "text/plain", "Embedded resource content for testing."),
        "Please process the embedded resource above.",
    ]


@server.prompt()
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image"""
    return [image(), "Please analyze the image above."]


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """MRTR: prompt that requires elicitation input"""
    schema = {
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"],
    }
    answer = await ctx.elicit("What context should the prompt use?", schema, key="user_context")
    return f"Prompt with context: {(answer.content or {}).get('context')}"


@server.completer()
def complete(params: pub.CompleteRequestParams) -> list[str]:
    return []


def resource_server(
    issuer: str | None, resource: str | None, scopes: list[str]
) -> ResourceServerAuth | None:
    """The OAuth resource server options of `--auth-issuer`, or None without it."""
    if issuer is None or resource is None:
        return None
    return ResourceServerAuth(
        verifier=JwtVerifier(issuer=issuer, audience=resource),
        resource=resource,
        authorization_servers=[issuer],
        scopes_supported=scopes,
        required_scopes={"*": scopes} if scopes else {},
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="The conformance fixture server.")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        help="a Host/Origin name to accept besides loopback (repeatable; '*' for any)",
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="carry change notifications between instances through Redis pub/sub "
        "(redis://host:port/db); default: this process only",
    )
    parser.add_argument(
        "--auth-issuer",
        metavar="URL",
        help="require JWT access tokens of this OAuth authorization server (needs --resource)",
    )
    parser.add_argument(
        "--resource", metavar="URL", help="this server's canonical URL, the tokens' audience"
    )
    parser.add_argument(
        "--scope",
        action="append",
        default=[],
        help="a scope every request needs (repeatable; with --auth-issuer)",
    )
    parser.add_argument(
        "--tasks",
        metavar="STORE",
        default="memory",
        help="where tasks live: memory (this process), sqlite:PATH (a file, kept across "
        "restarts) or redis://HOST:PORT/DB (shared by instances); default: memory",
    )
    parser.add_argument(
        "--task-lease",
        metavar="SECONDS",
        type=float,
        default=30.0,
        help="a task whose instance stopped reads failed after this long (default 30)",
    )
    parser.add_argument(
        "--task-queue",
        metavar="URL",
        help="queue modern task calls in this Redis (redis://HOST:PORT/DB) for `mcpio worker` "
        "processes instead of running them here (needs --tasks on the same Redis)",
    )
    parser.add_argument(
        "--task-queue-max",
        metavar="N",
        type=int,
        default=10_000,
        help="tasks queued and not finished before new ones are refused (default 10000)",
    )
    parser.add_argument(
        "--task-queue-max-per-client",
        metavar="N",
        type=int,
        default=1_000,
        help="of those, at most this many of one client (address or principal; default 1000)",
    )
    parser.add_argument(
        "--task-grace",
        metavar="SECONDS",
        type=float,
        default=10.0,
        help="at SIGTERM, how long tasks running here get to finish (default 10)",
    )
    parser.add_argument(
        "--skills",
        metavar="DIR",
        help="publish the Agent Skills under DIR (SEP-2640: skill:// resources, skills/list)",
    )
    args = parser.parse_args(argv[1:])
    if args.skills:
        try:
            server.skills(args.skills)
        except ValueError as exc:
            parser.error(str(exc))
    try:
        server.tasks.store = open_task_store(args.tasks)
    except (ValueError, TaskStoreError) as exc:
        parser.error(str(exc))
    server.tasks.lease_seconds = args.task_lease
    server.tasks.grace_seconds = args.task_grace
    if args.task_queue:
        from mcpio.tasks import RedisTaskQueue

        server.tasks.queue = RedisTaskQueue(
            args.task_queue,
            max_queued=args.task_queue_max,
            max_queued_per_requestor=args.task_queue_max_per_client,
        )
    if args.auth_issuer and (not args.resource or args.transport != "http"):
        parser.error("--auth-issuer needs the http transport and --resource")
    if args.redis:
        from mcpio.server import RedisBus

        server.bus = RedisBus(args.redis)
    key = os.environ.get("MCPIO_STATE_KEY")  # instances behind one balancer share it
    if key:
        server.sealer = Sealer(bytes.fromhex(key))
    if args.transport == "stdio":
        server.run_stdio()
    else:
        hosts = frozenset({"127.0.0.1", "localhost", "[::1]", *args.allow_host})
        auth = resource_server(args.auth_issuer, args.resource, args.scope)
        server.run_http(args.host, args.port, allowed_hosts=hosts, auth=auth)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
