"""One `npm ci` at a time per directory: `make test` runs pytest and the conformance suite at
once, and both may install tests/conformance (its Node 22 runs the Inspector too); two runs of
`npm ci` together each delete what the other installs."""

from __future__ import annotations

import fcntl
import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def npm_install_lock(directory: Path) -> Iterator[None]:
    """Held while `directory`'s packages are checked and installed (by any process)."""
    key = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"mcpgen-npm-{key}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
