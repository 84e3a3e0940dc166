"""Skills (SEP-2640) across implementations, over HTTP at 2026-07-28 (FastMCP serves the
extension's methods to modern clients only): our host loads the skills FastMCP 4.1.6's
`SkillsDirectoryProvider` publishes (and refuses a file changed after the listing), and
FastMCP's client lists and gets the skills our server publishes, with the same manifest."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from mcpio import Client, Server
from mcpio.client._skills import Skills, SkillVerificationError
from tests.support import serve_app

pytestmark = [pytest.mark.anyio, pytest.mark.peers]
EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "skills"
URI = "skill://release-notes/SKILL.md"
STYLE = "skill://release-notes/references/STYLE.md"


def digest_of(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


async def test_our_host_loads_fastmcp_skills(tmp_path: Path) -> None:
    from fastmcp import FastMCP
    from fastmcp.server.providers.skills import SkillsDirectoryProvider
    from fastmcp.skills.extension import SkillsExtension

    root = shutil.copytree(EXAMPLE, tmp_path / "skills")
    peer = FastMCP("fastmcp-skills")
    provider = SkillsDirectoryProvider(roots=root, experimental_skills=True)
    peer.add_provider(provider)
    peer.add_extension(SkillsExtension(providers=[provider]))
    async with serve_app(peer.http_app()) as served:
        async with Client(f"{served.url}/mcp") as client:
            assert client.revision == "2026-07-28"
            skills = Skills(client)
            (entry,) = await skills.list()
            assert entry.uri == URI and entry.frontmatter["metadata"] == {"version": "1.0"}
            assert (await skills.load(entry)).text == (root / "release-notes/SKILL.md").read_text()
            style = root / "release-notes/references/STYLE.md"
            assert await skills.read(entry, "references/STYLE.md") == style.read_bytes()
            style.write_text(style.read_text().replace("Present", "Pre5ent"))  # same size
            with pytest.raises(SkillVerificationError) as refused:
                await skills.read(entry, "references/STYLE.md")
            assert refused.value.check == "digest"


async def test_fastmcp_lists_and_gets_our_skills() -> None:
    from fastmcp import Client as FastMcpClient
    from fastmcp.skills.client import SkillsClientExtension

    server = Server("ours")
    server.skills(EXAMPLE)
    async with serve_app(server.http_app()) as served:
        peer = FastMcpClient(f"{served.url}/mcp", extensions=[SkillsClientExtension()])
        async with peer:
            (listed,) = await peer.list_skills()
            got = await peer.get_skill(URI)
    for skill in (listed, got):
        assert skill.uri == URI
        assert skill.frontmatter.root["name"] == "release-notes"
        assert {r.uri: (r.digest, r.size) for r in skill.resources or []} == {
            URI: (digest_of(EXAMPLE / "release-notes/SKILL.md"), 383),
            STYLE: (digest_of(EXAMPLE / "release-notes/references/STYLE.md"), 155),
        }
