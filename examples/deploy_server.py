"""A server whose tool asks the user (elicitation) and reports progress; run over stdio by
examples/deploy_client.py.
"""

from mcpio import Context, Server, ToolError

server = Server("demo", "1.0")


@server.tool()
async def add(a: int, b: int) -> str:  # input schema from the type hints
    """Adds two integers."""  # the docstring is the description
    return str(a + b)


@server.tool()
async def deploy(ctx: Context, target: str) -> str:
    answer = await ctx.elicit(
        f"Deploy to {target}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    if not (answer.content or {}).get("ok"):
        raise ToolError("not confirmed")  # a tool result marked isError
    await ctx.progress(1, 1, "done")
    return "deployed"


@server.resource("demo://readme", mime_type="text/plain")
def readme() -> str:
    return "hello"


server.run_stdio()  # or server.run_http("127.0.0.1", 8000)
