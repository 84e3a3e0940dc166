"""OpenAPI import at scale (issue 52): a synthetic document of 1,000 operations
(tests/support/openapi_synthetic.py) made a server by `Server.from_openapi` (goal: under 2 s),
and the module `mcp-codegen openapi` writes for it imported in a fresh interpreter (goal: under
0.5 s, its imports of pydantic, httpx and mcpio.openapi included). Each figure is the median of
five runs.

    .venv/bin/python bench/openapi.py [--operations 1000]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if not p.endswith("bench")]

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, str(ROOT))
import httpx  # noqa: E402

from mcpio import Server  # noqa: E402
from tests.support.openapi_synthetic import synthetic_document  # noqa: E402

RUNS = 5
_IMPORT = "import time; t = time.perf_counter(); import {name}; print(time.perf_counter() - t)"


def from_openapi_seconds(text: str) -> float:
    """One `Server.from_openapi` of the document's JSON text (read, mapped, registered)."""
    start = time.perf_counter()
    server = Server.from_openapi(text, httpx.AsyncClient(base_url="http://things.test"))
    took = time.perf_counter() - start
    assert len(server.tools) > 0
    return took


def import_seconds(folder: Path, name: str) -> float:
    """One import of the generated module in a fresh interpreter (its bytecode cached, as an
    installed module's is: the first import writes it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT.format(name=name)],
        cwd=folder, capture_output=True, text=True, check=True, timeout=120, env=env,
    )  # fmt: skip
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=1000)
    operations = parser.parse_args().operations
    text = json.dumps(synthetic_document(operations))
    mapped = statistics.median(from_openapi_seconds(text) for _ in range(RUNS))
    print(f"Server.from_openapi, {operations} operations: {mapped:.3f} s (goal: under 2 s)")
    with tempfile.TemporaryDirectory() as tmp:
        document = Path(tmp) / "things.json"
        document.write_text(text, encoding="utf-8")
        codegen = Path(sys.executable).with_name("mcp-codegen")
        start = time.perf_counter()
        subprocess.run(
            [str(codegen), "openapi", str(document), "--out", f"{tmp}/things_api"],
            check=True, capture_output=True, timeout=1800,
        )  # fmt: skip
        generated = time.perf_counter() - start
        size = (Path(tmp) / "things_api" / "__init__.py").stat().st_size
        print(f"mcp-codegen openapi: {generated:.1f} s, {size / 1024:.0f} KiB")
        first = import_seconds(Path(tmp), "things_api")  # compiles it, writes its bytecode
        imported = statistics.median(import_seconds(Path(tmp), "things_api") for _ in range(RUNS))
    print(f"import of the generated module, first (compiled): {first:.3f} s")
    print(
        f"import of the generated module (fresh interpreter): {imported:.3f} s (goal: under 0.5 s)"
    )


if __name__ == "__main__":
    main()
