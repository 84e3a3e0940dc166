"""Machine instructions per call of a benchmark path, under valgrind's callgrind (Debian package
``valgrind``): a figure the machine's load does not move, for comparing two versions of the
code on a busy machine (it is no time: cache misses and system calls are not in it).

The benches' ``--instructions`` modes share it (``bench/dispatch.py``, ``bench/middleware.py``).
A path runs twice in a child process after its warm-up, ``INSTRUCTION_CALLS`` and 6 x
``INSTRUCTION_CALLS`` calls (``MCPGEN_BENCH_INSTRUCTION_CALLS``, 200); the difference per call
is the figure. The child runs with string hashing seeded alike (``PYTHONHASHSEED=0``) and the
HTTP app's guard ticker set far off (see ``QUIET_RUN``): the same figure from run to run within
a few hundred instructions.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

INSTRUCTION_CALLS = int(os.environ.get("MCPGEN_BENCH_INSTRUCTION_CALLS", "200"))
COLLECTED = re.compile(r"Collected : (\d+)")
# The child runs `script` with the HTTP app's guard ticker (`TICK`, 20 ms) set far off: a call
# runs some 50 times slower there, so the ticker would fire about once a call and start the
# disconnect watcher of a POST served past `WATCH_AFTER`, which a real call, that much quicker,
# never meets; the count would move with the machine's load. (Whichever module of the tree has
# it: a baseline's may be older.)
QUIET_RUN = """
import importlib, runpy, sys
for name in ("mcpio.http._app", "mcpio.transports.http_server"):
    try:
        importlib.import_module(name).TICK = 1e9
    except ImportError:
        pass
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def check_valgrind() -> None:
    """Exit with how to install valgrind when it is missing."""
    if shutil.which("valgrind") is None:
        raise SystemExit("error: --instructions needs valgrind (apt-get install valgrind)")


def per_call(
    script: str, args: Sequence[str], label: str, env: Mapping[str, str] | None = None
) -> float:
    """Instructions per call of `script *args CALLS` (it runs CALLS calls after its warm-up):
    two runs, their difference; a run that went astray (the longer one counting fewer, seen
    once) is measured again, once. `env`: added to this process's environment."""
    child = {**os.environ, **(env or {}), "PYTHONHASHSEED": "0"}
    for _ in range(2):
        counts: list[int] = []
        for calls in (INSTRUCTION_CALLS, 6 * INSTRUCTION_CALLS):
            command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
            command += [sys.executable, "-c", QUIET_RUN, script, *args, str(calls)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=child)
            found = COLLECTED.search(done.stderr)
            if done.returncode != 0 or found is None:
                raise SystemExit(f"error: {label} under callgrind:\n{done.stderr[-2000:]}")
            counts.append(int(found[1]))
        if counts[1] > counts[0]:
            return (counts[1] - counts[0]) / (5 * INSTRUCTION_CALLS)
    raise SystemExit(f"error: {label}: the longer run counted fewer instructions, twice")
