"""Bring a pinned revision's schema.json into schema/<rev>/, from a mirror folder or its URL.

Every byte is checked against the pinned sha256 and must parse as a JSON object before the
file is written (atomically), so a failed fetch leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

from codegen.atomic import write_atomic
from codegen.errors import CodegenError
from codegen.pins import ExtensionPin, Pin

MIRROR_ENV = "MCP_SCHEMA_MIRROR"
MAX_SCHEMA_BYTES = 32 * 1024 * 1024


def default_mirror(root: Path) -> Path | None:
    """`$MCP_SCHEMA_MIRROR` (which must exist), else `../shared/mcp-spec/schema` if it exists."""
    env = os.environ.get(MIRROR_ENV)
    if env:
        return checked_mirror(Path(env), f"${MIRROR_ENV}")
    shared = root.parent / "shared" / "mcp-spec" / "schema"
    return shared if shared.is_dir() else None


def checked_mirror(mirror: Path, origin: str) -> Path:
    """A mirror the user named (`--mirror`, the environment) must be a folder: a typo must not
    quietly send every fetch to the network instead."""
    if not mirror.is_dir():
        state = "is not a folder" if mirror.exists() else "does not exist"
        raise CodegenError(f"schema mirror {mirror} (from {origin}) {state}")
    return mirror


def is_url(location: str) -> bool:
    return location.lower().startswith(("http://", "https://"))


def read_source(location: str) -> bytes:
    """Bytes of a local path or an http(s) URL; any failure is one CodegenError line."""
    if is_url(location):
        try:
            with urllib.request.urlopen(location, timeout=30) as resp:  # noqa: S310 (pinned URLs)
                data = resp.read(MAX_SCHEMA_BYTES + 1)
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
            raise CodegenError(f"cannot fetch {location}: {exc}") from None
    else:
        try:
            data = Path(location).read_bytes()
        except OSError as exc:
            raise CodegenError(f"cannot read {location}: {exc.strerror or exc}") from None
        except ValueError as exc:  # e.g. an embedded NUL byte
            raise CodegenError(f"cannot read {location!r}: {exc}") from None
    if len(data) > MAX_SCHEMA_BYTES:
        raise CodegenError(f"{location}: larger than {MAX_SCHEMA_BYTES} bytes")
    return data


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")


def parse_schema(data: bytes, origin: str) -> dict:
    try:
        schema = json.loads(data, parse_constant=_no_constant)  # NaN, Infinity: not JSON
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, the constants above
        raise CodegenError(f"{origin}: not valid JSON: {exc}") from None
    except RecursionError:
        raise CodegenError(f"{origin}: not usable JSON: nested too deeply") from None
    if not isinstance(schema, dict):
        raise CodegenError(f"{origin}: a schema must be a JSON object")
    return schema


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def schema_path(schema_dir: Path, revision: str) -> Path:
    return schema_dir / revision / "schema.json"


def location_of(pin: Pin, mirror: Path | None, fetched: Path | None = None) -> str:
    """Where a pinned revision is fetched from: the mirror's copy if it has one, else its source.

    A revision added from a local file has no source: the mirror, or the copy already fetched
    into the project (`fetched`, verified like any other input), must have it.
    """
    if mirror is not None and schema_path(mirror, pin.revision).is_file():
        return str(schema_path(mirror, pin.revision))
    if pin.source is not None:
        return pin.source
    if fetched is not None and fetched.is_file():
        return str(fetched)
    where = f"the mirror {mirror}" if mirror is not None else "no mirror"
    raise CodegenError(
        f"{pin.revision}: not in {where}, and no source to fetch it from (it was added from a "
        f"local file); put {pin.revision}/schema.json in a mirror (--mirror, ${MIRROR_ENV}) or "
        "add its `source` URL to schema/revisions.toml"
    )


def fetch_verified(pin: Pin, mirror: Path | None, fetched: Path | None = None) -> bytes:
    """The bytes of one pinned revision from the mirror (else its source), sha256- and JSON-checked."""
    location = location_of(pin, mirror, fetched)
    data = read_source(location)
    actual = sha256_hex(data)
    if actual != pin.sha256:
        raise CodegenError(
            f"{pin.revision}: sha256 mismatch for {location}: expected {pin.sha256}, got {actual}"
        )
    parse_schema(data, location)
    return data


def fetch(pin: Pin, schema_dir: Path, mirror: Path | None) -> Path:
    """Fetch one pinned revision; returns where it was written."""
    target = schema_path(schema_dir, pin.revision)
    data = fetch_verified(pin, mirror, target)
    write_atomic(target, data)
    return target


def load_pinned(pin: Pin, schema_dir: Path) -> tuple[dict, bytes]:
    """The fetched schema of a pin, verified again: generation never reads unverified input."""
    path = schema_path(schema_dir, pin.revision)
    if not path.is_file():
        raise CodegenError(
            f"{pin.revision}: {path} is missing; run `mcp-codegen fetch {pin.revision}`"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CodegenError(f"{pin.revision}: cannot read {path}: {exc.strerror or exc}") from None
    if sha256_hex(data) != pin.sha256:
        raise CodegenError(
            f"{pin.revision}: {path} does not match its pinned sha256; fetch it again"
        )
    return parse_schema(data, str(path)), data


# ---------------------------------------------------------------------- extensions


def extension_path(schema_dir: Path, pin: ExtensionPin) -> Path:
    return schema_dir / "ext" / pin.name / "schema.json"


def extension_location(pin: ExtensionPin, mirror: Path | None, fetched: Path | None = None) -> str:
    """Where a pinned extension is fetched from: the mirror's `ext/<name>/schema.json` (in the
    mirror folder, or beside it as in ../shared/mcp-spec), else the copy fetched before if it
    still matches its pin (no download on every `make`), else its source."""
    if mirror is not None:
        for base in (mirror, mirror.parent):
            candidate = base / "ext" / pin.name / "schema.json"
            if candidate.is_file():
                return str(candidate)
    if fetched is not None and _matches(fetched, pin.sha256):
        return str(fetched)
    if pin.source is not None:
        return pin.source
    if fetched is not None and fetched.is_file():
        return str(fetched)
    raise CodegenError(f"{pin.label}: not in the mirror, and no source to fetch it from")


def _matches(path: Path, sha256: str) -> bool:
    try:
        return path.is_file() and sha256_hex(path.read_bytes()) == sha256
    except OSError:
        return False


def fetch_extension_verified(
    pin: ExtensionPin, mirror: Path | None, fetched: Path | None = None
) -> bytes:
    location = extension_location(pin, mirror, fetched)
    data = read_source(location)
    if pin.member is not None and location == pin.source:
        data = tar_member(data, pin.member, f"{pin.label}: {location}")
        location = f"{location} ({pin.member})"
    actual = sha256_hex(data)
    if actual != pin.sha256:
        raise CodegenError(
            f"{pin.label}: sha256 mismatch for {location}: expected {pin.sha256}, got {actual}"
        )
    parse_schema(data, location)
    return data


def tar_member(data: bytes, member: str, origin: str) -> bytes:
    """The bytes of one regular file of a (gzipped) tarball, as an npm package publishes it."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            info = tar.getmember(member)
            handle = tar.extractfile(info) if info.isfile() else None
            if handle is None:
                raise CodegenError(f"{origin}: {member} is not a regular file")
            if info.size > MAX_SCHEMA_BYTES:
                raise CodegenError(f"{origin}: {member} is larger than {MAX_SCHEMA_BYTES} bytes")
            return handle.read()
    except KeyError:
        raise CodegenError(f"{origin}: the tarball has no member {member}") from None
    except (tarfile.TarError, OSError, EOFError):
        raise CodegenError(f"{origin}: not a readable tarball (tar, gzipped or not)") from None


def load_pinned_extension(pin: ExtensionPin, schema_dir: Path) -> dict:
    """The fetched schema of an extension, verified again (as `load_pinned`)."""
    path = extension_path(schema_dir, pin)
    if not path.is_file():
        raise CodegenError(f"{pin.label}: {path} is missing; run `mcp-codegen fetch`")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CodegenError(f"{pin.label}: cannot read {path}: {exc.strerror or exc}") from None
    if sha256_hex(data) != pin.sha256:
        raise CodegenError(f"{pin.label}: {path} does not match its pinned sha256; fetch it again")
    return parse_schema(data, str(path))
