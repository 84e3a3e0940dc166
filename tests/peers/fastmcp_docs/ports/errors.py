"""The mcpio port of originals/errors.py (FastMCP's error handling), written after reading
docs/servers/errors.md."""

from typing import Any

from mcpio import ResourceError, Server, ToolError

server = Server("Masked errors", mask_error_details=True)


@server.tool
def share(total: float, people: float) -> float:
    """Each person's share of a total."""
    if people == 0:
        raise ToolError("Nobody to share with.")
    if people < 0:
        raise TypeError("people count came from a corrupt row 88")
    return total / people


@server.resource("status://public-failure")
def public_failure() -> str:
    raise ResourceError("The archive is unreachable")


@server.resource("status://private-failure")
def private_failure() -> str:
    raise ValueError("password file /opt/app/.env missing")


@server.resource("records://{key}")
def record(key: str) -> dict[str, Any]:
    if key == "locked":
        raise ValueError("row lock held by job 17")
    if key == "absent":
        raise ResourceError("No record with key 'absent'")
    return {"key": key, "state": "ok"}
