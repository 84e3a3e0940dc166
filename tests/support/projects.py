"""Temporary project copies for mcp-codegen end to end, and how its runs are checked."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from codegen.cli import main
from codegen.pins import Pin, render_pins
from tests.support import MIRROR, PROJECT, REVISIONS

PINS = PROJECT.pins()


ERROR_PREFIX = "mcp-codegen: error:"


def run(*args: str | Path, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


def official(rev: str) -> bytes:
    return (MIRROR / rev / "schema.json").read_bytes()


def write_pins(root: Path, pins: dict[str, Pin]) -> Path:
    path = root / "schema" / "revisions.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_pins(pins), encoding="utf-8")
    return path


def offline_pins(root: Path, revisions: tuple[str, ...] = REVISIONS) -> dict[str, Pin]:
    """The real pins, with sources that do not exist (so only a mirror can satisfy a fetch)."""
    gone = root.parent / f"{root.name}-upstream-gone"
    return {
        r: Pin(r, PINS[r].sha256, str(gone / r / "schema.json"), PINS[r].era) for r in revisions
    }


def make_project(root: Path, fetched: tuple[str, ...] = REVISIONS) -> Path:
    """A project folder: revisions.toml (offline sources) and the `fetched` schema files."""
    write_pins(root, offline_pins(root))
    for rev in fetched:
        target = root / "schema" / rev / "schema.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(official(rev))
    return root


def make_mirror(root: Path, revisions: tuple[str, ...] = REVISIONS) -> Path:
    for rev in revisions:
        (root / rev).mkdir(parents=True)
        (root / rev / "schema.json").write_bytes(official(rev))
    return root


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (None) under root: equal snapshots = nothing written."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
        if "__pycache__" not in p.parts
    }


def assert_one_line_error(result: Result, *fragments: str, status: int | None = None) -> str:
    """Non-zero exit (a clean exit, no traceback) and exactly one `mcp-codegen: error:` line."""
    assert result.exit_code != 0, result.output
    if status is not None:
        assert result.exit_code == status
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith(ERROR_PREFIX + " "), line
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line
