"""The Resources page, section by section: each `--8<--` section is one snippet of
docs/servers/resources.md, and main() reads what it defines and prints what a client sees."""

from typing import Any

import anyio

from mcpio import Client, McpError, ResourceError, Server

# --8<-- [start:first]
server = Server("library")


@server.resource("library://about")
def about() -> str:
    """What this library holds."""
    return "A small library."


# --8<-- [end:first]


async def read_it() -> None:
    # --8<-- [start:read]
    async with Client(server) as client:
        read = await client.read_resource("library://about")
        print(read.contents[0].uri, read.contents[0].mimeType)  # library://about text/plain
    # --8<-- [end:read]


# --8<-- [start:values]
@server.resource("library://stats")
def stats() -> dict[str, Any]:  # not text: sent as its JSON text, application/json
    return {"books": 2, "members": 40}


@server.resource("library://logo.png", mime_type="image/png")
def logo() -> bytes:  # bytes: a base64 blob
    return b"\x89PNG\r\n\x1a\n"


@server.resource("library://readme", mime_type="text/markdown")
def readme() -> str:
    return "# The library"


# --8<-- [end:values]

BOOKS = {7: "Dune", 8: "Solaris"}


# --8<-- [start:template]
@server.resource("library://books/{id}")
def book(id: int) -> str:  # the variable arrives as its annotation says: 7, not "7"
    return BOOKS.get(id, "unknown")


# --8<-- [end:template]


# --8<-- [start:query]
@server.resource("library://search{?q,limit}")
def search(q: str = "", limit: int = 10) -> str:  # each query variable optional
    return ", ".join(t for t in BOOKS.values() if q.lower() in t.lower())[:limit]


# --8<-- [end:query]


# --8<-- [start:errors]
@server.resource("library://loans/{member}")
def loans(member: str) -> str:
    if member != "ann":
        raise ResourceError(f"no member {member!r}")  # the client reads this message
    return "Dune"


# --8<-- [end:errors]


def text(read: Any) -> str | None:
    """The text of a read's first contents."""
    return getattr(read.contents[0], "text", None)


async def main() -> None:
    await read_it()
    async with Client(server) as client:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        print([(str(r.uri), r.description) for r in listed.resources][0])
        print([t.uriTemplate for t in templates.resourceTemplates])
        for uri in ("library://stats", "library://readme"):
            read = await client.read_resource(uri)
            print(read.contents[0].mimeType, text(read))
        blob = (await client.read_resource("library://logo.png")).contents[0]
        print(blob.mimeType, getattr(blob, "blob", None))
        for uri in ("library://books/7", "library://search?q=sol"):
            print(text(await client.read_resource(uri)))
        try:
            await client.read_resource("library://loans/bob")
        except McpError as error:  # -32603, ResourceError's message as it is
            print(error)


anyio.run(main)

# Output:
#   library://about text/plain
#   ('library://about', 'What this library holds.')
#   ['library://books/{id}', 'library://search{?q,limit}', 'library://loans/{member}']
#   application/json {"books": 2, "members": 40}
#   text/markdown # The library
#   image/png iVBORw0KGgo=
#   Dune
#   Solaris
#   no member 'bob'
