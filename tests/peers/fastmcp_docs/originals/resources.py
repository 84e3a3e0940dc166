"""Exercises the features of FastMCP's Resources page (docs/servers/resources.mdx) under
FastMCP, static resources: text, JSON text, the decorator's keywords, an async resource
answering a dict, ResourceError and another exception."""

import json

from fastmcp import FastMCP
from fastmcp.exceptions import ResourceError

mcp = FastMCP(name="Settings store")


@mcp.resource("note://welcome")
def welcome_note() -> str:
    """A short welcome note."""
    return "Welcome to the settings store."


@mcp.resource("settings://display")
def display_settings() -> str:
    """Display settings as JSON text."""
    return json.dumps({"font": "serif", "size": 14, "panels": ["left", "right"]})


@mcp.resource(
    uri="settings://health",
    name="HealthReport",
    description="Says whether the store is up.",
    mime_type="application/json",
    tags={"ops", "checks"},
    meta={"rev": "7", "owner": "ops"},
)
def health() -> str:
    """Not shown: the description keyword replaces this docstring."""
    return json.dumps({"up": True, "checks": 5})


@mcp.resource("stats://visitors")
async def visitors() -> dict:
    """Today's visitors, counted."""
    return {"today": 17}


@mcp.resource("note://offline")
def offline_note() -> str:
    """Fails with a message meant for the client."""
    raise ResourceError("The note store is offline")


@mcp.resource("note://internal")
def internal_note() -> str:
    """Fails with a message not meant for the client."""
    raise ValueError("key file at /srv/keys/app.pem is unreadable")
