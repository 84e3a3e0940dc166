"""The Authorization page, section by section: a server that requires tokens, served in process
(httpx's ASGI transport: no port), what a request without a token or scope gets, the metadata,
DPoP's settings, and the verifiers' answers when their issuer cannot be reached. Each `--8<--`
section is one snippet of docs/servers/auth.md."""

import anyio
import httpx

from mcpio import Client, Context, McpError, Server
from mcpio.auth import (
    DpopPolicy,
    IntrospectionVerifier,
    JwtVerifier,
    MemoryReplayCache,
    Principal,
    ResourceServerAuth,
    VerifierUnavailable,
)

RESOURCE = "http://127.0.0.1/mcp"

# --8<-- [start:first]
TOKENS = {"t-ada": Principal("ada", frozenset({"notes:read", "notes:write"})),
          "t-bob": Principal("bob", frozenset({"notes:read"}))}  # fmt: skip


async def check_token(token: str) -> Principal | None:  # or JwtVerifier(...), below
    return TOKENS.get(token)  # None: 401 invalid_token


server = Server("notes")
auth = ResourceServerAuth(
    verifier=check_token,
    resource=RESOURCE,  # this server's canonical URL (RFC 8707)
    authorization_servers=["https://login.example.org"],
    scopes_supported=["notes:read", "notes:write"],
    required_scopes={"*": ["notes:read"], "tools/call:erase": ["notes:write"]},
)
app = server.http_app(auth=auth)  # or server.run_http(..., auth=auth)


@server.tool()
async def whoami(ctx: Context) -> str:
    return ctx.principal.subject if ctx.principal is not None else "anonymous"


@server.tool()
def erase() -> str:
    return "erased"


# --8<-- [end:first]


def in_process() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


async def calls() -> None:
    # --8<-- [start:call]
    async with Client(RESOURCE, auth="t-ada", http=in_process()) as client:
        print(await client.call_tool("whoami", result_type=str))  # ada
    # --8<-- [end:call]
    # --8<-- [start:bearer]
    async with in_process() as http:
        refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        print(refused.status_code, refused.headers["www-authenticate"])
    async with Client(RESOURCE, auth="t-bob", http=in_process()) as client:
        try:
            await client.call_tool("erase")  # needs notes:write: 403 insufficient_scope
        except McpError as error:
            print(error.message)
    # --8<-- [end:bearer]


async def metadata() -> None:
    # --8<-- [start:metadata]
    async with in_process() as http:
        document = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        print(document["authorization_servers"], document["scopes_supported"])
    # --8<-- [end:metadata]


async def dpop() -> None:
    # --8<-- [start:dpop]
    policy = DpopPolicy(
        max_age=300,
        leeway=30,
        replay=MemoryReplayCache(size=100_000),  # or RedisReplayCache("redis://...")
    )
    bound = ResourceServerAuth(
        verifier=check_token, resource=RESOURCE, authorization_servers=[], dpop=policy
    )
    print(bound.metadata()["dpop_signing_alg_values_supported"][:2])
    # --8<-- [end:dpop]


async def verifiers() -> None:
    # --8<-- [start:verifiers]
    jwt = JwtVerifier(issuer="https://login.example.org", audience=RESOURCE, cache_seconds=300)
    print(await jwt("not-a-jwt"))  # None, at once and without a fetch: 401 invalid_token
    introspect = IntrospectionVerifier(
        "http://127.0.0.1:9/introspect", "notes-server", "its-secret", audience=RESOURCE
    )  # an endpoint that does not answer
    try:
        await introspect("opaque-token")  # 503, and not asked again for `backoff` seconds
    except VerifierUnavailable:
        print("VerifierUnavailable")
    # --8<-- [end:verifiers]


async def main() -> None:
    await calls()
    await metadata()
    await dpop()
    await verifiers()


anyio.run(main)

# Output:
#   ada
#   401 Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", scope="notes:read"
#   insufficient scope: needs notes:write
#   ['https://login.example.org'] ['notes:read', 'notes:write']
#   ['ES256', 'ES384']
#   None
#   VerifierUnavailable
