"""A client's callbacks, against the conformance fixture server (examples/everything_server.py):
the server's sampling and elicitation requests answered, its log messages and progress read."""

import sys
from pathlib import Path
from typing import Any

from mcpio import Client

SERVER = Path(__file__).with_name("everything_server.py")


# --8<-- [start:sampling]
async def sampling(params: Any) -> dict[str, Any]:
    """Answer the server's model request (here without a model)."""
    prompt = params.messages[0].content.text
    return {"role": "assistant", "model": "echo", "content": {"type": "text", "text": prompt}}


# --8<-- [end:sampling]


# --8<-- [start:elicitation]
async def elicitation(params: Any) -> dict[str, Any]:
    """Answer the server's question to the user (`params.requestedSchema` says what to give)."""
    return {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}


# --8<-- [end:elicitation]


# --8<-- [start:logging]
def on_log(params: Any) -> None:
    print("log:", params.data)  # params.level, params.logger too


# --8<-- [end:logging]


async def main() -> None:
    command = [sys.executable, str(SERVER), "stdio"]
    # --8<-- [start:first]
    async with Client(command, sampling=sampling, elicitation=elicitation, on_log=on_log) as client:
        await client.set_log_level("info")  # log messages at info and above
        result = await client.call_tool("test_sampling", {"prompt": "Say hi"})  # asks our model
        print(getattr(result.content[0], "text", None))  # LLM response: Say hi
        # --8<-- [end:first]
        for tool, args in (
            ("test_elicitation", {"message": "Who are you?"}),
            ("test_tool_with_logging", {}),
        ):
            result = await client.call_tool(tool, args)
            print(getattr(result.content[0], "text", None))
        # --8<-- [start:progress]
        steps: list[float] = []
        await client.call_tool("test_tool_with_progress", progress=lambda p, t, m: steps.append(p))
        print("progress:", steps)  # [0, 50, 100]
        # --8<-- [end:progress]


Client.run(main)

# Output:
#   LLM response: Say hi
#   User response: action=accept, content={"username": "ada", "email": "ada@example.com"}
#   log: Tool execution started
#   log: Tool processing data
#   log: Tool execution completed
#   Tool with logging executed successfully
#   progress: [0, 50, 100]
