"""`mcp-codegen`: fetch, add, generate, check, diff and list the pinned MCP revisions."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn

import click

from codegen.atomic import write_atomic
from codegen.changelog import changelog
from codegen.errors import CodegenError
from codegen.fetch import (
    default_mirror,
    fetch_verified,
    is_url,
    parse_schema,
    read_source,
    schema_path,
    sha256_hex,
)
from codegen.pins import ERAS, Pin, is_revision_name, render_pins
from codegen.pipeline import (
    Project,
    load_revision,
    render_package,
    revision_from_schema,
    stale_files,
    write_package,
)

DEFAULT_ROOT = Path(__file__).resolve().parent.parent


def _fail(message: str, status: int = 1) -> NoReturn:
    lines = message.strip().splitlines()
    click.echo(f"mcp-codegen: error: {lines[0] if lines else 'failed'}", err=True)
    sys.exit(status)


def one_line_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Every CodegenError becomes one line on stderr and exit status 1."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CodegenError as exc:
            _fail(str(exc) or type(exc).__name__)

    return wrapper


def _progress(message: str) -> None:
    # stdout: stderr is reserved for the one error line, so a failure reads as exactly that.
    click.echo(f"  {message}")


class _OneLineGroup(click.Group):
    """Usage errors too (unknown command, missing option, bad choice) are one line on stderr."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            status = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:  # bare `mcp-codegen`: the help
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            hint = f"; see `{exc.ctx.command_path} --help`" if exc.ctx is not None else ""
            _fail(exc.format_message().rstrip(".") + hint, exc.exit_code)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _fail("aborted")
        sys.exit(status if isinstance(status, int) else 0)


@click.group(cls=_OneLineGroup, name="mcp-codegen")
@click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_ROOT, show_default=False,
    help="Project folder holding schema/ and generated/ (default: this checkout).",
)  # fmt: skip
@click.pass_context
def main(ctx: click.Context, root: Path) -> None:
    """Generate typed Python for every pinned Model Context Protocol revision."""
    ctx.obj = Project(root.resolve())


def _mirror_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--mirror", type=click.Path(path_type=Path), default=None,
        help="Folder with <rev>/schema.json (env MCP_SCHEMA_MIRROR; default ../shared/mcp-spec/schema).",
    )(fn)  # fmt: skip


@main.command("fetch")
@click.argument("revisions", nargs=-1)
@_mirror_option
@click.pass_obj
@one_line_errors
def fetch_cmd(project: Project, revisions: tuple[str, ...], mirror: Path | None) -> None:
    """Fetch pinned schemas (all, or REVISIONS) into schema/<rev>/schema.json, sha256-verified."""
    pins = project.pins()
    for rev in revisions:
        if rev not in pins:
            raise CodegenError(f"unknown revision {rev}; pinned: {', '.join(pins)}")
    mirror = mirror or default_mirror(project.root)
    # Verify every requested revision before writing any, so a failure writes nothing.
    verified = {rev: fetch_verified(pins[rev], mirror) for rev in revisions or tuple(pins)}
    for rev, data in verified.items():
        path = schema_path(project.schema_dir, rev)
        write_atomic(path, data)
        click.echo(f"{rev}: {path.relative_to(project.root)} ok")


@main.command("add")
@click.argument("revision")
@click.option(
    "--from", "source", required=True, help="Path or URL of the new revision's schema.json."
)
@click.option(
    "--era", type=click.Choice(ERAS), default=None, help="Override the era derived from the schema."
)
@click.pass_obj
@one_line_errors
def add_cmd(project: Project, revision: str, source: str, era: str | None) -> None:
    """Pin a new revision (computing its sha256) and fetch it."""
    if not is_revision_name(revision):
        raise CodegenError(f"revision {revision!r} is not a date (YYYY-MM-DD)")
    pins = project.pins()
    if revision in pins:
        raise CodegenError(f"revision {revision} is already pinned")
    data = read_source(source)
    schema = parse_schema(data, source)
    ir, _ = revision_from_schema(
        revision, schema, sha256_hex(data), era
    )  # refuses what cannot generate
    location = source if is_url(source) else str(Path(source).resolve())
    pins[revision] = Pin(revision, sha256_hex(data), location, era)
    target = schema_path(project.schema_dir, revision)
    existed = target.exists()
    write_atomic(target, data)
    try:
        write_atomic(project.pins_file, render_pins(pins))  # the commit point
    except CodegenError:
        if not existed:
            target.unlink(missing_ok=True)
            _rmdir_if_empty(target.parent)
        raise
    click.echo(
        f"{revision}: pinned ({ir.era} era, {len(ir.methods)} methods), sha256 {sha256_hex(data)}"
    )


def _rmdir_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass


@main.command("generate")
@click.argument("revisions", nargs=-1)
@click.pass_obj
@one_line_errors
def generate_cmd(project: Project, revisions: tuple[str, ...]) -> None:
    """Generate generated/mcp_wire for all pinned revisions (or only REVISIONS)."""
    start = time.perf_counter()
    files = render_package(project, revisions or None, progress=_progress)
    changed = write_package(project, files, prune=not revisions)
    took = time.perf_counter() - start
    click.echo(f"generated {len(files)} files ({len(changed)} changed) in {took:.1f}s")


@main.command("check")
@click.pass_obj
@one_line_errors
def check_cmd(project: Project) -> None:
    """Fail if generated/ differs from what `generate` would write now."""
    files = render_package(project)
    report = stale_files(project, files)
    if report:
        # The short diff is the report (stdout); stderr gets the one error line.
        click.echo("\n".join(report))
        _fail(
            f"generated/ is stale in {len(report)} file(s); run `make generate` and commit the result"
        )
    click.echo(f"generated/ is up to date ({len(files)} files)")


@main.command("diff")
@click.argument("old")
@click.argument("new")
@click.pass_obj
@one_line_errors
def diff_cmd(project: Project, old: str, new: str) -> None:
    """Markdown changelog between two pinned revisions."""
    pins = project.pins()
    for rev in (old, new):
        if rev not in pins:
            raise CodegenError(f"unknown revision {rev}; pinned: {', '.join(pins)}")
    click.echo(
        changelog(load_revision(project, pins[old])[0], load_revision(project, pins[new])[0]),
        nl=False,
    )


@main.command("list")
@click.pass_obj
@one_line_errors
def list_cmd(project: Project) -> None:
    """The pinned revisions: era, sha256, fetched or not."""
    for rev, pin in project.pins().items():
        fetched = schema_path(project.schema_dir, rev)
        state = "missing"
        era = pin.era or "?"
        if fetched.is_file():
            state = (
                "fetched" if sha256_hex(fetched.read_bytes()) == pin.sha256 else "CHECKSUM MISMATCH"
            )
            if state == "fetched" and not pin.era:
                try:
                    era = load_revision(project, pin)[0].era
                except CodegenError as exc:  # list every revision even if one cannot be read
                    state = f"fetched, unusable: {str(exc).splitlines()[0]}"
        click.echo(f"{rev}  {era:<6}  {pin.sha256}  {state}")
