"""A server mounted without a namespace: its names served as they are (FastMCP's
`mount(server)`); a name both servers have handled as `on_duplicate` says."""

import anyio

from mcpio import Client, Server

# --8<-- [start:merged]
library = Server("library")


@library.tool()
def due_date(title: str) -> str:
    return f"{title}: due back in 14 days"


main = Server("main", on_duplicate="error")  # a shared name refuses the mount


@main.tool()
def hello() -> str:
    return "hello"


main.mount(library)  # no namespace: `due_date` stays `due_date`
# --8<-- [end:merged]


async def main_() -> None:
    async with Client(main) as client:
        print([t.name for t in (await client.list_tools()).tools])  # ['hello', 'due_date']
        result = await client.call_tool("due_date", {"title": "Dune"})
        print(getattr(result.content[0], "text", None))  # Dune: due back in 14 days
    # --8<-- [start:clash]
    clashing = Server("clashing")
    clashing.tool(name="hello")(lambda: "hi")
    try:
        main.mount(clashing)  # main says on_duplicate="error"; "warn" (default) would warn
    except ValueError as exc:
        print(exc)
    # --8<-- [end:clash]


anyio.run(main_)

# Output:
#   ['hello', 'due_date']
#   Dune: due back in 14 days
#   mounting 'clashing' without a namespace: tool 'hello' is offered by both 'main' and 'clashing': give mount() a namespace, or rename one of them
