"""`make conformance`'s Skills part (SEP-2640): the fixture skills directory the example server
publishes, and every skills scenario the pinned suite lists, run one by one.

No requirement set of the suite names the Skills scenarios (an extension, not on the spec
timeline), so `conformance server/client --scenario <name> --spec-version <revision> --force`
runs each at 2025-11-25 (a session) and at 2026-07-28 (stateless). A scenario passes with no
FAILURE, no WARNING and no SKIPPED check, except the skips `SKIPS_ALLOWED` names: checks the
suite itself declares not applicable at that revision (printed on every run).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

PREFIX = "sep-2640-"  # the Skills extension's scenarios
REVISIONS = ("2025-11-25", "2026-07-28")
# (revision, check id) -> why the suite skips it there.
SKIPS_ALLOWED = {
    ("2025-11-25", "sep-2640-skills-list-cache-attributes"): "ttlMs/cacheScope start at 2026-07-28",
    ("2025-11-25", "sep-2640-skills-get-cache-attributes"): "ttlMs/cacheScope start at 2026-07-28",
}

# Our fixture: two skills, one under an organizational prefix, each with a subdirectory.
FIXTURE = {
    "release-notes/SKILL.md": (
        "---\n"
        "name: release-notes\n"
        "description: Write release notes from merged changes, in the project's style\n"
        "license: MIT\n"
        "metadata:\n"
        "  version: 1.2.0\n"
        "---\n\n"
        "# Release notes\n\n"
        "Group the changes by kind; follow references/STYLE.md; start from templates/entry.md.\n"
    ),
    "release-notes/references/STYLE.md": "# Style\n\nPresent tense; one line per change.\n",
    "release-notes/templates/entry.md": "- {kind}: {summary} ({link})\n",
    "ops/triage/SKILL.md": (
        "---\n"
        "name: triage\n"
        "description: Sort incoming issues by severity and owner\n"
        "---\n\n"
        "Read checklists/severity.md, then label the issue.\n"
    ),
    "ops/triage/checklists/severity.md": "1. Data loss? 2. Outage? 3. Everything else.\n",
}


def write_fixture(root: Path) -> Path:
    """Write the fixture skills under `root`; returns `root`."""
    for relative, text in FIXTURE.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def listed(bin_dir: Path, env: dict[str, str], side: str) -> list[str]:
    """The Skills scenarios `conformance list --server|--client` names."""
    done = subprocess.run(
        [str(bin_dir / "conformance"), "list", f"--{side}"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    names = []
    for line in done.stdout.splitlines():
        name = line.strip().removeprefix("- ").split(" [", 1)[0]
        if line.startswith("  - ") and name.startswith(PREFIX):
            names.append(name)
    return names


def checks_of(stdout: str) -> list[dict[str, object]] | None:
    """The checks a `--verbose` run prints as a JSON array (None: none printed)."""
    text = f"\n{stdout}\n"
    start, end = text.find("\n[\n"), text.rfind("\n]\n")
    if start < 0 or end < start:
        return None
    try:
        found = json.loads(text[start + 1 : end + 2])
    except ValueError:
        return None
    return found if isinstance(found, list) else None


def verdict(done: subprocess.CompletedProcess[str], revision: str) -> tuple[int, list[str]]:
    """Passed checks of a run and what is wrong with it (nothing: it passed)."""
    checks = checks_of(done.stdout) or []
    wrong = []
    for check in checks:
        status, id = check.get("status"), str(check.get("id"))
        if status == "SKIPPED" and (revision, id) in SKIPS_ALLOWED:
            continue
        if status in ("FAILURE", "WARNING", "SKIPPED"):
            wrong.append(f"{status} {id}: {check.get('errorMessage') or check.get('description')}")
    passed = sum(check.get("status") == "SUCCESS" for check in checks)
    if done.returncode != 0 or not passed:
        wrong.append(f"exit {done.returncode}, {passed} checks passed\n{done.stderr[-2000:]}")
    return passed, wrong


def run_side(
    bin_dir: Path, env: dict[str, str], side: str, target: list[str], revisions: tuple[str, ...]
) -> tuple[int, int, int]:
    """Run every listed scenario of `side` at each revision: (runs, passed runs, checks)."""
    runs = ok = checks = 0
    for name in listed(bin_dir, env, side):
        for revision in revisions:
            command = [
                str(bin_dir / "conformance"), side, *target, "--scenario", name,
                "--spec-version", revision, "--force", "--verbose",
            ]  # fmt: skip
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
            passed, wrong = verdict(done, revision)
            runs, checks = runs + 1, checks + passed
            ok += not wrong
            for line in wrong:
                print(f"--- {side} scenario {name} at {revision}: {line}")
    return runs, ok, checks


def server_runs(bin_dir: Path, env: dict[str, str], url: str, revision: str) -> int:
    """The server scenarios at `revision` against the fixture server at `url`; 1 on failure."""
    runs, ok, checks = run_side(bin_dir, env, "server", ["--url", url], (revision,))
    print(f"  skills server scenarios at {revision}: {ok}/{runs} passed ({checks} checks)")
    for (skipped_at, id), why in SKIPS_ALLOWED.items():
        if skipped_at == revision:
            print(f"    skip allowed: {id}: {why}")
    return 0 if runs and ok == runs else 1


def client_runs(bin_dir: Path, env: dict[str, str], client: Path) -> int:
    """The client scenarios at both revisions with our client; 1 on failure."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(client))}"
    runs, ok, checks = run_side(bin_dir, env, "client", ["--command", command], REVISIONS)
    print(f"skills client scenarios ({', '.join(REVISIONS)}): {ok}/{runs} passed ({checks} checks)")
    return 0 if runs and ok == runs else 1
