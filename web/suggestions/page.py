"""The page at /suggestions: closed broadcasts with their figures and suggestions, newest
first, and each character's sheet history. Rendered on the server with every value escaped;
the buttons are wired by `static/suggestions.js` (no inline script: the CSP forbids it)."""

from __future__ import annotations

import html
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse

from live import sheets
from rules.common import timestamps
from assets.resources.warehouse import _engine
from web.pages import head, static_files
from web.security import token_ok
from rules.live_pick.config import load_config
from rules.live_pick.sheets import diff

STATIC = Path(__file__).with_name("static")
KINDS = {"suggestions.js": "text/javascript; charset=utf-8", "suggestions.css": "text/css; charset=utf-8"}
STATUS_LABEL = {"open": "대기", "applied": "반영됨", "rejected": "거절됨", "stale": "지난 제안"}
FIELD_LABEL = {"reply_cooldown_sec": "답변 쿨다운(초)", "min_closeness_by_topic": "주제별 친밀 기준"}


def engine_of(config):
    return _engine(config.warehouse_url)


def e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def page(config):
    async def suggestions_page(request: Request):
        if not token_ok(request, config.token):
            return PlainTextResponse("a valid token is required: open /suggestions?token=…", status_code=403)
        return HTMLResponse(await run_in_threadpool(render, engine_of(config)))

    return suggestions_page


static_file = static_files(STATIC, KINDS)


def local(ns: int | None, tz: str) -> str:
    """An instant as the operator's wall clock, e.g. 2026-09-08 21:05 KST."""
    return timestamps.wall_clock(ns, tz)


def render(engine) -> str:
    tz = load_config().timezone
    broadcasts = sheets.closed_broadcasts(engine, tz)
    sections = [_broadcast(engine, b, tz) for b in broadcasts] or [
        '<p class="empty">아직 닫힌 방송이 없습니다. 방송이 끝나면(또는 <code>verdicts live-close CH-0007</code>) 이곳에 제안이 뜹니다.</p>']
    characters = sorted({b["character_id"] for b in broadcasts})
    history = "".join(_history(engine, c, tz) for c in characters)
    return head("설정표 조정 제안 · live_pick", "/suggestions/static/suggestions.css", "/suggestions/static/suggestions.js") + f"""<body>
<header><h1>설정표 조정 제안</h1><span class="sub">방송이 끝난 뒤 답한 주제와 넘긴 주제로 쿨다운과 친밀 기준을 고치자는 제안입니다. 반영하면 다음에 열리는 구간부터 새 값으로 판정합니다.</span></header>
<p class="operator"><label>반영·거절하는 운영자 <input type="text" id="operator" maxlength="80" autocomplete="name" placeholder="이름"></label></p>
<div id="flash" class="flash" role="status" hidden></div>
<main>
{''.join(sections)}
{_history_section(history)}
</main>
</body>
</html>
"""


def _history_section(history: str) -> str:
    return f'<section class="history"><h2>설정표 이력</h2>{history}</section>' if history else ""


def _broadcast(engine, b: dict, tz: str) -> str:
    bid = b["broadcast_id"]
    fig = sheets.broadcast_figures(engine, bid)
    found = sheets.list_suggestions(engine, bid)
    closed = local(b["closed_ns"], tz)
    head = f'<h2>{e(bid)}</h2><span class="meta">{e(b["character_id"])} · 닫힘 {e(closed)} · 답변 {e(b["answered"])}줄'
    if fig:
        t = fig["totals"]
        head += (f' · 설정표 v{e(fig["sheet_version"])}로 판정 · 판정 {e(t["lines"])}줄 (세계관 안 {e(t["in_world"])}, 쿨다운 보류 '
                 f'{e(t["cooldown_held"])}, 친밀 보류 {e(t["closeness_held"])}, 다음 차례 {e(t["deferred"])}, 반복 질문 {e(t["repeat_askers"])}명)')
    head += "</span>"
    cards = "".join(_card(s) for s in found) or '<p class="none">이 방송에서는 제안할 변경이 없습니다.</p>'
    notes = "".join(f"<li>{e(n)}</li>" for n in (fig or {}).get("notes", []))
    return (f'<section class="broadcast" id="{e(bid)}"><header class="bhead">{head}</header>'
            f'{_figures(fig) if fig else ""}<div class="cards">{cards}</div>'
            f'{_notes(notes)}</section>')


def _notes(items: str) -> str:
    return f'<ul class="notes">{items}</ul>' if items else ""


