"""Skills (SEP-2640) end to end in one process: a server publishing a directory of Agent
Skills, and a host that discovers them, loads one on demand and reads a supporting file, each
read verified against the skill's manifest (size, sha256 digest, frontmatter).

    python examples/skills_host.py                  # the skills in examples/skills/
    python examples/skills_host.py path/to/skills   # any directory of skills
    python examples/skills_host.py --legacy         # over a 2025-11-25 session

The same directory over HTTP: `python examples/everything_server.py http --skills DIR`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from mcpio import Client, Server
from mcpio.client import SkillError, Skills

HERE = Path(__file__).resolve().parent


async def show(directory: Path, mode: str) -> None:
    server = Server("skills-demo")
    server.skills(directory)  # every skill under directory, as skill:// resources
    async with Client(server, mode=mode) as client:
        skills = Skills(client)
        entries = await skills.list()  # names and descriptions only: no file is read yet
        print(f"{len(entries)} skill(s) over {client.revision}:")
        for entry in entries:
            print(f"  {entry.name}: {entry.description} ({len(entry.resources or ())} files)")
        for entry in entries:
            loaded = await skills.load(entry)  # SKILL.md, verified, or SkillVerificationError
            print(f"loaded {entry.uri}: {len(loaded.text)} characters, verified")
            for resource in entry.resources or ():
                if resource.uri != entry.uri:
                    data = await skills.read(entry, resource.uri)
                    print(f"  read {resource.uri}: {len(data)} bytes, verified")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Serve a skills directory and load its skills.")
    parser.add_argument("directory", nargs="?", default=str(HERE / "skills"))
    parser.add_argument("--legacy", action="store_true", help="a 2025-11-25 session")
    args = parser.parse_args(argv[1:])
    try:
        anyio.run(show, Path(args.directory), "legacy" if args.legacy else "auto")
    except (ValueError, SkillError) as exc:
        print(f"skills_host: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

# Output:
#   1 skill(s) over 2026-07-28:
#     release-notes: Write release notes from a list of merged changes, in this project's style (2 files)
#   loaded skill://release-notes/SKILL.md: 383 characters, verified
#     read skill://release-notes/references/STYLE.md: 155 bytes, verified
