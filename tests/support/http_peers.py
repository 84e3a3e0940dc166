"""A peer server in a process of its own, on a free loopback port, for the HTTP client tests."""

from __future__ import annotations

import select
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from tests.support import PEERS


class Peer:
    """A server process that prints its port first; stopped (and reaped) at the end."""

    def __init__(self, script: str, *args: str) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, str(PEERS / script), *args],
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.port = self._read_port(deadline=time.monotonic() + 20)
        self._wait_connectable(deadline=time.monotonic() + 20)

    def _read_port(self, deadline: float) -> int:
        stdout = self.process.stdout
        assert stdout is not None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([stdout], [], [], 0.1)
            if ready:
                line = stdout.readline()
                if line.strip().isdigit():
                    return int(line)
                break
            if self.process.poll() is not None:
                break
        self.stop()
        pytest.fail(f"the peer printed no port: {self.errors()}")

    def _wait_connectable(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail(f"the peer accepts no connection: {self.errors()}")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()
