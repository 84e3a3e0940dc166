"""The `mcpio` command (also `python -m mcpio`):

    mcpio run server.py[:attr] [--transport stdio|http] [--host H] [--port P]
    mcpio dev server.py[:attr]
    mcpio install claude-desktop|cursor|vscode server.py[:attr] [--name N] [--env K=V] [--dry-run]
    mcpio inspect [--log FILE] [--jsonl FILE] [--report FILE.html] -- <server command...>
    mcpio inspect --upstream URL --listen 127.0.0.1:PORT [--log FILE] [--jsonl FILE] [--report ...]
    mcpio replay TRANSCRIPT --server CMD|URL
    mcpio proxy [--transport stdio|http] [--mode REVISION] [--header K=V] [--env K=V] -- TARGET...
    mcpio worker APP --redis URL [--concurrency N] [--lease S] [--grace S] [--attempts N]

Bad input (a usage error, a file that is missing or holds no Server, an unreadable
configuration) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from mcpio._version import __version__
from mcpio.server._server import Server


def _fail(message: str, status: int = 2) -> NoReturn:
    lines = message.strip().splitlines()
    click.echo(lines[0] if lines else "mcpio: failed", err=True)
    sys.exit(status)


class _OneLineGroup(click.Group):
    """Usage errors (unknown command, missing argument, bad choice) are one line on stderr."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            status = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:  # bare `mcpio`: the help
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "mcpio"
            _fail(f"{where}: {exc.format_message().rstrip('.')}; see `{where} --help`")
        except click.ClickException as exc:
            _fail(f"mcpio: {exc.format_message()}", exc.exit_code)
        except click.Abort:
            _fail("mcpio: aborted", 130)
        sys.exit(status if isinstance(status, int) else 0)


def _load(command: str, app: str) -> Server:
    """The Server `app` names, or one line and exit status 2. Anything the module prints while
    it loads goes to stderr (stdout may be the protocol's)."""
    from mcpio.server._loading import load_server

    try:
        with contextlib.redirect_stdout(sys.stderr):
            return load_server(app)
    except (ValueError, ImportError, SyntaxError) as exc:
        _fail(f"mcpio {command}: {exc}")


_APP = click.argument("app", metavar="SERVER")


@click.group(cls=_OneLineGroup, name="mcpio")
@click.version_option(__version__, "--version", prog_name="mcpio", message="%(prog)s %(version)s")
def main() -> None:
    """Run, develop, install and inspect MCP servers.

    SERVER is path/to/server.py[:attr] or module:attr (attr: `server`, else the module's only
    mcpio Server)."""


@main.command("run")
@_APP
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio, or Streamable HTTP at http://HOST:PORT/mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
def run_cmd(app: str, transport: str, host: str, port: int) -> None:
    """Serve SERVER over stdio or HTTP.

    Over stdio until stdin ends; over HTTP (on loopback unless --host says otherwise) until
    interrupted."""
    server = _load("run", app)
    if transport == "http":
        server.run("http", host=host, port=port)
    else:
        server.run()


@main.command("dev")
@_APP
def dev_cmd(app: str) -> None:
    """Run SERVER under the MCP Inspector.

    The Inspector (`npx @modelcontextprotocol/inspector`) starts SERVER over stdio with this
    interpreter. Without Node (no `npx` on PATH), prints that command and exits 1."""
    from mcpio.cli._dev import run_inspector

    _load("dev", app)  # a SERVER that does not load fails here, in one line
    outcome = run_inspector(app)
    if isinstance(outcome, int):
        sys.exit(outcome)
    click.echo("mcpio dev: npx (Node.js) not found; with Node installed, run:", err=True)
    click.echo(" ".join(_quoted(outcome)))
    sys.exit(1)


def _quoted(words: list[str]) -> list[str]:
    import shlex

    return [shlex.quote(w) for w in words]


