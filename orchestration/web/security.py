"""What every page and socket of the web front shares: the token check and the security headers.

The token (`VERDICTS_LIVE_TOKEN`) may come as an `Authorization: Bearer …` header, an
`X-Verdicts-Token` header or a `token` query parameter; comparison is constant-time.
"""

from __future__ import annotations

import hmac
import secrets

from starlette.requests import HTTPConnection

CSP_NONCE_KEY = "csp_nonce"


def presented_token(conn: HTTPConnection) -> str | None:
    auth = conn.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return conn.headers.get("x-verdicts-token") or conn.query_params.get("token")


def token_ok(conn: HTTPConnection, expected: str | None) -> bool:
    """True when no token is configured, or the presented one matches it."""
    if not expected:
        return True
    got = presented_token(conn)
    return got is not None and hmac.compare_digest(got.encode(), expected.encode())


def content_security_policy(nonce: str) -> str:
    """Scripts only from this origin or with this response's nonce; no inline handlers, no plug-ins."""
    return (
        "default-src 'self'; "
        f"script-src 'self' 'nonce-{nonce}'; "
        f"style-src 'self' 'nonce-{nonce}'; "
        "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
        "base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    )


class SecurityHeaders:
    """ASGI middleware: a fresh nonce per HTTP request (in `scope["state"]["csp_nonce"]`, for
    templates that embed a script) and the CSP and related headers on every response.

    The referrer policy is `same-origin`: other sites are told nothing, and a form these pages post
    carries its real Origin (under `no-referrer` a browser sends `Origin: null`, which the Origin
    check refuses)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})[CSP_NONCE_KEY] = nonce

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                extra = {
                    b"content-security-policy": content_security_policy(nonce).encode(),
                    b"x-content-type-options": b"nosniff",
                    b"referrer-policy": b"same-origin",
                    b"x-frame-options": b"DENY",
                }
                headers += [(k, v) for k, v in extra.items() if k not in names]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def nonce_of(conn: HTTPConnection) -> str:
    return conn.scope.get("state", {}).get(CSP_NONCE_KEY, "")
