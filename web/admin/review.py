"""A manual check's sample, reviewed by a team: each reviewer decides each item (agree / disagree /
note); the page shows progress per reviewer, the agreement between reviewers, and exports the
decisions (CSV, JSON) with each row's ids. Decisions go to the warehouse and fill the report.

A reviewer's name is asked once and kept in a same-site cookie. Other reviewers' decisions on an
item are shown once the reviewer has decided it (their count before), so nobody is led by them.
"""

from __future__ import annotations

import asyncio
from urllib.parse import quote, unquote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from assets.resources import decisions
from evals.board import e
from evals.manual_checks import DECISION_WORDS, DECISIONS, check_by_key, item_review
from evals.report import label
from evals.review_team import load_config, pair_text, summarise
from evals.stats import Ratio
from evals.domains import get as get_domain
from evals.trace import transcript
from web.admin.page import BASE, cell, domain_crumbs, label_chip, page, url
from web.admin.pages import decisions_of, load_run

REVIEWER_COOKIE = "verdicts_reviewer"


def _check(domain: str, key: str):
    try:
        check = check_by_key(key)
    except KeyError:
        raise HTTPException(404, f"{key}: no such manual check") from None
    if check.domain != domain:
        raise HTTPException(404, f"{key} is not a {domain} check")
    return check


def current_reviewer(request: Request) -> str:
    """The name given in the query (`?reviewer=`) or kept in the cookie; empty when neither."""
    asked = request.query_params.get("reviewer")
    raw = asked if asked is not None else unquote(request.cookies.get(REVIEWER_COOKIE, ""))
    try:
        return decisions.reviewer_name(raw)
    except ValueError:
        return ""


def _remember(response: Response, reviewer: str) -> Response:
    if reviewer:
        response.set_cookie(REVIEWER_COOKIE, quote(reviewer), httponly=True, samesite="strict", path=BASE)
    return response


def _progress(team) -> str:
    reviewers = "".join(f"<tr><td>{e(r)}</td><td class='num'>{v['votes']} / {team.sampled}</td><td class='num'>{v['notes']}</td></tr>"
                        for r, v in sorted(team.reviewers.items()))
    pairs = "".join(f"<li>{e(pair_text(p))}</li>" for p in team.pairs) or "<li class='empty'>두 사람이 함께 판단한 항목이 아직 없습니다.</li>"
    return ("<section id='team'><h2>검토자별 진행 · 검토자 간 일치</h2>"
            f"<p>항목마다 검토자 {team.per_item}명이 봅니다 (evals/review.yaml). 다 본 항목 {team.complete} / {team.sampled}"
            + (f" · 의견이 갈린 항목 {len(team.split)}건: {e(', '.join(team.split))}" if team.split else "") + "</p>"
            + ("<table><thead><tr><th>검토자</th><th>판단</th><th>메모만</th></tr></thead><tbody>" + reviewers + "</tbody></table>"
               if reviewers else "<p class='empty'>아직 아무도 판단하지 않았습니다.</p>")
            + f"<h3>Cohen's kappa (두 사람이 함께 판단한 항목, n)</h3><ul>{pairs}</ul></section>")


