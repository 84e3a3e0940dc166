"""`mcp-codegen` end to end on temporary project copies.

Every error path: exactly one line on stderr ("mcp-codegen: error: ..."), a non-zero exit, and
nothing written (the project tree is byte-for-byte what it was, no temporary files). Then the
success paths: fetch from a mirror, add, list, check (fresh and after a hand edit), diff, and
`python -m codegen`.

Pin sources in the temporary projects point at a local path that does not exist, so a fetch
that does not find its mirror fails instead of reaching the network.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from codegen.atomic import write_atomic
from codegen.errors import CodegenError
from codegen.pins import Pin, read_pins
from tests.support import MIRROR, REVISIONS, ROOT
from tests.support.projects import (
    ERROR_PREFIX,
    PINS,
    assert_one_line_error,
    make_mirror,
    make_project,
    official,
    offline_pins,
    run,
    snapshot,
    write_pins,
)

PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


# --- helpers ------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ambient mirror, no proxy: a test fetches only from what it sets up (or 127.0.0.1)."""
    monkeypatch.delenv("MCP_SCHEMA_MIRROR", raising=False)
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def generated_files(root: Path) -> dict[str, bytes]:
    pkg = root / "generated" / "mcp_wire"
    return {
        str(p.relative_to(pkg)): p.read_bytes()
        for p in sorted(pkg.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="session")
def generated_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project with every revision fetched and generated once (via the CLI) for the session."""
    root = make_project(tmp_path_factory.mktemp("generated-project"))
    result = run("--root", root, "generate")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    files = generated_files(root)
    assert f"generated {len(files)} files ({len(files)} changed)" in result.stdout
    yield root


@pytest.fixture
def project_copy(generated_project: Path, tmp_path: Path) -> Path:
    """A private copy of the generated project, for tests that change it."""
    root = tmp_path / "project"
    shutil.copytree(generated_project, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


# --- fetch: errors --------------------------------------------------------------------------------


def test_fetch_checksum_mismatch_writes_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=())
    mirror = make_mirror(tmp_path / "mirror")
    modified = mirror / "2025-06-18" / "schema.json"
    modified.write_bytes(official("2025-06-18").replace(b'"description"', b'"description" ', 1))
    before = snapshot(project)

    result = run("--root", project, "fetch", "--mirror", mirror)

    assert_one_line_error(result, "2025-06-18", "sha256 mismatch", PINS["2025-06-18"].sha256)
    assert snapshot(project) == before  # not even the revisions that verified were written
    assert not (project / "schema" / "2024-11-05").exists()
    assert result.stdout == ""


def test_fetch_checksum_mismatch_keeps_the_fetched_file(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=("2025-06-18",))
    target = project / "schema" / "2025-06-18" / "schema.json"
    target.write_bytes(b"an older, locally kept copy")  # whatever is there stays untouched
    mirror = make_mirror(tmp_path / "mirror", ("2025-06-18",))
    (mirror / "2025-06-18" / "schema.json").write_bytes(official("2025-06-18") + b"\n")
    before = snapshot(project)

    result = run("--root", project, "fetch", "2025-06-18", "--mirror", mirror)

    assert_one_line_error(result, "sha256 mismatch")
    assert snapshot(project) == before
    assert target.read_bytes() == b"an older, locally kept copy"
    assert temp_files(project) == []


def test_fetch_missing_file_and_unreadable_source_path(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=())
    mirror = make_mirror(tmp_path / "mirror", tuple(r for r in REVISIONS if r != "2025-03-26"))
    source = offline_pins(project)["2025-03-26"].source
    assert not Path(source).exists()
    before = snapshot(project)

    result = run("--root", project, "fetch", "--mirror", mirror)

    assert_one_line_error(result, "cannot read", source)
    assert snapshot(project) == before


def test_fetch_missing_file_and_unreachable_url(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=())
    url = f"http://127.0.0.1:{closed_port()}/x"
    pins = offline_pins(project)
    pins["2025-03-26"] = Pin("2025-03-26", PINS["2025-03-26"].sha256, url)
    write_pins(project, pins)
    before = snapshot(project)

    (tmp_path / "empty-mirror").mkdir()
    result = run("--root", project, "fetch", "2025-03-26", "--mirror", tmp_path / "empty-mirror")

    assert_one_line_error(result, "cannot fetch", url)
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (b'{"$defs": {"A": ', "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
        (b"[1, 2, 3]", "must be a JSON object"),
        (b'{"$defs": {}, "x": NaN}', "NaN is not a JSON value"),
    ],
)
def test_fetch_broken_json_with_a_matching_pin(tmp_path: Path, broken: bytes, message: str) -> None:
    project = make_project(tmp_path / "p", fetched=())
    pins = offline_pins(project)
    pins["2025-11-25"] = Pin("2025-11-25", sha(broken), pins["2025-11-25"].source)
    write_pins(project, pins)
    mirror = make_mirror(tmp_path / "mirror")
    (mirror / "2025-11-25" / "schema.json").write_bytes(broken)
    before = snapshot(project)

    result = run("--root", project, "fetch", "--mirror", mirror)

    assert_one_line_error(result, "2025-11-25", message)
    assert snapshot(project) == before


@pytest.mark.parametrize("revisions", [["1999-01-01"], ["2025-06-18", "1999-01-01"]])
def test_fetch_unknown_revision(tmp_path: Path, revisions: list[str]) -> None:
    project = make_project(tmp_path / "p", fetched=())
    mirror = make_mirror(tmp_path / "mirror")
    before = snapshot(project)

    result = run("--root", project, "fetch", *revisions, "--mirror", mirror)

    assert_one_line_error(result, "unknown revision 1999-01-01", "2025-06-18")
    assert snapshot(project) == before


# --- fetch: success -------------------------------------------------------------------------------


def test_fetch_from_mirror_option(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=())
    mirror = make_mirror(tmp_path / "mirror")

    result = run("--root", project, "fetch", "--mirror", mirror)

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    for rev in REVISIONS:
        assert (project / "schema" / rev / "schema.json").read_bytes() == official(rev)
        assert f"{rev}: schema/{rev}/schema.json ok" in result.stdout.splitlines()
    assert temp_files(project) == []
    assert (
        oct((project / "schema" / "2024-11-05" / "schema.json").stat().st_mode & 0o777) == "0o644"
    )


def test_fetch_from_mirror_env_and_option_wins(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=())
    mirror = make_mirror(tmp_path / "mirror", ("2024-11-05",))

    result = run("--root", project, "fetch", "2024-11-05", env={"MCP_SCHEMA_MIRROR": str(mirror)})

    assert result.exit_code == 0, result.output
    assert (project / "schema" / "2024-11-05" / "schema.json").read_bytes() == official(
        "2024-11-05"
    )
    assert sorted(p.name for p in (project / "schema").iterdir()) == [
        "2024-11-05",
        "revisions.toml",
    ]

    # --mirror takes precedence over the environment: a bad env mirror is not consulted.
    bad = make_mirror(tmp_path / "bad-mirror", ("2025-03-26",))
    (bad / "2025-03-26" / "schema.json").write_bytes(b"{}")
    good = make_mirror(tmp_path / "good-mirror", ("2025-03-26",))
    result = run(
        "--root", project, "fetch", "2025-03-26", "--mirror", good,
        env={"MCP_SCHEMA_MIRROR": str(bad)},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (project / "schema" / "2025-03-26" / "schema.json").read_bytes() == official(
        "2025-03-26"
    )


def test_fetch_uses_the_pinned_source_when_the_mirror_lacks_it(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=())
    local = tmp_path / "upstream" / "schema.json"
    local.parent.mkdir()
    local.write_bytes(official("2025-06-18"))
    pins = offline_pins(project)
    pins["2025-06-18"] = Pin("2025-06-18", PINS["2025-06-18"].sha256, str(local))
    write_pins(project, pins)
    (tmp_path / "empty-mirror").mkdir()

    result = run("--root", project, "fetch", "2025-06-18", "--mirror", tmp_path / "empty-mirror")

    assert result.exit_code == 0, result.output
    assert (project / "schema" / "2025-06-18" / "schema.json").read_bytes() == official(
        "2025-06-18"
    )
    # Not silently: the line says where the schema came from instead.
    assert result.stdout == f"2025-06-18: schema/2025-06-18/schema.json ok (from {local})\n"


@pytest.mark.parametrize("where", ["option", "env"])
@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_fetch_with_a_mirror_that_is_not_a_folder(tmp_path: Path, where: str, kind: str) -> None:
    """A named mirror that does not exist is an error, not a silent fallback to the sources."""
    project = make_project(tmp_path / "p", fetched=())
    local = tmp_path / "upstream" / "schema.json"
    local.parent.mkdir()
    local.write_bytes(official("2025-06-18"))
    pins = offline_pins(project)
    pins["2025-06-18"] = Pin("2025-06-18", PINS["2025-06-18"].sha256, str(local))
    write_pins(project, pins)
    mirror = tmp_path / "nonexistent" / "dir"
    if kind == "a file":
        mirror.parent.mkdir()
        mirror.write_text("not a folder")
    before = snapshot(project)

    if where == "option":
        result = run("--root", project, "fetch", "2025-06-18", "--mirror", mirror)
        origin = "--mirror"
    else:
        result = run(
            "--root", project, "fetch", "2025-06-18", env={"MCP_SCHEMA_MIRROR": str(mirror)}
        )
        origin = "$MCP_SCHEMA_MIRROR"

    state = "does not exist" if kind == "missing" else "is not a folder"
    assert_one_line_error(result, f"schema mirror {mirror} (from {origin}) {state}")
    assert snapshot(project) == before


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def local_http(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 serving a temporary folder: (base URL, folder)."""
    folder = tmp_path / "served"
    folder.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_fetch_from_a_source_url(tmp_path: Path, local_http: tuple[str, Path]) -> None:
    base, folder = local_http
    (folder / "2025-06-18.json").write_bytes(official("2025-06-18"))
    project = make_project(tmp_path / "p", fetched=())
    pins = offline_pins(project)
    pins["2025-06-18"] = Pin("2025-06-18", PINS["2025-06-18"].sha256, f"{base}/2025-06-18.json")
    pins["2025-03-26"] = Pin("2025-03-26", PINS["2025-03-26"].sha256, f"{base}/absent.json")
    write_pins(project, pins)
    (tmp_path / "no-mirror").mkdir()

    result = run("--root", project, "fetch", "2025-06-18", "--mirror", tmp_path / "no-mirror")

    assert result.exit_code == 0, result.output
    assert (project / "schema" / "2025-06-18" / "schema.json").read_bytes() == official(
        "2025-06-18"
    )

    before = snapshot(project)
    result = run("--root", project, "fetch", "2025-03-26", "--mirror", tmp_path / "no-mirror")
    assert_one_line_error(result, f"cannot fetch {base}/absent.json", "404")
    assert snapshot(project) == before


def test_write_atomic_keeps_the_old_file_on_failure_and_leaves_no_temp_file(
    tmp_path: Path,
) -> None:
    target = tmp_path / "d" / "file.txt"
    write_atomic(target, "one\n")
    target.chmod(0o600)
    write_atomic(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert target.stat().st_mode & 0o777 == 0o600  # a replaced file keeps its mode

    blocker = tmp_path / "d" / "dir"
    (blocker / "inside").mkdir(parents=True)
    with pytest.raises(CodegenError, match="cannot write"):
        write_atomic(blocker, "x")
    with pytest.raises(CodegenError, match="cannot write"):
        write_atomic(target / "below-a-file", "x")
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["dir", "file.txt"]
    assert target.read_bytes() == b"two\n"


# --- add ------------------------------------------------------------------------------------------


def schema_copy(tmp_path: Path, rev: str = "2025-11-25", edit=None) -> Path:
    schema = json.loads(official(rev))
    if edit is not None:
        edit(schema)
    path = tmp_path / f"candidate-{rev}.json"
    path.write_text(json.dumps(schema, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "name", ["latest", "2027-13-01", "2027-02-30", "2027-1-1", "2027-01-01\n", "v2027-01-01"]
)
def test_add_rejects_a_revision_name_that_is_not_a_date(tmp_path: Path, name: str) -> None:
    project = make_project(tmp_path / "p")
    source = schema_copy(tmp_path)
    before = snapshot(project)

    result = run("--root", project, "add", name, "--from", source)

    assert_one_line_error(result, "is not a date (YYYY-MM-DD)")
    assert snapshot(project) == before


def test_add_rejects_an_already_pinned_revision(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    source = schema_copy(tmp_path, "2026-07-28")
    before = snapshot(project)

    result = run("--root", project, "add", "2025-11-25", "--from", source)

    assert_one_line_error(result, "2025-11-25 is already pinned")
    assert snapshot(project) == before


def test_add_with_a_missing_from_file(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    before = snapshot(project)

    result = run("--root", project, "add", "2027-01-01", "--from", tmp_path / "nope.json")

    assert_one_line_error(result, "cannot read", "nope.json")
    assert snapshot(project) == before


def test_add_from_an_unreachable_url(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    url = f"http://127.0.0.1:{closed_port()}/schema.json"
    before = snapshot(project)

    result = run("--root", project, "add", "2027-01-01", "--from", url)

    assert_one_line_error(result, "cannot fetch", url)
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"$defs": {', "not valid JSON"),
        (b'"a string"', "must be a JSON object"),
        (b"{}", "schema has no definitions"),
        (b'{"$defs": {"A": {"properties": []}}}', "not a usable MCP schema"),
        (b"[" * 100_000, "JSON"),
    ],
)
def test_add_broken_json(tmp_path: Path, content: bytes, message: str) -> None:
    project = make_project(tmp_path / "p")
    source = tmp_path / "broken.json"
    source.write_bytes(content)
    before = snapshot(project)

    result = run("--root", project, "add", "2027-01-01", "--from", source)

    assert_one_line_error(result, message)
    assert snapshot(project) == before


def _without_initialize(schema: dict) -> None:
    defs = schema["$defs"]
    del defs["InitializeRequest"]
    union = defs["ClientRequest"]["anyOf"]
    defs["ClientRequest"]["anyOf"] = [m for m in union if m["$ref"] != "#/$defs/InitializeRequest"]


def test_add_a_schema_whose_era_cannot_be_derived(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    source = schema_copy(tmp_path, "2025-11-25", _without_initialize)
    before = snapshot(project)

    result = run("--root", project, "add", "2027-01-01", "--from", source)

    assert_one_line_error(result, str(source), "2027-01-01", "cannot tell the era", "--era")
    assert snapshot(project) == before

    # The documented way out: an era override, which is then pinned.
    result = run("--root", project, "add", "2027-01-01", "--from", source, "--era", "legacy")
    assert result.exit_code == 0, result.output
    assert "2027-01-01: pinned (legacy era" in result.stdout
    pin = read_pins(project / "schema" / "revisions.toml")["2027-01-01"]
    assert pin == Pin("2027-01-01", sha(source.read_bytes()), None, "legacy")


def test_add_pins_and_fetches(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    source = schema_copy(tmp_path, "2026-07-28")
    pins_before = read_pins(project / "schema" / "revisions.toml")

    result = run("--root", project, "add", "2027-01-01", "--from", source)

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = source.read_bytes()
    assert "2027-01-01: pinned (modern era, " in result.stdout
    assert sha(data) in result.stdout
    assert (project / "schema" / "2027-01-01" / "schema.json").read_bytes() == data
    pins = read_pins(project / "schema" / "revisions.toml")
    assert pins == pins_before | {"2027-01-01": Pin("2027-01-01", sha(data), None)}
    assert temp_files(project) == []


def test_add_from_a_local_file_records_no_path_of_this_machine(tmp_path: Path) -> None:
    """Without --source, a local file leaves no absolute path in revisions.toml, says so, and
    `fetch` keeps the copy `add` fetched (or takes the mirror's)."""
    project = make_project(tmp_path / "p")
    source = schema_copy(tmp_path, "2026-07-28")

    result = run("--root", project, "add", "2027-01-01", "--from", source)

    assert result.exit_code == 0, result.output
    assert "2027-01-01: no source URL recorded (added from a local file)" in result.stdout
    text = (project / "schema" / "revisions.toml").read_text(encoding="utf-8")
    assert str(source) not in text and source.name not in text
    assert '["2027-01-01"]\n# No `source`: added from a local file' in text
    assert read_pins(project / "schema" / "revisions.toml")["2027-01-01"].source is None

    # fetch: the fetched copy is the input (sha256-verified); an empty mirror does not change that
    (tmp_path / "empty-mirror").mkdir()
    result = run("--root", project, "fetch", "2027-01-01", "--mirror", tmp_path / "empty-mirror")
    assert result.exit_code == 0, result.output
    assert "(kept: added from a local file, no source to fetch from)" in result.stdout
    # ... and without it, the error says what to do.
    (project / "schema" / "2027-01-01" / "schema.json").unlink()
    result = run("--root", project, "fetch", "2027-01-01", "--mirror", tmp_path / "empty-mirror")
    assert_one_line_error(result, "2027-01-01", "no source to fetch it from", "source")
    mirror = make_mirror(tmp_path / "mirror", ("2026-07-28",))
    (mirror / "2027-01-01").mkdir()
    (mirror / "2027-01-01" / "schema.json").write_bytes(source.read_bytes())
    result = run("--root", project, "fetch", "2027-01-01", "--mirror", mirror)
    assert result.exit_code == 0, result.output
    assert result.stdout == "2027-01-01: schema/2027-01-01/schema.json ok\n"


def test_add_with_a_source_url(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    source = schema_copy(tmp_path, "2026-07-28")
    url = "https://example.org/schema/2027-01-01/schema.json"

    result = run("--root", project, "add", "2027-01-01", "--from", source, "--source", url)

    assert result.exit_code == 0, result.output
    assert "no source URL recorded" not in result.stdout
    assert read_pins(project / "schema" / "revisions.toml")["2027-01-01"].source == url
    assert str(source) not in (project / "schema" / "revisions.toml").read_text()

    before = snapshot(project)
    result = run("--root", project, "add", "2027-02-02", "--from", source, "--source", source)
    assert_one_line_error(result, "--source must be an http(s) URL")
    assert snapshot(project) == before


def test_add_keeps_the_comments_of_revisions_toml(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    path = project / "schema" / "revisions.toml"
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        '["2025-06-18"]', '# Why 2025-06-18 is pinned at this commit.\n["2025-06-18"]  # note'
    )
    text = "# A comment of our own, at the top.\n" + text + "# trailing remark\n"
    path.write_text(text, encoding="utf-8")
    source = schema_copy(tmp_path, "2026-07-28")

    result = run("--root", project, "add", "2025-07-01", "--from", source)

    assert result.exit_code == 0, result.output
    after = path.read_text(encoding="utf-8")
    for line in text.splitlines():
        assert line in after.splitlines(), line
    assert after.index('["2025-06-18"]') < after.index('["2025-07-01"]')
    assert after.index('["2025-07-01"]') < after.index('["2025-11-25"]')
    assert (
        after.replace(after[after.index('\n["2025-07-01"]') : after.index('\n["2025-11-25"]')], "")
        == text
    )
    assert list(read_pins(path)) == sorted([*REVISIONS, "2025-07-01"])


def test_add_pins_a_source_url_that_needs_toml_escaping(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    source = schema_copy(tmp_path, "2025-06-18")
    url = 'https://example.org/a "quoted" \\ folder/schema.json'

    result = run("--root", project, "add", "2027-01-01", "--from", source, "--source", url)

    assert result.exit_code == 0, result.output
    pins = read_pins(project / "schema" / "revisions.toml")
    assert pins["2027-01-01"].source == url
    assert list(pins) == [*REVISIONS, "2027-01-01"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"hello": 1}', "schema has no definitions"),
        (b'{"$defs": {"A": {"type": "object"}}}', "cannot tell the era"),
        (b"[1]", "must be a JSON object"),
        (b"nope", "not valid JSON"),
    ],
)
def test_add_names_the_file_that_is_not_a_schema(
    tmp_path: Path, content: bytes, message: str
) -> None:
    project = make_project(tmp_path / "p")
    source = tmp_path / "notschema.json"
    source.write_bytes(content)
    before = snapshot(project)

    result = run("--root", project, "add", "2027-01-01", "--from", source)

    line = assert_one_line_error(result, message)
    assert line.startswith(f"{ERROR_PREFIX} {source}: "), line
    assert snapshot(project) == before


def test_missing_from_option_is_one_line_usage_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    before = snapshot(project)

    result = run("--root", project, "add", "2027-01-01")

    assert_one_line_error(result, "Missing option '--from'", "mcp-codegen add --help", status=2)
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["frobnicate"], "No such command 'frobnicate'"),
        (
            ["add", "2027-01-01", "--from", "x.json", "--era", "ancient"],
            "Invalid value for '--era'",
        ),
        (["diff", "2025-11-25"], "Missing argument 'NEW'"),
    ],
)
def test_usage_errors_are_one_line(tmp_path: Path, args: list[str], fragment: str) -> None:
    project = make_project(tmp_path / "p")
    before = snapshot(project)

    result = run("--root", project, *args)

    assert_one_line_error(result, fragment, status=2)
    assert snapshot(project) == before


# --- generate / diff / check: errors --------------------------------------------------------------


def test_generate_unknown_revision(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    before = snapshot(project)

    result = run("--root", project, "generate", "1999-01-01")

    assert_one_line_error(result, "unknown revision 1999-01-01")
    assert snapshot(project) == before
    assert not (project / "generated").exists()


@pytest.mark.parametrize(
    ("old", "new"), [("2025-11-25", "1999-01-01"), ("1999-01-01", "2025-11-25")]
)
def test_diff_unknown_revision(tmp_path: Path, old: str, new: str) -> None:
    project = make_project(tmp_path / "p")
    before = snapshot(project)

    result = run("--root", project, "diff", old, new)

    assert_one_line_error(result, "unknown revision 1999-01-01")
    assert result.stdout == ""
    assert snapshot(project) == before


def test_generate_when_a_schema_is_not_fetched(project_copy: Path) -> None:
    (project_copy / "schema" / "2025-06-18" / "schema.json").unlink()
    before = snapshot(project_copy)

    result = run("--root", project_copy, "generate")

    assert_one_line_error(result, "2025-06-18", "is missing", "mcp-codegen fetch 2025-06-18")
    assert snapshot(project_copy) == before  # the existing generated/ tree is untouched


def test_generate_when_a_fetched_schema_does_not_match_its_pin(project_copy: Path) -> None:
    path = project_copy / "schema" / "2025-03-26" / "schema.json"
    path.write_bytes(path.read_bytes() + b" ")
    before = snapshot(project_copy)

    result = run("--root", project_copy, "generate")

    assert_one_line_error(result, "2025-03-26", "does not match its pinned sha256")
    assert snapshot(project_copy) == before


def test_diff_when_a_schema_is_not_fetched(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=("2025-11-25",))
    result = run("--root", project, "diff", "2025-11-25", "2026-07-28")
    assert_one_line_error(result, "2026-07-28", "is missing")
    assert result.stdout == ""


MALFORMED_PINS = {
    "bad TOML": (b'["2025-11-25"\nsha256 = "abc', "not valid TOML"),
    "not UTF-8": (b'["2025-11-25"]\nsource = "\xff"\n', "not valid TOML"),
    "short sha256": (
        b'["2025-11-25"]\nsha256 = "268a5f82"\nsource = "x"\n',
        "sha256 must be 64 lowercase hex digits",
    ),
    "uppercase sha256": (
        b'["2025-11-25"]\nsha256 = "' + PINS["2025-11-25"].sha256.upper().encode() + b'"\n'
        b'source = "x"\n',
        "sha256 must be 64 lowercase hex digits",
    ),
    "sha256 not a string": (
        b'["2025-11-25"]\nsha256 = 5\nsource = "x"\n',
        "sha256 must be 64 lowercase hex digits",
    ),
    "not a date": (
        b'["latest"]\nsha256 = "' + PINS["2025-11-25"].sha256.encode() + b'"\nsource = "x"\n',
        "[latest] is not a revision table",
    ),
    "misspelt key": (
        b'["2025-11-25"]\nsha256 = "' + PINS["2025-11-25"].sha256.encode() + b'"\n'
        b'source = "x"\nerra = "legacy"\n',
        "unknown key 'erra'",
    ),
    "bad era": (
        b'["2025-11-25"]\nsha256 = "' + PINS["2025-11-25"].sha256.encode() + b'"\n'
        b'source = "x"\nera = "ancient"\n',
        "era must be one of legacy, modern",
    ),
}
COMMANDS = {
    "list": ["list"],
    "fetch": ["fetch"],
    "generate": ["generate"],
    "check": ["check"],
    "diff": ["diff", "2025-11-25", "2026-07-28"],
    "add": ["add", "2027-01-01", "--from", str(MIRROR / "2026-07-28" / "schema.json")],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", MALFORMED_PINS)
def test_malformed_revisions_toml(tmp_path: Path, case: str, command: str) -> None:
    project = make_project(tmp_path / "p", fetched=("2025-11-25", "2026-07-28"))
    content, message = MALFORMED_PINS[case]
    (project / "schema" / "revisions.toml").write_bytes(content)
    mirror = make_mirror(tmp_path / "mirror")
    before = snapshot(project)

    result = run("--root", project, *COMMANDS[command], env={"MCP_SCHEMA_MIRROR": str(mirror)})

    assert_one_line_error(result, "revisions.toml", message)
    assert snapshot(project) == before


def test_missing_revisions_toml(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    result = run("--root", tmp_path / "p", "list")
    assert_one_line_error(result, "revisions.toml: no such file")
    assert snapshot(tmp_path / "p") == {}


# --- list -----------------------------------------------------------------------------------------


def test_list_shows_era_sha256_and_state(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=("2024-11-05", "2025-06-18", "2026-07-28"))
    pins = offline_pins(project)
    pins["2025-03-26"] = Pin("2025-03-26", PINS["2025-03-26"].sha256, "x", "modern")  # override
    write_pins(project, pins)
    mismatch = project / "schema" / "2025-06-18" / "schema.json"
    mismatch.write_bytes(mismatch.read_bytes().replace(b"{", b"{ ", 1))
    before = snapshot(project)

    result = run("--root", project, "list")

    assert_one_line_error(
        result, "2025-03-26 missing, 2025-06-18 checksum mismatch, 2025-11-25 missing", status=1
    )
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows == [
        ["2024-11-05", "legacy", PINS["2024-11-05"].sha256, "fetched"],
        ["2025-03-26", "modern", PINS["2025-03-26"].sha256, "missing"],
        ["2025-06-18", "?", PINS["2025-06-18"].sha256, "CHECKSUM", "MISMATCH"],
        ["2025-11-25", "?", PINS["2025-11-25"].sha256, "missing"],
        ["2026-07-28", "modern", PINS["2026-07-28"].sha256, "fetched"],
    ]
    assert snapshot(project) == before


# --- generate / check / diff: success -------------------------------------------------------------


def test_generate_writes_every_revision_package(generated_project: Path) -> None:
    files = generated_files(generated_project)
    for rev in REVISIONS:
        module = "v" + rev.replace("-", "_")
        assert {f"{module}/__init__.py", f"{module}/models.py"} <= files.keys()
        assert PINS[rev].sha256.encode() in files[f"{module}/models.py"]
    assert {"__init__.py", "py.typed"} <= files.keys()
    # The shared machinery is hand-written runtime code (mcp_wire_runtime), never generated.
    assert not {"_base.py", "_codec.py", "_errors.py"} & files.keys()
    assert temp_files(generated_project) == []


@pytest.mark.slow
def test_check_passes_on_a_fresh_generation(generated_project: Path) -> None:
    before = snapshot(generated_project)

    result = run("--root", generated_project, "check")

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert (
        result.stdout
        == f"generated/ is up to date ({len(generated_files(generated_project))} files)\n"
    )
    assert snapshot(generated_project) == before


@pytest.mark.slow
def test_check_fails_with_a_short_diff_after_a_hand_edit(project_copy: Path) -> None:
    pkg = project_copy / "generated" / "mcp_wire"
    models = pkg / "v2025_11_25" / "models.py"
    text = models.read_text(encoding="utf-8")
    line = "class CallToolRequest(WireModel):"
    assert text.count(line) == 1
    models.write_text(text.replace(line, line + "  # hand edit"), encoding="utf-8")
    # A stray file and a deleted (empty) file are stale too.
    (pkg / "v2099_01_01").mkdir()
    (pkg / "v2099_01_01" / "models.py").write_text("x = 1\n", encoding="utf-8")
    (pkg / "py.typed").unlink()
    before = snapshot(project_copy)

    result = run("--root", project_copy, "check")

    assert_one_line_error(result, "generated/ is stale in 3 file(s)", "make generate")
    report = result.stdout.splitlines()
    assert "generated/mcp_wire/v2025_11_25/models.py differs:" in report
    assert f"-{line}  # hand edit" in report
    assert f"+{line}" in report
    assert (
        "generated/mcp_wire/v2099_01_01/models.py: not produced by the generator (stale)" in report
    )
    assert any(line.startswith("generated/mcp_wire/py.typed") for line in report)
    assert len(report) < 15  # short: the changed line with one line of context
    assert snapshot(project_copy) == before  # check never writes


@pytest.mark.slow
def test_generate_prunes_and_restores(project_copy: Path, generated_project: Path) -> None:
    pkg = project_copy / "generated" / "mcp_wire"
    (pkg / "v2099_01_01").mkdir()
    (pkg / "v2099_01_01" / "models.py").write_text("x = 1\n", encoding="utf-8")
    (pkg / "v2025_06_18" / "models.py").write_text("edited\n", encoding="utf-8")

    result = run("--root", project_copy, "generate")

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "(2 changed)" in result.stdout
    assert generated_files(project_copy) == generated_files(generated_project)
    assert temp_files(project_copy) == []


def test_diff_prints_a_markdown_changelog(generated_project: Path) -> None:
    result = run("--root", generated_project, "diff", "2025-11-25", "2026-07-28")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.startswith("# MCP schema changes: 2025-11-25 -> 2026-07-28\n")
    assert "legacy -> modern" in result.stdout


# --- the module entry point -----------------------------------------------------------------------


def test_python_dash_m_codegen_help() -> None:
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: ")
    for command in ("add", "check", "diff", "fetch", "generate", "list"):
        assert f"  {command} " in proc.stdout
    assert proc.stderr == ""


def test_python_dash_m_codegen_error_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "--root", str(tmp_path), "list"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"{ERROR_PREFIX} {tmp_path / 'schema' / 'revisions.toml'}: no such file"
    ]


FAIL_ON_THIRD_WRITE = """
import sys

import codegen.pipeline
from codegen.cli import main

real = codegen.pipeline.write_atomic
calls = []


def failing(path, data):
    calls.append(path)
    if len(calls) == 3:
        raise OSError(28, "No space left on device", str(path))
    real(path, data)


codegen.pipeline.write_atomic = failing
main(sys.argv[1:])
"""


@pytest.mark.parametrize("revisions", [(), ("2025-06-18",)])
def test_generate_failing_part_way_leaves_the_old_tree(
    project_copy: Path, revisions: tuple[str, ...]
) -> None:
    pkg = project_copy / "generated" / "mcp_wire"
    for path in pkg.rglob("*.py"):  # every file differs from what generate writes
        path.write_bytes(path.read_bytes() + b"# old\n")
    before = snapshot(project_copy / "generated")

    done = subprocess.run(
        [sys.executable, "-c", FAIL_ON_THIRD_WRITE, "--root", project_copy, "generate", *revisions],
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert snapshot(project_copy / "generated") == before
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(
        "mcp-codegen: error: cannot write generated/mcp_wire (left as it was): [Errno 28] No space"
    )


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`python -m codegen ARGS` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={k: v for k, v in os.environ.items() if k != "MCP_SCHEMA_MIRROR"},
    )  # fmt: skip


def test_list_fails_on_a_checksum_mismatch_or_a_missing_schema(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    assert cli("--root", project, "list").returncode == 0

    (project / "schema" / "2025-03-26" / "schema.json").unlink()
    proc = cli("--root", project, "list")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"{ERROR_PREFIX} not every pinned schema is usable (2025-03-26 missing); "
        "run `mcp-codegen fetch`"
    ]

    (project / "schema" / "2025-11-25" / "schema.json").write_bytes(b"{}")
    proc = cli("--root", project, "list")
    assert proc.returncode == 1
    assert "2025-11-25  ?       " in proc.stdout and "CHECKSUM MISMATCH" in proc.stdout
    assert proc.stderr.splitlines() == [
        f"{ERROR_PREFIX} not every pinned schema is usable (2025-03-26 missing, 2025-11-25 "
        "checksum mismatch); run `mcp-codegen fetch`"
    ]


def test_fetch_with_an_empty_mirror_is_an_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", fetched=())
    before = snapshot(project)

    proc = cli("--root", project, "fetch", "--mirror", "")

    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"{ERROR_PREFIX} Invalid value for '--mirror': must not be empty; "
        "see `python -m codegen fetch --help`"
    ]
    assert snapshot(project) == before
