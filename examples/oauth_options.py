"""The OAuth client page, section by section: a machine client (client credentials), the
authorization code flow with a redirect step of your own, tokens kept in a file, and a
workload's own JWT (RFC 7523). Everything runs in process: the MCP server through httpx's ASGI
transport, and a small stand-in authorization server (`login`, at the end: not part of the
snippets) through httpx's mock transport. Each `--8<--` section is one snippet of
docs/clients/oauth.md."""

import base64
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx

from mcpio import Client, Context, Server
from mcpio.auth import FileTokenStore, OAuth, Principal, ResourceServerAuth

ISSUER = "https://login.example.org"
MCP = "https://notes.example.org/mcp"
ISSUED: dict[str, Principal] = {}  # the tokens the stand-in authorization server issued
GRANTS: list[str] = []  # the grants it was asked for, in order

server = Server("notes")


@server.tool()
async def whoami(ctx: Context) -> str:
    return ctx.principal.subject if ctx.principal is not None else "anonymous"


async def verify(token: str) -> Principal | None:
    return ISSUED.get(token)


auth_settings = ResourceServerAuth(verifier=verify, resource=MCP, authorization_servers=[ISSUER])
app = server.http_app(auth=auth_settings, allowed_hosts=frozenset({"notes.example.org"}))


def http() -> httpx.AsyncClient:
    """Both servers in process (a real client leaves `http=` out)."""
    return httpx.AsyncClient(transport=InProcess())


async def machine() -> None:
    # --8<-- [start:first]
    auth = OAuth(grant="client_credentials", client_id="nightly-report", client_secret="s3cret")
    async with Client(MCP, auth=auth, http=http()) as client:  # http=: in process, here
        print(await client.call_tool("whoami", result_type=str))  # nightly-report
    # --8<-- [end:first]


async def with_redirect() -> None:
    # --8<-- [start:code]
    async def sign_in(url: str) -> str:
        """Show the user `url`; return the URL the browser was sent back to. Here the user
        signs in at once (the stand-in authorization server's redirect, made by hand)."""
        asked = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        answer = {"code": "c-" + asked["code_challenge"], "state": asked["state"], "iss": ISSUER}
        return asked["redirect_uri"] + "?" + urlencode(answer)

    auth = OAuth(
        redirect=sign_in,
        redirect_uri="http://127.0.0.1:33418/callback",
        client_id="notes-desktop",  # pre-registered; else dynamic registration where offered
    )
    async with Client(MCP, auth=auth, http=http()) as client:
        print(await client.call_tool("whoami", result_type=str))  # notes-desktop's user
    # --8<-- [end:code]


async def kept(folder: Path) -> None:
    # --8<-- [start:store]
    store = FileTokenStore(folder / "tokens.json")  # mode 0600, rewritten atomically
    asked = len(GRANTS)  # the grants the stand-in authorization server was asked for
    for _ in range(2):  # two runs of a program: the second finds the token in the file
        auth = OAuth(
            grant="client_credentials", client_id="cron", client_secret="s3cret", store=store
        )
        async with Client(MCP, auth=auth, http=http()) as client:
            await client.call_tool("whoami")
    print(len(GRANTS) - asked)  # 1
    # --8<-- [end:store]


async def workload() -> None:
    # --8<-- [start:jwt_bearer]
    def platform_token() -> str:  # read anew for every grant: platforms rotate it
        return "eyJ...the workload's JWT"

    auth = OAuth(grant="jwt_bearer", assertion=platform_token, client_id="billing-worker")
    async with Client(MCP, auth=auth, http=http()) as client:
        print(await client.call_tool("whoami", result_type=str))
    # --8<-- [end:jwt_bearer]


def browser() -> Client:
    # --8<-- [start:browser]
    return Client("https://notes.example.org/mcp", auth="oauth")  # the browser's flow, below
    # --8<-- [end:browser]


async def main() -> None:
    await machine()
    await with_redirect()
    with tempfile.TemporaryDirectory() as folder:
        await kept(Path(folder))
    await workload()
    assert browser() is not None


# The stand-in authorization server: its metadata and a token endpoint issuing opaque tokens.
def login(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/.well-known/oauth-authorization-server":
        return httpx.Response(200, json={
            "issuer": ISSUER, "authorization_endpoint": ISSUER + "/authorize",
            "token_endpoint": ISSUER + "/token", "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
        })  # fmt: skip
    if request.url.path != "/token":
        return httpx.Response(404)
    form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
    grant = form["grant_type"].rsplit(":", 1)[-1].replace("jwt-bearer", "jwt_bearer")
    GRANTS.append(grant)
    basic = request.headers.get("authorization", "").removeprefix("Basic ")
    client_id = form.get("client_id") or base64.b64decode(basic).decode().split(":")[0]
    subject = "notes-desktop's user" if grant == "authorization_code" else client_id
    token = f"t{len(ISSUED)}"
    ISSUED[token] = Principal(subject)
    return httpx.Response(200, json={"access_token": token, "token_type": "Bearer"})


class InProcess(httpx.AsyncBaseTransport):
    """login.example.org to the stand-in, anything else to the MCP server's ASGI app."""

    def __init__(self) -> None:
        self.mcp = httpx.ASGITransport(app=app)
        self.login = httpx.MockTransport(login)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        served = self.login if request.url.host == "login.example.org" else self.mcp
        return await served.handle_async_request(request)


anyio.run(main)

# Output:
#   nightly-report
#   notes-desktop's user
#   1
#   billing-worker
