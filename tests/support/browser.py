"""Headless Chromium driven over the DevTools protocol, for the documentation site's test.

One browser (Debian's `chromium`, from scripts/ensure-services.sh) per test module, started
with `--remote-debugging-port=0` and driven over its WebSocket with aiohttp (a dev
dependency): one tab, which loads a page, reports the console errors it logged (script
exceptions, `console.error`, failed loads), evaluates expressions and takes screenshots. Also a
static file server on 127.0.0.1 and the few lines of PNG decoding a screenshot check needs.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import http.server
import json
import re
import shutil
import struct
import subprocess
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

TIMEOUT = 30.0


@contextmanager
def static_server(root: Path) -> Iterator[str]:
    """Serve `root` on 127.0.0.1 (a free port) while the block runs; yields its base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def chromium(profile: Path) -> Iterator[str]:
    """Start headless Chromium; yields the browser's DevTools WebSocket URL. Ended by its pid."""
    binary = shutil.which("chromium")
    assert binary is not None, "chromium must be on PATH (scripts/ensure-services.sh)"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    proc = subprocess.Popen(
        [binary, *flags, "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # its own log lines (dbus, ...) come first
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep draining
                yield found.group(1)
                return
        raise AssertionError("chromium exited before it listened for DevTools")
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)


class Tab:
    """One page target of the browser, attached over the browser's WebSocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.session: str | None = None
        self.errors: list[str] = []  # console errors since the last `load`
        self._ids = 0
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._loaded = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._ids += 1
        answer = asyncio.get_running_loop().create_future()
        self._answers[self._ids] = answer
        frame: dict[str, Any] = {"id": self._ids, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            frame["sessionId"] = self.session
        await self.ws.send_str(json.dumps(frame))
        reply = await asyncio.wait_for(answer, TIMEOUT)
        assert "error" not in reply, f"{method}: {reply['error']}"
        return reply.get("result", {})

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data:
                self._answers.pop(data["id"]).set_result(data)
            else:
                self._event(data.get("method", ""), data.get("params", {}))

    def _event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Page.loadEventFired":
            self._loaded.set()
        elif method == "Runtime.exceptionThrown":
            self.errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a)) for a in params["args"]))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            self.errors.append(f"{entry.get('text', '')} {entry.get('url', '')}".strip())

    async def open(self, width: int = 1280, height: int = 900) -> None:
        target = await self.send("Target.createTarget", url="about:blank")
        attached = await self.send(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            await self.send(f"{domain}.enable")
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width, height=height, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip

    async def load(self, url: str, settle: float = 0.2) -> None:
        """Navigate to `url` and wait for its load event (and `settle` seconds more)."""
        self.errors = []
        self._loaded.clear()
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(self._loaded.wait(), TIMEOUT)
        await asyncio.sleep(settle)

    async def submit(self, expression: str, settle: float = 0.2) -> None:
        """Evaluate `expression`, which submits a form or follows a link, and wait for the
        next page's load event (and `settle` seconds more)."""
        self.errors = []
        self._loaded.clear()
        await self.eval(expression)
        await asyncio.wait_for(self._loaded.wait(), TIMEOUT)
        await asyncio.sleep(settle)

    async def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression (JSON-serialisable), awaited if a promise."""
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    async def screenshot(self) -> bytes:
        shot = await self.send("Page.captureScreenshot", format="png")
        return base64.b64decode(shot["data"])


def png_pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG (what Chromium's
    screenshots are)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, "an unexpected PNG format"
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(
            raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]
        )
        _unfilter(kind, line, previous, channels)
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def _unfilter(kind: int, line: bytearray, above: bytearray, bpp: int) -> None:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up, corner = above[i], above[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            line[i] = (line[i] + best) & 0xFF
