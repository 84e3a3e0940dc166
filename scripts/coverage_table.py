"""Print the runtime's coverage of every pinned revision's methods (tests/codegen/test_coverage.py keeps
the table and checks it) as a Markdown table, for a closing note:

    .venv/bin/python scripts/coverage_table.py

Exits 1 when a method has neither a runtime path nor a reason (shown as MISSING)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.coverage import render  # noqa: E402


def main() -> int:
    table = render()
    print(table)
    return 1 if "MISSING" in table else 0


if __name__ == "__main__":
    sys.exit(main())
