"""`mcpio inspect`: a transparent proxy between an MCP host and a server that relays every byte
unchanged and checks each frame against the exact revision in use (its codec, its dispatch
tables and the session rules of the spec), with transcripts, an HTML report and a replay.

Modules, in import order: `rules` (the rule catalogue and `Finding`), `checks` (the per-session
checker), `transcript` (records, JSONL, summary), `relay` (stdio), `http_proxy` (Streamable
HTTP), `report` (HTML), `replay`, `cli`.
"""
