"""The server as an OAuth resource server: JWT access tokens from one issuer, scopes per tool.

Serve `app` with uvicorn (`uvicorn examples.auth_server:app`); the tests import it.
"""

# also in mcpio.auth; loaded on first use
from mcpio import Context, JwtVerifier, ResourceServerAuth, Server

server = Server("demo", "1.0")
auth = ResourceServerAuth(
    verifier=JwtVerifier(issuer="https://auth.example.com", audience="https://mcp.example.com/mcp"),
    resource="https://mcp.example.com/mcp",  # this server's canonical URL (RFC 8707)
    authorization_servers=["https://auth.example.com"],
    scopes_supported=["mcp:read", "mcp:write"],
    required_scopes={"*": ["mcp:read"], "tools/call:deploy": ["mcp:write"]},
)
app = server.http_app(auth=auth)  # or server.run_http(..., auth=auth)


@server.tool()
async def whoami(ctx: Context) -> str:
    principal = ctx.principal  # Principal(subject, scopes, claims)
    return principal.subject if principal is not None else "anonymous"
