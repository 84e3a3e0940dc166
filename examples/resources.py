"""Resources and RFC 6570 resource templates, read by a client in the same process."""

import anyio

from mcpio import Client, Server

server = Server("library", "1.0")
BOOKS = {7: "Dune", 8: "Solaris"}


@server.resource("library://about", mime_type="text/plain")
def about() -> str:
    return "A small library."


@server.resource_template("library://books/{id}", mime_type="text/plain")
def book(id: int) -> str:  # the variable arrives as its annotation says: 7, not "7"
    return BOOKS.get(id, "unknown")


@server.resource_template("library://search{?q,limit}")
def search(q: str, limit: int = 10) -> str:  # query variables, each optional with a default
    return ", ".join(t for t in BOOKS.values() if q.lower() in t.lower())[:limit]


async def main() -> None:
    async with Client(server) as client:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        print([str(r.uri) for r in listed.resources])
        print([t.uriTemplate for t in templates.resourceTemplates])
        for uri in ("library://about", "library://books/7", "library://search?q=sol"):
            read = await client.read_resource(uri)
            print(getattr(read.contents[0], "text", None))


anyio.run(main)

# Output:
#   ['library://about']
#   ['library://books/{id}', 'library://search{?q,limit}']
#   A small library.
#   Dune
#   Solaris
