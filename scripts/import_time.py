"""Import time of one revision package, each run in a fresh interpreter (issue 8, item 4).

    .venv/bin/python scripts/import_time.py [--runs 5] [--revision 2026-07-28]

Per run: `import pydantic` (and `BaseModel`) first, then the time of `import mcp_wire.<rev>`
(wall and CPU), then the first decode (and encode) of each complete JSON-RPC frame among the
official examples of that revision (their models' validators are built on first use). Prints
every run and the minimum. Bytecode: as the environment has it (PYTHONDONTWRITEBYTECODE=1
compiles generated modules from source on every import).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT.parent / "shared" / "mcp-spec" / "examples"

CHILD = r"""
import json, sys, time
from pathlib import Path
import pydantic
from pydantic import BaseModel
rev, examples = sys.argv[1], Path(sys.argv[2])
module = "mcp_wire.v" + rev.replace("-", "_")
c0, t0 = time.process_time(), time.perf_counter()
__import__(module)
t1, c1 = time.perf_counter(), time.process_time()
import mcp_wire
frames = sorted(p for p in (examples / rev).glob("*/*.json") if '"jsonrpc"' in p.read_text())
raws = [(p.parent.name, p.read_bytes()) for p in frames]
t2 = time.perf_counter()
codec = mcp_wire.codec(rev)
for name, raw in raws:
    if "result" in json.loads(raw):
        methods = [m for m, cls in codec.responses.items() if cls.__name__ == name]
        message = codec.decode_response(raw, methods[0]) if methods else codec.decode(raw)
    else:
        message = codec.decode(raw)
    codec.encode(message)
t3 = time.perf_counter()
print(json.dumps({"import": (t1 - t0) * 1e3, "import_cpu": (c1 - c0) * 1e3,
                  "first_decode": (t3 - t2) * 1e3, "frames": len(raws)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--revision", default="2026-07-28")
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, args.revision, str(EXAMPLES)],
            capture_output=True, text=True, check=True, cwd=ROOT,
        )  # fmt: skip
        run = json.loads(out.stdout)
        run["total"] = run["import"] + run["first_decode"]
        runs.append(run)
        print(
            f"import {run['import']:6.1f} ms (cpu {run['import_cpu']:6.1f})  first decode of "
            f"{run['frames']} frames {run['first_decode']:6.1f} ms  total {run['total']:6.1f} ms"
        )
    best = {k: min(r[k] for r in runs) for k in ("import", "import_cpu", "first_decode", "total")}
    print(
        f"min of {len(runs)}: import {best['import']:.1f} ms (cpu {best['import_cpu']:.1f}), "
        f"first decode {best['first_decode']:.1f} ms, import + first decode {best['total']:.1f} ms"
    )


if __name__ == "__main__":
    main()
