"""Skills (SEP-2640), server side: `Server.skills(directory)` publishes every skill of a directory
as `skill://` resources with `skills/list`, `skills/get` and `resources/directory/read`, in both
eras; bad input is skipped with a warning; changes are announced."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpio import Client, McpError, Server
from mcpio.client._skills import extension_request
from mcpio.skills import SkillsDirectory
from mcpio.skills._format import FrontmatterError, frontmatter
from tests.support import until

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent.parent
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}
EXTENSION = "io.modelcontextprotocol/skills"

SKILL = """---
name: pdf-tools
description: Fill and merge PDF forms
license: Apache-2.0
metadata:
  version: "2.1"
  reviewed: 2024-05-01
  stable: yes
---

Read references/FORMS.md first.
"""


def write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(root, "pdf-tools/SKILL.md", SKILL)
    write(root, "pdf-tools/references/FORMS.md", "# Forms\n")
    write(root, "pdf-tools/assets/logo.bin", bytes(range(256)))
    write(root, "acme/billing/refunds/SKILL.md", "---\nname: refunds\ndescription: Refund\n---\n")
    return root


async def entries(client: Client) -> list[dict[str, Any]]:
    return list((await extension_request(client, "skills/list"))["skills"])


@pytest.mark.parametrize("mode", MODES)
async def test_every_skill_is_listed_with_its_manifest(skills_dir: Path, mode: str) -> None:
    server = Server("skills")
    server.skills(skills_dir)
    async with Client(server, mode=mode) as client:
        assert client.revision == MODES[mode]
        caps = client.server_capabilities
        assert caps is not None and caps.extensions == {EXTENSION: {"directoryRead": True}}
        found = {entry["uri"]: entry for entry in await entries(client)}
    assert sorted(found) == ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-tools/SKILL.md"]
    pdf = found["skill://pdf-tools/SKILL.md"]
    assert pdf["frontmatter"] == {  # verbatim, YAML 1.2 core: the date and `yes` stay strings
        "name": "pdf-tools",
        "description": "Fill and merge PDF forms",
        "license": "Apache-2.0",
        "metadata": {"version": "2.1", "reviewed": "2024-05-01", "stable": "yes"},
    }
    files = {
        "skill://pdf-tools/SKILL.md": SKILL.encode(),
        "skill://pdf-tools/assets/logo.bin": bytes(range(256)),
        "skill://pdf-tools/references/FORMS.md": b"# Forms\n",
    }
    assert pdf["resources"][0]["uri"] == pdf["uri"]  # SKILL.md first
    assert {r["uri"]: (r["digest"], r["size"]) for r in pdf["resources"]} == {
        uri: (sha(data), len(data)) for uri, data in files.items()
    }


async def test_modern_results_carry_the_caching_attributes(skills_dir: Path) -> None:
    server = Server("skills", cache_ttl_ms=5000)
    server.skills(skills_dir)
    async with Client(server) as client:
        listed = await extension_request(client, "skills/list")
        got = await extension_request(client, "skills/get", {"uri": "skill://pdf-tools/SKILL.md"})
    for result in (listed, got):
        assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (
            5000,
            "private",
            "complete",
        )
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "skills"
    assert "nextCursor" not in got


@pytest.mark.parametrize("mode", MODES)
async def test_get_answers_a_served_skill_and_refuses_others(skills_dir: Path, mode: str) -> None:
    server = Server("skills")
    server.skills(skills_dir)
    async with Client(server, mode=mode) as client:
        uri = "skill://acme/billing/refunds/SKILL.md"
        got = await extension_request(client, "skills/get", {"uri": uri})
        assert got["skill"]["frontmatter"] == {"name": "refunds", "description": "Refund"}
        for params in ({"uri": "skill://nope/SKILL.md"}, {"uri": 3}, {}):
            with pytest.raises(McpError) as refused:
                await extension_request(client, "skills/get", params)
            assert refused.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_directories_list_their_direct_children(skills_dir: Path, mode: str) -> None:
    server = Server("skills")
    server.skills(skills_dir)
    async with Client(server, mode=mode) as client:
        read = await extension_request(
            client, "resources/directory/read", {"uri": "skill://pdf-tools"}
        )
        children = {c["uri"]: c["mimeType"] for c in read["resources"]}
        assert children == {
            "skill://pdf-tools/SKILL.md": "text/markdown",
            "skill://pdf-tools/assets": "inode/directory",
            "skill://pdf-tools/references": "inode/directory",
        }
        prefix = await extension_request(
            client, "resources/directory/read", {"uri": "skill://acme"}
        )
        assert [c["uri"] for c in prefix["resources"]] == ["skill://acme/billing"]
        with pytest.raises(McpError) as refused:
            params = {"uri": "skill://pdf-tools/SKILL.md"}
            await extension_request(client, "resources/directory/read", params)
        assert refused.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_each_file_is_a_resource(skills_dir: Path, mode: str) -> None:
    server = Server("skills")
    server.skills(skills_dir)
    async with Client(server, mode=mode) as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        skill_md = listed["skill://pdf-tools/SKILL.md"]
        assert (skill_md.name, skill_md.description, skill_md.mimeType, skill_md.size) == (
            "pdf-tools",
            "Fill and merge PDF forms",
            "text/markdown",
            len(SKILL.encode()),
        )
        text = (await client.read_resource("skill://pdf-tools/SKILL.md")).contents[0]
        assert getattr(text, "text", None) == SKILL
        blob = (await client.read_resource("skill://pdf-tools/assets/logo.bin")).contents[0]
        assert getattr(blob, "mimeType", None) == "application/octet-stream"
        assert getattr(blob, "blob", None)  # raw bytes, base64


async def test_listing_pages_never_split_an_entry(skills_dir: Path) -> None:
    server = Server("skills", list_page_size=1)
    server.skills(skills_dir)
    async with Client(server) as client:
        first = await extension_request(client, "skills/list")
        assert len(first["skills"]) == 1 and first["nextCursor"]
        second = await extension_request(client, "skills/list", {"cursor": first["nextCursor"]})
        assert len(second["skills"]) == 1 and "nextCursor" not in second
        assert first["skills"][0]["uri"] != second["skills"][0]["uri"]
        with pytest.raises(McpError) as refused:
            await extension_request(client, "skills/list", {"cursor": "forged"})
        assert refused.value.code == -32602


async def test_bad_input_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    write(root, "good/SKILL.md", "---\nname: good\ndescription: Fine\n---\n")
    write(root, "no-skill-md/notes.md", "no SKILL.md here\n")
    write(root, "broken/SKILL.md", "---\nname: [broken\ndescription: x\n---\n")
    write(root, "no-frontmatter/SKILL.md", "just text\n")
    write(root, "misnamed/SKILL.md", "---\nname: other\ndescription: x\n---\n")
    write(root, "Bad--Name/SKILL.md", "---\nname: Bad--Name\ndescription: x\n---\n")
    write(root, "huge/SKILL.md", "---\nname: huge\ndescription: x\n---\n")
    with open(root / "huge" / "data.bin", "wb") as sparse:  # 17 MiB, never read
        sparse.truncate(17 * 1024 * 1024)
    write(root, "many/SKILL.md", "---\nname: many\ndescription: x\n---\n")
    for i in range(512):
        write(root, f"many/f/{i}.txt", "x")
    outside = write(tmp_path, "secret.txt", "not yours\n")
    os.symlink(outside, root / "good" / "leak.txt")
    os.symlink(tmp_path, root / "good" / "up")
    with caplog.at_level(logging.WARNING, logger="mcpio.skills"):
        server = Server("skills")
        server.skills(root)
    warned = "\n".join(record.getMessage() for record in caplog.records)
    for part in ("no-skill-md", "broken", "no-frontmatter", "misnamed", "Bad--Name", "huge"):
        assert f"{root / part}" in warned, part
    assert "many: 513 files" in warned
    assert "leak.txt: a symlink out of the skills directory" in warned
    assert "up: a symlink out of the skills directory" in warned
    async with Client(server) as client:
        assert [e["uri"] for e in await entries(client)] == ["skill://good/SKILL.md"]
        uris = [r.uri for r in (await client.list_resources()).resources]
        assert uris == ["skill://good/SKILL.md"]


def test_frontmatter_errors_say_what_is_wrong() -> None:
    cases = {
        "no block": "text only",
        "not valid YAML": "---\na: [\n---\n",
        "not a YAML mapping": "---\n- a\n---\n",
        "'description'": "---\nname: x\n---\n",
        "'name'": "---\nname: ''\ndescription: d\n---\n",
    }
    for expected, text in cases.items():
        with pytest.raises(FrontmatterError) as error:
            frontmatter(text)
        assert expected.strip("'") in str(error.value) or expected == "no block"


async def test_symlinks_to_dot_files_or_out_of_the_skill_are_never_served(
    skills_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(skills_dir, ".env", "API_KEY=secret\n")  # inside the skills directory, a dot file
    write(skills_dir, "pdf-tools/.git/config", "[remote]\n")
    refs = skills_dir / "pdf-tools" / "references"
    os.symlink("../../.env", refs / "env.txt")
    os.symlink("../.git/config", refs / "git.txt")
    os.symlink("../../acme/billing/refunds/SKILL.md", refs / "other.md")  # another skill's
    os.symlink("FORMS.md", refs / "same.md")  # inside the skill: published
    with caplog.at_level(logging.WARNING, logger="mcpio.skills"):
        server = Server("skills")
        server.skills(skills_dir, watch_interval=None)
    async with Client(server) as client:
        got = await extension_request(client, "skills/get", {"uri": "skill://pdf-tools/SKILL.md"})
        manifest = [r["uri"] for r in got["skill"]["resources"]]
        assert "skill://pdf-tools/references/same.md" in manifest
        children = await extension_request(
            client, "resources/directory/read", {"uri": "skill://pdf-tools/references"}
        )
        listed = [r.uri for r in (await client.list_resources()).resources]
        for name in ("env.txt", "git.txt", "other.md"):
            uri = f"skill://pdf-tools/references/{name}"
            assert uri not in manifest and uri not in listed
            assert uri not in [c["uri"] for c in children["resources"]]
            with pytest.raises(McpError):
                await client.read_resource(uri)
        assert "secret" not in str(await entries(client))
    warned = "\n".join(record.getMessage() for record in caplog.records)
    for name in ("env.txt", "git.txt", "other.md"):
        assert f"{refs / name}: a symlink out of its skill or to a dot file" in warned


async def test_a_symlink_turned_to_a_dot_file_after_the_scan_is_not_read(
    skills_dir: Path,
) -> None:
    write(skills_dir, ".env", "API_KEY=secret\n")
    link = skills_dir / "pdf-tools" / "references" / "link.md"
    os.symlink("FORMS.md", link)
    server = Server("skills")
    server.skills(skills_dir, watch_interval=None)
    async with Client(server) as client:
        uri = "skill://pdf-tools/references/link.md"
        assert (await client.read_resource(uri)).contents[0].text == "# Forms\n"
        link.unlink()
        os.symlink("../../.env", link)  # swapped before the next look at the directory
        with pytest.raises(McpError, match="resource not found"):
            await client.read_resource(uri)


# 262 bytes that PyYAML would expand to 9**5 strings (4 MB of JSON) through anchors and aliases
BOMB = """---
name: bomb
description: Bomb
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
---
"""


def test_frontmatter_refuses_anchors_aliases_deep_nesting_and_size() -> None:
    head = "---\nname: x\ndescription: d\n"
    cases = [
        ("anchors and aliases", BOMB),
        ("anchors and aliases", head + "one: &one 1\n---\n"),  # an anchor alone
        ("anchors and aliases", head + "base: {a: 1}\n<<: *base\n---\n"),  # a merge
        ("nested deeper than 32 levels", head + "m: " + "[" * 33 + "]" * 33 + "\n---\n"),
        ("over 65536 bytes", head + "long: " + "é" * 40000 + "\n---\n"),  # 80,000 bytes
    ]
    for expected, text in cases:
        with pytest.raises(FrontmatterError, match=expected):
            frontmatter(text)
    assert frontmatter(head + "m: " + "[" * 31 + "]" * 31 + "\n---\n")["name"] == "x"


async def test_a_yaml_bomb_skill_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    write(root, "good/SKILL.md", "---\nname: good\ndescription: Fine\n---\n")
    write(root, "bomb/SKILL.md", BOMB)
    with caplog.at_level(logging.WARNING, logger="mcpio.skills"):
        server = Server("skills")
        server.skills(root, watch_interval=None)
    warned = "\n".join(record.getMessage() for record in caplog.records)
    assert f"{root / 'bomb' / 'SKILL.md'}: the frontmatter is refused: anchors" in warned
    async with Client(server) as client:
        listed = await extension_request(client, "skills/list")
        assert [e["uri"] for e in listed["skills"]] == ["skill://good/SKILL.md"]
        assert len(json.dumps(listed)) < 1000


def test_one_skills_directory_per_server(skills_dir: Path) -> None:
    server = Server("skills")
    server.skills(skills_dir)
    with pytest.raises(RuntimeError, match="publishes a skills directory already"):
        server.skills(skills_dir)


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        Server("skills").skills(tmp_path / "absent")
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "everything_server.py"), "http"]
        + ["--skills", str(tmp_path / "absent")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("is not a directory")
    assert "Traceback" not in done.stderr


async def test_changes_are_announced(skills_dir: Path) -> None:
    server = Server("skills")
    provider: SkillsDirectory = server.skills(skills_dir, watch_interval=None)
    seen: list[tuple[str, Any]] = []

    async def notice(notice: Any) -> None:
        seen.append((notice.method, notice.params))

    async with Client(server, mode="legacy", on_notice=notice) as client:
        await client.request(
            "resources/subscribe", {"uri": "skill://pdf-tools/references/FORMS.md"}
        )
        assert await provider.refresh() is False  # nothing changed
        write(skills_dir, "pdf-tools/references/FORMS.md", "# Forms, revised\n")
        assert await provider.refresh() is True
        await until(lambda: any(m == "notifications/resources/updated" for m, _ in seen))
        updated = [p for m, p in seen if m == "notifications/resources/updated"]
        assert updated[0].uri == "skill://pdf-tools/references/FORMS.md"
        entry = await extension_request(client, "skills/get", {"uri": "skill://pdf-tools/SKILL.md"})
        digests = {r["uri"]: r["digest"] for r in entry["skill"]["resources"]}
        assert digests["skill://pdf-tools/references/FORMS.md"] == sha(b"# Forms, revised\n")
        write(skills_dir, "pdf-tools/references/NEW.md", "new\n")
        await provider.refresh()
        await until(lambda: any(m == "notifications/resources/list_changed" for m, _ in seen))
        assert "skill://pdf-tools/references/NEW.md" in {
            r.uri for r in (await client.list_resources()).resources
        }


async def test_the_directory_is_watched_while_the_server_runs(skills_dir: Path) -> None:
    server = Server("skills")
    server.skills(skills_dir, watch_interval=0.05)
    seen: list[str] = []
    async with Client(server, mode="legacy", on_notice=lambda n: seen.append(n.method)):
        write(skills_dir, "fresh/SKILL.md", "---\nname: fresh\ndescription: New\n---\n")
        await until(lambda: "notifications/resources/list_changed" in seen, timeout=5)
    assert "skill://fresh/SKILL.md" in server.resources
    await anyio.sleep(0.1)  # the watch ended with the server: nothing runs on


@pytest.mark.parametrize("flag", [[], ["--legacy"]])
def test_the_example_host_loads_the_example_skills(flag: list[str]) -> None:
    """examples/skills_host.py (the docs page's example) over examples/skills/."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "skills_host.py"), *flag],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    revision = "2025-11-25" if flag else "2026-07-28"
    assert done.stdout.splitlines() == [
        f"1 skill(s) over {revision}:",
        "  release-notes: Write release notes from a list of merged changes, in this project's"
        " style (2 files)",
        f"loaded skill://release-notes/SKILL.md: {len(skill_text())} characters, verified",
        "  read skill://release-notes/references/STYLE.md:"
        f" {len((ROOT / 'examples/skills/release-notes/references/STYLE.md').read_bytes())}"
        " bytes, verified",
    ]


def skill_text() -> str:
    return (ROOT / "examples" / "skills" / "release-notes" / "SKILL.md").read_text("utf-8")


async def test_another_scheme(skills_dir: Path) -> None:
    server = Server("skills")
    server.skills(skills_dir, scheme="kb")
    async with Client(server) as client:
        uris = [e["uri"] for e in await entries(client)]
        assert uris == ["kb://acme/billing/refunds/SKILL.md", "kb://pdf-tools/SKILL.md"]
        text = (await client.read_resource("kb://pdf-tools/references/FORMS.md")).contents[0]
        assert getattr(text, "text", None) == "# Forms\n"
