"""What every request crosses before any route sees it: the Host allow-list, the Origin check, and
one token parameter at most.

- **Host.** Every HTTP request and WebSocket handshake must be addressed to a name the service
  answers to (`WebConfig.served_hosts`: loopback, the bound address, `--allow-host`); anything else
  is refused with 421. A page on a name that an attacker makes resolve to 127.0.0.1 (DNS rebinding)
  is same-origin to the browser, so only the Host header tells it apart.
- **Origin.** Every WebSocket handshake and every request that may change state (any method but GET,
  HEAD and OPTIONS) from a browser must come from this service's own origin (scheme://Host) or one
  listed (`--allow-origin`); `Origin: null` (sandboxed frames, local files, some redirects) is refused
  unless `null` is listed. A request without Origin is not from a browser (browsers send it on
  sockets and on every such request) unless `Sec-Fetch-Site` says it is cross-site: then it is
  refused too. Reading requests that a browser marks cross-site or same-site (another port of the
  same host) and that are not a navigation (an image, a script, a fetch from another page) are
  refused as well unless their Origin is listed: nothing here is meant to be embedded elsewhere.
- **Token parameter.** `?token=` given more than once is refused (400): which one counts would be up
  to whoever reads it.

Refusals are plain text naming what was refused and the setting that would allow it; a socket is
refused with the HTTP status before it is accepted (or closed with 1008 where the server cannot).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import PlainTextResponse
from starlette.websockets import WebSocket

from web.config import WebConfig, host_name

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MISDIRECTED = 421
POLICY_CLOSE = 1008


def origin_name(value: str) -> str:
    """An origin as compared: lower-case, without a trailing slash."""
    return value.strip().lower().rstrip("/")


class Boundary:
    """ASGI middleware applying the three rules above to every HTTP request and WebSocket handshake."""

    def __init__(self, app, config: WebConfig):
        self.app = app
        self.hosts = config.served_hosts
        self.origins = frozenset(origin_name(o) for o in config.allowed_origins)

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            refused = self.refusal(HTTPConnection(scope))
            if refused is not None:
                await deny(scope, receive, send, *refused)
                return
        await self.app(scope, receive, send)

    def refusal(self, conn: HTTPConnection) -> tuple[int, str] | None:
        """(status, reason) when the request may not go on; None when it may."""
        host = conn.headers.get("host")
        if not host:
            return 400, "a Host header is required"
        if host_name(host) not in self.hosts:
            return MISDIRECTED, (f"this service does not answer to the host {host!r}: "
                                 "start it with --allow-host NAME (or VERDICTS_ALLOWED_HOSTS) for a name it should answer to")
        if len(conn.query_params.getlist("token")) > 1:
            return 400, "the token parameter is given more than once"
        socket = conn.scope["type"] == "websocket"
        if socket or conn.scope.get("method", "GET") not in SAFE_METHODS:
            return self._origin_refusal(conn, host)
        site, mode = conn.headers.get("sec-fetch-site"), conn.headers.get("sec-fetch-mode")
        if site in ("cross-site", "same-site") and mode != "navigate" and origin_name(conn.headers.get("origin") or "") not in self.origins:
            return 403, "a request from another site for a resource of this service: open its pages directly"
        return None

    def _origin_refusal(self, conn: HTTPConnection, host: str) -> tuple[int, str] | None:
        origin = conn.headers.get("origin")
        if origin is None:
            if conn.headers.get("sec-fetch-site") in ("cross-site", "same-site"):
                return 403, "a cross-site request without an Origin is refused"
            return None  # not a browser: the token guards it
        name = origin_name(origin)
        if name in self.origins:
            return None
        if name == "null":
            return 403, "Origin: null is refused (add --allow-origin null to accept sandboxed pages)"
        parts = urlsplit(name)
        if parts.scheme in ("http", "https") and parts.netloc == host.strip().lower() and not parts.path:
            return None
        return 403, f"the origin {origin!r} is not allowed: only this service's own pages, or --allow-origin ORIGIN"


async def deny(scope, receive, send, status: int, reason: str) -> None:
    response = PlainTextResponse(reason, status_code=status)
    if scope["type"] == "http":
        await response(scope, receive, send)
        return
    socket = WebSocket(scope, receive, send)
    try:
        await socket.send_denial_response(response)
    except RuntimeError:  # the server cannot answer a handshake with a status
        await socket.close(code=POLICY_CLOSE, reason=reason[:120])
