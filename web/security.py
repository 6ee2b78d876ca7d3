"""What every page and socket of the web front shares: the token check and the security headers.

The token (`VERDICTS_LIVE_TOKEN`) may come as an `Authorization: Bearer …` header, an
`X-Verdicts-Token` header, one `token` query parameter, or the session cookie: a page opened once
with `?token=…` is answered with an HTTP-only, same-site-strict cookie (`RememberToken`) that every
page, socket, fetch and link of the service then carries (`/live`, `/admin`, `/suggestions`, the
sockets). The cookie holds an HMAC of the token, not the token; its name carries the port, so two
services on one machine keep theirs apart. Comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.requests import HTTPConnection

CSP_NONCE_KEY = "csp_nonce"
COOKIE = "verdicts_session"


def cookie_name(conn: HTTPConnection) -> str:
    server = conn.scope.get("server") or (None, None)
    return f"{COOKIE}_{server[1]}" if server[1] else COOKIE


def session_value(token: str) -> str:
    """What the cookie holds for a token: it proves the token was presented, without being it."""
    return hmac.new(token.encode(), b"verdicts session", hashlib.sha256).hexdigest()


def presented_token(conn: HTTPConnection) -> str | None:
    """The token a client presents in a header or the query (None when there is none, or the query
    gives it more than once)."""
    auth = conn.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    if conn.headers.get("x-verdicts-token"):
        return conn.headers["x-verdicts-token"]
    given = conn.query_params.getlist("token")
    return given[0] if len(given) == 1 else None


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def token_ok(conn: HTTPConnection, expected: str | None) -> bool:
    """True when no token is configured, or the one presented (else the session cookie) matches it."""
    if not expected:
        return True
    if len(conn.query_params.getlist("token")) > 1:
        return False
    got = presented_token(conn)
    if got is not None:
        return _same(got, expected)
    cookie = conn.cookies.get(cookie_name(conn))
    return cookie is not None and _same(cookie, session_value(expected))


class RememberToken:
    """ASGI middleware: a GET that presents the right token as `?token=` is answered with the
    session cookie (path `/`, HTTP-only, SameSite=Strict, ending with the browser session)."""

    def __init__(self, app, token: str | None):
        self.app = app
        self.token = token

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not self.token or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        given = conn.query_params.getlist("token")
        if len(given) != 1 or not _same(given[0], self.token):
            await self.app(scope, receive, send)
            return
        cookie = f"{cookie_name(conn)}={session_value(self.token)}; Path=/; HttpOnly; SameSite=Strict".encode()

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


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
