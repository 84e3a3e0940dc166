"""The wheels other projects install: `mcpgen` (`mcpio`) with its runtime dependencies only, and
`mcp-wire` (the generated types with their small runtime), which it requires.

Builds both wheels (pip, through the build backend), installs `mcpgen` into a fresh virtual
environment (its `mcp-wire` from the built wheel, the rest from the package index), and there
imports both packages, builds and decodes messages of two revisions, and finds neither the
generator (`codegen`) nor an `mcp-codegen` script. The checkout's own (editable) install keeps
both. The types wheel alone is tests/test_types_wheel.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT, free_port, readme_snippets
from tests.support.wheels import clean_env, installed, run_json

pytestmark = pytest.mark.slow

VERSION = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]  # type: ignore[index]
RUNTIME_DEPENDENCIES = {"anyio", "click", "mcp-wire", "pydantic", "typing-extensions"}

CONSUMER = """
import importlib.util, json, subprocess, sys, sysconfig
from pathlib import Path

import mcp_wire
import mcpio
from mcpio import Client, Context, Server

legacy = mcp_wire.codec("2025-11-25")
request = legacy.request("tools/call", {"name": "add", "arguments": {"a": 1}}, id=1)
assert legacy.decode(legacy.encode(request)).params.name == "add"
modern = mcp_wire.codec("2026-07-28")
request = modern.request("tools/call", {"name": "add"}, id=2, client_capabilities={})
assert modern.decode(modern.encode(request)).params.name == "add"
assert mcp_wire.envelope(request).protocol_version == "2026-07-28"
response = modern.decode_response(
    modern.encode(modern.response(2, "tools/call", {"content": []})), "tools/call"
)
assert response.result.resultType == "complete"
scripts = Path(sysconfig.get_path("scripts"))
print(json.dumps({
    "versions": [mcp_wire.__version__, mcpio.__version__],
    "mcp_wire": mcp_wire.__file__,
    "codegen": importlib.util.find_spec("codegen") is not None,
    "script": any(scripts.glob("mcp-codegen*")),
    "mcpio": subprocess.run(
        [str(scripts / "mcpio"), "inspect", "--", sys.executable, "-c", ""],
        capture_output=True, text=True, stdin=subprocess.DEVNULL,
    ).stderr,
    "server": Server.__name__,
}))
"""


@pytest.fixture(scope="module")
def wheel(wheels: dict[str, Path]) -> Path:
    """The built `mcpgen` wheel, beside the `mcp-wire` wheel it requires (`installed` finds it
    there): the session's build, which tests/test_types_wheel.py shares."""
    return wheels["mcpgen"]


@pytest.fixture(scope="module")
def http_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv of this interpreter with the wheel and its `http` extra (the newest
    dependencies its ranges allow), shared by the tests that install just that; its python."""
    return installed(tmp_path_factory.mktemp("http-venv"), f"{wheel}[http]")


def test_the_wheel_holds_mcp_wire_and_mcpio_and_their_runtime_dependencies(wheel: Path) -> None:
    assert wheel.name == f"mcpgen-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"mcpgen-{VERSION}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert {n.split("/")[0] for n in names} == {"mcpio", info}  # the types are mcp-wire's
    # one console script, `mcpio` (run, dev, install, inspect, replay, worker); the
    # generator's stays in the checkout
    assert entry_points.split() == ["[console_scripts]", "mcpio", "=", "mcpio.cli:run"]
    assert f"{info}/licenses/LICENSE" in names
    assert "mcpio/py.typed" in names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    requires = [
        line.split(":", 1)[1].strip()
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    runtime = {re.split(r"[<>=!~; \[]", r, maxsplit=1)[0] for r in requires if "extra ==" not in r}
    assert runtime == RUNTIME_DEPENDENCIES
    assert "License-Expression: MIT" in metadata
    assert f"Requires-Dist: mcp-wire=={VERSION}" in metadata  # the types at its own version


def test_the_wheel_installs_and_works_without_the_checkout(wheel: Path, tmp_path: Path) -> None:
    python = installed(tmp_path, str(wheel))
    target = python.parent.parent
    report = run_json(python, tmp_path, "-c", CONSUMER, timeout=120)
    assert report["versions"] == [VERSION, VERSION]
    assert Path(report["mcp_wire"]).is_relative_to(target)
    assert report["codegen"] is False  # the generator is the checkout's tool
    assert report["script"] is False
    assert report["mcpio"].startswith("mcpio inspect: 0 frames")
    assert report["server"] == "Server"


LOWEST_SERVER = """
import sys
from mcpio import Server

server = Server("lowest", "1.0")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


if sys.argv[1] == "stdio":
    server.run_stdio()
else:
    server.run_http(host="127.0.0.1", port=int(sys.argv[2]))
"""

LOWEST_CONSUMER = """
import json, socket, subprocess, sys, time
from importlib.metadata import version

import anyio
from mcpio import Client

