"""The OAuth client: the authorization code flow with a browser step of your own.

Its main needs a browser and a real authorization server: the tests import it, not run it.
"""

import anyio

from mcpio import Client
from mcpio.auth import FileTokenStore, OAuth


async def open_browser(url: str) -> str:
    """Show the user `url`; return the URL the browser was redirected to (or serve the
    redirect URI with a one-shot local HTTP server and return what it received)."""
    print("Sign in at", url)
    return await anyio.to_thread.run_sync(input, "Paste the URL you were sent back to: ")


auth = OAuth(
    redirect=open_browser,
    redirect_uri="http://127.0.0.1:33418/callback",
    store=FileTokenStore("~/.config/myapp/tokens.json"),
)


async def main() -> None:
    async with Client("https://example.com/mcp", auth=auth) as client:
        print(await client.list_tools())


if __name__ == "__main__":
    anyio.run(main)
