"""Using a part of mcpio whose extra is not installed: one line naming the extra, in a process
where the extra's modules cannot be imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcpio._core.extras import EXTRAS

RUN_HTTP = "from mcpio import Server; Server('s', '1').run_http()"
HTTP_APP = "from mcpio import Server; Server('s', '1').http_app()"
CLIENT = """
import anyio
from mcpio import Client

async def main() -> None:
    async with Client("http://127.0.0.1:9/mcp"):
        pass

anyio.run(main)
"""
JWT = "from mcpio import JwtVerifier; JwtVerifier(issuer='https://a', audience='https://b')"
REDIS = "from mcpio._core.bus import RedisBus; RedisBus('redis://127.0.0.1:9')"
OAUTH = "from mcpio import OAuth"
TASKS = "from mcpio.tasks._stores import open_task_store; open_task_store('redis://127.0.0.1:9')"
OUTPUT = (
    "from mcpio.inspect._stateful import output_violation; "
    "output_violation({'name': 't', 'outputSchema': {}}, {'structuredContent': {}})"
)


@pytest.mark.parametrize(
    ("blocked", "code", "extra"),
    [
        ("uvicorn", RUN_HTTP, "http"),
        ("httpx", CLIENT, "http"),
        ("httpx", OAUTH, "http"),
        ("jwt", JWT, "auth"),
        ("redis", REDIS, "redis"),
        ("redis", TASKS, "redis"),
        ("jsonschema", OUTPUT, "inspect"),
    ],
)
def test_a_missing_extra_is_named(blocked: str, code: str, extra: str) -> None:
    block = f"import sys; sys.modules[{blocked!r}] = None\n"
    done = subprocess.run(
        [sys.executable, "-c", block + code], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("mcpio._core.extras.MissingExtra: "), done.stderr
    assert f"needs the '{extra}' extra (no module named '{blocked}')" in last
    assert "pip install 'path/to/mcpgen-" in last and f"-py3-none-any.whl[{extra}]'" in last
    assert "ModuleNotFoundError" not in done.stderr


def test_the_http_app_needs_no_extra() -> None:
    """The ASGI app is plain Python: it builds where no module of the http extra imports."""
    block = "".join(f"sys.modules[{name!r}] = None; " for name in sorted(EXTRAS["http"]))
    code = f"import sys; {block}\n{HTTP_APP}; print('built')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "built", done.stderr
