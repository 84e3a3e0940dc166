"""A FastAPI app's routes as tools, called in process, its dependencies (a header the app
requires) running on every call; a refusal is a tool error with the status and body."""

from typing import Annotated

import anyio
from fastapi import Depends, FastAPI, Header, HTTPException

from mcpio import Client, Server

app = FastAPI(title="Greeter", version="1.0")


def api_key(x_api_key: Annotated[str, Header()]) -> None:
    if x_api_key != "s3cret":
        raise HTTPException(401, "bad key")


@app.get("/greet/{name}", operation_id="greet", dependencies=[Depends(api_key)])
def greet(name: str, loud: bool = False) -> dict[str, str]:
    text = f"Hello, {name}!"
    return {"text": text.upper() if loud else text}


server = Server.from_fastapi(app, headers={"x-api-key": "s3cret"})


async def main() -> None:
    async with Client(server) as client:
        hello = await client.call_tool("greet", {"name": "Ada", "loud": True})
        print(hello.structuredContent)  # {'text': 'HELLO, ADA!'}
    async with Client(Server.from_fastapi(app)) as client:  # without the key
        refused = await client.call_tool("greet", {"name": "Ada", "x_api_key": "nope"})
        print(refused.isError, refused.structuredContent)


anyio.run(main)

# Output:
#   {'text': 'HELLO, ADA!'}
#   True {'status': 401, 'body': {'detail': 'bad key'}}
