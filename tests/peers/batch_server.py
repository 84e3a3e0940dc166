"""A server for the batch tests (tests/server/test_hardening_batch.py), served in memory, over HTTP, or
over its stdio when run as a script: handlers that answer, and handlers that raise."""

from mcpio import Context, McpError, Server

REFUSED = -32001  # the code `refuses` raises


def batch_server() -> Server:
    """The server: `echo` answers; `fails` raises (its failed result); `refuses` raises an MCP
    error; resource `bug://read` and prompt `bug` raise (-32603, their details masked); `roots`
    asks the client."""
    server = Server("batches", "1.0", mask_error_details=True)

    @server.tool()
    async def echo(text: str) -> str:
        """Echoes."""
        return text

    @server.tool()
    async def fails() -> str:
        """Raises: the tool's failure, a result with isError."""
        raise RuntimeError("a tool's bug")

    @server.tool()
    async def refuses() -> str:
        """Raises the JSON-RPC error it chose."""
        raise McpError(REFUSED, "refused")

    @server.tool()
    async def roots(ctx: Context) -> str:
        """Asks the client for its roots, and says how many it has."""
        return str(len((await ctx.list_roots()).roots))

    @server.resource("bug://read")
    async def read() -> str:
        raise RuntimeError("a resource's bug")

    @server.prompt()
    async def bug() -> str:
        """Raises."""
        raise RuntimeError("a prompt's bug")

    return server


if __name__ == "__main__":
    batch_server().run_stdio()
