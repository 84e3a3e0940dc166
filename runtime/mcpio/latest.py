"""The public models: those of the latest pinned revision. Every handler and every client call
sees these, whatever revision the peer speaks; the codecs of older revisions project to and from
them. When a new revision is pinned, this import moves to it (a test checks it is the latest)."""

from mcp_wire.v2026_07_28 import dispatch as _dispatch
from mcp_wire.v2026_07_28 import models as public

REVISION = "2026-07-28"

# The error codes of the latest revision's schema that the runtime answers with by name.
HEADER_MISMATCH = _dispatch.HEADER_MISMATCH_ERROR  # -32020
MISSING_CAPABILITY = _dispatch.MISSING_REQUIRED_CLIENT_CAPABILITY_ERROR  # -32021
UNSUPPORTED_VERSION = _dispatch.UNSUPPORTED_PROTOCOL_VERSION_ERROR  # -32022

__all__ = ["HEADER_MISMATCH", "MISSING_CAPABILITY", "REVISION", "UNSUPPORTED_VERSION", "public"]
