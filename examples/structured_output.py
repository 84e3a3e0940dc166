"""Structured tool output: the output schema from the return annotation, read back typed."""

import anyio
from pydantic import BaseModel

from mcpio import Client, Server


class Weather(BaseModel):
    city: str
    celsius: float


server = Server("weather", "1.0")


@server.tool()
async def weather(city: str) -> Weather:  # outputSchema: Weather's JSON Schema
    return Weather(city=city, celsius=21.5)


@server.tool()
async def count() -> int:  # outputSchema: {"result": integer}
    return 3


async def main() -> None:
    async with Client(server) as client:  # in process (a command line or URL as well)
        oslo = await client.call_tool("weather", {"city": "Oslo"}, result_type=Weather)
        n = await client.call_tool("count", result_type=int)  # unwrapped
        print(oslo.celsius, n)  # 21.5 3


anyio.run(main)

# Output:
#   21.5 3
