"""The HTTP benchmark's token issuer: one RS256 key, its JWKS served on 127.0.0.1.

    python bench/peers/jwt_issuer.py --audience URL

Prints its port on its first stdout line (as every peer does), then an access token for
`--audience` on the second, valid an hour: issuer ``http://127.0.0.1:PORT``, subject ``bench``,
scope ``mcp``, JOSE ``kid`` ``k1``. It answers any GET with the JWKS (``/jwks``, by
convention) until it is stopped. A server verifying that token fetches the JWKS once, then
serves from its cache of verified tokens: what the bench measures is that cached path.
"""

from __future__ import annotations

import argparse
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


def main() -> None:
    parser = argparse.ArgumentParser(description="the HTTP benchmark's JWT issuer")
    parser.add_argument("--audience", required=True)
    args = parser.parse_args()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwks = json.dumps({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(jwks)))
            self.end_headers()
            self.wfile.write(jwks)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    claims = {
        "iss": f"http://127.0.0.1:{port}",
        "aud": args.audience,
        "sub": "bench",
        "scope": "mcp",
        "exp": int(time.time()) + 3600,
    }
    token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
    print(port, flush=True)
    print(token, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
