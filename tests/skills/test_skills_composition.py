"""Skills (SEP-2640) through composition: a server serving a skills directory behind
`proxy_server` (URIs kept) and behind `Server.mount` (URIs namespaced like the mounted server's
resources), read over HTTP in both eras by mcpio's host side, which verifies every file's size
and digest against the entry and SKILL.md's frontmatter against the entry's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from mcpio import Client, McpError, Server
from mcpio.client._proxy import proxy_server
from mcpio.client._skills import SkillError, Skills, SkillVerificationError, extension_request
from tests.support import serve_app

pytestmark = pytest.mark.anyio
MODES = ["legacy", "2026-07-28"]
PDF = "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n\nRead references/FORMS.md.\n"
NOTES = "---\nname: notes\ndescription: Take notes\n---\n\nWrite them down.\n"
FORMS = "# Forms\n"


def skills_dir(root: Path, name: str, text: str) -> Path:
    (root / name / "references").mkdir(parents=True)
    (root / name / "SKILL.md").write_text(text)
    (root / name / "references" / "FORMS.md").write_text(FORMS)
    return root


def skills_server(root: Path) -> Server:
    server = Server("docs", "1.0")
    server.skills(skills_dir(root, "pdf-tools", PDF), watch_interval=None)
    return server


@asynccontextmanager
async def connected(server: Server, mode: str) -> AsyncIterator[Client]:
    async with serve_app(server.http_app()) as served:
        async with Client(f"{served.url}/mcp", mode=mode) as client:
            if client.modern:
                await client.discover()
            yield client


async def check_skill(skills: Skills, uri: str, root: str) -> None:
    """The skill at `uri` (SKILL.md) read and verified, a file of it, its directory."""
    entry = await skills.get(uri)
    assert entry.uri == uri and entry.root == root and entry.name == uri.split("/")[-2]
    loaded = await skills.load(entry)
    assert loaded.text in (PDF, NOTES)
    assert await skills.read(entry, "references/FORMS.md") == FORMS.encode()
    children = {child["uri"] for child in await skills.read_directory(root)}
    assert children == {f"{root}/SKILL.md", f"{root}/references"}


@pytest.mark.parametrize("mode", MODES)
async def test_skills_behind_a_proxy_keep_their_uris(tmp_path: Path, mode: str) -> None:
    proxy = proxy_server(skills_server(tmp_path), mode="2025-11-25")
    async with connected(proxy, mode) as client:
        skills = Skills(client)
        assert skills.settings == {"directoryRead": True}
        [entry] = await skills.list()
        assert entry.uri == "skill://pdf-tools/SKILL.md" and entry.name == "pdf-tools"
        await check_skill(skills, entry.uri, "skill://pdf-tools")
        with pytest.raises(McpError) as caught:  # the target's own refusal, code kept
            await extension_request(client, "skills/get", {"uri": "skill://nope/SKILL.md"})
        assert caught.value.code == -32602


@pytest.mark.parametrize("target_mode", MODES)
async def test_a_proxy_to_a_modern_or_legacy_target(tmp_path: Path, target_mode: str) -> None:
    proxy = proxy_server(skills_server(tmp_path), mode=target_mode)
    for mode in MODES:
        async with connected(proxy, mode) as client:
            [entry] = await Skills(client).list()
            assert (await Skills(client).load(entry)).text == PDF


async def test_a_proxy_to_a_server_without_skills_answers_its_error() -> None:
    plain = Server("plain", "1.0")

    @plain.tool()
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    async with connected(proxy_server(plain), "2026-07-28") as client:
        # the proxy offers what its target offers (issue 50): no Skills extension declared
        with pytest.raises(SkillError, match="does not declare"):
            await Skills(client).list()
        with pytest.raises(McpError) as caught:  # asked anyway: the target's error
            await extension_request(client, "skills/list", {})
        assert caught.value.code == -32601


@pytest.mark.parametrize("mode", MODES)
async def test_mounted_skills_are_namespaced_and_verified(tmp_path: Path, mode: str) -> None:
    parent = Server("parent", "1.0", list_page_size=1)  # skills/list pages across servers
    parent.mount(skills_server(tmp_path / "mounted"), namespace="docs")
    # the parent's own skills, published after mounting: listed beside the mounted ones
    parent.skills(skills_dir(tmp_path / "own", "notes", NOTES), watch_interval=None)
    async with connected(parent, mode) as client:
        skills = Skills(client)
        assert skills.settings == {"directoryRead": True}
        entries = await skills.list()
        assert [e.uri for e in entries] == [
            "skill://notes/SKILL.md",
            "skill://docs/pdf-tools/SKILL.md",
        ]
        mounted = entries[1]
        assert mounted.name == "pdf-tools"
        assert {r.uri for r in mounted.resources or ()} == {
            "skill://docs/pdf-tools/SKILL.md",
            "skill://docs/pdf-tools/references/FORMS.md",
        }
        await check_skill(skills, "skill://docs/pdf-tools/SKILL.md", "skill://docs/pdf-tools")
        await check_skill(skills, "skill://notes/SKILL.md", "skill://notes")
        listed = {r.uri for r in (await client.list_resources()).resources}
        assert {r.uri for r in mounted.resources or ()} <= listed
        with pytest.raises(McpError):
            await skills.get("skill://docs/nope/SKILL.md")


async def test_a_mounted_skill_is_still_verified(tmp_path: Path) -> None:
    """A file changed behind the entry's back is refused through the mount, as directly."""
    root = tmp_path / "mounted"
    parent = Server("parent", "1.0")
    parent.mount(skills_server(root), namespace="docs")
    async with connected(parent, "2026-07-28") as client:
        skills = Skills(client)
        [entry] = await skills.list()
        (root / "pdf-tools" / "references" / "FORMS.md").write_text("# Forms, changed\n")
        with pytest.raises(SkillVerificationError) as caught:
            await skills.read(entry, "references/FORMS.md")
        assert caught.value.check == "size"


async def test_mounting_servers_without_skills_serves_none(tmp_path: Path) -> None:
    parent, child = Server("parent", "1.0"), Server("child", "1.0")

    @child.tool()
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    parent.mount(child, namespace="c")
    async with connected(parent, "2026-07-28") as client:
        assert Skills(client).settings is None
        with pytest.raises(McpError) as caught:
            await extension_request(client, "skills/list")
        assert caught.value.code == -32601
