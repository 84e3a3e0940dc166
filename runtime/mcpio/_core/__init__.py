"""The runtime's core, private: what the server, the client, the HTTP host and the features all
stand on (JSON-RPC sessions, negotiation, errors, the transport contract, the request context
and handler rules). Import the public names from `mcpio` and its public packages."""
