"""Exercises the features of FastMCP's Resources page (docs/servers/resources.mdx) under
FastMCP, resource templates: one and two variables, annotations, a wildcard variable alone and
before a fixed suffix, and a template's errors."""

import json

from fastmcp import FastMCP
from fastmcp.exceptions import ResourceError

mcp = FastMCP(name="Project atlas")


@mcp.resource("forecast://{town}/now")
def town_forecast(town: str) -> str:
    """The sky over a town now."""
    return json.dumps({"town": town.title(), "celsius": 18, "sky": "cloudy"})


@mcp.resource("projects://{team}/{project}/summary", annotations={"readOnlyHint": True})
def project_summary(team: str, project: str) -> str:
    """One team's project, summarised."""
    return json.dumps({"team": team, "project": project, "slug": f"{team}-{project}"})


@mcp.resource("notes://{name}")
def note(name: str) -> str:
    """A note by its name."""
    return f"Note {name}: empty"


@mcp.resource("tree://{location*}")
def tree_node(location: str) -> str:
    """A node of the tree, by its slash-separated location."""
    return f"Node at {location}"


@mcp.resource("src://{team}/{folder*}/setup.cfg")
def setup_file(team: str, folder: str) -> dict:
    """A setup.cfg somewhere under a team's sources."""
    return {"team": team, "file": folder + "/setup.cfg"}


@mcp.resource("items://{key}")
def item(key: str) -> dict:
    """An item by its key; two keys fail."""
    if key == "locked":
        raise ValueError("item store lock held by pid 4242")
    if key == "gone":
        raise ResourceError("There is no item 'gone'")
    return {"key": key, "found": True}