port = int(sys.argv[1])
http = subprocess.Popen([sys.executable, "lowest_server.py", "http", str(port)])
answers = []


async def main():
    for mode in ("legacy", "2026-07-28"):
        async with Client([sys.executable, "lowest_server.py", "stdio"], mode=mode) as client:
            answers.append((await client.call_tool("add", {"a": 1, "b": 2})).structuredContent)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.1)
    for mode in ("legacy", "2026-07-28"):
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            answers.append((await client.call_tool("add", {"a": 2, "b": 3})).structuredContent)


try:
    anyio.run(main)
finally:
    http.terminate()
    http.wait()
print(json.dumps({"answers": answers, "versions": {n: version(n) for n in sys.argv[2:]}}))
"""


EXTRAS_CONSUMER = r"""
import json, pathlib

import anyio
from mcpio import Client, Server
from mcpio.client._skills import Skills
from mcpio._core.schema_check import violation
from mcpio.middleware.telemetry import ClientTracing, Tracing

schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
checks = {"schema": [violation({"n": 1}, schema), violation({"n": "x"}, schema) is not None]}

skill = pathlib.Path("skills/hello")
skill.mkdir(parents=True, exist_ok=True)
(skill / "SKILL.md").write_text("---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n")
server = Server("extras", "1.0", middleware=[Tracing()])
server.skills("skills")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


async def main():
    for mode in ("legacy", "2026-07-28"):
        async with Client(server, mode=mode) as client:
            client.tracing = ClientTracing()
            result = await client.call_tool("add", {"a": 1, "b": 2})
            skills = Skills(client)
            entries = await skills.list()
            loaded = await skills.load(entries[0])
            checks[mode] = [result.structuredContent, [e.name for e in entries], loaded.text]


anyio.run(main)
print(json.dumps(checks))
"""


AUTH_CONSUMER = r"""
import json, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer

import anyio
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from mcpio.auth import JwtVerifier

key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
jwks = json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]}).encode()


class Keys(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(jwks)))
        self.end_headers()
        self.wfile.write(jwks)

    def log_message(self, *args):
        pass


httpd = HTTPServer(("127.0.0.1", 0), Keys)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
issuer = "https://issuer.example"
verifier = JwtVerifier(
    issuer=issuer, audience="https://mcp.example/mcp",
    jwks_uri=f"http://127.0.0.1:{httpd.server_port}/jwks",
)
claims = {"iss": issuer, "aud": "https://mcp.example/mcp", "sub": "alice",
          "exp": int(time.time()) + 300, "scope": "mcp:read"}
good = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1", "typ": "at+jwt"})
bad = jwt.encode({**claims, "aud": "elsewhere"}, key, algorithm="RS256", headers={"kid": "k1"})


async def main():
    principal = await verifier(good)
    return [principal.subject, sorted(principal.scopes), await verifier(bad)]


print(json.dumps(anyio.run(main)))
httpd.shutdown()
"""


def _lowest(metadata: str, extras: tuple[str, ...]) -> dict[str, str]:
    """Each runtime dependency's (and `extras`') lowest version the wheel's metadata allows."""
    lowest: dict[str, str] = {}
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        requirement = line.split(":", 1)[1].strip()
        if "extra ==" in requirement and not any(f"extra == '{e}'" in requirement for e in extras):
            continue
        name = re.split(r"[<>=!~; \[]", requirement, maxsplit=1)[0]
        floor = re.search(r"(?:>=|==)\s*([0-9][^,;\s]*)", requirement)
        assert floor is not None, f"{requirement}: no lower bound"
        lowest[name] = floor[1]
    return lowest


