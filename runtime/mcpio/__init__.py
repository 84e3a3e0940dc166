"""mcpio: the hand-written MCP runtime (wire machinery, sessions, transports)."""
