"""An OAuth proxy in front of GitHub: what an MCP client that discovers it is shown."""

import secrets

import anyio
import httpx

GITHUB_SECRET = "the secret GitHub gave the app"  # in production: from the environment
CONSENT_SECRET = secrets.token_urlsafe(32)

# --8<-- [start:setup]
from mcpio import Context, Server  # noqa: E402
from mcpio.auth import GitHubProvider, OAuthProxy  # noqa: E402

server = Server("demo", "1.0")
proxy = OAuthProxy(
    GitHubProvider(client_id="Iv1.0123456789abcdef", client_secret=GITHUB_SECRET),
    base_url="https://mcp.example.com",  # the server's public URL: the proxy's issuer
    secret=CONSENT_SECRET,  # the same on every instance
)
app = server.http_app(
    auth=proxy.resource_server(),
    routes=proxy.routes(),
    allowed_hosts=frozenset(
        {"mcp.example.com"}
    ),  # the Host its clients send (default: loopback only)
)


@server.tool()
async def whoami(ctx: Context) -> str:
    assert ctx.principal is not None  # the proxy's resource server lets no anonymous call in
    claims = ctx.principal.claims  # the upstream identity: sub, email, login, orgs, ...
    return f"{claims['login']} of {', '.join(claims['orgs'])}"


# --8<-- [end:setup]
# --8<-- [start:members]
from mcpio import Call, Middleware, ToolError  # noqa: E402
from mcpio.middleware import CallNext  # noqa: E402


class MembersOnly(Middleware):
    async def on_call_tool(self, call: Call, call_next: CallNext):
        principal = call.ctx.principal
        if principal is None or "octo-org" not in principal.claims.get("orgs", []):
            raise ToolError("for members of octo-org only")
        return await call_next(call)


# --8<-- [end:members]
server.add_middleware(MembersOnly())


async def main() -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://mcp.example.com") as web:
        anonymous = await web.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        print(anonymous.status_code)
        found = (await web.get("/.well-known/oauth-authorization-server")).json()
        for key in ("issuer", "registration_endpoint", "authorization_endpoint"):
            print(key, found[key])


anyio.run(main)

# Output:
#   401
#   issuer https://mcp.example.com
#   registration_endpoint https://mcp.example.com/register
#   authorization_endpoint https://mcp.example.com/authorize
