"""A consumer's code (tests/consumer/sample.py) type-checks under `pyright --strict`, and the typed
codec API reveals each revision's own types.

pyright runs on the sample alone with tests/consumer/pyrightconfig.json (typeCheckingMode
"strict") and this interpreter's environment (the project's venv). Every `reveal_type(...)` line
of the sample ends in `# expect: T`, and pyright must reveal exactly T there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.slow

CONSUMER = ROOT / "tests" / "consumer"
SAMPLE = CONSUMER / "sample.py"
PYRIGHT = Path(sys.executable).with_name("pyright")
_EXPECT = re.compile(r"# expect: (.+)$")
_REVEALED = re.compile(r'^Type of ".*" is "(.*)"$', re.DOTALL)


def _expected() -> dict[int, str]:
    """Line number (1-based) of each `reveal_type(...)` -> the type its `# expect: T` comment
    names (at the end of the line, or alone on the line above)."""
    out = {}
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        code = line.split("#", 1)[0]
        if not code.lstrip().startswith("reveal_type("):
            continue
        assert code.rstrip().endswith(")"), f"sample.py:{number}: keep reveal_type on one line"
        match = _EXPECT.search(line) or _EXPECT.match(lines[number - 2].strip())
        assert match is not None, f"sample.py:{number}: reveal_type without `# expect: T`"
        out[number] = match[1].strip()
    return out


def test_the_sample_type_checks_strictly_and_reveals_each_revisions_types() -> None:
    config = json.loads((CONSUMER / "pyrightconfig.json").read_text(encoding="utf-8"))
    assert config["typeCheckingMode"] == "strict"
    proc = subprocess.run(
        [str(PYRIGHT), "--outputjson", "-p", str(CONSUMER), "--pythonpath", sys.executable],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    diagnostics = report["generalDiagnostics"]
    problems = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['severity']}: {d['message']}"
        for d in diagnostics
        if d["severity"] != "information"
    ]
    assert problems == [], "\n".join(problems)
    assert report["summary"]["filesAnalyzed"] == 1
    revealed = {
        d["range"]["start"]["line"] + 1: match[1]
        for d in diagnostics
        if d["severity"] == "information" and (match := _REVEALED.match(d["message"]))
    }
    expected = _expected()
    assert len(expected) >= 25
    assert revealed == expected


def test_the_sample_runs() -> None:
    """What it builds by hand is valid on the wire too (and decodes as it says)."""
    proc = subprocess.run(
        [sys.executable, str(SAMPLE)], cwd=ROOT, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    runtime = set(re.findall(r"Runtime type is '([^']+)'", proc.stderr))
    assert {"Codec2026_07_28", "Codec2025_11_25", "Envelope", "InitializeRequestFrame"} <= runtime
    assert {"CallToolRequest", "ProgressNotification", "UnsupportedProtocolVersionError"} <= runtime


def test_the_typed_options_mirror_what_they_reach() -> None:
    """`mcpio._core.options`' TypedDicts name exactly the options of what they pass through to (an
    option missing there would be refused by pyright in a consumer's code)."""
    import dataclasses
    import inspect

    from mcpio import Server
    from mcpio._core.options import ConnectionOptions
    from mcpio.http._app import HttpOptions
    from mcpio.http._options import HttpAppOptions, HttpServeOptions
    from mcpio.server._connection import ServerConnection

    def keywords(fn: object) -> set[str]:
        kinds = (inspect.Parameter.KEYWORD_ONLY,)
        return {p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds}  # type: ignore[arg-type]

    assert set(HttpAppOptions.__annotations__) == {f.name for f in dataclasses.fields(HttpOptions)}
    assert set(ConnectionOptions.__annotations__) == keywords(ServerConnection.__init__)
    serve = set(HttpServeOptions.__annotations__) - set(HttpAppOptions.__annotations__)
    assert serve == keywords(Server.run_http)
