"""One server re-serving another's tools and resources under a namespace."""

import anyio

from mcpio import Client, Server

# --8<-- [start:first]
library = Server("library")


@library.tool()
def due_date(title: str) -> str:
    return f"{title}: due back in 14 days"


@library.resource("data://branches")
def branches() -> str:
    return "Northside, Harbour Road"


main = Server("main")
main.mount(library, namespace="library")  # library_due_date, data://library/branches
# --8<-- [end:first]


async def main_() -> None:
    # --8<-- [start:call]
    async with Client(main) as client:
        print([t.name for t in (await client.list_tools()).tools])  # ['library_due_date']
        read = await client.read_resource("data://library/branches")
        print(getattr(read.contents[0], "text", None))  # Northside, Harbour Road
    # --8<-- [end:call]


anyio.run(main_)

# Output:
#   ['library_due_date']
#   Northside, Harbour Road
