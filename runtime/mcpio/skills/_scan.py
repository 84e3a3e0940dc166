"""Read a skills directory into a catalog (SEP-2640's server side, without the server).

The catalog holds every skill (a directory holding SKILL.md, at any depth) with its entry
(`uri`, verbatim `frontmatter`, `resources` of `{uri, digest, size}`), its files and the
directory tree.

What cannot be published is skipped with a warning, never raised: a directory without SKILL.md,
a SKILL.md whose frontmatter is broken or whose `name` is not its directory's, a symlink out of
its skill's directory or to a dot file, a skill over the SEP's limits (512 files, 16 MiB), an
unreadable file. Dot files and directories (`.git`, `.env`, `.DS_Store`) are not part of any
skill, nor reached through a symlink (`refs/env.txt -> ../../.env`).
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from mcpio.skills._format import (
    DIRECTORY_MIME,
    MAX_RESOURCES,
    MAX_TOTAL_BYTES,
    NAME,
    SKILL_FILE,
    FrontmatterError,
    digest,
    frontmatter,
)

_SEGMENT_SAFE = "-._~!$&'()*+,;=:@"
_TEXT_TYPES = {".md": "text/markdown", ".py": "text/x-python", ".sh": "text/x-shellscript"}


@dataclass(frozen=True)
class SkillFile:
    """A file of a published skill, as a scan found it.

    Args:
        uri: Its resource URI.
        path: Its path under the skills directory (as listed: `publishable` follows it).
        size: Its size in bytes.
        mtime_ns: Its modification time (ns): with `size`, whether the next scan reuses `digest`.
        digest: `sha256:{64 lowercase hex}` of its bytes.
        mime_type: Its MIME type.
        home: Its skill's directory, resolved: what the file must resolve inside of.
    """

    uri: str
    path: Path
    size: int
    mtime_ns: int
    digest: str
    mime_type: str
    home: Path  # its skill's directory, resolved: what the file must resolve inside of


def publishable(path: Path, home: Path) -> Path | None:
    """What `path` leads to, its symlinks followed, if it may be published; else None.

    Publishable: inside `home` (a skill's resolved directory) with no dot-named component there
    (`.env`, `.git/config`). A symlink loop is None too.
    """
    try:
        target = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    if not target.is_relative_to(home):
        return None
    if any(part.startswith(".") for part in target.relative_to(home).parts):
        return None
    return target


@dataclass(frozen=True)
class SkillRecord:
    """A published skill: its SKILL.md, its frontmatter and its files.

    Args:
        uri: The resource URI of its SKILL.md.
        frontmatter: Its SKILL.md's frontmatter, verbatim (a JSON-ready object).
        files: Its files, SKILL.md first.
    """

    uri: str  # its SKILL.md's
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]

    def entry(self) -> dict[str, Any]:
        """The skill's entry, as `skills/list` and `skills/get` carry it."""
        resources = [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in self.files]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}


@dataclass
class Catalog:
    """A skills directory as `scan` read it.

    Args:
        skills: Each published skill, by the URI of its SKILL.md.
        files: Each published file, by its URI.
        directories: Each directory of the published files: its URI -> its direct children's
            metadata (`uri`, `name`, `mimeType`, and `size` for a file).
        warnings: What was skipped, and why.
    """

    skills: dict[str, SkillRecord] = field(default_factory=dict)
    files: dict[str, SkillFile] = field(default_factory=dict)
    directories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def uri_of(scheme: str, relative: PurePosixPath) -> str:
    """The resource URI of the file at `relative` (under the skills directory), segments quoted."""
    return f"{scheme}://" + "/".join(quote(part, safe=_SEGMENT_SAFE) for part in relative.parts)


def scan(
    root: Path, scheme: str = "skill", known: Mapping[str, SkillFile] | None = None
) -> Catalog:
    """Read the catalog of the skills under `root` now.

    What cannot be published is skipped with a warning (`Catalog.warnings`), never raised.

    Args:
        root: The skills directory.
        scheme: The URI scheme of the files' resources.
        known: The files of the previous catalog, whose digests are reused when a file's size
            and modification time are unchanged.
    """
    catalog = Catalog()
    files = _walk(root, root.resolve(), PurePosixPath(), catalog.warnings)
    skill_dirs = sorted({rel.parent for rel in files if rel.name == SKILL_FILE})
    if PurePosixPath() in skill_dirs:
        catalog.warnings.append(f"{root}: a SKILL.md at the top is no skill (skills are inside)")
        skill_dirs.remove(PurePosixPath())
    for top in sorted({rel.parts[0] for rel in files if len(rel.parts) > 1}):
        if not any(d.parts[0] == top for d in skill_dirs):
            catalog.warnings.append(f"{root / top}: no SKILL.md in it: not a skill, skipped")
    for directory in skill_dirs:
        inside = {rel: path for rel, path in files.items() if rel.is_relative_to(directory)}
        record = _skill(root, scheme, directory, inside, known or {}, catalog.warnings)
        if record is not None:
            catalog.skills[record.uri] = record
            catalog.files.update((f.uri, f) for f in record.files)
    catalog.directories = _tree(scheme, root, catalog.files)
    return catalog