async def review_page(request: Request) -> Response:
    domain, key, check_key = request.path_params["domain"], request.path_params["run"], request.path_params["check"]
    check = _check(domain, check_key)
    run = await load_run(request, domain, key)
    spec = run.spec
    ids = run.samples.get(check.key, [])
    stored = decisions_of(request, domain).get(check.key, {})
    team = summarise(ids, stored, load_config().per_item(check.key))
    me = current_reviewer(request)
    figure = Ratio(team.agreed, team.decided)
    here = url(domain, "runs", key, "review", check.key)
    body = [f"<p class='lead'>{e(check.title)} 보는 사람: {e(check.who)}. <b>동의</b>는 “{e(check.agree_means)}”라는 뜻입니다.</p>",
            f"<form class='who' method='get' action='{e(here)}'><label>검토자 <input type='text' name='reviewer' value='{e(me)}' "
            f"maxlength='{decisions.REVIEWER_LIMIT}' required placeholder='이름'></label> <button type='submit'>이 이름으로 보기</button></form>",
            f"<p class='tally' id='tally'>표본 {len(ids)}건 · 판단한 항목 {team.decided}건 · 동의 {e(figure.format())}"
            f" · 95% Wilson {e(figure.format_interval())}" + (f" · 메모만 {team.notes_only}건" if team.notes_only else "")
            + f" — <a href='{e(url(domain, 'runs', key, 'report'))}#manual'>리포트에서 보기</a>"
            f" · <a href='{e(here + '/decisions.csv')}' download>판단 CSV</a> · <a href='{e(here + '/decisions.json')}' download>JSON</a></p>",
            _progress(team)]
    if not me:
        body.append("<p class='empty-run' role='note'>판단하려면 위에 검토자 이름을 적어 주세요. 같은 항목을 여러 사람이 따로 판단합니다.</p>")
    if not ids:
        body.append("<p class='empty'>이 실행에는 이 검증의 후보 항목이 없습니다 (표본 없음).</p>")
    verdicts = {i: label(r.get(spec.verdict_key)) for i, r in run.by_id.items()}
    for item_id in ids:
        row = run.by_id[item_id]
        votes = stored.get(item_id, {})
        mine = votes.get(me, {}) if me else {}
        focus = [r for r in transcript(get_domain(domain), row, run.tables, verdicts).rows if r["_focus"]][:2]
        context = "".join("<div class='ctx'>" + " · ".join(f"<span><b>{e(k)}</b> {cell(v)}</span>" for k, v in r.items()
                                                          if not k.startswith("_") and k not in ("file", "line") and v not in (None, ""))
                          + "</div>" for r in focus)
        choices = "".join(
            f"<label><input type='radio' name='decision' value='{d}'{' checked' if mine.get('decision') == d else ''} required> {DECISION_WORDS[d]}</label>"
            for d in DECISIONS)
        status = (f"<span class='decided {e(mine['decision'])}'>내 판단: {e(DECISION_WORDS[mine['decision']])}</span>"
                  if mine else "<span class='undecided'>내 판단 전</span>")
        others = {r: v for r, v in votes.items() if r != me}
        if others and (mine or not me):
            shown = "".join(f"<li>{e(r)}: <span class='decided {e(v.get('decision'))}'>{e(DECISION_WORDS.get(v.get('decision'), ''))}</span>"
                            + (f" — {e(v['note'])}" if v.get("note") else "") + "</li>" for r, v in sorted(others.items()))
            outcome = item_review(votes)["reviewer_decision"]
            seen = f"<ul class='votes'>{shown}</ul><p class='def'>다수 판단: {e(DECISION_WORDS.get(outcome, '—'))}</p>"
        elif others:
            seen = f"<p class='def'>다른 검토자 {len(others)}명이 판단했습니다. 내 판단을 저장하면 보입니다.</p>"
        else:
            seen = ""
        form = (f"<form method='post' action='{e(here)}' class='decide'>"
                f"<input type='hidden' name='item' value='{e(item_id)}'><input type='hidden' name='reviewer' value='{e(me)}'>{choices}"
                f"<input type='text' name='note' maxlength='{decisions.NOTE_LIMIT}' placeholder='메모 (선택)' value='{e(mine.get('note') or '')}'>"
                "<button type='submit'>저장</button></form>") if me else ""
        body.append(
            f"<article class='review-item' id='r-{e(item_id)}' data-item='{e(item_id)}' data-votes='{len(votes)}'>"
            f"<h3>{label_chip(verdicts[item_id], spec.order)} <a href='{e(url(domain, 'runs', key, 'items', item_id))}'><code>{e(item_id)}</code></a> "
            f"{status} <span class='n'>검토자 {len([v for v in votes.values() if v.get('decision') in ('agree', 'disagree')])} / {team.per_item}</span></h3>"
            f"<p>{e(row.get(spec.summary_field))}</p>{context}{seen}{form}</article>")
    crumbs = domain_crumbs(domain, (run.title, url(domain, "runs", key, "board")), (f"수동 검증 {check.key}", None))
    return _remember(page(request, f"수동 검증 {check.key} · {run.title}", "".join(body), crumbs), me)


async def decide(request: Request) -> Response:
    domain, key, check_key = request.path_params["domain"], request.path_params["run"], request.path_params["check"]
    check = _check(domain, check_key)
    form = await request.form(max_files=0, max_fields=10)
    item_id, decision = str(form.get("item") or ""), str(form.get("decision") or "")
    try:
        reviewer = decisions.reviewer_name(str(form.get("reviewer") or ""))
    except ValueError:
        raise HTTPException(400, "write the reviewer's name first") from None
    run = await load_run(request, domain, key)
    if item_id not in run.samples.get(check.key, []):
        raise HTTPException(400, f"{item_id}: not in this check's sample")
    if decision not in DECISIONS:
        raise HTTPException(400, f"decision must be one of {', '.join(DECISIONS)}")
    await asyncio.to_thread(decisions.record, request.app.state.admin.engine, domain=domain, check_key=check.key, item_id=item_id,
                            decision=decision, note=str(form.get("note") or ""), scope=run.report.scope, reviewer=reviewer)
    target = url(domain, "runs", key, "review", check.key) + f"#r-{item_id}"
    return _remember(RedirectResponse(target, status_code=303), reviewer)


async def export(request: Request) -> Response:
    """Every reviewer's decisions on the check's sample, with the decided row's ids and metadata."""
    domain, key, check_key, fmt = (request.path_params[k] for k in ("domain", "run", "check", "format"))
    check = _check(domain, check_key)
    if fmt not in ("csv", "json"):
        raise HTTPException(404, "decisions.csv or decisions.json")
    run = await load_run(request, domain, key)
    spec = run.spec
    rows = decisions.export_rows(domain, check.key, run.samples.get(check.key, []), decisions_of(request, domain).get(check.key, {}),
                                 run.by_id, spec.verdict_key, spec.summary_field)
    name = f"{check.key}-{key}-decisions.{fmt}"
    body, media = ((decisions.export_csv(rows), "text/csv; charset=utf-8") if fmt == "csv"
                   else (decisions.export_json(rows), "application/json"))
    return Response(body, media_type=media, headers={"content-disposition": f"attachment; filename=\"{name}\""})
