"""The mcpio port of originals/resources.py (FastMCP's Resources page, static resources),
written after reading docs/servers/resources.md."""

import json
from typing import Any

from mcpio import ResourceError, Server

server = Server("Settings store")


@server.resource("note://welcome")
def welcome_note() -> str:
    """A short welcome note."""
    return "Welcome to the settings store."


@server.resource("settings://display")
def display_settings() -> str:
    """Display settings as JSON text."""
    return json.dumps({"font": "serif", "size": 14, "panels": ["left", "right"]})


@server.resource(
    "settings://health",
    name="HealthReport",
    description="Says whether the store is up.",
    mime_type="application/json",
    tags={"ops", "checks"},
    meta={"rev": "7", "owner": "ops"},
)
def health() -> str:
    """Not shown: the description keyword replaces this docstring."""
    return json.dumps({"up": True, "checks": 5})


@server.resource("stats://visitors")
async def visitors() -> dict[str, Any]:
    """Today's visitors, counted."""
    return {"today": 17}


@server.resource("note://offline")
def offline_note() -> str:
    """Fails with a message meant for the client."""
    raise ResourceError("The note store is offline")


@server.resource("note://internal")
def internal_note() -> str:
    """Fails with a message not meant for the client."""
    raise ValueError("key file at /srv/keys/app.pem is unreadable")
