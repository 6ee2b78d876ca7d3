"""The front door: `/` leads to the three areas (the live console, the admin pages, the sheet tuning
suggestions), and a page that does not exist answers in Korean with the same links."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from web import messages

AREAS = (
    ("/live", "라이브 선별 콘솔", "방송 중 30초 구간마다 답변할 질문 세 개와 나머지 줄의 사유를 봅니다."),
    ("/admin", "판정 관리", "도메인별 판정 실행, 업로드, 검토와 항목별 근거를 봅니다."),
    ("/suggestions", "설정표 조정 제안", "닫은 방송에서 나온 쿨다운·친밀 기준 조정 제안을 반영하거나 거절합니다."),
)


def _page(title: str, lead: str) -> str:
    items = "".join(f'<li><a href="{href}">{name}</a> <span>— {what}</span> <code>{href}</code></li>'
                    for href, name, what in AREAS)
    return f"""<!doctype html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · chat-verdicts</title>
<link rel="stylesheet" href="/admin/static/admin.css">
</head>
<body class="admin">
<nav class="admin-nav">chat-verdicts</nav>
<main class="page">
<h1>{title}</h1>
<p>{lead}</p>
<ul class="areas">{items}</ul>
</main>
</body>
</html>
"""


async def index(request: Request) -> HTMLResponse:
    return HTMLResponse(_page("chat-verdicts", "채팅 판정 서비스입니다. 볼 화면을 고르세요."))


async def not_found(request: Request, exc) -> HTMLResponse | JSONResponse:
    """404 in Korean for people; JSON for the JSON endpoints' callers."""
    if "application/json" in request.headers.get("accept", "") and "text/html" not in request.headers.get("accept", ""):
        return JSONResponse({"error": "not found", "code": "not_found", "message": messages.error("not_found")}, status_code=404)
    return HTMLResponse(_page("페이지를 찾을 수 없습니다", f"{messages.error('not_found')} 아래에서 갈 곳을 고르세요."),
                        status_code=404)
