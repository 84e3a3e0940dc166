"""The pipes: stdio (`stdio`, with its line framing in `lines`), in-memory (`memory`) and the
HTTP client (`http_client` on the lean HTTP/1.1 client `http1`, with `http_rules` and `sse`,
which the HTTP host shares). The contract they fulfil is `mcpio._core.transport`, re-exported here.
"""

from __future__ import annotations

from mcpio._core.transport import FrameHook, FrameTooLarge, Transport

__all__ = ["FrameTooLarge", "FrameHook", "Transport"]
