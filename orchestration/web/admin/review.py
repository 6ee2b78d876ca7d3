"""A manual check's sample with a decision form per item (agree / disagree / note); decisions go to
the warehouse and fill the report's person-checked row."""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from evals.board import e
from evals.manual_checks import DECISION_WORDS, DECISIONS, check_by_key, tally
from evals.report import label
from evals.stats import Ratio
from evals.trace import transcript
from assets.resources import decisions
from orchestration.web.admin.page import domain_crumbs, label_chip, page, url
from orchestration.web.admin.pages import decisions_of, load_run


def _check(domain: str, key: str):
    try:
        check = check_by_key(key)
    except KeyError:
        raise HTTPException(404, f"{key}: no such manual check") from None
    if check.domain != domain:
        raise HTTPException(404, f"{key} is not a {domain} check")
    return check


async def review_page(request: Request) -> Response:
    domain, key, check_key = request.path_params["domain"], request.path_params["run"], request.path_params["check"]
    check = _check(domain, check_key)
    run = await load_run(request, domain, key)
    spec = run.spec
    ids = run.samples.get(check.key, [])
    stored = decisions_of(request, domain).get(check.key, {})
    agreed, decided, notes = tally(ids, stored)
    figure = Ratio(agreed, decided)
    body = [f"<p class='lead'>{e(check.title)} 보는 사람: {e(check.who)}. <b>동의</b>는 “{e(check.agree_means)}”라는 뜻입니다.</p>",
            f"<p class='tally' id='tally'>표본 {len(ids)}건 · 판단 {decided}건 · 동의 {e(figure.format())}"
            f" · 95% Wilson {e(figure.format_interval())}" + (f" · 메모만 {notes}건" if notes else "")
            + f" — <a href='{e(url(domain, 'runs', key, 'report'))}#metrics'>리포트에서 보기</a></p>"]
    if not ids:
        body.append("<p class='empty'>이 실행에는 이 검증의 후보 항목이 없습니다.</p>")
    verdicts = {i: label(r.get(spec.verdict_key)) for i, r in run.by_id.items()}
    for item_id in ids:
        row = run.by_id[item_id]
        current = stored.get(item_id, {})
        focus = [r for r in transcript(domain, row, run.tables, verdicts).rows if r["_focus"]][:2]
        context = "".join("<div class='ctx'>" + " · ".join(f"<span><b>{e(k)}</b> {e(v)}</span>" for k, v in r.items()
                                                          if not k.startswith("_") and k not in ("file", "line") and v not in (None, ""))
                          + "</div>" for r in focus)
        choices = "".join(
            f"<label><input type='radio' name='decision' value='{d}'{' checked' if current.get('decision') == d else ''} required> {DECISION_WORDS[d]}</label>"
            for d in DECISIONS)
        status = (f"<span class='decided {e(current['decision'])}'>{e(DECISION_WORDS[current['decision']])}</span>"
                  if current else "<span class='undecided'>판단 전</span>")
        body.append(
            f"<article class='review-item' id='r-{e(item_id)}' data-item='{e(item_id)}'>"
            f"<h3>{label_chip(verdicts[item_id], spec.order)} <a href='{e(url(domain, 'runs', key, 'items', item_id))}'><code>{e(item_id)}</code></a> {status}</h3>"
            f"<p>{e(row.get(spec.summary_field))}</p>{context}"
            f"<form method='post' action='{e(url(domain, 'runs', key, 'review', check.key))}' class='decide'>"
            f"<input type='hidden' name='item' value='{e(item_id)}'>{choices}"
            f"<input type='text' name='note' maxlength='{decisions.NOTE_LIMIT}' placeholder='메모 (선택)' value='{e(current.get('note') or '')}'>"
            "<button type='submit'>저장</button></form></article>")
    crumbs = domain_crumbs(domain, (run.title, url(domain, "runs", key, "board")), (f"수동 검증 {check.key}", None))
    return page(request, f"수동 검증 {check.key} · {run.title}", "".join(body), crumbs)


async def decide(request: Request) -> Response:
    domain, key, check_key = request.path_params["domain"], request.path_params["run"], request.path_params["check"]
    check = _check(domain, check_key)
    form = await request.form(max_files=0, max_fields=10)
    item_id, decision = str(form.get("item") or ""), str(form.get("decision") or "")
    run = await load_run(request, domain, key)
    if item_id not in run.samples.get(check.key, []):
        raise HTTPException(400, f"{item_id}: not in this check's sample")
    if decision not in DECISIONS:
        raise HTTPException(400, f"decision must be one of {', '.join(DECISIONS)}")
    await asyncio.to_thread(decisions.record, request.app.state.admin.engine, domain=domain, check_key=check.key, item_id=item_id,
                            decision=decision, note=str(form.get("note") or ""), scope=run.report.scope, reviewer="admin page")
    return RedirectResponse(url(domain, "runs", key, "review", check.key) + f"#r-{item_id}", status_code=303)

