"""The `mcpio` command: `run` over stdio and HTTP driven by our client, `dev` without Node,
`install` for each host against a temporary HOME, and bad input as one line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner, Result

from mcpio import Client
from mcpio.cli import main
from tests.support import free_port

MCPIO = [sys.executable, "-m", "mcpio"]
SERVER = """
from mcpio import Server

calculator = Server("adder")
print("loaded")  # must not reach the protocol's stdout


@calculator.tool
def add(a: int, b: int) -> int:
    return a + b
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "adder.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


async def added(target: list[str] | str) -> int:
    with anyio.fail_after(60):
        async with Client(target) as client:
            return await client.call_tool("add", {"a": 2, "b": 3}, result_type=int)


@pytest.mark.anyio
@pytest.mark.parametrize("suffix", ["", ":calculator"])
async def test_run_serves_stdio(script: Path, suffix: str) -> None:
    assert await added([*MCPIO, "run", f"{script}{suffix}"]) == 5


@pytest.fixture
def http_run(script: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    process = subprocess.Popen(
        [*MCPIO, "run", str(script), "--transport", "http", "--port", str(port)],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        yield process, port
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.mark.anyio
async def test_run_serves_http(http_run: tuple[subprocess.Popen[str], int]) -> None:
    process, port = http_run
    assert process.stderr is not None
    lines = [await anyio.to_thread.run_sync(process.stderr.readline) for _ in range(2)]
    url = f"http://127.0.0.1:{port}/mcp"
    assert lines == ["loaded\n", f"mcpio: serving MCP (Streamable HTTP) at {url}\n"]
    assert await added(url) == 5


def mcpio(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["run", "missing.py"], "mcpio run: missing.py: no such Python file"),
        (["run", "{script}:nope"], "mcpio run: {script}:nope: 'nope' is not an mcpio Server"),
        (
            ["run", "{script}", "--transport", "sse"],
            "mcpio run: Invalid value for '--transport': 'sse' is not one of 'stdio', 'http'; "
            "see `mcpio run --help`",
        ),
        (["dev", "{empty}"], "mcpio dev: {empty}: no mcpio Server in it (name one: {empty}:attr)"),
        (["install", "zed", "{script}"], "mcpio install: Invalid value for 'HOST': 'zed' is "
         "not one of 'claude-desktop', 'cursor', 'vscode'; see `mcpio install --help`"),
        (["install", "cursor", "missing.py"], "mcpio install: missing.py: no such Python file"),
        (["install", "cursor", "{script}", "--env", "X"], "mcpio install: Invalid value for "
         "'--env': 'X' is not KEY=VALUE; see `mcpio install --help`"),
        (["serve"], "mcpio: No such command 'serve'; see `mcpio --help`"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_status_2(
    args: list[str], line: str, script: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n", encoding="utf-8")
    names = {"script": str(script), "empty": str(empty)}
    result = mcpio(*[a.format(**names) for a in args], env={"HOME": str(tmp_path)})
    assert result.exit_code == 2
    # (what the module prints as it loads goes to stderr too: "loaded")
    assert result.stderr.removeprefix("loaded\n") == line.format(**names) + "\n"
    assert result.stdout == ""
    assert not (tmp_path / ".cursor").exists()


def test_dev_without_node_prints_the_command(script: Path, tmp_path: Path) -> None:
    result = mcpio("dev", script, env={"PATH": str(tmp_path / "no-node-here")})
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "mcpio dev: npx (Node.js) not found; with Node installed, run:"
    )
    assert result.stdout.split() == [
        "npx", "@modelcontextprotocol/inspector", sys.executable, "-m", "mcpio", "run", str(script)
    ]  # fmt: skip


@pytest.mark.parametrize("terminal", [True, False])
def test_dev_hands_the_server_to_the_inspector_through_npx(
    script: Path, tmp_path: Path, terminal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an `npx` on PATH (here a stand-in that records its arguments), `mcpio dev` runs it
    and exits with its status; outside a terminal with `-y` (npx's install question would wait
    for an answer no one gives)."""
    monkeypatch.setattr("mcpio.cli._dev.interactive", lambda: terminal)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path / "argv"}\nexit 3\n')
    npx.chmod(0o755)
    result = mcpio("dev", f"{script}:calculator", env={"PATH": str(bin_dir)})
    assert result.exit_code == 3
    assert (tmp_path / "argv").read_text().splitlines() == [
        *([] if terminal else ["-y"]), "@modelcontextprotocol/inspector", sys.executable, "-m",
        "mcpio", "run", f"{script}:calculator",
    ]  # fmt: skip


def test_standard_input_that_is_no_file_is_no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpio.cli._dev import interactive

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert interactive() is False


def configured(host: str, home: Path, workspace: Path) -> Path:
    return {
        "claude-desktop": home / ".config" / "Claude" / "claude_desktop_config.json",
        "cursor": home / ".cursor" / "mcp.json",
        "vscode": workspace / ".vscode" / "mcp.json",
    }[host]


HOSTS = ["claude-desktop", "cursor", "vscode"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "home"
    where.mkdir()
    monkeypatch.setenv("HOME", str(where))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    return where


@pytest.mark.skipif(sys.platform != "linux", reason="Claude's folder is Linux's here")
@pytest.mark.parametrize("host", HOSTS)
def test_install_writes_a_new_configuration(host: str, home: Path, script: Path) -> None:
    result = mcpio("install", host, script, "--env", "MODE=dev")
    assert result.exit_code == 0, result.stderr
    path = configured(host, home, Path.cwd())
    assert result.stdout == f"mcpio install: added 'adder' in {path}\n"
    entry = {"command": sys.executable, "args": ["-m", "mcpio", "run", str(script)]}
    entry["env"] = {"MODE": "dev"}  # type: ignore[assignment]
    if host == "vscode":
        assert json.loads(path.read_text()) == {"servers": {"adder": {"type": "stdio", **entry}}}
    else:
        assert json.loads(path.read_text()) == {"mcpServers": {"adder": entry}}
    assert not path.with_name(path.name + ".bak").exists()


@pytest.mark.parametrize("host", HOSTS)
def test_install_updates_keeping_the_rest_and_a_backup(host: str, home: Path, script: Path) -> None:
    path = configured(host, home, Path.cwd())
    path.parent.mkdir(parents=True)
    key = "servers" if host == "vscode" else "mcpServers"
    old = {"theme": "dark", key: {"other": {"command": "x"}, "calc": {"command": "stale"}}}
    old_text = json.dumps(old)
    path.write_text(old_text, encoding="utf-8")
    result = mcpio("install", host, f"{script}:calculator", "--name", "calc")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"mcpio install: updated 'calc' in {path} (the old file: ")
    new = json.loads(path.read_text())
    assert new["theme"] == "dark" and new[key]["other"] == {"command": "x"}
    assert new[key]["calc"]["args"] == ["-m", "mcpio", "run", f"{script}:calculator"]
    assert path.with_name(path.name + ".bak").read_text() == old_text


@pytest.mark.anyio
async def test_the_installed_command_runs_the_server(home: Path, script: Path) -> None:
    assert mcpio("install", "cursor", script).exit_code == 0
    entry = json.loads(configured("cursor", home, Path.cwd()).read_text())["mcpServers"]["adder"]
    assert await added([entry["command"], *entry["args"]]) == 5


@pytest.mark.parametrize("host", HOSTS)
def test_install_dry_run_prints_and_writes_nothing(host: str, home: Path, script: Path) -> None:
    result = mcpio("install", host, script, "--dry-run")
    assert result.exit_code == 0, result.stderr
    path = configured(host, home, Path.cwd())
    assert result.stderr == f"# {path}\n"
    key = "servers" if host == "vscode" else "mcpServers"
    assert json.loads(result.stdout)[key]["adder"]["command"] == sys.executable
    assert not path.exists()


def test_install_refuses_a_configuration_that_is_not_json(home: Path, script: Path) -> None:
    path = configured("cursor", home, Path.cwd())
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    result = mcpio("install", "cursor", script)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"mcpio install: {path} is not JSON (")
    assert result.stderr.endswith("): left as it is\n") and result.stderr.count("\n") == 1
    assert path.read_text() == "{not json"
    assert sorted(os.listdir(path.parent)) == ["mcp.json"]


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
@pytest.mark.parametrize("host", HOSTS)
def test_install_writes_secrets_owner_only(host: str, home: Path, script: Path) -> None:
    old_umask = os.umask(0o022)  # what most shells have: a plain write would be 0644
    try:
        result = mcpio("install", host, script, "--env", "TOKEN=s3cret")
    finally:
        os.umask(old_umask)
    assert result.exit_code == 0, result.stderr
    path = configured(host, home, Path.cwd())
    assert "s3cret" in path.read_text() and _mode(path) == 0o600
    assert sorted(os.listdir(path.parent)) == [path.name]  # no temporary file left


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_install_tightens_an_existing_configuration_and_its_backup(
    home: Path, script: Path
) -> None:
    path = configured("cursor", home, Path.cwd())
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"other": {"env": {"K": "old-secret"}}}}))
    path.chmod(0o644)
    result = mcpio("install", "cursor", script, "--env", "TOKEN=s3cret")
    assert result.exit_code == 0, result.stderr
    backup = path.with_name(path.name + ".bak")
    assert "old-secret" in backup.read_text() and _mode(backup) == 0o600
    assert "s3cret" in path.read_text() and _mode(path) == 0o600


ENV_SERVER = """
import os
from mcpio import Server

server = Server("env")


@server.tool()
def seen() -> str:
    return " ".join(os.environ.get(k, "-") for k in ("WHO", "MCPIO_TEST_API_KEY"))


server.run_stdio()
"""


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize(("options", "seen"), [([], "- -"), (["--env", "WHO=me"], "me -")])
async def test_proxy_passes_its_target_env_and_no_secret_of_its_own(
    tmp_path: Path, options: list[str], seen: str
) -> None:
    script = tmp_path / "env_server.py"
    script.write_text(ENV_SERVER, encoding="utf-8")
    proxy = [*MCPIO, "proxy", *options, "--", sys.executable, str(script)]
    with anyio.fail_after(60):
        # the proxy itself is given a secret; the server it starts must not inherit it
        async with Client(proxy, env={"MCPIO_TEST_API_KEY": "s3cret"}) as client:
            result = await client.call_tool("seen", {})
    assert result.content[0].text == seen  # type: ignore[union-attr]


def test_proxy_env_is_for_a_stdio_target() -> None:
    result = mcpio("proxy", "--env", "K=v", "https://example.test/mcp")
    assert result.exit_code == 2
    assert result.stderr == "mcpio proxy: --env is for a stdio target (a .py file or a command)\n"
