"""`make conformance`: the official MCP conformance suite against our fixture server over HTTP.

Installs the pinned suite and a Node 22 (the machine's Node 20 cannot run it) from the committed
package-lock into tests/conformance/node_modules, starts `examples/everything_server.py http` on
a free loopback port, runs `conformance server --requirements <revision>` for 2025-11-25 and
2026-07-28, prints each run's scored pass counts, and fails if any scored scenario fails (no
expected-failures file). Unscored scenarios (pending ones, extensions) are listed, not judged.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REQUIREMENTS = ("2025-11-25", "2026-07-28")
SCENARIO = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed$")


def install() -> Path:
    bin_dir = HERE / "node_modules" / ".bin"
    if not (bin_dir / "conformance").exists() or not (bin_dir / "node").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    return bin_dir


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the fixture server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("the fixture server did not start listening within 30 s")


def scored(output: str) -> tuple[int, int, list[str]]:
    """Passed and failed checks of the scored scenarios, and the failing scenarios' names."""
    summary = output.split("=== SUMMARY ===", 1)[-1]
    unscored = set(re.findall(r"^\s+[✓✗] (\S+) \(", summary, re.MULTILINE))
    passed = failed = 0
    failing = []
    for line in summary.splitlines():
        found = SCENARIO.match(line.strip())
        if found is None or found.group(2) in unscored:
            continue
        passed += int(found.group(3))
        failed += int(found.group(4))
        if found.group(1) == "✗":
            failing.append(found.group(2))
    return passed, failed, failing


def main() -> int:
    bin_dir = install()
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "everything_server.py"),
            "http",
            "--port",
            str(port),
        ],
        stderr=subprocess.DEVNULL,
    )
    status = 0
    try:
        wait_until_listening(port, server)
        for revision in REQUIREMENTS:
            command = [
                str(bin_dir / "conformance"),
                "server",
                "--url",
                f"http://127.0.0.1:{port}/mcp",
                "--requirements",
                revision,
            ]
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
            passed, failed, failing = scored(done.stdout)
            print(
                f"conformance server --requirements {revision}: "
                f"{passed} passed, {failed} failed in scored scenarios"
                + (f" (failing: {', '.join(failing)})" if failing else "")
            )
            if done.returncode != 0 or failed or not passed:
                print(done.stdout[-6000:], done.stderr[-2000:], sep="\n")
                status = 1
    finally:
        server.terminate()
        server.wait(timeout=10)
    return status


if __name__ == "__main__":
    sys.exit(main())
