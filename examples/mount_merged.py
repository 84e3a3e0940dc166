"""A server mounted without a namespace: its names served as they are (FastMCP's
`mount(server)`); a name both servers have handled as `on_duplicate` says."""

import anyio

from mcpio import Client, Server

# --8<-- [start:merged]
weather = Server("weather")


@weather.tool()
def forecast(city: str) -> str:
    return f"Sunny in {city}"


main = Server("main", on_duplicate="error")  # a shared name refuses the mount


@main.tool()
def hello() -> str:
    return "hello"


main.mount(weather)  # no namespace: `forecast` stays `forecast`
# --8<-- [end:merged]


async def main_() -> None:
    async with Client(main) as client:
        print([t.name for t in (await client.list_tools()).tools])  # ['hello', 'forecast']
        result = await client.call_tool("forecast", {"city": "Oslo"})
        print(getattr(result.content[0], "text", None))  # Sunny in Oslo
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
#   ['hello', 'forecast']
#   Sunny in Oslo
#   mounting 'clashing' without a namespace: tool 'hello' is offered by both 'main' and 'clashing': give mount() a namespace, or rename one of them
