"""Skills (SEP-2640), host side: discover a server's skills, fetch a skill's files only when
asked, and refuse any content that does not match the skill's entry.

    async with Client(url) as client:
        skills = Skills(client)
        entries = await skills.list()             # skills/list: names and descriptions, no reads
        loaded = await skills.load(entries[0])    # reads SKILL.md, verifies it, or raises
        guide = await skills.read(entries[0], "references/GUIDE.md")   # verified too

Nothing is read ahead of need: `list` and `get` read no file. Every file read is checked
against the entry's manifest, size first, then the sha256 digest; a SKILL.md's frontmatter is
compared field by field with the entry's. Any mismatch, or a read of a file the manifest does
not list, raises `SkillVerificationError` (its `check` says which) and the content is not
returned. A stale entry is refreshed with `get` (the SEP's recovery).
"""

from __future__ import annotations

import base64
import logging
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpio.skills._format import (
    EXTENSION,
    SKILL_FILE,
    FrontmatterError,
    digest,
    frontmatter,
    skill_name,
    skill_root,
)

if TYPE_CHECKING:
    from mcpio.client._client import Client

log = logging.getLogger("mcpio.skills")


async def extension_request(
    client: Client, method: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`client.extension_request(method, params)` (see there)."""
    return await client.extension_request(method, params)


class SkillError(Exception):
    """A skill the host cannot use: the server does not serve skills, or an entry is malformed."""


class SkillVerificationError(SkillError):
    """Content that does not match the skill's entry.

    Args:
        uri: The URI of the content refused.
        check: The check it failed: `size`, `digest`, `frontmatter`, `unlisted` (a file the
            manifest does not list) or `unverifiable` (an entry without a manifest, refused
            unless `Skills(allow_unverified=True)`).
        detail: What differs.
    """

    def __init__(self, uri: str, check: str, detail: str) -> None:
        super().__init__(f"{uri}: {check} verification failed: {detail}")
        self.uri = uri
        self.check = check
        self.detail = detail


@dataclass(frozen=True)
class SkillResource:
    uri: str
    digest: str
    size: int


@dataclass(frozen=True)
class SkillEntry:
    """A skill as `skills/list` or `skills/get` describes it (`resources` None: the server
    publishes no manifest, a dynamic skill)."""

    uri: str
    frontmatter: dict[str, Any]
    resources: tuple[SkillResource, ...] | None

    @property
    def name(self) -> str:
        """The frontmatter's `name`."""
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        """The frontmatter's `description`."""
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        """The URI of the skill's directory (its SKILL.md's URI without the file name)."""
        return skill_root(self.uri)

    def listed(self, uri: str) -> SkillResource | None:
        """The manifest's entry for `uri`, or None if the manifest does not list it."""
        return next((r for r in self.resources or () if r.uri == uri), None)


@dataclass(frozen=True)
class LoadedSkill:
    """A skill's SKILL.md as `Skills.load` gives it: its entry, and its text, verified."""

    entry: SkillEntry
    text: str  # SKILL.md, verified


def entry_of(data: Any) -> SkillEntry:
    """A skill entry read from the wire; `SkillError` for a malformed one."""
    if type(data) is not dict:
        raise SkillError("a skill entry is not an object")
    uri, matter, resources = data.get("uri"), data.get("frontmatter"), data.get("resources")
    if type(uri) is not str or skill_name(uri) is None:
        raise SkillError(f"skill entry uri {uri!r} does not name a {SKILL_FILE}")
    if type(matter) is not dict or skill_name(uri) != matter.get("name"):
        raise SkillError(f"{uri}: frontmatter missing, or its name is not the URI's last segment")
    if type(matter.get("description")) is not str:
        raise SkillError(f"{uri}: frontmatter has no description")
    if resources == "dynamic" or resources is None:
        return SkillEntry(uri, matter, None)
    if type(resources) is not list:
        raise SkillError(f"{uri}: resources is neither a list nor 'dynamic'")
    return SkillEntry(uri, matter, tuple(_resource(uri, item) for item in resources))


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`, objects compare without their key order."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return (
        type(a) in (int, float)
        and type(b) in (int, float)
        and a == b
        or (type(a) is type(b) and a == b)
    )


def _resource(skill: str, item: Any) -> SkillResource:
    if type(item) is not dict:
        raise SkillError(f"{skill}: a resources item is not an object")
    uri, found, size = item.get("uri"), item.get("digest"), item.get("size")
    if type(uri) is not str or type(found) is not str or type(size) is not int or size < 0:
        raise SkillError(f"{skill}: resources item {item!r} lacks a uri, digest or size")
    return SkillResource(uri, found, size)


class Skills:
    """The skills of the server `client` is connected to, loaded as a host (SEP-2640).

    The docs page "Skills" (docs/servers/skills.md, "Loading skills as a host") tells the
    rules; `allow_unverified=True` loads a skill whose entry has no manifest.
    """

    def __init__(self, client: Client, *, allow_unverified: bool = False) -> None:
        self.client = client
        self.allow_unverified = allow_unverified
        self.rejected: list[tuple[Any, str]] = []  # malformed entries of the last `list`

    @property
    def settings(self) -> Mapping[str, Any] | None:
        """The extension's settings the server declared (None: it serves no skills)."""
        capabilities = self.client.server_capabilities
        extensions = getattr(capabilities, "extensions", None) or {}
        declared = extensions.get(EXTENSION)
        return declared if isinstance(declared, Mapping) else None

    async def _require(self) -> None:
        if self.client.server_capabilities is None and self.client.modern:
            await self.client.discover()  # (a client told its revision has not asked yet)
        if self.settings is None:
            raise SkillError(f"the server does not declare the {EXTENSION} extension")

    async def list(self) -> list[SkillEntry]:
        """Every skill `skills/list` names (all pages); reads no file."""
        await self._require()
        entries: list[SkillEntry] = []
        self.rejected = []
        cursor: str | None = None
        for _ in range(1000):  # a server repeating cursors is cut off
            result = await extension_request(
                self.client, "skills/list", {"cursor": cursor} if cursor else {}
            )
            for item in result.get("skills") or []:
                try:
                    entries.append(entry_of(item))
                except SkillError as exc:
                    log.warning("skills: entry refused: %s", exc)
                    self.rejected.append((item, str(exc)))
            cursor = result.get("nextCursor")
            if type(cursor) is not str or not cursor:
                break
        return entries

    async def get(self, uri: str) -> SkillEntry:
        """The entry of the skill whose SKILL.md is at `uri` (`skills/get`); reads no file."""
        await self._require()
        result = await extension_request(self.client, "skills/get", {"uri": uri})
        entry = entry_of(result.get("skill"))
        if entry.uri != uri:
            raise SkillError(f"skills/get for {uri} answered the entry of {entry.uri}")
        return entry

    async def load(self, skill: SkillEntry | str) -> LoadedSkill:
        """Load the SKILL.md of `skill` (an entry, or its URI: then `get` first), verified.

        It is verified against the entry: size, digest, and its frontmatter field by field.
        """
        entry = skill if isinstance(skill, SkillEntry) else await self.get(skill)
        text = (await self._verified(entry, entry.uri)).decode("utf-8", errors="strict")
        try:
            found = frontmatter(text)
        except FrontmatterError as exc:
            raise SkillVerificationError(entry.uri, "frontmatter", str(exc)) from None
        differs = sorted(
            key
            for key in found.keys() | entry.frontmatter.keys()
            if not _same(found.get(key), entry.frontmatter.get(key))
        )
        if differs:
            detail = f"the file's frontmatter differs from the entry's in {', '.join(differs)}"
            raise SkillVerificationError(entry.uri, "frontmatter", detail)
        return LoadedSkill(entry, text)

    async def read(self, entry: SkillEntry, path: str) -> bytes:
        """Read a file of the skill, verified against the entry's manifest.

        The file is given by its path relative to the skill's root, or by its full URI.
        """
        uri = path if "://" in path else entry.root + "/" + posixpath.normpath(path)
        if not (uri == entry.uri or uri.startswith(entry.root + "/")) or "/../" in uri + "/":
            raise SkillVerificationError(uri, "unlisted", f"outside the skill {entry.root}")
        return await self._verified(entry, uri)

    async def read_directory(self, uri: str) -> list[dict[str, Any]]:
        """The direct children of a directory resource (`resources/directory/read`, all pages).

        The server must declare `directoryRead`.
        """
        if not (self.settings or {}).get("directoryRead"):
            raise SkillError("the server does not declare directoryRead")
        children: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(1000):
            params: dict[str, Any] = {"uri": uri, **({"cursor": cursor} if cursor else {})}
            result = await extension_request(self.client, "resources/directory/read", params)
            children += [c for c in result.get("resources") or [] if type(c) is dict]
            cursor = result.get("nextCursor")
            if type(cursor) is not str or not cursor:
                break
        return children

    async def _verified(self, entry: SkillEntry, uri: str) -> bytes:
        """The bytes of `uri`, read now and checked against `entry` (size, then digest)."""
        listed = entry.listed(uri)
        if entry.resources is None:
            if not self.allow_unverified:
                detail = "the entry publishes no manifest (resources: dynamic)"
                raise SkillVerificationError(uri, "unverifiable", detail)
        elif listed is None:
            raise SkillVerificationError(uri, "unlisted", "not in the skill's resources")
        data = await self._fetch(uri)
        if listed is not None:
            if len(data) != listed.size:
                detail = f"{len(data)} bytes read, the entry says {listed.size}"
                raise SkillVerificationError(uri, "size", detail)
            if digest(data) != listed.digest:
                detail = f"read {digest(data)}, the entry says {listed.digest}"
                raise SkillVerificationError(uri, "digest", detail)
        return data

    async def _fetch(self, uri: str) -> bytes:
        result = await self.client.read_resource(uri)
        contents = list(result.contents)
        chosen = next((c for c in contents if c.uri == uri), contents[0] if contents else None)
        if chosen is None:
            raise SkillVerificationError(uri, "size", "resources/read returned no contents")
        text = getattr(chosen, "text", None)
        if isinstance(text, str):
            return text.encode("utf-8")
        return base64.b64decode(getattr(chosen, "blob", "") or "")
