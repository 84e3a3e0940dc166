"""The public models: those of the latest pinned revision (`mcp_wire.latest`, generated).

Every handler and every client call sees these, whatever revision the peer speaks; the codecs of
older revisions project to and from them.
"""

from mcp_wire.latest import REVISION
from mcp_wire.latest import dispatch as _dispatch
from mcp_wire.latest import models as public

# The error codes of the latest revision's schema that the runtime answers with by name.
HEADER_MISMATCH = _dispatch.HEADER_MISMATCH_ERROR  # -32020
MISSING_CAPABILITY = _dispatch.MISSING_REQUIRED_CLIENT_CAPABILITY_ERROR  # -32021
UNSUPPORTED_VERSION = _dispatch.UNSUPPORTED_PROTOCOL_VERSION_ERROR  # -32022

__all__ = ["HEADER_MISMATCH", "MISSING_CAPABILITY", "REVISION", "UNSUPPORTED_VERSION", "public"]
