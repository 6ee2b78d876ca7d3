"""The operator's console page (`/live`), its static script and style, the pick-up action and
the service's status (`/live/status`).

The page is a shell: everything it shows arrives over `/ws/windows` and is written into the
DOM as text by `static/console.js` (never as HTML), under the app's Content-Security-Policy.
"""

from __future__ import annotations

import html
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse

from web import messages
from web.messages import action_body, refused
from web.live import feeds
from web.pages import head, static_files
from web.security import token_ok

STATIC = Path(__file__).with_name("static")

PAGE = head("라이브 선별 콘솔 · live_pick", "/live/static/console.css", "/live/static/format.js").replace(
    "</head>", '<script src="/live/static/console.js" defer></script>\n</head>') + """<body data-window-seconds="{window_seconds}" data-grace-ms="{grace_ms}" data-tags="{tags}" data-timezone="{timezone}" data-messages="{messages}">
<header>
  <h1>라이브 선별 콘솔</h1>
  <span id="status" class="status">연결 중…</span>
  <span id="countdown" class="countdown"></span>
  <span id="totals" class="totals"></span>
  <a class="totals" href="/suggestions">설정표 조정 제안 →</a>
  <a class="totals" href="/">처음으로</a>
</header>
<div id="banners" class="banners" hidden></div>
<nav class="tabs-bar"><div id="tabs" class="tabs" aria-label="캐릭터"></div>
  <span id="on-air" class="on-air-note" hidden></span>
  <button type="button" id="start-broadcast" class="start-broadcast" hidden></button>
  <button type="button" id="close-broadcast" class="close-broadcast" hidden></button>
  <span id="notice" class="notice" aria-live="polite"></span></nav>
<div id="cue" class="cue" aria-live="polite"></div>
<section id="feeds" class="feeds" hidden></section>
<main>
  <section class="flow">
    <h2>채팅 흐름</h2>
    <div id="open" class="open-windows"></div>
    <ol id="chat" class="chat"></ol>
    <p class="chat-hint">새로 들어오는 채팅이 여기에 흐릅니다. 닫힌 구간의 줄은 오른쪽에 모두 남습니다.</p>
    <section id="panel-box" class="panel" hidden>
      <h2>구간 밖에서 격리된 줄 <small>(캐릭터 설정표가 없거나, 구간을 알 수 없거나, 시각이 범위를 벗어난 줄)</small></h2>
      <ol id="panel"></ol>
    </section>
  </section>
  <section class="windows">
    <h2>닫힌 구간 <small>({window_seconds}초마다 답변할 질문 세 개 · 나머지는 사유별 · 시각은 한국 시간)</small></h2>
    <div id="windows"></div>
    <button type="button" id="earlier" class="earlier-link" hidden></button>
  </section>
</main>
<footer>판정은 규칙이 정하고 순위는 참고 자리입니다. 최종 선택은 운영자가 합니다. 태그: {tags}</footer>
</body>
</html>
"""


def page(config, window_seconds: int, timezone: str):
    async def live_page(request: Request):
        if not token_ok(request, config.token):
            return PlainTextResponse("a valid token is required: open /live?token=…", status_code=403)
        text = PAGE.format(window_seconds=window_seconds, grace_ms=int(config.grace_ms), tags=html.escape(config.tags),
                           timezone=html.escape(timezone), messages=html.escape(messages.catalogue_json(), quote=True))
        return HTMLResponse(text)

    return live_page


static_file = static_files(STATIC, {"console.js": "text/javascript; charset=utf-8", "format.js": "text/javascript; charset=utf-8",
                                    "console.css": "text/css; charset=utf-8"})


def pick_up(config):
    async def endpoint(request: Request):
        body, refusal = await action_body(request, config.token, 'expected a JSON body {"msg_id": ...}: ')
        if refusal is not None:
            return refusal
        msg_id = body.get("msg_id") if isinstance(body, dict) else None
        if not isinstance(msg_id, str) or not msg_id:
            return refused("msg_id_required", 400, "msg_id is required")
        done = await request.app.state.live.pick_up(msg_id, body.get("by") if isinstance(body.get("by"), str) else None)
        if done is None:
            return refused("no_judged_line", 404, f"no judged line {msg_id}")
        if "error" in done:
            return refused("already_a_pick", 409, done["error"])
        return JSONResponse(done)

    return endpoint


def status(config):
    """The store's figures (`LiveService.tally`: received = judged + quarantined + duplicates + late +
    pending, in total, per character and per character's current broadcast), what this run of the
    service did since it started, its open windows, the newest frame number of its epoch, and its
    judging helper: `ready`, `starting`, `off` (one core, or turned off) or `failed` (its windows are
    judged in the service). The chat feeds' latest counts are under `feeds`
    (`web.live.feeds`)."""
    async def endpoint(request: Request):
        if not token_ok(request, config.token):
            return refused("token_required", 403, "a valid token is required")
        return JSONResponse({**await request.app.state.live.status(), "feeds": feeds.snapshot(request.app)})

    return endpoint
