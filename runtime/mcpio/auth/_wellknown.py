"""Where OAuth metadata lives, for the resource server (`mcpio.auth`) and the client
(`mcpio.auth._client`) alike: the well-known path goes between a URL's host and its path
(RFC 8615 as RFC 8414 and RFC 9728 apply it), with OpenID Connect's older form (the path
first) tried last for an authorization server."""

from __future__ import annotations

from urllib.parse import urlsplit

PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource"  # RFC 9728
AUTHORIZATION_SERVER = "/.well-known/oauth-authorization-server"  # RFC 8414
OPENID = "/.well-known/openid-configuration"  # OpenID Connect Discovery


def _origin_and_path(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


def inserted(url: str, well_known: str) -> str:
    """`url` with `well_known` inserted between its host and its path."""
    origin, path = _origin_and_path(url)
    return f"{origin}{well_known}{path}"


def resource_metadata_urls(resource: str) -> list[str]:
    """Where a protected resource's metadata may be, in the order to try (RFC 9728 §3.1)."""
    origin, path = _origin_and_path(resource)
    return list(
        dict.fromkeys([inserted(resource, PROTECTED_RESOURCE), origin + PROTECTED_RESOURCE])
    )


def issuer_metadata_urls(issuer: str) -> list[str]:
    """Where an authorization server's metadata may be, in the order to try: RFC 8414, OpenID
    with the path inserted, then OpenID's own form (each once)."""
    origin, path = _origin_and_path(issuer)
    return list(
        dict.fromkeys(
            [
                inserted(issuer, AUTHORIZATION_SERVER),
                inserted(issuer, OPENID),
                f"{origin}{path}{OPENID}",
            ]
        )
    )
