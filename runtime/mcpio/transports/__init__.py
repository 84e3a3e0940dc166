"""The pipes a connection runs over, and the contract they fulfil.

The contract: `Transport`, `FrameHook`, `FrameTooLarge`. The pipes: stdio (`stdio`), in-memory
(`memory`) and the HTTP client (`http_client`). Private beside them: the line framing
(`_lines`), the lean HTTP/1.1 client (`_http1`), the rules client and host share
(`_http_rules`) and the SSE writer and parser (`_sse`).
"""

from __future__ import annotations

from mcpio._core.transport import FrameHook, FrameTooLarge, Transport

__all__ = ["FrameTooLarge", "FrameHook", "Transport"]
