"""The fixtures every test module may ask for: the event loop of async tests, each revision, the
npm peers, the project's built wheels. Plain helpers and constants are in tests/support/__init__.py (import them from there).
"""

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
from tests.support.wheels import built_wheels


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """The event loop of every async test (anyio's plugin runs them): asyncio, as uvicorn's.
    Session-scoped, so module-scoped fixtures may depend on it too."""
    return "asyncio"


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The `mcp-wire` and `mcpgen` wheels, built once for the session's wheel tests
    (tests/test_wheel.py, tests/test_types_wheel.py) into one folder; each by its name."""
    return built_wheels(tmp_path_factory.mktemp("wheels"))


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


def _installed_version(package: str) -> str | None:
    try:
        manifest = PEERS / "node_modules" / package / "package.json"
        return json.loads(manifest.read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return None


def _say(config: pytest.Config, line: str) -> None:
    """A line on the terminal now, through pytest's output capture."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(line, file=sys.stderr, flush=True)


@pytest.fixture(scope="session")
def npm_peers(pytestconfig: pytest.Config) -> Path:
    """tests/peers/node_modules with every package of tests/peers/package.json at its pinned
    version (installed with `npm ci` from the lock file when one differs or is missing)."""
    pinned: dict[str, str] = json.loads((PEERS / "package.json").read_text(encoding="utf-8"))[
        "dependencies"
    ]
    if all(_installed_version(name) == version for name, version in pinned.items()):
        return PEERS / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm must be on PATH to install the interop peers into {PEERS}")
    _say(
        pytestconfig,
        f"npm_peers: installing the npm packages of {PEERS}/package.json and their dependencies"
        " with `npm ci` (part of the about 270 MB of npm packages `make test` installs)",
    )
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=PEERS,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`npm ci` in {PEERS} did not finish within 600 s")
    if done.returncode != 0:
        pytest.fail(f"`npm ci` in {PEERS} failed (exit {done.returncode}):\n{done.stderr}")
    wrong = {n: _installed_version(n) for n, v in pinned.items() if _installed_version(n) != v}
    if wrong:
        pytest.fail(f"`npm ci` left other versions than pinned: {wrong}")
    return PEERS / "node_modules"
