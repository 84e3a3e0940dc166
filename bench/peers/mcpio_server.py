"""The benchmark's echo server on our runtime (mcpio), over stdio.

Run by the drivers as ``python bench/peers/mcpio_server.py``. With ``MCPGEN_BENCH_PROFILE=path``
it serves under cProfile (timing CPU, not wall time: a pipe write that wakes the peer may get
this process descheduled, which is not its cost) and writes the profile to ``path`` when stdin
ends.
"""

from __future__ import annotations

import os

from mcpio import Server

server = Server("bench", "1.0")


@server.tool(structured_output=False)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def main() -> None:
    profile = os.environ.get("MCPGEN_BENCH_PROFILE")
    if not profile:
        server.run_stdio()
        return
    import cProfile
    import time

    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        server.run_stdio()
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


if __name__ == "__main__":
    main()
