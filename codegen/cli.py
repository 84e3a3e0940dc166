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
    checked_mirror,
    default_mirror,
    extension_location,
    extension_path,
    fetch_extension_verified,
    fetch_verified,
    is_url,
    location_of,
    parse_schema,
    read_source,
    schema_path,
    sha256_hex,
)
from codegen.pins import ERAS, Pin, is_revision_name, render_pins
from codegen.pipeline import (
    Project,
    extension_fits,
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
    # stdout: stderr is reserved for the one error line (and warnings), so a failure reads as
    # exactly that.
    if message.startswith("warning: "):
        click.echo(f"mcp-codegen: {message}", err=True)
    else:
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


def _version() -> str:
    from mcpio._version import __version__

    return __version__


@click.group(cls=_OneLineGroup, name="mcp-codegen")
@click.version_option(
    _version(), "--version", prog_name="mcp-codegen", message="%(prog)s %(version)s"
)
@click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_ROOT, show_default=False,
    help="Project folder holding schema/ and generated/ (default: this checkout).",
)  # fmt: skip
@click.pass_context
def main(ctx: click.Context, root: Path) -> None:
    """Generate typed Python for every pinned Model Context Protocol revision."""
    ctx.obj = Project(root.resolve())


def _not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    # An empty path would be the current folder, which lacks the schemas: every fetch would go
    # to the network without a word.
    if value == "":
        raise click.BadParameter("must not be empty", ctx, param)
    return None if value is None else Path(value)


def _mirror_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--mirror", type=click.Path(), default=None, callback=_not_empty,
        help="Folder with <rev>/schema.json (env MCP_SCHEMA_MIRROR; default ../shared/mcp-spec/schema).",
    )(fn)  # fmt: skip


@main.command("fetch")
@click.argument("revisions", nargs=-1)
@_mirror_option
@click.pass_obj
@one_line_errors
def fetch_cmd(project: Project, revisions: tuple[str, ...], mirror: Path | None) -> None:
    """Fetch pinned schemas (all, or REVISIONS and extension ids) into schema/<rev>/schema.json
    and schema/ext/<name>/schema.json, sha256-verified."""
    pins = project.pins()
    ext_pins = project.extension_pins()
    for rev in revisions:
        if rev not in pins and rev not in ext_pins:
            raise CodegenError(f"unknown revision {rev}; pinned: {', '.join([*pins, *ext_pins])}")
    mirror = checked_mirror(mirror, "--mirror") if mirror else default_mirror(project.root)
    # Verify every requested revision before writing any, so a failure writes nothing.
    verified = {}
    for rev in [r for r in revisions if r in pins] if revisions else tuple(pins):
        path = schema_path(project.schema_dir, rev)
        verified[rev] = (
            path,
            location_of(pins[rev], mirror, path),
            fetch_verified(pins[rev], mirror, path),
        )
    mirrored = {rev: str(schema_path(mirror, rev)) for rev in verified} if mirror else {}
    for ext_id in [r for r in revisions if r in ext_pins] if revisions else tuple(ext_pins):
        ext = ext_pins[ext_id]
        path = extension_path(project.schema_dir, ext)
        location = extension_location(ext, mirror, path)
        verified[ext_id] = (path, location, fetch_extension_verified(ext, mirror, path))
        if mirror and not is_url(location) and location != str(path):
            mirrored[ext_id] = location
    for rev, (path, location, data) in verified.items():
        write_atomic(path, data)
        # Say where it came from unless it is the mirror: a mirror that lacks a revision sends
        # its fetch to the pinned source (the network, usually), and that should not be silent.
        origin = ""
        if location == str(path):
            origin = (
                " (kept: it matches its pin)"
                if rev in ext_pins and ext_pins[rev].source
                else " (kept: added from a local file, no source to fetch from)"
            )
        elif location != mirrored.get(rev):
            origin = f" (from {location})"
        click.echo(f"{rev}: {path.relative_to(project.root)} ok{origin}")


