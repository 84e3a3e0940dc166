"""Write files so that a reader sees the old content or the new, never half of it."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from codegen.errors import CodegenError


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace `path` with `data` in one rename; on any failure the old file (or none) remains.

    The bytes are flushed to disk before the rename, so a crash cannot leave an empty file in
    place of the old one; a replaced file keeps its permission bits (a new one gets 0o644).
    OS failures are one-line CodegenErrors, and no temporary file is left behind.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise CodegenError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
