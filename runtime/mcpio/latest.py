"""The public models: those of the latest pinned revision. Every handler and every client call
sees these, whatever revision the peer speaks; the codecs of older revisions project to and from
them. When a new revision is pinned, this import moves to it (a test checks it is the latest)."""

from mcp_wire.v2026_07_28 import models as public

REVISION = "2026-07-28"

__all__ = ["REVISION", "public"]
