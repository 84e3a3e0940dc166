"""Skills (SEP-2640), host side (`mcpio.client._skills.Skills`) against our server over HTTP, in a
2025-11-25 session and in 2026-07-28 stateless calls: nothing is read ahead of need, and a file
that does not match the skill's entry (tampered, wrong size, changed frontmatter, unlisted) is
refused with `SkillVerificationError`, its content never returned."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpio import Client, Server
from mcpio.client._skills import (
    SkillEntry,
    SkillError,
    Skills,
    SkillVerificationError,
    entry_of,
)
from mcpio.middleware._base import Call
from tests.support import serve_app

pytestmark = pytest.mark.anyio
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}
SKILL = (
    "---\nname: pdf-tools\ndescription: Fill and merge PDF forms\n---\n\nSee references/FORMS.md.\n"
)
FORMS = "# Forms\n\nField by field.\n"
URI = "skill://pdf-tools/SKILL.md"


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(root, "pdf-tools/SKILL.md", SKILL)
    write(root, "pdf-tools/references/FORMS.md", FORMS)
    return root


def counting(server: Server) -> list[str]:
    """The methods the server answers, in order (a middleware sees every request)."""
    seen: list[str] = []

    async def count(call: Call, call_next: Callable[[Call], Awaitable[Any]]) -> Any:
        seen.append(call.method if call.method != "resources/read" else f"read {call.params.uri}")
        return await call_next(call)

    server.add_middleware(count)
    return seen


@asynccontextmanager
async def connected(server: Server, mode: str) -> AsyncIterator[Client]:
    async with serve_app(server.http_app()) as served:
        async with Client(f"{served.url}/mcp", mode=mode) as client:
            assert client.revision == MODES[mode]
            yield client


@pytest.mark.parametrize("mode", MODES)
async def test_skills_are_read_on_demand_only(skills_dir: Path, mode: str) -> None:
    server = Server("skills")
    server.skills(skills_dir, watch_interval=None)
    seen = counting(server)
    async with connected(server, mode) as client:
        skills = Skills(client)
        assert skills.settings == {"directoryRead": True}
        (entry,) = await skills.list()
        assert (entry.name, entry.description, entry.root) == (
            "pdf-tools",
            "Fill and merge PDF forms",
            "skill://pdf-tools",
        )
        assert await skills.get(URI) == entry
        assert [m for m in seen if m.startswith("read")] == []  # no prefetch
        loaded = await skills.load(entry)
        assert loaded.text == SKILL
        assert [m for m in seen if m.startswith("read")] == [f"read {URI}"]
        assert await skills.read(entry, "references/FORMS.md") == FORMS.encode()
        children = await skills.read_directory(entry.root)
        assert {c["name"] for c in children} == {"SKILL.md", "references"}
        assert (await skills.load(URI)).text == SKILL  # by URI: skills/get, then the read


@pytest.mark.parametrize("mode", MODES)
async def test_a_tampered_file_is_refused(skills_dir: Path, mode: str) -> None:
    server = Server("skills")
    server.skills(skills_dir, watch_interval=None)  # the entry stays as it was listed
    async with connected(server, mode) as client:
        skills = Skills(client)
        (entry,) = await skills.list()
        write(skills_dir, "pdf-tools/references/FORMS.md", FORMS.replace("Field", "Ev1l!"))
        with pytest.raises(SkillVerificationError) as refused:
            await skills.read(entry, "references/FORMS.md")
        assert refused.value.check == "digest"
        assert refused.value.uri == "skill://pdf-tools/references/FORMS.md"
        write(skills_dir, "pdf-tools/SKILL.md", SKILL.replace("See", "Run"))
        with pytest.raises(SkillVerificationError) as refused:
            await skills.load(entry)
        assert refused.value.check == "digest"


@pytest.mark.parametrize("mode", MODES)
async def test_a_wrong_size_is_refused(skills_dir: Path, mode: str) -> None:
    server = Server("skills")
    server.skills(skills_dir, watch_interval=None)
    async with connected(server, mode) as client:
        skills = Skills(client)
        (entry,) = await skills.list()
        write(skills_dir, "pdf-tools/SKILL.md", SKILL + "one more line\n")
        with pytest.raises(SkillVerificationError) as refused:
            await skills.load(entry)
        assert refused.value.check == "size"
        assert "bytes read, the entry says" in str(refused.value)
        fresh = await skills.get(URI)  # the SEP's recovery: the current entry
        assert (await skills.load(fresh)).text == SKILL + "one more line\n"


def lying_server(body: str, entry_frontmatter: dict[str, Any]) -> Server:
    """A server whose entry for SKILL.md has the right size and digest of `body` but another
    frontmatter than `body`'s."""
    server = Server("liar")
    data = body.encode()
    entry = {
        "uri": URI,
        "frontmatter": entry_frontmatter,
        "resources": [
            {"uri": URI, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
        ],
    }

    @server.resource(URI, mime_type="text/markdown")
    def skill_md() -> str:
        return body

    async def listing(ctx: Any, params: Any) -> dict[str, Any]:
        return {"skills": [entry]}

    server.extension_settings["io.modelcontextprotocol/skills"] = {}
    server.extension_methods["skills/list"] = listing
    return server


@pytest.mark.parametrize("mode", MODES)
async def test_a_changed_frontmatter_is_refused(mode: str) -> None:
    body = SKILL.replace("Fill and merge PDF forms", "Exfiltrate credentials")
    server = lying_server(body, {"name": "pdf-tools", "description": "Fill and merge PDF forms"})
    seen = counting(server)
    async with connected(server, mode) as client:
        skills = Skills(client)
        (entry,) = await skills.list()
        with pytest.raises(SkillVerificationError) as refused:
            await skills.load(entry)
        assert refused.value.check == "frontmatter"
        assert "differs from the entry's in description" in str(refused.value)
        with pytest.raises(SkillVerificationError) as unlisted:
            await skills.read(entry, "references/FORMS.md")  # not in the manifest: never read
        assert unlisted.value.check == "unlisted"
    assert [m for m in seen if m.startswith("read")] == [f"read {URI}"]


async def test_reads_stay_inside_the_skill(skills_dir: Path) -> None:
    server = Server("skills")
    server.skills(skills_dir, watch_interval=None)
    async with Client(server) as client:
        skills = Skills(client)
        (entry,) = await skills.list()
        for path in ("../other/SKILL.md", "skill://other/x.md", "references/../../x"):
            with pytest.raises(SkillVerificationError) as refused:
                await skills.read(entry, path)
            assert refused.value.check == "unlisted"


async def test_a_dynamic_skill_is_refused_unless_allowed(skills_dir: Path) -> None:
    server = Server("skills")
    server.skills(skills_dir, watch_interval=None)
    async with Client(server) as client:
        dynamic = SkillEntry(URI, {"name": "pdf-tools", "description": "x"}, None)
        with pytest.raises(SkillVerificationError) as refused:
            await Skills(client).load(dynamic)
        assert refused.value.check == "unverifiable"
        with pytest.raises(SkillVerificationError) as differs:  # still frontmatter-checked
            await Skills(client, allow_unverified=True).load(dynamic)
        assert differs.value.check == "frontmatter"


async def test_a_server_without_skills_is_a_clear_error() -> None:
    async with Client(Server("plain")) as client:
        with pytest.raises(SkillError, match="does not declare the io.modelcontextprotocol/skills"):
            await Skills(client).list()


@pytest.mark.parametrize(
    ("in_file", "in_entry"),
    [("stable: true", {"stable": 1}), ("tags: [a, b]", {"tags": ["b", "a"]}), ("n: 1", {"n": 1.5})],
)
async def test_frontmatter_is_compared_as_json(in_file: str, in_entry: dict[str, Any]) -> None:
    body = SKILL.replace("---\n\n", f"{in_file}\n---\n\n", 1)
    matter = {"name": "pdf-tools", "description": "Fill and merge PDF forms", **in_entry}
    async with Client(lying_server(body, matter)) as client:
        skills = Skills(client)
        (entry,) = await skills.list()
        with pytest.raises(SkillVerificationError) as refused:
            await skills.load(entry)
        assert refused.value.check == "frontmatter"


def test_malformed_entries_are_refused() -> None:
    good = {"uri": URI, "frontmatter": {"name": "pdf-tools", "description": "d"}, "resources": []}
    assert entry_of(good).resources == ()
    assert entry_of({**good, "resources": "dynamic"}).resources is None
    for bad in (
        {**good, "uri": "skill://pdf-tools/README.md"},
        {**good, "frontmatter": {"name": "other", "description": "d"}},
        {**good, "frontmatter": {"name": "pdf-tools"}},
        {**good, "resources": [{"uri": URI, "digest": "sha256:00", "size": -1}]},
        {**good, "resources": 7},
        "not an object",
    ):
        with pytest.raises(SkillError):
            entry_of(bad)


async def test_a_client_told_its_modern_revision_asks_the_server_what_it_declares(
    skills_dir: Path,
) -> None:
    """`Client(mode="2026-07-28")` skips the `server/discover` probe, so it knows no server
    capabilities yet: `Skills` asks (`server/discover`) before it judges the extension
    undeclared, then lists and loads."""
    server = Server("skills")
    server.skills(skills_dir, watch_interval=None)
    seen = counting(server)
    async with serve_app(server.http_app()) as served:
        async with Client(f"{served.url}/mcp", mode="2026-07-28") as client:
            assert client.server_capabilities is None
            skills = Skills(client)
            (entry,) = await skills.list()
            assert (await skills.load(entry)).text == SKILL
            assert skills.settings == {"directoryRead": True}
    assert seen[:2] == ["server/discover", "skills/list"]


async def test_a_skill_md_with_yaml_aliases_is_refused() -> None:
    # a server publishing, in the entry, what its aliases expand to: the host does not expand them
    body = SKILL.replace("---\n\n", "a: &a [x, x]\nb: [*a, *a]\n---\n\n", 1)
    matter = {"name": "pdf-tools", "description": "Fill and merge PDF forms"}
    expanded = {**matter, "a": ["x", "x"], "b": [["x", "x"], ["x", "x"]]}
    async with Client(lying_server(body, expanded)) as client:
        skills = Skills(client)
        (entry,) = await skills.list()
        with pytest.raises(SkillVerificationError) as refused:
            await skills.load(entry)
        assert refused.value.check == "frontmatter"
        assert "anchors and aliases" in str(refused.value)
