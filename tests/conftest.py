"""The fixtures every test module may ask for: the event loop of async tests, each revision, the
npm peers, the project's built wheels. Plain helpers and constants are in tests/support/__init__.py
(import them from there)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.npm_lock import npm_install_lock
from tests.support import PEERS, REALSERVERS, REVISIONS
from tests.support.cluster import start_redis
from tests.support.wheels import built_wheels

OIDC = Path(__file__).parent / "oidc"  # the OpenID provider of the OAuth proxy's tests
INSPECTOR = Path(__file__).parent / "inspector"  # the MCP Inspector, a client of the OAuth proxy
CONFORMANCE = Path(__file__).parent / "conformance"  # its Node 22 runs the Inspector too


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


def _installed_version(package: str, directory: Path | None = None) -> str | None:
    try:
        manifest = (directory or PEERS) / "node_modules" / package / "package.json"
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
    return _npm_installed(pytestconfig, PEERS, "npm_peers")


@pytest.fixture(scope="session")
def npm_realservers(pytestconfig: pytest.Config) -> Path:
    """tests/realservers/node_modules: the published MCP servers of its package.json at their
    pinned versions (installed with `npm ci` as `npm_peers` are)."""
    return _npm_installed(pytestconfig, REALSERVERS, "npm_realservers")


@pytest.fixture(scope="session")
def oidc_provider_package(pytestconfig: pytest.Config) -> Path:
    """tests/oidc with its pinned oidc-provider installed (tests/oidc/provider.mjs runs it)."""
    _npm_installed(pytestconfig, OIDC, "oidc_provider_package")
    return OIDC


@pytest.fixture(scope="session")
def inspector_command(pytestconfig: pytest.Config) -> list[str]:
    """The command line of the MCP Inspector (tests/inspector, pinned; add `--cli` or `--web`),
    run by the Node 22 its engines ask for (tests/conformance's; the machine's Node is 20)."""
    node = _npm_installed(pytestconfig, CONFORMANCE, "inspector_command") / ".bin" / "node"
    modules = _npm_installed(pytestconfig, INSPECTOR, "inspector_command")
    launcher = modules / "@modelcontextprotocol" / "inspector" / "clients" / "launcher"
    return [str(node), str(launcher / "build" / "index.js")]


@pytest.fixture(scope="session")
def openapi_documents(pytestconfig: pytest.Config) -> Path:
    """The real OpenAPI documents of @readme/oas-examples (tests/openapi/documents, `npm ci`:
    about 4 MB): its folder, holding 3.0/ and 3.1/ (json/ and yaml/ in each)."""
    folder = PEERS.parent / "openapi" / "documents"
    modules = _npm_installed(pytestconfig, folder, "openapi_documents")
    return modules / "@readme" / "oas-examples"


def _npm_installed(config: pytest.Config, directory: Path, fixture: str) -> Path:
    """`directory`/node_modules with every package of its package.json at the pinned version,
    installed with `npm ci` from the lock file when one differs or is missing."""
    with npm_install_lock(directory):
        return _npm_install(config, directory, fixture)


def _npm_install(config: pytest.Config, directory: Path, fixture: str) -> Path:
    pinned: dict[str, str] = json.loads((directory / "package.json").read_text(encoding="utf-8"))[
        "dependencies"
    ]
    if all(_installed_version(name, directory) == version for name, version in pinned.items()):
        return directory / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm must be on PATH to install the npm packages of {directory}")
    _say(
        config,
        f"{fixture}: installing the npm packages of {directory}/package.json and their"
        " dependencies with `npm ci` (part of the about 570 MB of npm packages `make test`"
        " installs)",
    )
    try:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`npm ci` in {directory} did not finish within 600 s")
    if done.returncode != 0:
        pytest.fail(f"`npm ci` in {directory} failed (exit {done.returncode}):\n{done.stderr}")
    wrong = {
        name: _installed_version(name, directory)
        for name, version in pinned.items()
        if _installed_version(name, directory) != version
    }
    if wrong:
        pytest.fail(f"`npm ci` left other versions than pinned: {wrong}")
    return directory / "node_modules"
