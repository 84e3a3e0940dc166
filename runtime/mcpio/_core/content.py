"""Binary content a tool returns: `Image`, `Audio` and `File` (from bytes or a path), each made
the content block the model receives, with its MIME type given or guessed. A tool's `bytes`
answer is a `File` of type application/octet-stream. And what any value a handler returns is as
one content block (`content_block`)."""

from __future__ import annotations

import base64
import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_wire_runtime.codec import plain
from mcpio.latest import public as pub

CONTENT_BLOCKS = (
    pub.TextContent,
    pub.ImageContent,
    pub.AudioContent,
    pub.EmbeddedResource,
    pub.ResourceLink,
)


@dataclass(frozen=True)
class _Media:
    data: bytes | None = None
    path: str | Path | None = None
    format: str | None = None  # "png", "wav", ... (or a whole MIME type): else from the path
    default_type = "application/octet-stream"

    def __post_init__(self) -> None:
        if (self.data is None) == (self.path is None):
            raise ValueError(f"{type(self).__name__} takes data or path, not both or neither")

    def raw(self) -> bytes:
        return self.data if self.data is not None else Path(self.path or "").read_bytes()

    def mime_type(self) -> str:
        kind = self.default_type.split("/")[0]
        if self.format:
            return self.format if "/" in self.format else f"{kind}/{self.format.lower()}"
        if self.path is not None:
            guessed, _ = mimetypes.guess_type(str(self.path))
            if guessed:
                return guessed
        return self.default_type

    def encoded(self) -> str:
        return base64.b64encode(self.raw()).decode("ascii")


class Image(_Media):
    """An image content block (`ImageContent`); PNG unless the format or path says otherwise.

    Args:
        data: The image's bytes (give `data` or `path`: exactly one).
        path: A file to read the image from.
        format: `"png"`, `"jpeg"`, ... or a whole MIME type; None: guessed from the path, else
            PNG.
    """

    default_type = "image/png"

    def block(self) -> pub.ImageContent:
        """The image as an `ImageContent` block (base64 data and its MIME type)."""
        return pub.ImageContent(type="image", data=self.encoded(), mimeType=self.mime_type())


class Audio(_Media):
    """An audio content block (`AudioContent`); WAV unless the format or path says otherwise.

    Args:
        data: The audio's bytes (give `data` or `path`: exactly one).
        path: A file to read the audio from.
        format: `"wav"`, `"mp3"`, ... or a whole MIME type; None: guessed from the path, else
            WAV.
    """

    default_type = "audio/wav"

    def block(self) -> pub.AudioContent:
        """The audio as an `AudioContent` block (base64 data and its MIME type)."""
        return pub.AudioContent(type="audio", data=self.encoded(), mimeType=self.mime_type())


@dataclass(frozen=True)
class File(_Media):
    """A file as an embedded resource (`EmbeddedResource` of `BlobResourceContents`).

    Its URI is `file:///<name>`; its MIME type is application/octet-stream unless the format or
    path says otherwise.

    Args:
        data: The file's bytes (give `data` or `path`: exactly one).
        path: The file to read.
        format: A whole MIME type, or a subtype of `application/`; None: guessed from the
            path, else application/octet-stream.
        name: The file's name in its URI (default: the path's, else `resource`).
    """

    name: str | None = None

    def block(self) -> pub.EmbeddedResource:
        """The file as an `EmbeddedResource` block with a blob resource."""
        name = self.name or (Path(self.path).name if self.path is not None else "resource")
        contents = pub.BlobResourceContents(
            uri=f"file:///{name}", blob=self.encoded(), mimeType=self.mime_type()
        )
        return pub.EmbeddedResource(type="resource", resource=contents)


MEDIA = (Image, Audio, File)


def media_block(value: Any) -> Any:
    """The content block of an `Image`, `Audio`, `File` or bytes; None for anything else."""
    if isinstance(value, bytes | bytearray):
        return File(data=bytes(value)).block()
    if isinstance(value, MEDIA):
        return value.block()
    return None


def content_block(value: Any) -> Any:
    """A value as one content block: a block as it is, a string as text, media and bytes as
    their block, anything else as its JSON text."""
    if isinstance(value, CONTENT_BLOCKS):
        return value
    if isinstance(value, str):
        return pub.TextContent(type="text", text=value)
    media = media_block(value)
    if media is not None:
        return media
    return pub.TextContent(type="text", text=json.dumps(plain(value)))
