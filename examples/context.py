"""What a handler's `ctx` offers: progress, log messages, sampling and roots, and the client's
callbacks that answer them."""

from typing import Any

import anyio

from mcpio import Client, Context, Server

server = Server("assistant", "1.0")


@server.tool()
async def summarize(ctx: Context, topic: str) -> str:
    # On 2026-07-28 each question is an input_required round and the handler runs again on the
    # retry with its answers: ask first, act after (or keep what runs twice harmless).
    message = {"role": "user", "content": {"type": "text", "text": f"Summarize {topic}"}}
    answer = await ctx.sample([message], max_tokens=50)  # the client's model
    roots = await ctx.list_roots()  # the folders the client shares
    await ctx.info(f"summarizing {topic}")  # a log message, if the client asked for them
    await ctx.progress(1, 1, "done")  # if the client asked for progress
    return f"{getattr(answer.content, 'text', '')} ({len(roots.roots)} root)"


async def sampling(params: Any) -> dict[str, Any]:
    text = params.messages[0].content.text
    return {"role": "assistant", "model": "stub", "content": {"type": "text", "text": text + "!"}}


def on_log(params: Any) -> None:
    print("log:", params.level, params.data)


def on_progress(progress: float, total: float | None, message: str | None) -> None:
    print("progress:", progress, total, message)


async def main() -> None:
    async with Client(server, sampling=sampling, roots=["/tmp"], on_log=on_log) as client:
        await client.set_log_level("info")
        result = await client.call_tool("summarize", {"topic": "MCP"}, progress=on_progress)
        print(getattr(result.content[0], "text", None))


anyio.run(main)

# Output:
#   log: info summarizing MCP
#   progress: 1 1 done
#   Summarize MCP! (1 root)
