"""`make test` says what it is about to install before it does: the Debian packages
(scripts/ensure-services.sh), the npm interop peers (the `npm_peers` fixture) and the
conformance suite (tests/conformance/run.py). Each is run with stand-ins on PATH that refuse to
install anything, so these tests install nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import PEERS, ROOT

REFUSE = "#!/bin/sh\necho refused >&2\nexit 1\n"


def stand_ins(bin_dir: Path, **scripts: str) -> str:
    """A PATH of `bin_dir` alone: the given scripts, and links to the few tools needed."""
    bin_dir.mkdir()
    for name in ("bash", "cat", "mktemp", "rm", "tail", "env"):
        found = shutil.which(name)
        if found:
            (bin_dir / name).symlink_to(found)
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return str(bin_dir)


def test_ensure_services_names_the_debian_packages_first(tmp_path: Path) -> None:
    # Not root (a stand-in `id`): it stops before installing, after saying what it would install.
    path = stand_ins(tmp_path / "bin", id="#!/bin/sh\necho 1000\n")
    done = subprocess.run(
        [shutil.which("bash") or "bash", str(ROOT / "scripts" / "ensure-services.sh")],
        env={"PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith("ensure-services: installing the Debian packages ")
    assert "wrk" in first and "redis-server" in first and "MB" in first


def test_npm_peers_names_the_npm_packages_first(tmp_path: Path) -> None:
    peers = tmp_path / "peers"
    peers.mkdir()
    shutil.copy(PEERS / "package.json", peers)
    (tmp_path / "test_peers.py").write_text(
        "import pytest\n"
        "import tests.conftest\n\n"
        f"tests.conftest.PEERS = tests.conftest.Path({str(peers)!r})\n\n"
        "def test_peers(npm_peers):\n"
        "    pass\n"
    )
    env = {**os.environ, "PATH": stand_ins(tmp_path / "bin", npm=REFUSE), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
         str(tmp_path / "test_peers.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stderr.splitlines()
    assert any(line.startswith("npm_peers: installing the npm packages of ") for line in said)
    assert any("570 MB" in line for line in said), done.stderr
    assert "npm ci` in" in done.stdout  # then it ran (the stand-in) npm ci, which failed
    assert not (peers / "node_modules").exists()


def test_conformance_names_the_npm_packages_first(tmp_path: Path) -> None:
    here = tmp_path / "conformance"
    here.mkdir()
    code = (
        "import sys\nfrom pathlib import Path\n"
        f"sys.path.insert(0, {str(ROOT / 'tests' / 'conformance')!r})\n"
        f"import run\nrun.HERE = Path({str(here)!r})\nrun.install()\n"
    )
    env = {**os.environ, "PATH": stand_ins(tmp_path / "bin", npm=REFUSE)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    first = done.stderr.splitlines()[0]
    assert first.startswith("conformance: installing the npm packages of ") and "570 MB" in first
    assert "refused" in done.stderr
