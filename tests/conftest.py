"""The fixtures every test module may ask for: the event loop of async tests, each revision, the
npm peers. Plain helpers and constants are in tests/support/__init__.py (import them from there)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import PEERS, REVISIONS
from tests.support.cluster import start_redis


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """The event loop of every async test (anyio's plugin runs them): asyncio, as uvicorn's.
    Session-scoped, so module-scoped fixtures may depend on it too."""
    return "asyncio"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of the module's own on a loopback port (tests marked `services`)."""
    redis = start_redis(tmp_path_factory.mktemp("redis"), [])
    try:
        yield f"redis://127.0.0.1:{redis.port}/0"
    finally:
        redis.stop()


@pytest.fixture(params=REVISIONS)
def revision_name(request: pytest.FixtureRequest) -> str:
    return request.param


def _installed_version(folder: Path, package: str) -> str | None:
    try:
        manifest = folder / "node_modules" / package / "package.json"
        return json.loads(manifest.read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return None


def _say(config: pytest.Config, line: str) -> None:
    """A line on the terminal now, through pytest's output capture."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(line, file=sys.stderr, flush=True)


def _npm_installed(folder: Path, config: pytest.Config, fixture: str, what: str) -> Path:
    """`folder`/node_modules with every package of its package.json at its pinned version
    (installed with `npm ci` from the lock file when one differs or is missing)."""
    pinned: dict[str, str] = json.loads((folder / "package.json").read_text(encoding="utf-8"))[
        "dependencies"
    ]
    if all(_installed_version(folder, name) == version for name, version in pinned.items()):
        return folder / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm must be on PATH to install the npm packages of {folder} ({fixture})")
    _say(
        config,
        f"{fixture}: installing the npm packages of {folder}/package.json and their dependencies"
        f" with `npm ci` ({what})",
    )
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`npm ci` in {folder} did not finish within 600 s")
    if done.returncode != 0:
        pytest.fail(f"`npm ci` in {folder} failed (exit {done.returncode}):\n{done.stderr}")
    wrong = {
        n: _installed_version(folder, n)
        for n, v in pinned.items()
        if _installed_version(folder, n) != v
    }
    if wrong:
        pytest.fail(f"`npm ci` left other versions than pinned: {wrong}")
    return folder / "node_modules"


@pytest.fixture(scope="session")
def npm_peers(pytestconfig: pytest.Config) -> Path:
    """tests/peers/node_modules with every package of tests/peers/package.json at its pinned
    version (installed with `npm ci` from the lock file when one differs or is missing)."""
    return _npm_installed(
        PEERS,
        pytestconfig,
        "npm_peers",
        "part of the about 270 MB of npm packages `make test` installs",
    )


@pytest.fixture(scope="session")
def openapi_documents(pytestconfig: pytest.Config) -> Path:
    """The real OpenAPI documents of @readme/oas-examples (tests/openapi/documents, `npm ci`:
    about 4 MB): its folder, holding 3.0/ and 3.1/ (json/ and yaml/ in each)."""
    folder = PEERS.parent / "openapi" / "documents"
    modules = _npm_installed(folder, pytestconfig, "openapi_documents", "about 4 MB")
    return modules / "@readme" / "oas-examples"