def _figures(fig: dict) -> str:
    rows = "".join(
        f'<tr><th scope="row">{e(p["topic"])}</th><td>{e(p["lines"])}</td><td>{e(p["answered"])}</td><td>{e(p["cooldown_held"])}</td>'
        f'<td class="list">{e(", ".join(map(str, p["elapsed"])))}</td><td>{e(p["closeness_held"])}</td>'
        f'<td class="list">{e(", ".join(map(str, p["levels"])))}</td><td>{e(p["deferred"])}</td><td>{e(p["repeat_askers"])}</td></tr>'
        for p in fig["per_topic"])
    return ('<details class="figures"><summary>주제별 수치</summary><table><thead><tr><th>주제</th><th>줄</th><th>답변</th>'
            '<th>쿨다운 보류</th><th>경과 초</th><th>친밀 보류</th><th>시청자 단계</th><th>다음 차례</th><th>반복 질문</th></tr></thead>'
            f'<tbody>{rows}</tbody></table></details>')


def _card(s: dict) -> str:
    field = FIELD_LABEL.get(s["field"], s["field"]) + (f" · {s['topic']}" if s["topic"] else "")
    status = s["status"]
    badge = STATUS_LABEL.get(status, status)
    if status == "applied":
        badge += f" (v{s['applied_version']})"
    decided = ""
    tz = load_config().timezone
    when = f" · {e(local(s['decided_ns'], tz))}" if s.get("decided_ns") is not None else ""
    who = f" · {e(s['decided_by'])}" if s["decided_by"] else ""
    if status == "rejected":
        decided = f'<p class="decided">거절 사유: {e(s["reason"])}{who}{when}</p>'
    elif status == "applied":
        decided = f'<p class="decided">반영{who}{when}</p>'
    elif status == "stale":
        decided = (f'<p class="decided">이 제안이 고치는 값을 설정표 v{e(s["moved_in_version"])}가 먼저 바꿔 '
                   '더는 반영할 수 없습니다.</p>')
    evidence = "".join(f'<tr><td>{e(x.get("dataset"))}</td><td>{e(x.get("field"))}</td><td>{e(x.get("agg") or "")}</td>'
                       f'<td>{e(x.get("value"))}</td></tr>' for x in s["evidence"])
    actions = ""
    reject = (f'<input type="text" class="reason" maxlength="500" placeholder="거절 사유" aria-label="거절 사유">'
              f'<button type="button" class="reject" data-id="{e(s["suggestion_id"])}">거절</button>')
    if status == "stale":  # it can no longer be applied, but it can be dismissed with a reason
        actions = f'<div class="actions">{reject}</div>'
    if status == "open":
        change = f"{field}: {s['current_value']} → {s['proposed_value']}"
        actions = (f'<div class="actions"><button type="button" class="apply" data-id="{e(s["suggestion_id"])}" data-change="{e(change)}">반영</button>'
                   f'{reject}</div>')
    return (f'<article class="card {e(status)}" data-id="{e(s["suggestion_id"])}"><div class="top"><span class="change">{e(field)}: '
            f'<b>{e(s["current_value"])} → {e(s["proposed_value"])}</b></span><span class="badge {e(status)}">{e(badge)}</span></div>'
            f'<p class="rationale">{e(s["rationale"])}</p><p class="sid">{e(s["suggestion_id"])} · 기준 설정표 v{e(s["base_version"])}</p>'
            f'<details class="evidence"><summary>근거</summary><table><thead><tr><th>dataset</th><th>field</th><th>agg</th><th>value</th></tr>'
            f'</thead><tbody>{evidence}</tbody></table></details>{decided}{actions}</article>')


def _history(engine, character: str, tz: str) -> str:
    rows, prev, out = sheets.history(engine, character), None, []
    for r in rows:
        made = local(r["created_ns"], tz)
        since = "처음부터" if r["effective_ns"] is None else local(r["effective_ns"], tz)
        what = "; ".join(diff(prev, r)) or "파일에서 읽은 처음 값"
        src = r["suggestion_id"] or r["source_ref"] or ""
        out.append(f'<tr><td>v{e(r["version"])}</td><td>{e(made)}</td><td>{e(r["source"])}</td><td class="list">{e(src)}</td>'
                   f'<td>{e(r["author"] or "—")}</td><td>{e(since)}</td><td>{e(r["reply_cooldown_sec"])}</td><td>{e(what)}</td></tr>')
        prev = r
    return (f'<h3>{e(character)}</h3><table class="versions"><thead><tr><th>버전</th><th>만든 때</th><th>출처</th><th>근거</th>'
            f'<th>누가</th><th>적용 시작</th><th>쿨다운</th><th>바뀐 값</th></tr></thead><tbody>{"".join(out)}</tbody></table>')
