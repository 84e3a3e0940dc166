"""Limits: a server's bounds are set where it is made, and a client past one gets a clear error
(every bound, its default and what a client sees: the Limits page)."""

import anyio

from mcpio import Client, McpError, Server
from mcpio.middleware import RateLimitMiddleware

server = Server(
    "limited",
    "1.0",
    middleware=[RateLimitMiddleware(3, 60)],  # three requests a minute for each client
    max_answer_bytes=64 * 1024,  # the largest answer a client may give to the server's questions
)


@server.tool()
def ping() -> str:
    return "pong"


async def main() -> None:
    async with Client(server) as client:  # its server/discover is the first request
        for _ in range(3):
            try:
                result = await client.call_tool("ping", {})
                print(getattr(result.content[0], "text", None))
            except McpError as error:
                print(error.code, error.message, error.data)


if __name__ == "__main__":
    anyio.run(main)
    # Over HTTP the host's bounds are keywords of run_http (and http_app), for example:
    # server.run_http("127.0.0.1", 8000, max_sessions_per_network=50, max_parsing_bytes=8 << 20)

# Output:
#   pong
#   pong
#   -32029 rate limit: 3 requests per 60 s {'retryAfterSeconds': 60}
