"""The Skills page, section by section: a directory of skills served and listed, what the
server answers, a directory read again on demand, what is skipped, and a host's verified reads.
Each `--8<--` section is one snippet of docs/servers/skills.md."""

import logging
import shutil
import tempfile
from pathlib import Path

import anyio

from mcpio import Client, Server
from mcpio.client import Skills, SkillVerificationError

HERE = Path(__file__).resolve().parent
logging.basicConfig(level=logging.ERROR)  # the skipped skill's warning stays out of the output


async def first() -> None:
    # --8<-- [start:first]
    server = Server("docs")
    server.skills(HERE / "skills")  # every skill under examples/skills/
    async with Client(server) as client:
        for entry in await Skills(client).list():
            print(entry.uri, "-", entry.description)
    # --8<-- [end:first]


async def answers() -> None:
    server = Server("docs")
    server.skills(HERE / "skills")
    # --8<-- [start:answers]
    async with Client(server) as client:
        listed = await client.extension_request("skills/list")
        (skill,) = listed["skills"]
        print(skill["frontmatter"]["name"], [r["uri"] for r in skill["resources"]])
        one = await client.extension_request("skills/get", {"uri": skill["uri"]})
        print(one["skill"]["resources"][0]["digest"][:7])  # sha256:...
        folder = await client.extension_request(
            "resources/directory/read", {"uri": "skill://release-notes"}
        )
        print([(entry["name"], entry["mimeType"]) for entry in folder["resources"]])
    # --8<-- [end:answers]


async def refreshed(folder: Path) -> None:
    shutil.copytree(HERE / "skills", folder / "skills")
    # --8<-- [start:refresh]
    server = Server("docs")
    directory = server.skills(folder / "skills", watch_interval=None)  # no watch: on demand
    (folder / "skills" / "drafts").mkdir()  # a directory without SKILL.md: skipped, warned
    (folder / "skills" / "drafts" / "notes.md").write_text("not a skill yet")
    triage = folder / "skills" / "triage"
    triage.mkdir()
    (triage / "SKILL.md").write_text(
        "---\nname: triage\ndescription: Sort new issues by area and urgency\n---\n1. Read it.\n"
    )
    print(await directory.refresh())  # True: something changed (and was announced)
    async with Client(server) as client:
        print([entry.name for entry in await Skills(client).list()])
    # --8<-- [end:refresh]


async def host() -> None:
    server = Server("docs")
    server.skills(HERE / "skills")
    # --8<-- [start:host]
    async with Client(server) as client:  # or Client("http://127.0.0.1:8000/mcp")
        skills = Skills(client)
        entries = await skills.list()  # skills/list: no file is read
        skill = await skills.load(entries[0])  # reads SKILL.md now, verified
        style = await skills.read(entries[0], "references/STYLE.md")  # verified too
        print(len(skill.text), len(style))  # 383 155: sizes the manifest gave
        try:
            await skills.read(entries[0], "../../secrets.txt")  # not in the skill's manifest
        except SkillVerificationError as error:
            print(error.check)
    # --8<-- [end:host]


async def main() -> None:
    await first()
    await answers()
    with tempfile.TemporaryDirectory() as folder:
        await refreshed(Path(folder))
    await host()
    # --8<-- [start:not_a_directory]
    try:
        Server("docs").skills(HERE / "skills_options.py")
    except ValueError as error:
        print(type(error).__name__)
    # --8<-- [end:not_a_directory]


anyio.run(main)

# Output:
#   skill://release-notes/SKILL.md - Write release notes from a list of merged changes, in this project's style
#   release-notes ['skill://release-notes/SKILL.md', 'skill://release-notes/references/STYLE.md']
#   sha256:
#   [('SKILL.md', 'text/markdown'), ('references', 'inode/directory')]
#   True
#   ['release-notes', 'triage']
#   383 155
#   unlisted
#   ValueError