def test_the_wheel_works_at_its_lowest_declared_dependencies(wheel: Path, tmp_path: Path) -> None:
    """Installed with every runtime dependency and those of the `http`, `auth`, `schemas`, `otel`
    and `skills` extras at the lowest version its metadata allows (pip constraints), the wheel
    serves and calls a tool over stdio and over HTTP, both eras, checks a JSON Schema, traces a
    call, serves and loads a skill and verifies a JWT access token: the lower bounds it
    declares are ones it works with."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"mcpgen-{VERSION}.dist-info/METADATA").decode()
    extras = ("http", "auth", "schemas", "otel", "skills")
    lowest = _lowest(metadata, extras)
    expected = {"uvicorn", "httpx", "pyjwt", "jsonschema", "opentelemetry-api", "pyyaml"}
    assert RUNTIME_DEPENDENCIES | expected <= set(lowest)
    constraints = tmp_path / "lowest.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in lowest.items()), encoding="utf-8")
    python = installed(tmp_path, f"{wheel}[{','.join(extras)}]", "-c", str(constraints))
    versions = _served_and_called(python, tmp_path, list(lowest))
    assert all(versions[n] in (v, f"{v}.0") for n, v in lowest.items()), (versions, lowest)
    checks = run_json(python, tmp_path, "-c", EXTRAS_CONSUMER)
    assert checks.pop("schema") == [None, True]  # valid, then a violation found
    skill = "---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n"
    assert checks == {mode: [{"result": 3}, ["hello"], skill] for mode in ("legacy", "2026-07-28")}
    assert run_json(python, tmp_path, "-c", AUTH_CONSUMER) == [
        "alice",
        ["mcp:read"],
        None,
    ]  # then a foreign aud refused


def _served_and_called(python: Path, where: Path, names: list[str]) -> dict[str, str]:
    """Run LOWEST_CONSUMER with `python` in `where` (its tool answered over stdio and HTTP,
    both eras, checked here); the installed versions of the distributions `names`."""
    (where / "lowest_server.py").write_text(LOWEST_SERVER, encoding="utf-8")
    report = run_json(python, where, "-c", LOWEST_CONSUMER, str(free_port()), *names)
    assert report["answers"] == [{"result": 3}] * 2 + [{"result": 5}] * 2
    return report["versions"]


def _interpreter(minor: str) -> Path | None:
    """A CPython `minor` ("3.12") on this machine that runs: one of pyenv's, or on PATH (a
    pyenv shim on PATH runs only the versions pyenv has selected)."""
    pyenv = sorted(Path.home().glob(f".pyenv/versions/{minor}.*/bin/python{minor}"))
    found = shutil.which(f"python{minor}")
    for candidate in [*pyenv[-1:], *([Path(found)] if found else [])]:
        proc = subprocess.run(
            [str(candidate), "-c", "import venv"], capture_output=True, timeout=60, check=False
        )
        if proc.returncode == 0:
            return candidate
    return None


def test_the_wheel_works_on_every_supported_python_the_machine_has(
    wheel: Path, http_venv: Path, tmp_path: Path
) -> None:
    """The wheel (with its `http` extra, the newest dependencies its ranges allow) serves and
    calls a tool over stdio and HTTP, both eras, on this CPython (3.11, the oldest supported:
    the shared venv) and on each newer one the machine has (3.12, 3.13: pyenv's here); each
    venv runs the version it was made with."""
    current = f"{sys.version_info[0]}.{sys.version_info[1]}"
    interpreters = {current: sys.executable}
    for minor in ("3.12", "3.13"):
        found = _interpreter(minor) if minor not in interpreters else None
        if found is not None:
            interpreters[minor] = str(found)
    print("the wheel on Python", ", ".join(interpreters))
    for minor, interpreter in interpreters.items():
        where = tmp_path / minor
        where.mkdir()
        if minor == current:
            python = http_venv
        else:
            python = installed(where, f"{wheel}[http]", interpreter=interpreter)
        assert _served_and_called(python, where, ["mcpgen"]) == {"mcpgen": VERSION}
        proc = subprocess.run(
            [str(python), "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert proc.stdout.strip() == minor


def test_the_checkout_keeps_the_generator_and_its_script() -> None:
    """The editable install (what `make` does) still has `mcp-codegen` and `python -m codegen`."""
    script = Path(sys.executable).with_name("mcp-codegen")
    for command in ([str(script)], [sys.executable, "-m", "codegen"]):
        proc = subprocess.run(
            [*command, "--version"], capture_output=True, text=True, timeout=60, cwd="/",
            env=clean_env(), check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"mcp-codegen {VERSION}\n"


def test_make_help_lists_every_target() -> None:
    proc = subprocess.run(
        ["make", "-s", "help"], capture_output=True, text=True, timeout=60, cwd=ROOT, check=True
    )
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    listed = set(re.findall(r"^make ([a-z][a-z-]*) ", proc.stdout, re.M))
    assert targets - {"help"} <= listed, targets - listed
    assert 'pytest -m "not slow and not peers and not services"' in proc.stdout


def test_the_readme_quick_start_runs_from_the_wheel_with_its_http_extra(
    http_venv: Path, tmp_path: Path
) -> None:
    """As the quick start says: a fresh venv, `pip install 'mcpgen-...whl[http]'`, the server
    file, then its client over stdio and the server over HTTP, with that venv's interpreter."""
    python = http_venv
    quick = [s for s in readme_snippets() if "demo_server.py" in (s.file or s.code)]
    server, client = quick[0], quick[1]
    assert server.file == "demo_server.py" and client.file is None
    (tmp_path / "demo_server.py").write_text(server.code, encoding="utf-8")
    (tmp_path / "demo_client.py").write_text(client.code, encoding="utf-8")
    proc = subprocess.run(
        [str(python), "-I", "demo_client.py"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=clean_env(), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["2026-07-28", "['add']", "3"]

    port = free_port()
    http = subprocess.Popen(
        [str(python), "-I", "demo_server.py", "--http"], cwd=tmp_path,
        env={**clean_env(), "PORT": str(port)}, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert http.stderr is not None
        line = http.stderr.readline()
        assert line == f"mcpio: serving MCP (Streamable HTTP) at http://127.0.0.1:{port}/mcp\n"
    finally:
        http.terminate()
        http.wait(timeout=60)
