"""`mcp-codegen`: fetch, add, generate, check, diff and list the pinned MCP revisions."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from codegen.atomic import write_atomic
from codegen.changelog import changelog
from codegen.errors import CodegenError
from codegen.fetch import default_mirror, fetch, parse_schema, read_source, schema_path, sha256_hex
from codegen.ir import build_revision
from codegen.normalize import normalize
from codegen.pins import ERAS, REVISION_NAME, Pin, render_pins
from codegen.pipeline import Project, load_revision, render_package, stale_files, write_package

DEFAULT_ROOT = Path(__file__).resolve().parent.parent


def _fail(message: str) -> None:
    click.echo(f"mcp-codegen: error: {message}", err=True)
    sys.exit(1)


def one_line_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Every CodegenError becomes one line on stderr and exit status 1."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CodegenError as exc:
            _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    return wrapper


def _progress(message: str) -> None:
    click.echo(f"  {message}", err=True)


@click.group()
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
    for rev in revisions or tuple(pins):
        path = fetch(pins[rev], project.schema_dir, mirror)
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
    if not REVISION_NAME.match(revision):
        raise CodegenError(f"revision {revision!r} is not a date (YYYY-MM-DD)")
    pins = project.pins()
    if revision in pins:
        raise CodegenError(f"revision {revision} is already pinned")
    data = read_source(source)
    schema = parse_schema(data, source)
    normalized, hoisted = normalize(schema, revision)
    ir = build_revision(
        revision, normalized, hoisted, sha256_hex(data), era
    )  # refuses what cannot generate
    location = source if source.startswith(("http://", "https://")) else str(Path(source).resolve())
    pins[revision] = Pin(revision, sha256_hex(data), location, era)
    write_atomic(schema_path(project.schema_dir, revision), data)
    write_atomic(project.pins_file, render_pins(pins))
    click.echo(
        f"{revision}: pinned ({ir.era} era, {len(ir.methods)} methods), sha256 {sha256_hex(data)}"
    )


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
    with tempfile.TemporaryDirectory(prefix="mcpgen-check-") as tmp:
        fresh = Project(Path(tmp))
        fresh.package_dir.mkdir(parents=True)
        write_package(fresh, files, prune=False)  # the regenerated tree, for inspection parity
    report = stale_files(project, files)
    if report:
        click.echo("\n".join(report), err=True)
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
                era = load_revision(project, pin)[0].era
        click.echo(f"{rev}  {era:<6}  {pin.sha256}  {state}")