@main.command("add")
@click.argument("revision")
@click.option(
    "--from", "origin", required=True, help="Path or URL of the new revision's schema.json."
)
@click.option(
    "--source", default=None,
    help="Upstream URL to pin as its source (default: the --from URL; none for a local file).",
)  # fmt: skip
@click.option(
    "--era", type=click.Choice(ERAS), default=None, help="Override the era derived from the schema."
)
@click.pass_obj
@one_line_errors
def add_cmd(
    project: Project, revision: str, origin: str, source: str | None, era: str | None
) -> None:
    """Pin a new revision (computing its sha256) and fetch it.

    revisions.toml records where upstream publishes the schema (--source, or the --from URL),
    never a path of this machine: a revision added from a local file without --source is pinned
    by its sha256 alone, and `fetch` then finds it in the mirror or keeps the copy fetched now.
    """
    if not is_revision_name(revision):
        raise CodegenError(f"revision {revision!r} is not a date (YYYY-MM-DD)")
    if source is not None and not is_url(source):
        raise CodegenError(f"--source must be an http(s) URL, not {source!r}")
    pins = project.pins()
    if revision in pins:
        raise CodegenError(f"revision {revision} is already pinned")
    data = read_source(origin)
    schema = parse_schema(data, origin)
    try:
        ir, _ = revision_from_schema(revision, schema, sha256_hex(data), era)
    except CodegenError as exc:  # refuses what cannot generate, naming the file
        hint = " (or pass --era legacy|modern)" if "cannot tell the era" in str(exc) else ""
        raise CodegenError(f"{origin}: {exc}{hint}") from None
    if source is None and is_url(origin):
        source = origin
    pins[revision] = Pin(revision, sha256_hex(data), source, era)
    target = schema_path(project.schema_dir, revision)
    existed = target.exists()
    write_atomic(target, data)
    try:
        existing = project.pins_file.read_text(encoding="utf-8")
        write_atomic(project.pins_file, render_pins(pins, existing))  # the commit point
    except (CodegenError, OSError, UnicodeDecodeError) as exc:
        if not existed:
            target.unlink(missing_ok=True)
            _rmdir_if_empty(target.parent)
        if isinstance(exc, CodegenError):
            raise
        raise CodegenError(f"{project.pins_file}: cannot update: {exc}") from None
    click.echo(
        f"{revision}: pinned ({ir.era} era, {len(ir.methods)} methods), sha256 {sha256_hex(data)}"
    )
    if source is None:
        click.echo(
            f"{revision}: no source URL recorded (added from a local file); pass --source URL, "
            "or add `source` to schema/revisions.toml once upstream publishes it"
        )
    _say_extension_fits(project, revision, ir.era)


def _say_extension_fits(project: Project, revision: str, era: str) -> None:
    """How each pinned extension fits a newly added revision (generate says the same)."""
    pins = project.pins()
    ext_pins = project.extension_pins()
    if not ext_pins:
        return
    try:
        built_on = {r for ext in ext_pins.values() for r in ext.built_on if r in pins}
        eras = {r: load_revision(project, pins[r])[0].era for r in sorted(built_on)}
        fits = extension_fits(project, {**eras, revision: era})
    except CodegenError as exc:
        click.echo(f"{revision}: cannot tell how the extensions fit it yet: {exc}")
        return
    for by_revision in fits.values():
        found = by_revision[revision]
        if found.kind == "skipped":
            _progress(f"warning: {found.describe()}")
        else:
            click.echo(found.describe())


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
    old_ir, new_ir = load_revision(project, pins[old])[0], load_revision(project, pins[new])[0]
    extensions = None
    if project.extension_pins():
        eras = {r: load_revision(project, p)[0].era for r, p in pins.items()}
        fits = extension_fits(project, eras)
        extensions = [by[rev].describe() for by in fits.values() for rev in (old, new)]
    click.echo(changelog(old_ir, new_ir, extensions), nl=False)


@main.command("list")
@click.pass_obj
@one_line_errors
def list_cmd(project: Project) -> None:
    """The pinned revisions: era, sha256, fetched or not (exit 1 unless every one is usable)."""
    unusable: list[str] = []
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
        if state != "fetched":
            unusable.append(f"{rev} {state.partition(':')[0].lower()}")
    for ext_id, ext in project.extension_pins().items():
        fetched = extension_path(project.schema_dir, ext)
        state = "missing"
        if fetched.is_file():
            same = sha256_hex(fetched.read_bytes()) == ext.sha256
            state = "fetched" if same else "CHECKSUM MISMATCH"
        built_on = ", ".join(ext.built_on)
        click.echo(f"{ext_id}  extension built on {built_on}  {ext.sha256}  {state}")
        if state != "fetched":
            unusable.append(f"{ext_id} {state.lower()}")
        elif not unusable:
            eras = {r: load_revision(project, p)[0].era for r, p in project.pins().items()}
            for found in extension_fits(project, eras)[ext_id].values():
                if found.kind not in ("pinned", "not applicable"):
                    click.echo(f"  {found.revision}: {found.summary()}")
    if unusable:
        _fail(f"not every pinned schema is usable ({', '.join(unusable)}); run `mcp-codegen fetch`")


@main.command("openapi")
@click.argument("document", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path),
    help="The package folder the module is written to (<out>/__init__.py).",
)  # fmt: skip
@click.option("--check", is_flag=True, help="Fail if the module there is not what DOCUMENT makes.")
@one_line_errors
def openapi_cmd(document: Path, out: Path, check: bool) -> None:
    """A typed module of tools for an OpenAPI DOCUMENT (3.0 or 3.1, JSON or YAML): Pydantic
    models, one async function per operation, `register(server, client)`."""
    from codegen.openapi import write_openapi

    target, fresh = write_openapi(document, out, check)
    if not fresh:
        _fail(f"{target} is stale for {document}; run `mcp-codegen openapi {document} --out {out}`")
    click.echo(f"{target} is up to date" if check else f"wrote {target}")
