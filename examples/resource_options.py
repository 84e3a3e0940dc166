"""FastMCP's resource keywords: templates through `@resource`, `{path*}`, screened values,
annotations and tags."""

import anyio

from mcpio import Client, McpError, Server

server = Server("docs-demo")
DOCS = {"guide/intro.md": "# Intro"}


# --8<-- [start:template]
@server.resource("stock://{sku}/level")  # {variables}: a resource template
def stock_level(sku: str) -> str:
    return f"{sku}: 12 on the shelf"


# --8<-- [end:template]


# --8<-- [start:wildcard]
@server.resource("docs://{path*}")  # FastMCP's {path*}: several segments, "/" and all
def doc(path: str) -> str:
    return DOCS.get(path, "not found")


# --8<-- [end:wildcard]


# --8<-- [start:unscreened]
@server.resource("git://diff/{ref}", unscreened={"ref"})  # its value may hold ".."
def diff(ref: str) -> str:
    return f"diff of {ref}"


# --8<-- [end:unscreened]


# --8<-- [start:annotations]
@server.resource(
    "config://app",
    annotations={"audience": ["assistant"], "priority": 0.8},
    meta={"owner": "ops"},
    tags={"internal"},
)
def config() -> str:
    return "{}"


# --8<-- [end:annotations]


async def main() -> None:
    async with Client(server) as client:
        templates = await client.list_resource_templates()
        print([t.uriTemplate for t in templates.resourceTemplates])
        for uri in ("stock://A-113/level", "docs://guide/intro.md", "git://diff/HEAD~3..HEAD"):
            read = await client.read_resource(uri)
            print(getattr(read.contents[0], "text", None))
        try:
            await client.read_resource("docs://../../etc/passwd")
        except McpError as error:
            print(error.message)
        listed = (await client.list_resources()).resources[0]
        print(listed.annotations and listed.annotations.priority)


anyio.run(main)

# Output:
#   ['stock://{sku}/level', 'docs://{path*}', 'git://diff/{ref}']
#   12 on the shelf
#   # Intro
#   diff of HEAD~3..HEAD
#   invalid value for 'path' in docs://../../etc/passwd: it climbs above its directory (..)
#   0.8
