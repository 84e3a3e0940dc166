"""The Protocol extensions page, section by section: the smallest extension (a capability
declared), a hook over `tools/list`, one over a request's context, one running beside the
server, and an identifier served twice. Each `--8<--` section is one snippet of
docs/servers/extensions.md."""

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpio import Client, Server
from mcpio.server import Context, Extension


# --8<-- [start:first]
class Locale(Extension):
    """Tells clients which languages this server answers in."""

    id = "com.example/locale"

    def settings(self) -> Mapping[str, Any]:
        return {"languages": ["en", "nb"]}  # capabilities.extensions["com.example/locale"]


server = Server("phrasebook")
server.add_extension(Locale())
# --8<-- [end:first]


# --8<-- [start:list_tools]
class HideDrafts(Extension):
    """Leaves tools whose name starts with `draft_` out of every listing."""

    id = "com.example/hide-drafts"

    def list_tools(self, ctx: Context, tools: Mapping[str, Any]) -> Mapping[str, Any]:
        return {name: entry for name, entry in tools.items() if not name.startswith("draft_")}


# --8<-- [end:list_tools]


# --8<-- [start:lifespan]
class Warmup(Extension):
    """Runs while the server runs, before the server's own lifespan."""

    id = "com.example/warmup"

    def __init__(self) -> None:
        self.ready = False

    def lifespan(self, server: Any) -> Any:
        @asynccontextmanager
        async def running() -> AsyncIterator[None]:
            self.ready = True  # open a pool, start a watch, ...
            yield
            self.ready = False

        return running()


# --8<-- [end:lifespan]

server.add_extension(HideDrafts())
warmup = Warmup()
server.add_extension(warmup)


@server.tool()
def translate(word: str) -> str:
    return {"hello": "hei"}.get(word, word)


@server.tool()
def draft_idioms() -> str:
    return "not ready"


@server.tool()
def warmed() -> bool:
    return warmup.ready


async def main() -> None:
    # --8<-- [start:declared]
    async with Client(server) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        print((capabilities.extensions or {})["com.example/locale"])
    # --8<-- [end:declared]
    async with Client(server) as client:
        print([tool.name for tool in (await client.list_tools()).tools])
        print(await client.call_tool("warmed", result_type=bool))
    # --8<-- [start:twice]
    try:
        server.add_extension(Locale())
    except ValueError as error:
        print(error)
    # --8<-- [end:twice]


anyio.run(main)

# Output:
#   {'languages': ['en', 'nb']}
#   ['translate', 'warmed']
#   True
#   extension 'com.example/locale' is served already
