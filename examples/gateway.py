"""A gateway: one HTTP endpoint, with OAuth, in front of two stdio servers and a remote one.

Nothing connects until a call needs a target: the tests import it (the targets are placeholders).
"""

import os

from mcpio import JwtVerifier, ResourceServerAuth, Server
from mcpio.client import proxy_server
from mcpio.server import Sealer

gateway = Server("gateway")
gateway.mount(proxy_server(["python", "files_server.py"]), namespace="files")
gateway.mount(
    proxy_server({"command": "npx", "args": ["-y", "some-mcp-server"]}), namespace="tools"
)
gateway.mount(
    proxy_server(
        {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
    ),
    namespace="remote",
)
# every instance the same key (hex, 32 bytes or more): what one seals, the others open
gateway.sealer = Sealer(bytes.fromhex(os.environ["MCPIO_STATE_KEY"]))
auth = ResourceServerAuth(
    verifier=JwtVerifier(issuer="https://auth.example.com", audience="https://gw.example.com/mcp"),
    resource="https://gw.example.com/mcp",
    authorization_servers=["https://auth.example.com"],
)
app = gateway.http_app(auth=auth)  # serve: uvicorn gateway:app --host 127.0.0.1 --port 8000