def _env(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, equals, text = value.partition("=")
        if not equals or not key:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", ctx, param)
        pairs[key] = text
    return pairs


@main.command("install")
@click.argument("host", metavar="HOST", type=click.Choice(["claude-desktop", "cursor", "vscode"]))
@_APP
@click.option("--name", help="The server's name in the host (default: the file's stem).")
@click.option(
    "--env",
    "env",
    multiple=True,
    callback=_env,
    metavar="KEY=VALUE",
    help="An environment variable the host sets for the server (repeatable).",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    help="vscode: the workspace folder whose .vscode/mcp.json to write (default: here).",
)
@click.option("--dry-run", is_flag=True, help="Print the new file; write nothing.")
def install_cmd(
    host: str, app: str, name: str | None, env: dict[str, str], workspace: Path, dry_run: bool
) -> None:
    """Add SERVER to a host's MCP configuration.

    The host runs it as `<this interpreter> -m mcpio run /abs/SERVER`. claude-desktop:
    claude_desktop_config.json in Claude's folder (Linux: ~/.config/Claude); cursor:
    ~/.cursor/mcp.json; vscode: the workspace's .vscode/mcp.json. An entry of the same name is
    replaced, the rest kept; the old file is copied to FILE.bak first."""
    from mcpio.cli._hosts import ConfigError, plan, write

    where = app.partition(":")[0]
    if not where.endswith(".py") or not Path(where).is_file():
        _fail(f"mcpio install: {where}: no such Python file")
    try:
        planned = plan(host, app, name or Path(where).stem, env, workspace.resolve())
        if dry_run:
            click.echo(f"# {planned.path}", err=True)
            click.echo(planned.text, nl=False)
            return
        backup = write(planned)
    except ConfigError as exc:
        _fail(f"mcpio install: {exc}")
    kept = f" (the old file: {backup})" if backup is not None else ""
    verb = "updated" if planned.replaced else "added"
    click.echo(f"mcpio install: {verb} {name or Path(where).stem!r} in {planned.path}{kept}")


_PASS_THROUGH = {"ignore_unknown_options": True, "allow_interspersed_args": False}


@main.command("inspect", context_settings=_PASS_THROUGH)
@click.option(
    "--log", type=click.Path(path_type=Path), help="Findings and summary here, not stderr."
)
@click.option(
    "--jsonl", type=click.Path(path_type=Path), help="Write a transcript: every frame, findings."
)
@click.option(
    "--report", type=click.Path(path_type=Path), help="Write a static HTML report at the end."
)
@click.option("--max-frames", type=click.IntRange(min=1), help="Frames kept for --report (10,000).")
@click.option("--upstream", help="HTTP: the MCP endpoint URL to relay to.")
@click.option("--listen", help="HTTP: [HOST:]PORT to serve on (HOST: 127.0.0.1).")
@click.option(
    "--allow-remote", is_flag=True, help="HTTP: allow a --listen HOST other than loopback."
)
@click.argument("server", nargs=-1, type=click.UNPROCESSED)
def inspect_cmd(**options: Any) -> None:
    """Relay an MCP session, checking every frame.

    Over stdio (`-- <server command...>`) or Streamable HTTP (`--upstream URL --listen
    HOST:PORT`), every frame checked against its revision."""
    from mcpio.inspect import _cli as cli

    options["server"] = list(options["server"])
    _call("inspect", cli.inspect, options)


@main.command("replay")
@click.argument("transcript", type=click.Path(path_type=Path))
@click.option("--server", required=True, help="A command line, or an http(s) URL.")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds per answer.")
def replay_cmd(**options: Any) -> None:
    """Replay a transcript and report differences.

    Re-sends the transcript's client side and reports how the answers differ."""
    from mcpio.inspect import _cli as cli

    _call("replay", cli.replay, options)


@main.command("proxy", context_settings=_PASS_THROUGH)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="How the proxy serves: stdio, or Streamable HTTP at http://HOST:PORT/mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--mode", default="auto", show_default=True, help="The target's revision or era.")
@click.option(
    "--header",
    "headers",
    multiple=True,
    callback=_env,
    metavar="NAME=VALUE",
    help="An HTTP target: a header on every request (repeatable).",
)
@click.option(
    "--env",
    "env",
    multiple=True,
    callback=_env,
    metavar="KEY=VALUE",
    help="A stdio target: a variable set for it, beside the few it inherits"
    " (HOME, PATH, ...; repeatable).",
)
@click.argument("target", nargs=-1, required=True, type=click.UNPROCESSED)
def proxy_cmd(
    target: tuple[str, ...],
    transport: str,
    host: str,
    port: int,
    mode: str,
    headers: dict[str, str],
    env: dict[str, str],
) -> None:
    """Re-serve TARGET (a URL, a .py file, or a command after --) over stdio or HTTP.

    Each side in its own revision: a legacy stdio server to 2026-07-28 HTTP clients, a
    2026-07-28 server to a host that only launches stdio commands. A stdio TARGET inherits
    only HOME, PATH, the locale and the like of this environment, and what --env sets."""
    import shutil

    from mcpio.client._client import Client
    from mcpio.client._proxy import proxy_server
    from mcpio.client._targets import command_for, is_url

    given: str | list[str] = target[0] if len(target) == 1 else list(target)
    try:
        if isinstance(given, str) and not is_url(given):
            given = command_for(given)
        if isinstance(given, list) and shutil.which(given[0]) is None:
            raise ValueError(f"no program {given[0]!r} (not on PATH, not an executable file)")
        if headers and not isinstance(given, str):
            raise ValueError("--header is for an http(s) URL target")
        if env and isinstance(given, str):
            raise ValueError("--env is for a stdio target (a .py file or a command)")
        options: dict[str, Any] = {"mode": mode, **({"headers": headers} if headers else {})}
        if env:
            options["env"] = env
        Client(given, **options)  # checks the mode and the target
        server = proxy_server(given, name="mcpio-proxy", **options)
    except ValueError as exc:
        _fail(f"mcpio proxy: {exc}")
    if transport == "http":
        server.run("http", host=host, port=port)
    else:
        server.run()


@main.command("worker")
@click.argument("app", metavar="APP")
@click.option("--redis", required=True, metavar="URL", help="The task store, queue and bus.")
@click.option("--concurrency", type=int, default=8, show_default=True, help="Tasks run at once.")
@click.option("--lease", type=float, default=30.0, show_default=True, help="Task lease, seconds.")
@click.option("--grace", type=float, default=10.0, show_default=True, help="Seconds at SIGTERM.")
@click.option(
    "--attempts",
    type=int,
    default=3,
    show_default=True,
    help="Runs of a retry-safe task (one a shutdown stopped is given back).",
)
def worker_cmd(**options: Any) -> None:
    """Run the tasks queued in Redis with APP's tools.

    The tasks HTTP instances queued (mcpio.cli._worker)."""
    from mcpio.cli._worker import main as worker

    sys.exit(worker(argparse.Namespace(**options)))


def _call(command: str, run: Any, options: dict[str, Any]) -> None:
    from mcpio.inspect._cli import UsageError

    try:
        status = run(argparse.Namespace(**options))
    except UsageError as exc:
        _fail(f"mcpio {command}: {exc}")
    sys.exit(status)


def run() -> None:
    """The console script's entry point."""
    main()
