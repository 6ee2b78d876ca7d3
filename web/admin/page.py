"""What every admin page shares: access, the page shell, navigation, and escaping.

Access: the live service's token (`VERDICTS_LIVE_TOKEN`) when one is set, or the session cookie a
page opened with `?token=…` is answered with (`web.security`), so links and forms
need not carry it.
Every text from logs or uploads goes through `e` (HTML-escaped, quotes included).
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from evals.board import e
from web.security import nonce_of, token_ok

BASE = "/admin"
DOMAIN_TITLES = {
    "persona": "캐릭터 설정을 벗어난 답변",
    "live_pick": "라이브 방송에서 답변할 질문 고르기",
    "retry": "한 번에 못 끝내고 다시 시도한 지점",
    "handoff": "상담원에게 넘겼어야 할 문의",
}


def cell(v) -> str:
    """A value from the data as people read it on a page (HTML-escaped): no `null`, no brackets or
    quotes of Python or JSON. Nothing is marked as such, an empty string too, so neither is taken
    for a blank."""
    if v is None:
        return "<span class='null'>(비어 있음)</span>"
    if isinstance(v, bool):
        return "예" if v else "아니오"
    if isinstance(v, str):
        return e(v) if v else "<span class='null'>(빈 글)</span>"
    if isinstance(v, (int, float)):
        return e(f"{v:,}" if isinstance(v, int) and abs(v) >= 1000 else v)
    if isinstance(v, dict):
        return ", ".join(f"{e(k)} {cell(x)}" for k, x in v.items()) or "<span class='null'>(없음)</span>"
    if isinstance(v, (list, tuple)):
        return ", ".join(cell(x) for x in v) or "<span class='null'>(없음)</span>"
    return e(v)


def allowed(request: Request) -> bool:
    return token_ok(request, request.app.state.config.token)


def refused() -> Response:
    return PlainTextResponse("token required (VERDICTS_LIVE_TOKEN): open the page with ?token=…", status_code=401)


def url(*parts: str, **query) -> str:
    path = BASE + "".join("/" + quote(str(p), safe="") for p in parts)
    q = "&".join(f"{quote(k)}={quote(str(v), safe='')}" for k, v in query.items() if v is not None)
    return path + (f"?{q}" if q else "")


def nav(crumbs: list[tuple[str, str | None]]) -> str:
    """A breadcrumb bar: (text, href or None for the current page)."""
    parts = [f"<a href='{e(h)}'>{e(t)}</a>" if h else f"<span aria-current='page'>{e(t)}</span>" for t, h in crumbs]
    return f"<nav class='crumbs admin-nav' aria-label='위치'>{' <span class=sep>›</span> '.join(parts)}</nav>"


def domain_crumbs(domain: str, *more: tuple[str, str | None]) -> list[tuple[str, str | None]]:
    return [("관리 화면", url()), (domain, url(domain)), *more]


def page(request: Request, title: str, body: str, crumbs: list[tuple[str, str | None]], status: int = 200) -> HTMLResponse:
    html = ("<!doctype html><html lang='ko'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{e(title)}</title><link rel='stylesheet' href='{BASE}/static/admin.css'>"
            f"<script src='{BASE}/static/admin.js' defer nonce='{e(nonce_of(request))}'></script></head>"
            f"<body class='admin'>{nav(crumbs)}<main class='page'><h1>{e(title)}</h1>{body}</main></body></html>")
    return HTMLResponse(html, status_code=status)


def served_nav_css() -> str:
    """Navigation on a board page, which has its own stylesheet."""
    return f"<link rel='stylesheet' href='{BASE}/static/admin.css'>"


def label_chip(verdict: str, order) -> str:
    cls = f"v{list(order).index(verdict)}" if verdict in order else "vx"
    return f"<span class='label {cls}'>{e(verdict)}</span>"


def ratio_cells(ratio) -> tuple[str, str]:
    if ratio is None:
        return "—", "—"
    return ratio.format(), ratio.format_interval()
