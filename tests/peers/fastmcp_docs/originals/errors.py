"""Exercises the error handling FastMCP's Tools, Resources and Prompts pages describe
(docs/servers/tools.mdx, resources.mdx, prompts.mdx) under FastMCP with
`mask_error_details=True`: ToolError and ResourceError reach the client, other exceptions are
masked, in a tool, a resource and a template."""

from fastmcp import FastMCP
from fastmcp.exceptions import ResourceError, ToolError

mcp = FastMCP(name="Masked errors", mask_error_details=True)


@mcp.tool
def share(total: float, people: float) -> float:
    """Each person's share of a total."""
    if people == 0:
        raise ToolError("Nobody to share with.")
    if people < 0:
        raise TypeError("people count came from a corrupt row 88")
    return total / people


@mcp.resource("status://public-failure")
def public_failure() -> str:
    raise ResourceError("The archive is unreachable")


@mcp.resource("status://private-failure")
def private_failure() -> str:
    raise ValueError("password file /opt/app/.env missing")


@mcp.resource("records://{key}")
def record(key: str) -> dict:
    if key == "locked":
        raise ValueError("row lock held by job 17")
    if key == "absent":
        raise ResourceError("No record with key 'absent'")
    return {"key": key, "state": "ok"}
