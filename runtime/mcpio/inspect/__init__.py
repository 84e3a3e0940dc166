"""`mcpio inspect`: a proxy that checks each frame between an MCP host and a server.

It sits between the host and the server, relays every byte unchanged and checks each frame
against the exact revision in use (its codec, its dispatch tables and the session rules of the
spec), with transcripts, an HTML report and a replay.

Its modules are private; the command is the interface. In import order: `_rules` (the rule
catalogue and `Finding`), `_checks` (the per-session checker), `_transcript` (records, JSONL,
summary), `_relay` (stdio), `_http_proxy` (Streamable HTTP), `_report` (HTML), `_replay`,
`_cli`.
"""
