"""The schema's `deprecated: true` through the generator (issue 49): marks on the members, the
method tables' `deprecated`, the generated package warning once when a user sets or sends one
(never when it reads a frame), and `mcp-codegen diff`'s own section.

No pinned schema uses the keyword (their deprecations are prose in descriptions), so a scratch
project pins 2025-06-18 with three marks added: a member of a named definition
(`Tool.annotations`), one of an inline params object (`tools/call`'s `arguments`) and a method
(`ping`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codegen.pins import Pin
from tests.support import PROJECT, ROOT
from tests.support.changelog import sections
from tests.support.projects import make_project, official, run, write_pins

REVISION = "2025-06-18"


def marked_schema() -> dict:
    schema = json.loads(official(REVISION))
    defs = schema.get("$defs", schema.get("definitions"))
    defs["Tool"]["properties"]["annotations"]["deprecated"] = True
    defs["CallToolRequest"]["properties"]["params"]["properties"]["arguments"]["deprecated"] = True
    defs["PingRequest"]["deprecated"] = True
    return schema


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("deprecations") / "p")
    data = json.dumps(marked_schema(), indent=1).encode()
    (root / "schema" / REVISION / "schema.json").write_bytes(data)
    pins = {
        name: (
            Pin(name, hashlib.sha256(data).hexdigest(), pin.source, pin.era)
            if name == REVISION
            else pin
        )
        for name, pin in PROJECT.pins().items()
    }
    write_pins(root, pins)
    result = run("--root", root, "generate")  # every revision: the package imports the latest
    assert result.exit_code == 0, result.output
    return root


def test_the_marks_reach_the_models_and_the_method_table(project: Path) -> None:
    package = project / "generated" / "mcp_wire" / "v2025_06_18"
    models = (package / "models.py").read_text(encoding="utf-8")
    assert models.count('"x-deprecated": True') == 2
    dispatch = (package / "dispatch.py").read_text(encoding="utf-8")
    assert dispatch.count("deprecated=True") == 1
    ping = re.search(r'"ping": MethodSpec\((.*?)\n    \),', dispatch, re.DOTALL)
    assert ping is not None and "deprecated=True" in ping[1]


USE = textwrap.dedent("""
    import json, warnings
    import mcp_wire
    from mcp_wire.v2025_06_18 import models as m

    def caught(action):
        with warnings.catch_warnings(record=True) as found:
            warnings.simplefilter("always")
            action()
        return [(w.category.__name__, str(w.message), w.filename) for w in found]

    codec = mcp_wire.codec("2025-06-18")
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    call = {"name": "t", "arguments": {"a": 1}}
    print(json.dumps({
        "read": caught(lambda: (
            codec.decode(ping),
            codec.decode(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                     "params": call}).encode()).params.arguments,
            m.CallToolRequestParams.model_validate(call).arguments,
        )),
        "set": caught(lambda: m.CallToolRequestParams(**call)),
        "set again": caught(lambda: m.CallToolRequestParams(**call)),
        "not deprecated": caught(lambda: m.CallToolRequestParams(name="t")),
        "send": caught(lambda: codec.request("ping", id=3)),
        "send again": caught(lambda: codec.request("ping", id=4)),
        "other method": caught(lambda: codec.request("tools/list", id=5)),
    }))
""")


def test_the_generated_package_warns_once_when_set_or_sent_never_when_read(
    project: Path, tmp_path: Path
) -> None:
    script = tmp_path / "use.py"
    script.write_text(USE, encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(project / "generated"), str(ROOT / "runtime")])
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    here = str(script)
    assert found["set"] == [
        [
            "DeprecationWarning",
            "member 'arguments' of mcp_wire.v2025_06_18.models.CallToolRequestParams is "
            "deprecated by the MCP schema",
            here,
        ]
    ]
    assert found["send"] == [
        [
            "DeprecationWarning",
            "method 'ping' of MCP revision 2025-06-18 is deprecated by the MCP schema",
            here,
        ]
    ]
    quiet = ("read", "set again", "not deprecated", "send again", "other method")
    assert {k: found[k] for k in quiet} == {k: [] for k in quiet}


def test_diff_lists_the_deprecations_in_their_own_section(project: Path) -> None:
    result = run("--root", project, "diff", "2025-03-26", REVISION)
    assert result.exit_code == 0, result.output
    found = sections(result.stdout)
    assert found["Deprecations"] == [
        "deprecated: `CallToolRequestParams.arguments`",
        "deprecated: `Tool.annotations`",
        "deprecated: method `ping`",
    ]
    back = sections(run("--root", project, "diff", REVISION, "2025-03-26").stdout)
    # 2025-03-26 has them all, unmarked
    assert back["Deprecations"] == [
        "no longer deprecated: `CallToolRequestParams.arguments`",
        "no longer deprecated: `Tool.annotations`",
        "no longer deprecated: method `ping`",
    ]
    assert "Deprecations" not in found["Definitions changed"]
