"""The mcpio port of originals/templates.py (FastMCP's Resources page, templates), written
after reading docs/servers/resources.md."""

import json
from typing import Any

from mcpio import ResourceError, Server

server = Server("Project atlas")


@server.resource("forecast://{town}/now")
def town_forecast(town: str) -> str:
    """The sky over a town now."""
    return json.dumps({"town": town.title(), "celsius": 18, "sky": "cloudy"})


@server.resource("projects://{team}/{project}/summary", annotations={"readOnlyHint": True})
def project_summary(team: str, project: str) -> str:
    """One team's project, summarised."""
    return json.dumps({"team": team, "project": project, "slug": f"{team}-{project}"})


@server.resource("notes://{name}")
def note(name: str) -> str:
    """A note by its name."""
    return f"Note {name}: empty"


@server.resource("tree://{location*}")
def tree_node(location: str) -> str:
    """A node of the tree, by its slash-separated location."""
    return f"Node at {location}"


@server.resource("src://{team}/{folder*}/setup.cfg")
def setup_file(team: str, folder: str) -> dict[str, Any]:
    """A setup.cfg somewhere under a team's sources."""
    return {"team": team, "file": folder + "/setup.cfg"}


@server.resource("items://{key}")
def item(key: str) -> dict[str, Any]:
    """An item by its key; two keys fail."""
    if key == "locked":
        raise ValueError("item store lock held by pid 4242")
    if key == "gone":
        raise ResourceError("There is no item 'gone'")
    return {"key": key, "found": True}