def _walk(
    directory: Path, real_root: Path, relative: PurePosixPath, warnings: list[str]
) -> dict[PurePosixPath, Path]:
    """The regular files under `directory` (symlinks only to files inside the root)."""
    found: dict[PurePosixPath, Path] = {}
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        warnings.append(f"{directory}: cannot be listed ({exc.strerror}): skipped")
        return found
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path, rel = Path(entry.path), relative / entry.name
        if entry.is_symlink():
            target = path.resolve()
            if not target.is_relative_to(real_root):
                warnings.append(f"{path}: a symlink out of the skills directory: skipped")
                continue
            if target.is_dir():
                warnings.append(f"{path}: a symlinked directory is not followed: skipped")
                continue
        if entry.is_dir():
            found.update(_walk(path, real_root, rel, warnings))
        elif entry.is_file():
            found[rel] = path
        else:
            warnings.append(f"{path}: not a regular file: skipped")
    return found


def _skill(
    root: Path,
    scheme: str,
    directory: PurePosixPath,
    files: dict[PurePosixPath, Path],
    known: Mapping[str, SkillFile],
    warnings: list[str],
) -> SkillRecord | None:
    """The skill at `directory`, or None (with the warning why it is not published)."""
    where = root / directory
    home = where.resolve()
    for rel, path in list(files.items()):
        if publishable(path, home) is None:
            warnings.append(f"{path}: a symlink out of its skill or to a dot file: skipped")
            del files[rel]
    if directory / SKILL_FILE not in files:
        warnings.append(f"{where}: its SKILL.md is not publishable: skill skipped")
        return None
    try:
        sizes = {rel: path.stat() for rel, path in files.items()}
    except OSError as exc:
        warnings.append(f"{where}: a file cannot be read ({exc.strerror}): skill skipped")
        return None
    total = sum(stat.st_size for stat in sizes.values())
    if len(files) > MAX_RESOURCES or total > MAX_TOTAL_BYTES:
        warnings.append(
            f"{where}: {len(files)} files, {total} bytes, over the limits of a skill"
            f" ({MAX_RESOURCES} files, {MAX_TOTAL_BYTES} bytes): skipped"
        )
        return None
    try:
        text = (where / SKILL_FILE).read_bytes().decode("utf-8")
        matter = frontmatter(text)
    except (OSError, UnicodeDecodeError, FrontmatterError) as exc:
        warnings.append(f"{where / SKILL_FILE}: {_reason(exc)}: skill skipped")
        return None
    name = matter["name"]
    if name != directory.name or not NAME.match(name):
        warnings.append(
            f"{where}: frontmatter name {name!r} must be the directory's name and follow"
            " the Agent Skills naming rules (a-z, 0-9, single hyphens, 1-64): skipped"
        )
        return None
    made: list[SkillFile] = []
    for rel, path in files.items():
        made_file = _file(uri_of(scheme, rel), path, home, sizes[rel], known)
        if made_file is None:
            warnings.append(f"{path}: cannot be read: skill {where} skipped")
            return None
        made.append(made_file)
    uri = uri_of(scheme, directory / SKILL_FILE)
    made.sort(key=lambda f: (f.uri != uri, f.uri))  # SKILL.md first
    return SkillRecord(uri, matter, tuple(made))


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, OSError):
        return f"cannot be read ({exc.strerror})"
    return str(exc)


def _file(
    uri: str, path: Path, home: Path, stat: os.stat_result, known: Mapping[str, SkillFile]
) -> Any:
    before = known.get(uri)
    if before is not None and (before.size, before.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
        return before
    try:
        data = path.read_bytes()
    except OSError:
        return None
    mime = _TEXT_TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0]
    if mime is None:
        mime = "text/plain" if _is_text(data) else "application/octet-stream"
    return SkillFile(uri, path, len(data), stat.st_mtime_ns, digest(data), mime, home)


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in data


def _tree(scheme: str, root: Path, files: Mapping[str, SkillFile]) -> dict[str, list[Any]]:
    """Every directory of the published files, its URI -> its direct children's metadata."""
    children: dict[str, dict[str, dict[str, Any]]] = {}
    for file in files.values():
        rel = PurePosixPath(file.path.relative_to(root).as_posix())
        entry: dict[str, Any] = {
            "uri": file.uri,
            "name": rel.name,
            "mimeType": file.mime_type,
            "size": file.size,
        }
        for parent in rel.parents[:-1]:  # up to the namespace's first segment
            children.setdefault(uri_of(scheme, parent), {})[entry["uri"]] = entry
            entry = {"uri": uri_of(scheme, parent), "name": parent.name, "mimeType": DIRECTORY_MIME}
    return {uri: sorted(kids.values(), key=lambda e: e["uri"]) for uri, kids in children.items()}
