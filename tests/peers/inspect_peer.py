"""A scripted stdio server for `mcpio inspect` tests: `inspect_peer.py SCENARIO` follows a
script of tests/support/inspect_scenarios.py, reading one line per client step and writing each server
step; `inspect_peer.py raw OUT IN` writes the bytes of file OUT to stdout and copies its stdin
to file IN (the byte-for-byte test)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from tests.support.inspect_scenarios import SCENARIOS, wire  # noqa: E402


def scripted(name: str) -> None:
    out = sys.stdout.buffer
    for who, frame in SCENARIOS[name]:
        if who == "c":
            if not sys.stdin.buffer.readline():
                return
        else:
            out.write(wire(frame))
            out.flush()
    sys.stdin.buffer.read()  # until the client closes


def raw(out_path: str, in_path: str) -> None:
    sys.stdout.buffer.write(Path(out_path).read_bytes())
    sys.stdout.buffer.flush()
    with open(in_path, "wb") as copy:
        shutil.copyfileobj(sys.stdin.buffer, copy)


if __name__ == "__main__":
    if sys.argv[1] == "raw":
        raw(sys.argv[2], sys.argv[3])
    else:
        scripted(sys.argv[1])
