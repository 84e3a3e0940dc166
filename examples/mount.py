"""One server re-serving another's tools and resources under a namespace."""

import anyio

from mcpio import Client, Server

# --8<-- [start:first]
weather = Server("weather")


@weather.tool()
def forecast(city: str) -> str:
    return f"Sunny in {city}"


@weather.resource("data://cities")
def cities() -> str:
    return "Paris, Oslo"


main = Server("main")
main.mount(weather, namespace="weather")  # weather_forecast, data://weather/cities
# --8<-- [end:first]


async def main_() -> None:
    # --8<-- [start:call]
    async with Client(main) as client:
        print([t.name for t in (await client.list_tools()).tools])  # ['weather_forecast']
        read = await client.read_resource("data://weather/cities")
        print(getattr(read.contents[0], "text", None))  # Paris, Oslo
    # --8<-- [end:call]


anyio.run(main_)

# Output:
#   ['weather_forecast']
#   Paris, Oslo
