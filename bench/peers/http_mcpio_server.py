"""The HTTP benchmark's echo server on our runtime (mcpio): Streamable HTTP under uvicorn.

    python bench/peers/http_mcpio_server.py [--port N] [--http h11|httptools] [--capacity N]
        [--auth ISSUER_URL]

Served as every HTTP peer is (``uvicorn_peer.py``). The app serves both eras (stateless modern
requests and legacy sessions), so ``--stateful`` changes nothing. The tool is the one of
``mcpio_server.py``: ``echo(text: str) -> str``, one text block, no structured content.

``--auth ISSUER_URL`` turns authorization on: every request needs a bearer JWT of that issuer
(``jwt_issuer.py``), verified by ``JwtVerifier`` against the JWKS at ``ISSUER_URL/jwks``, for the
audience ``AUDIENCE``.
"""

from __future__ import annotations

from typing import Any

from uvicorn_peer import arguments, serve

from mcpio import Server

AUDIENCE = "http://127.0.0.1/bench/mcp"

server = Server("bench", "1.0")


@server.tool(structured_output=False)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def main() -> None:
    args = arguments(
        "the HTTP benchmark's mcpio server", {"auth": "an issuer URL: bearer JWTs required"}
    )
    options: dict[str, Any] = {}
    if args.capacity:
        n = args.capacity
        options = {
            "max_sessions": n,
            "max_sessions_per_client": n,
            "max_listen_streams": n,
            "max_listen_streams_per_client": n,
            "handshake_seconds": 3600.0,
        }
    if args.auth:
        from mcpio.auth import JwtVerifier, ResourceServerAuth

        verifier = JwtVerifier(issuer=args.auth, audience=AUDIENCE, jwks_uri=f"{args.auth}/jwks")
        options["auth"] = ResourceServerAuth(verifier, AUDIENCE, [args.auth])
    serve(server.http_app(**options), args)


if __name__ == "__main__":
    main()
