"""The notification benchmark's server: examples/everything_server.py, admitting more listen
streams from one client than its default bound (100), since ``bench/bus.py`` opens all of its
listeners from one address (this process's, or nginx's in front).

    python bench/peers/bus_server.py LISTENERS http --port N [everything_server.py's options]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import everything_server  # noqa: E402  # pyright: ignore[reportMissingImports]


def main() -> int:
    listeners = int(sys.argv[1])
    run_http = everything_server.server.run_http

    def bounded(*args: Any, **options: Any) -> None:
        options.setdefault("max_listen_streams", max(1000, listeners))
        options.setdefault("max_listen_streams_per_client", listeners)
        run_http(*args, **options)

    everything_server.server.run_http = bounded  # type: ignore[method-assign]
    return everything_server.main([sys.argv[0], *sys.argv[2:]])


if __name__ == "__main__":
    sys.exit(main())
