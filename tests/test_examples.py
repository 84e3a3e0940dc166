"""Every example file the documentation shows runs as written.

An example under examples/ is one of three kinds. Most are scripts: run with this interpreter
(the checkout's mcpgen installed), they must exit 0 and print exactly the lines of their closing
`# Output:` comment. SERVERS are started by other examples (a client example runs its server over
stdio), by the test below (the quick start's server over HTTP) or by their own test
(tests/apps/test_apps_example.py). DEFINED ones need what a test
cannot have (a browser, an authorization server, Redis): they run as a module, not as
`__main__`, so their imports and definitions run and their main does not. A new example is a
script unless it is named here, so it must say what it prints. The scripts run four at a time.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest

from mcpio import Client
from tests.support import ROOT, free_port

pytestmark = pytest.mark.slow

EXAMPLES = ROOT / "examples"
DOCS = ROOT / "docs"
TIMEOUT = 90
SERVERS = {"everything_server.py", "quickstart_server.py", "deploy_server.py", "apps_server.py"}
DEFINED = {"oauth_client.py", "auth_server.py", "redis_bus.py", "gateway.py"}
FILES = sorted(p.name for p in EXAMPLES.glob("*.py"))
SCRIPTS = [name for name in FILES if name not in SERVERS | DEFINED]
_OUTPUT = re.compile(r"\n# Output:\n((?:#   .*\n)+)\Z")


def expected_output(name: str) -> list[str]:
    found = _OUTPUT.search((EXAMPLES / name).read_text(encoding="utf-8"))
    assert found, f"examples/{name} ends with no `# Output:` block saying what it prints"
    return [line[4:] for line in found.group(1).splitlines()]


def run(name: str) -> subprocess.CompletedProcess[str]:
    path = EXAMPLES / name
    if name in DEFINED:
        command = [sys.executable, "-c", f"import runpy; runpy.run_path({str(path)!r})"]
    else:
        command = [sys.executable, str(path)]
    env = {**os.environ, "MCPIO_STATE_KEY": secrets.token_hex(32)}  # as the pages export it
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.CompletedProcess[str]]:
    names = SCRIPTS + sorted(DEFINED)
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(names, pool.map(run, names), strict=True))


def test_every_kind_is_a_file_there() -> None:
    assert SERVERS | DEFINED <= set(FILES)
    assert len(SCRIPTS) >= 15


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_example_prints_what_it_says(
    name: str, runs: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    proc = runs[name]
    assert proc.returncode == 0, f"examples/{name}\n{proc.stderr[-3000:]}"
    assert proc.stdout.splitlines() == expected_output(name), proc.stderr[-3000:]


@pytest.mark.parametrize("name", sorted(DEFINED))
def test_the_defining_example_imports_and_defines(
    name: str, runs: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    proc = runs[name]
    assert proc.returncode == 0, f"examples/{name}\n{proc.stderr[-3000:]}"
    assert proc.stdout == ""


def test_every_example_is_on_a_page_and_every_feature_page_has_one() -> None:
    """Each example file is included (`--8<--`) by a page; each page of the feature sections
    (getting started, servers, clients, the generated packages) includes one."""
    included: set[str] = set()
    without = []
    for page in sorted(DOCS.rglob("*.md")):
        found = re.findall(r'--8<-- "examples/([^":]+)', page.read_text(encoding="utf-8"))
        names = set(found)  # a whole file, or a section of it ("examples/x.py:section")
        included.update(names)
        feature = page.relative_to(DOCS).parts[0] in {
            "getting-started",
            "servers",
            "clients",
            "generated",
        }
        if feature and not names:
            without.append(str(page.relative_to(ROOT)))
    assert without == [], "feature pages without an example"
    assert set(FILES) - {"everything_server.py"} - included == set()


def test_the_quick_start_server_serves_http_where_it_says() -> None:
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "quickstart_server.py"), "--http"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        url = f"http://127.0.0.1:{port}/mcp"
        assert proc.stderr.readline() == f"mcpio: serving MCP (Streamable HTTP) at {url}\n"

        async def call() -> list[str]:
            with anyio.fail_after(TIMEOUT):
                async with Client(url) as client:
                    result = await client.call_tool("add", {"a": 2, "b": 3})
                    read = await client.read_resource("demo://readme")
                    return [
                        getattr(result.content[0], "text", ""),
                        getattr(read.contents[0], "text", ""),
                    ]

        assert anyio.run(call) == ["5", "Hello from the demo server."]
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)
