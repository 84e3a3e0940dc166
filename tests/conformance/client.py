"""The client under test of the official conformance suite's client side, built on `mcpio.Client`.

    conformance client --command "python tests/conformance/client.py" --scenario tools_call

The runner starts a mock server, appends its URL as our last argument and names the scenario in
MCP_CONFORMANCE_SCENARIO (with MCP_CONFORMANCE_CONTEXT, a JSON object, where the scenario hands
the client data, and MCP_CONFORMANCE_PROTOCOL_VERSION, the revision of the run). We connect with
the public `Client` API only (HTTP transport, callbacks for what a server may ask), perform the
scenario's action, check what came back, and exit 0 on success (1 with a reason on stderr
otherwise). The mock server judges the wire; our own checks only catch a client that "passed"
by doing nothing.

Connection: a 2026-07-28 run uses `mode="auto"` (a `server/discover` probe that re-probes on an
unsupported-version answer naming a revision we share, which is what request-metadata checks)
and asserts that no fallback to `initialize` happened; an older run uses `mode="legacy"`
(`initialize`, accepting the server's counter-offer: sse-retry's server answers 2025-03-26).
The auth scenarios (`auth/...`) connect with `auth=OAuth(...)` (mcpio.auth._client): the
browser step is an HTTP GET of the authorization URL whose redirect (the mock authorization
server answers at once) is read for its code, state and iss. Client identification as the
scenario sets it up: pre-registered credentials from MCP_CONFORMANCE_CONTEXT, the suite's
Client ID Metadata Document URL where the server supports it, else dynamic registration; the
client-credentials scenarios use that grant; the workload-identity one the JWT bearer grant
with the scenario's valid workload JWT; the enterprise-managed one the ID-JAG grant with the
IdP and ID token the scenario hands over; the DPoP ones the default flow, which binds its
tokens because the authorization server advertises DPoP. Scenarios whose right outcome is a refusal
(`REFUSALS`) pass when the client refuses (an `authorization failed` or HTTP 403 error) and fail
when it went through.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from pydantic import BaseModel

from mcpio import Client, McpError
from mcpio.auth._client import OAuth, Redirect
from mcpio.client._skills import Skills, SkillVerificationError

MODERN = "2026-07-28"
TIMEOUT = 20.0  # the runner kills the client after 30 s
CIMD_URL = "https://conformance-test.local/client-metadata.json"  # the suite's fixed CIMD URL
REDIRECT_URI = "http://127.0.0.1:3000/callback"
# Auth scenarios where the right client refuses to go on (the suite allows the client's error).
REFUSALS = frozenset(
    {
        "auth/scope-retry-limit",
        "auth/resource-mismatch",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
    }
)


def dump(value: Any) -> Any:
    """A public model (or anything else) as plain JSON data, wire names."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return value


def text_of(result: Any) -> str:
    """The text blocks of a tool result, joined; fails on a tool error."""
    data = dump(result)
    if data.get("isError"):
        raise AssertionError(f"the tool answered isError: {data}")
    return "\n".join(b.get("text", "") for b in data.get("content", []) if b.get("type") == "text")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


@dataclass
class Run:
    """One scenario run: the URL, the scenario's context, the revision, and the hooks the
    scenario sets on the shared callbacks."""

    scenario: str
    url: str
    context: dict[str, Any]
    revision: str
    on_elicit: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    elicited: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    # ------------------------------------------------------------ what the server may ask

    async def elicitation(self, params: Any) -> dict[str, Any]:
        """A user who accepts the form as offered: every field with a `default` keeps it
        (SEP-1034: the form is pre-populated with the defaults); fields without one get a
        plausible value of their type."""
        data = dump(params)
        self.elicited.append(data)
        if self.on_elicit is not None:
            await self.on_elicit(data)
        schema = data.get("requestedSchema") or {}
        content: dict[str, Any] = {}
        for name, prop in (schema.get("properties") or {}).items():
            if "default" in prop:
                content[name] = prop["default"]
            else:
                content[name] = sample_value(prop)
        return {"action": "accept", "content": content}

    async def sampling(self, params: Any) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "This is a test response from the client"},
            "model": "mcpio-conformance-client",
            "stopReason": "endTurn",
        }

    def auth(self) -> OAuth | None:
        if not self.scenario.startswith("auth/"):
            return None
        context = self.context
        if self.scenario.startswith("auth/client-credentials"):
            return OAuth(
                grant="client_credentials",
                client_id=context.get("client_id"),
                client_secret=context.get("client_secret"),
                private_key=context.get("private_key_pem"),
                signing_algorithm=context.get("signing_algorithm") or "ES256",
            )
        if self.scenario == "auth/wif-jwt-bearer":
            return OAuth(
                grant="jwt_bearer",
                client_id=context.get("client_id"),
                assertion=context["valid_jwt"],
            )
        if self.scenario == "auth/enterprise-managed-authorization":
            return OAuth(
                grant="id_jag",
                client_id=context.get("client_id"),
                client_secret=context.get("client_secret"),
                idp_token_endpoint=context.get("idp_token_endpoint"),
                idp_issuer=context.get("idp_issuer"),
                idp_client_id=context.get("idp_client_id"),
                id_token=context["idp_id_token"],
            )
        return OAuth(
            redirect=follow_authorization,
            redirect_uri=REDIRECT_URI,
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            client_metadata_url=CIMD_URL,
            client_name="mcpio-conformance-client",
        )

    def client(self) -> Client:
        mode = "auto" if self.revision >= MODERN else "legacy"
        target: str | list[str] = self.url
        if os.environ.get("MCPIO_CONFORMANCE_VIA_PROXY"):  # `mcpio proxy` (stdio) in between
            proxy = [sys.executable, "-m", "mcpio", "proxy", "--mode", mode]
            target = [*proxy, "--", self.url]
        return Client(
            target,
            mode=mode,
            name="mcpio-conformance-client",
            version="1.0.0",
            elicitation=self.elicitation,
            sampling=self.sampling,
            roots=[{"uri": "file:///tmp/mcpio-conformance", "name": "conformance"}],
            timeout=TIMEOUT,
            probe_timeout=TIMEOUT,
            auth=self.auth(),
        )


async def follow_authorization(url: str) -> Redirect:
    """The user's browser: GET the authorization URL, read where its redirect goes."""
    async with httpx.AsyncClient(follow_redirects=False, timeout=TIMEOUT) as http:
        response = await http.get(url)
    location = response.headers.get("location")
    expect(response.is_redirect and location is not None, f"no redirect: {response.status_code}")
    return Redirect.from_url(str(location))


def sample_value(prop: Mapping[str, Any]) -> Any:
    """A value that satisfies a simple (primitive) property schema."""
    if "enum" in prop and prop["enum"]:
        return prop["enum"][0]
    if "const" in prop:
        return prop["const"]
    kind = prop.get("type")
    if kind == "boolean":
        return True
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.5
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return "us-west1"


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: a sample value for every required property."""
    properties = schema.get("properties") or {}
    return {name: sample_value(properties.get(name) or {}) for name in schema.get("required") or []}


# ---------------------------------------------------------------------- scenarios

Scenario = Callable[[Client, Run], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = fn
        return fn

    return register


@scenario("initialize")
async def initialize(client: Client, run: Run) -> None:
    expect(client.server_info is not None, "no serverInfo after initialize")
    await client.list_tools()


@scenario("tools_call")
async def tools_call(client: Client, run: Run) -> None:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    expect("add_numbers" in tools, f"add_numbers not listed: {sorted(tools)}")
    text = text_of(await client.call_tool("add_numbers", {"a": 2, "b": 3}))
    expect("5" in text, f"unexpected sum: {text!r}")


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(client: Client, run: Run) -> None:
    await client.list_tools()
    text = text_of(await client.call_tool("test_client_elicitation_defaults", {}))
    expect(run.elicited != [], "the server did not elicit")
    expect(text.startswith("Elicitation completed"), f"unexpected answer: {text!r}")


@scenario("sse-retry")
async def sse_retry(client: Client, run: Run) -> None:
    await client.list_tools()
    # The server closes this call's event stream after a priming event with `retry: 500`; the
    # transport reconnects with GET + Last-Event-ID after 500 ms and gets the result there.
    text = text_of(await client.call_tool("test_reconnection", {}))
    expect("Reconnection test completed" in text, f"unexpected answer: {text!r}")


@scenario("request-metadata")
async def request_metadata(client: Client, run: Run) -> None:
    # The server refused the first probe with -32022 {supported: ["2026-07-28"]}; `auto`
    # re-probed with that revision. Every request carries the _meta envelope and the header.
    await client.list_tools()


@scenario("sep-2322-client-request-state")
async def request_state(client: Client, run: Run) -> None:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    expect("test_mrtr_echo_state" in tools, f"MRTR tools not listed: {sorted(tools)}")
    unrelated: list[str] = []

    async def between_rounds(_: dict[str, Any]) -> None:
        # While test_mrtr_echo_state waits for our answer, an unrelated call must carry
        # neither its inputResponses nor its requestState.
        if not unrelated:
            unrelated.append(text_of(await client.call_tool("test_mrtr_unrelated", {})))

    run.on_elicit = between_rounds
    text = text_of(await client.call_tool("test_mrtr_echo_state", {}))
    expect(text == "echo-state-ok", f"echo_state: {text!r}")
    expect(unrelated == ["unrelated-ok"], f"unrelated: {unrelated!r}")
    run.on_elicit = None
    text = text_of(await client.call_tool("test_mrtr_no_state", {}))
    expect(text == "no-state-ok", f"no_state: {text!r}")
    text = text_of(await client.call_tool("test_mrtr_no_result_type", {}))
    expect(text == "no-result-type-test-ok", f"no_result_type: {text!r}")


@scenario("http-standard-headers")
async def standard_headers(client: Client, run: Run) -> None:
    for tool in (await client.list_tools()).tools:
        text_of(await client.call_tool(tool.name, {}))
    for resource in (await client.list_resources()).resources:
        await client.read_resource(resource.uri)
    for prompt in (await client.list_prompts()).prompts:
        await client.get_prompt(prompt.name)


@scenario("http-custom-headers")
async def custom_headers(client: Client, run: Run) -> None:
    await client.list_tools()  # the transport learns the x-mcp-header annotations here
    calls = run.context.get("toolCalls") or []
    expect(calls != [], "no toolCalls in MCP_CONFORMANCE_CONTEXT")
    for call in calls:
        text_of(await client.call_tool(call["name"], call.get("arguments") or {}))


@scenario("http-invalid-tool-headers")
async def invalid_tool_headers(client: Client, run: Run) -> None:
    # The transport drops the tools whose x-mcp-header annotations break the rules; every tool
    # that is left is called.
    tools = (await client.list_tools()).tools
    for tool in tools:
        schema = dump(tool.inputSchema)
        text_of(await client.call_tool(tool.name, sample_arguments(schema)))
    names = sorted(tool.name for tool in tools)
    expect(names == ["valid_tool"], f"kept tools: {names}")


@scenario("json-schema-ref-no-deref")
async def ref_no_deref(client: Client, run: Run) -> None:
    tools = {tool.name: dump(tool.inputSchema) for tool in (await client.list_tools()).tools}
    expect("lookup_user" in tools, f"lookup_user not listed: {sorted(tools)}")
    profile = tools["lookup_user"].get("properties", {}).get("profile", {})
    expect(str(profile.get("$ref", "")).startswith("http"), f"the $ref was not kept: {profile}")


@scenario("json-schema-2020-12-preservation")
async def schema_preservation(client: Client, run: Run) -> None:
    tools = {tool.name: dump(tool.inputSchema) for tool in (await client.list_tools()).tools}
    expect("json_schema_2020_12_tool" in tools, f"focal tool not listed: {sorted(tools)}")
    schema = tools["json_schema_2020_12_tool"]
    text_of(await client.call_tool("json_schema_echo", {"schema": schema}))


async def protected_tool(client: Client, run: Run) -> None:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    expect("test-tool" in tools, f"test-tool not listed: {sorted(tools)}")
    text = text_of(await client.call_tool("test-tool", {}))
    expect(text == "test", f"unexpected answer: {text!r}")


# Skills (SEP-2640): the host discovers, loads on demand, and refuses what fails verification.
SKILL_REFUSALS = {
    "sep-2640-client-verify-digest": "digest",
    "sep-2640-client-verify-size": "size",
    "sep-2640-client-verify-frontmatter": "frontmatter",
}


@scenario("sep-2640-client-no-prefetch")
async def skills_no_prefetch(client: Client, run: Run) -> None:
    entries = await Skills(client).list()  # the registry, from the listing alone
    expect(bool(entries), "skills/list named no skill")


@scenario(*SKILL_REFUSALS)
async def skills_refused(client: Client, run: Run) -> None:
    skills = Skills(client)
    entries = await skills.list()
    expect(bool(entries), "skills/list named no skill")
    try:
        loaded = await skills.load(entries[0])
    except SkillVerificationError as exc:
        expect(exc.check == SKILL_REFUSALS[run.scenario], f"refused for another reason: {exc}")
        print(f"{run.scenario}: refused as expected: {exc}", file=sys.stderr)
        return
    raise AssertionError(f"loaded {loaded.entry.uri}, which should have been refused")


# ---------------------------------------------------------------------- main


async def perform(run: Run) -> None:
    action = SCENARIOS.get(run.scenario, protected_tool)
    if run.scenario in REFUSALS:
        try:
            await connect_and(run, action)
        except McpError as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            refused = "authorization failed" in str(exc) or data.get("status") == 403
            expect(refused, f"failed, but not by refusing: {exc}")
            print(f"{run.scenario}: refused as expected: {exc}", file=sys.stderr)
            return
        raise AssertionError("the client went through where it should have refused")
    await connect_and(run, action)


async def connect_and(run: Run, action: Scenario) -> None:
    async with run.client() as client:
        if run.revision >= MODERN:
            expect(client.revision == run.revision, f"negotiated {client.revision}")
        await action(client, run)


def main(argv: list[str]) -> int:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2 or not name:
        print("usage: MCP_CONFORMANCE_SCENARIO=<name> client.py <server-url>", file=sys.stderr)
        return 2
    if name not in SCENARIOS and not name.startswith("auth/"):
        print(f"scenario {name!r} is not supported by this client", file=sys.stderr)
        return 1
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "2025-11-25"
    run = Run(name, argv[-1], context, revision)
    try:
        anyio.run(perform, run)
    except Exception as exc:  # report and fail: the runner prints our stderr
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"{name}: done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
