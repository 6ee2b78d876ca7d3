"""The index of domains and runs, each domain's page, and per run its board and its report."""

from __future__ import annotations

import asyncio
import copy
import json

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from evals import augment
from evals.board import Rest, Served, e, render_board
from evals.manual_checks import checks_of, fill_decisions, item_review
from evals.fidelity import basis_of
from evals.next_steps import next_steps
from evals.pins import pins_text
from evals.render import EMPTY_NOTICE, NO_MANUAL, check_result, manual_lines
from evals.report import PERSON, by_step, label, rows_by_id, values_text
from evals.shared_metrics import AGREEMENT
from evals.stats import label_order
from evals import domains
from assets.resources import decisions
from web.admin import uploads
from web.admin.page import (
    DOMAIN_TITLES, domain_crumbs, label_chip, nav, page, url,
)
from web.admin.runs import Run, run_title
from web.admin.stored_run import StoredRun, stored_run
from web.security import nonce_of


def _state(request: Request):
    return request.app.state.admin


async def load_run(request: Request, domain: str, key: str) -> Run:
    return await asyncio.to_thread(_state(request).runs.load, domain, key)


async def shown_run(request: Request, domain: str, key: str) -> Run | StoredRun:
    """What a run's board and report show: a day the nightly run stored, from the warehouse; any other
    run (or a day not stored), judged from its folder."""
    stored = await asyncio.to_thread(stored_run, _state(request).config.warehouse_url, domain, key)
    return stored if stored is not None else await load_run(request, domain, key)


def source_note(run: Run | StoredRun) -> str:
    """Where the page's figures come from, said on the page."""
    text = run.source_note() if isinstance(run, StoredRun) else "이 화면이 원본 폴더에서 판정한 결과입니다."
    return f"<p class='source' data-source='{'stored' if isinstance(run, StoredRun) else 'judged'}'>{e(text)}</p>"


def decisions_of(request: Request, domain: str) -> dict:
    return decisions.read(_state(request).engine, domain)


def filled_report(request: Request, run: Run | StoredRun):
    """The run's report with the person-checked rows filled from the stored decisions (the cached report is left as it is)."""
    report = copy.copy(run.report)
    report.metrics, report.reviewers = list(report.metrics), dict(report.reviewers)
    return fill_decisions(report, decisions_of(request, run.domain))


def headline(run: Run | StoredRun) -> dict:
    report = run.report
    rec = report.reconciliation
    agreement = next((m for m in report.metrics if m.name == AGREEMENT and m.ratio is not None), None)
    return {
        "items": run.items() if isinstance(run, StoredRun) else len(run.rows),
        "checks": f"{sum(c.passed for c in report.checks)} / {len(report.checks)}",
        "checks_ok": report.checks_passed,
        "quarantined": f"{sum(r['quarantined'] for r in rec.values())} / {sum(r['raw'] for r in rec.values())}",
        "agreement": agreement.ratio.format() if agreement else "—",
    }


def _run_table(domain: str, runs: list[tuple[str, Run | StoredRun | None, str]]) -> str:
    rows = []
    for key, run, problem in runs:
        title = run_title(key, run.sample if run else False)
        if run is None:
            rows.append(f"<tr><td>{e(title)}</td><td colspan='5' class='fail'>{e(problem)}</td><td></td></tr>")
            continue
        h = headline(run)
        rows.append(
            f"<tr data-run='{e(key)}' data-source='{'stored' if isinstance(run, StoredRun) else 'judged'}'>"
            f"<td><b>{e(title)}</b></td><td class='num'>{h['items']}</td>"
            f"<td class='{'pass' if h['checks_ok'] else 'fail'}'>{e(h['checks'])}</td><td class='num'>{e(h['quarantined'])}</td>"
            f"<td class='num'>{e(h['agreement'])}</td>"
            f"<td><a href='{e(url(domain, 'runs', key, 'board'))}'>보드</a> · <a href='{e(url(domain, 'runs', key, 'report'))}'>리포트</a></td></tr>")
    return ("<table class='runs'><thead><tr><th>실행</th><th>판정</th><th>자동 검증</th><th>격리 / 원본</th><th>판정 일치</th><th>보기</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _load_all(state, domain: str) -> list[tuple[str, Run | StoredRun | None, str]]:
    """Every run of the domain with its figures: a day the nightly run stored from its stored report
    (the day is not judged again, and is listed even when the raw folder no longer holds it); any other
    run judged from its folder."""
    from assets.common.day_report import stored_days
    from assets.resources.warehouse import WarehouseResource
    from rules.common.jsonl import DatasetError

    url = state.config.warehouse_url
    stored = set(stored_days(WarehouseResource(url=url), domain))
    found = state.runs.keys(domain)
    days = sorted({k[4:] for k in found if k.startswith("day-")} | stored, reverse=True)
    out = []
    for key in ["all", *[f"day-{d}" for d in days], *[k for k in found if k.startswith("up-")]]:
        if key.startswith("up-") and not uploads.finished(state, domain, key[3:]):
            continue
        kept = stored_run(url, domain, key) if key[4:] in stored else None
        if kept is not None:
            out.append((key, kept, ""))
            continue
        try:
            out.append((key, state.runs.load(domain, key), ""))
        except (DatasetError, ValueError) as exc:
            out.append((key, None, str(exc)))
    return out


async def index(request: Request) -> Response:
    state = _state(request)
    parts = ["<p class='lead'>도메인마다 판정한 날과 올린 파일을 고르면 보드와 리포트가 열립니다. 판정은 명령줄과 Dagster 가 쓰는 같은 규칙으로 합니다.</p>"]
    for domain in domains.names():
        runs = await asyncio.to_thread(_load_all, state, domain)
        parts.append(f"<section class='domain' id='d-{e(domain)}'><h2><a href='{e(url(domain))}'><code>{e(domain)}</code></a> "
                     f"{e(DOMAIN_TITLES.get(domain, ''))}</h2>{_run_table(domain, runs)}</section>")
    return page(request, "판정 관리 화면", "".join(parts), [("관리 화면", None)])


async def domain_page(request: Request) -> Response:
    state = _state(request)
    domain = request.path_params["domain"]
    runs = await asyncio.to_thread(_load_all, state, domain)
    keys = [k for k, r, _ in runs if r is not None]
    def options(chosen: int) -> str:
        return "".join(f"<option value='{e(k)}'{' selected' if i == chosen else ''}>"
                       f"{e(run_title(k, state.runs.is_sample(state.runs.folder_of(domain, k))))}</option>" for i, k in enumerate(keys))

    diff_form = (f"<form class='diff-form' method='get' action='{e(url(domain, 'diff'))}'><label>이전 <select name='a'>{options(len(keys) - 1)}</select></label> "
                 f"<label>이후 <select name='b'>{options(len(keys) - 2)}</select></label> <button type='submit'>두 실행 비교</button></form>") if len(keys) >= 2 else ""
    checks = "".join(f"<li><a href='{e(url(domain, 'runs', 'all', 'review', c.key))}'><code>{e(c.key)}</code> {e(c.title)}</a></li>"
                     for c in checks_of(domain))
    pending = "".join(f"<li><a href='{e(url(domain, 'uploads', u))}'>업로드 {e(u[:8])}</a> — {e(s['stage'])}</li>"
                      for u, s in uploads.statuses(state, domain) if s["state"] != "done")
    body = [
        f"<p class='lead'>날짜별 판정은 원본 폴더 <code>{e(state.runs.raw_folder(domain))}</code>에서 합니다"
        + (" (샘플 데이터)" if state.runs.is_sample(state.runs.raw_folder(domain)) else "") + ".</p>",
        "<section><h2>판정한 날과 올린 파일</h2>", _run_table(domain, runs), diff_form, "</section>",
        uploads.form(request, domain),
        f"<section><h2>업로드 진행과 오류</h2><ul>{pending}</ul></section>" if pending else "",
        f"<section id='manual'><h2>수동 검증 · 사람이 봅니다</h2><ul>{checks}</ul></section>" if checks else "",
        _sample_section(state, domain),
    ]
    return page(request, f"{domain} — {DOMAIN_TITLES.get(domain, '')}", "".join(body), domain_crumbs(domain)[:-1] + [(domain, None)])


def _sample_section(state, domain: str) -> str:
    """① inline sample, ② seed.json, ③ the augmentation prompt per dataset (all from the same schema)."""
    from rules.common.environment import SAMPLE_DIR

    out = ["<section id='seed'><h2>샘플 · seed.json · 증강 프롬프트</h2>",
           f"<p>① 아래 인라인 샘플 · ② <a href='{e(url(domain, 'seed.json'))}' download='seed.json'>seed.json 내려받기</a> · "
           "③ 증강 프롬프트. 세 층 모두 같은 JSON Schema 에서 나옵니다.</p>"]
    for dataset in augment.datasets(domain):
        rows = augment.sample_rows(domain, dataset, SAMPLE_DIR / domain)
        cols = list(dict.fromkeys(k for r in rows for k in r))
        table = ("<div class='wide'><table><thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in cols) + "</tr></thead><tbody>"
                 + "".join("<tr>" + "".join(f"<td>{e(_cell(r.get(c)))}</td>" for c in cols) + "</tr>" for r in rows)
                 + "</tbody></table></div>")
        text = augment.prompt(domain, dataset)
        pid = f"prompt-{dataset}"
        out.append(f"<h3><code>{e(dataset)}</code></h3>{table}"
                   f"<div class='prompt'><textarea id='{e(pid)}' readonly rows='5'>{e(text)}</textarea>"
                   f"<button type='button' data-copy='{e(pid)}'>프롬프트 복사</button></div>")
    out.append("</section>")
    return "".join(out)


def _cell(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, (list, dict, bool)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


async def seed_file(request: Request) -> Response:
    from rules.common.environment import SAMPLE_DIR

    domain = request.path_params["domain"]
    body = augment.seed_json(domain, SAMPLE_DIR / domain)
    return JSONResponse(body, headers={"content-disposition": f"attachment; filename=\"{domain}-seed.json\""})


# -- a run: board and report ---------------------------------------------------------------------


def run_links(run: Run | StoredRun, here: str) -> str:
    links = [("board", "보드"), ("items", "판정 목록"), ("report", "리포트")]
    out = [f"<a href='{e(url(run.domain, 'runs', run.key, k))}'{' aria-current=page' if k == here else ''}>{t}</a>" for k, t in links]
    return " · ".join(out)


def other_runs(request: Request, run: Run | StoredRun, where: str) -> str:
    """Links to the same page of the domain's other runs (days, uploads), and to the diff with each."""
    state = _state(request)
    found = run.other_keys(state.runs) if isinstance(run, StoredRun) else state.runs.keys(run.domain)  # a stored day reads no raw file
    keys = [k for k in found if k != run.key and (not k.startswith("up-") or uploads.finished(state, run.domain, k[3:]))]
    if not keys:
        return ""
    items = "".join(
        f"<li><a href='{e(url(run.domain, 'runs', k, where))}'>{e(run_title(k, state.runs.is_sample(state.runs.folder_of(run.domain, k))))}</a>"
        f" <a class='small' href='{e(url(run.domain, 'diff', a=run.key, b=k))}'>비교</a></li>" for k in keys)
    return f"<nav class='runs-nav' aria-label='다른 실행'><b>다른 실행</b><ul>{items}</ul></nav>"


def _crumbs(run: Run | StoredRun, here: str):
    return domain_crumbs(run.domain, (run.title, url(run.domain, "runs", run.key, "board")), ("보드" if here == "board" else "리포트", None))


async def board_page(request: Request) -> Response:
    domain, key = request.path_params["domain"], request.path_params["run"]
    run = await shown_run(request, domain, key)
    report = filled_report(request, run)
    if isinstance(run, StoredRun):
        board = await asyncio.to_thread(run.board, report)
    else:
        board = copy.copy(run.board)
        board.report = report
    if board.review is not None:  # persona's queue shows what people decided
        stored = decisions_of(request, domain).get("persona.1", {})
        queue = [{**r, **item_review(stored.get(r["turn_no"], {}))} for r in board.review[0]]
        board.review = (queue, *board.review[1:])
    bar = (nav(_crumbs(run, "board")) + f"<div class='admin-bar'>{run_links(run, 'board')}{other_runs(request, run, 'board')}</div>"
           + source_note(run))
    served = Served(nonce_of(request), nav=bar, item_href=lambda i: url(domain, "runs", key, "items", i),
                    rest=Rest(url(domain, "runs", key, "items")))
    html = render_board(board, served)
    html = html.replace("</head>", f"<link rel='stylesheet' href='{url('static', 'admin.css')}'></head>", 1)
    return HTMLResponse(html)


async def report_page(request: Request) -> Response:
    domain, key = request.path_params["domain"], request.path_params["run"]
    run = await shown_run(request, domain, key)
    report = filled_report(request, run)
    spec = run.spec
    item = lambda i: url(domain, "runs", key, "items", i)  # noqa: E731
    body = [f"<div class='admin-bar'>{run_links(run, 'report')}{other_runs(request, run, 'report')}</div>", source_note(run),
            f"<p class='scope'>범위 <code>{e(report.scope)}</code> · 판정 {report.judged_count}건</p>"]
    pins = pins_text(report.pins)
    if pins:
        body.append("<p class='pins' id='pins'>고정 입력 " + " · ".join(f"{e(what)} <code>{e(value)}</code>" for what, value in pins) + "</p>")
    if report.empty:
        body.append(f"<p class='empty-run' role='note'><b>{e(EMPTY_NOTICE)}</b></p>")
    if report.honesty:
        body.append("<section><h2>정직하게 밝혀 둘 점</h2><ul>" + "".join(f"<li>{e(h)}</li>" for h in report.honesty) + "</ul></section>")
    rows = []
    for n, m in enumerate(report.metrics):
        cases = [w for w in report.wrong_cases if m.name in (w.metrics or [w.metric])]
        drill = ""
        if m.status.startswith(PERSON) and m.key:
            drill = f"<a href='{e(url(domain, 'runs', key, 'review', m.key))}'>표본 검토</a>"
        elif cases:
            drill = f"<a href='#cases'>틀린 사례 {len(cases)}건</a>"
        basis = basis_of(domain, m)
        rows.append(f"<tr id='m-{n}' data-metric='{e(m.name)}'><td><b>{e(m.name)}</b><div class='def'>{e(m.definition)}"
                    + (f" · {e(m.note)}" if m.note else "") + f"</div></td><td class='num'>{e(m.value_text())}</td><td class='num'>{e(m.interval_text())}</td>"
                    f"<td>{e(m.criterion)}</td><td class='status'>{e(m.status)}</td>"
                    f"<td><b>{e(m.rests_on)}</b><div class='def'>{e(basis)}</div></td><td>{drill}</td></tr>")
    body.append("<section id='metrics'><h2>지표</h2><div class='wide'><table class='metrics'><thead><tr><th>지표</th><th>값 (분자 / 분모)</th>"
                "<th>95% Wilson</th><th>기준</th><th>판정</th><th>무엇에 기대나 · 한계</th><th>사례</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table></div></section>")
    steps = next_steps(report)
    body.append("<section id='next'><h2>다음 할 일</h2>" + ("<ol>" + "".join(f"<li>{e(s)}</li>" for s in steps) + "</ol>" if steps
                                                          else "<p>기준 미달·얇은 분모·실패한 검증·틀린 사례가 없습니다.</p>") + "</section>")
    body.append(_manual_section(run, report))
    if report.wrong_cases:
        groups = "".join(
            f"<h3>{e(step)} <span class='n'>{len(cases)}건</span></h3><ul>"
            + "".join(f"<li><a href='{e(item(w.id))}'><code>{e(w.id)}</code></a> 정답 {label_chip(w.gold, spec.order)} → 판정 {label_chip(w.predicted, spec.order)}"
                      + (f"<div class='def'>가른 값 <code>{e(values_text(w.values))}</code></div>" if w.values else "")
                      + f"<div class='def'>지표: {e(', '.join(w.metrics or [w.metric]))}</div></li>" for w in cases)
            + "</ul>" for step, cases in by_step(report.wrong_cases).items())
        body.append(f"<section id='cases' class='cases'><h2>틀린 사례 <span class='n'>{len(report.wrong_cases)}건 · 갈라진 단계별</span></h2>{groups}</section>")
    body.append(_side_by_side(run, item))
    if report.has_golden and report.gold:
        labels = label_order(report.gold, report.predicted, report.labels)
        matrix = report.confusion
        head = "".join(f"<th>{e(c)}</th>" for c in labels)
        cells = "".join(f"<tr><th>{e(g)}</th>" + "".join(f"<td class='num{' diag' if g == c else ''}'>{int(matrix.loc[g, c])}</td>" for c in labels) + "</tr>"
                        for g in labels)
        kappa = report.kappa
        pr = "".join(f"<tr><td>{e(k)}</td><td>{e(v['precision'].format())}</td><td>{e(v['recall'].format())}</td></tr>" for k, v in report.per_label.items())
        body.append(f"<section id='confusion'><h2>혼동 행렬 (행: 정답, 열: 판정)</h2><div class='wide'><table><thead><tr><th></th>{head}</tr></thead>"
                    f"<tbody>{cells}</tbody></table></div><p>Cohen's kappa {'—' if kappa is None else f'{kappa:.3f}'}</p>"
                    f"<table><thead><tr><th>판정</th><th>정밀도</th><th>재현율</th></tr></thead><tbody>{pr}</tbody></table></section>")
    checks = "".join(f"<li class='{'pass' if c.passed else 'fail'}'><span class='mark'>{e(check_result(report, c.passed))}</span> <code>{e(c.id)}</code> {e(c.title)}"
                     + ("" if c.passed else f"<div class='failing'>{e(c.detail)}</div>") + "</li>" for c in report.checks)
    vacuous = " (검사할 판정 없음)" if report.empty else ""
    body.append(f"<section id='checks'><h2>자동 검증 <span class='n'>{sum(c.passed for c in report.checks)} / {len(report.checks)} 통과{vacuous}</span></h2>"
                f"<ol class='checks'>{checks}</ol></section>")
    counts = "".join(f"<tr><td>{label_chip(k, spec.order)}</td><td class='num'>{v}</td></tr>" for k, v in report.verdict_counts.items())
    body.append(f"<section id='counts'><h2>판정 분포</h2><table><tbody>{counts}</tbody></table></section>")
    return page(request, f"{domain} 골든 일치 리포트 · {run.title}", "".join(body), _crumbs(run, "report"))


def _manual_section(run: Run | StoredRun, report) -> str:
    """The manual checks the seed defines: each one's sample, the team's progress and agreement, and links."""
    parts = []
    for key, title, lines in manual_lines(report):
        links = (f"<a href='{e(url(run.domain, 'runs', run.key, 'review', key))}'>표본 검토</a> · "
                 f"<a href='{e(url(run.domain, 'runs', run.key, 'review', key, 'decisions.csv'))}'>판단 CSV</a> · "
                 f"<a href='{e(url(run.domain, 'runs', run.key, 'review', key, 'decisions.json'))}'>JSON</a>")
        parts.append(f"<h3><code>{e(key)}</code> {e(title)}</h3><ul>" + "".join(f"<li>{e(x)}</li>" for x in lines) + f"</ul><p>{links}</p>")
    return "<section id='manual'><h2>수동 검증 · 사람이 봅니다</h2>" + ("".join(parts) or f"<p class='empty'>{e(NO_MANUAL)}</p>") + "</section>"


def labelled_pairs(run: Run | StoredRun) -> list[tuple[str, str, str]] | None:
    """(id, golden label, verdict) of the run's labelled items that were judged; None without golden labels.
    A stored day's are those its report paired (the golden file it read may since have gone)."""
    if isinstance(run, StoredRun):
        return run.labelled() if run.report.pins.get("golden") else None
    if not run.golden:
        return None
    spec = run.spec
    rows = rows_by_id(run.rows, spec.id_field)
    return [(g[spec.id_field], g[spec.verdict_key], label(rows[g[spec.id_field]].get(spec.verdict_key)))
            for g in run.golden if g.get(spec.id_field) in rows]


def _side_by_side(run: Run | StoredRun, item) -> str:
    """Golden label beside the verdict for every labelled item of the run."""
    pairs = labelled_pairs(run)
    if pairs is None:
        return "<section id='golden'><h2>정답 라벨과 판정</h2><p class='empty'>이 실행에는 골든 라벨 파일(golden.jsonl)이 없습니다.</p></section>"
    spec = run.spec
    pairs = sorted(pairs, key=lambda p: p[1] == p[2])  # differences first
    lines = "".join(
        f"<tr class='{'same' if gold == verdict else 'differs'}'><td><a href='{e(item(i))}'><code>{e(i)}</code></a></td>"
        f"<td>{label_chip(gold, spec.order)}</td><td>{label_chip(verdict, spec.order)}</td>"
        f"<td>{'같음' if gold == verdict else '다름'}</td></tr>"
        for i, gold, verdict in pairs[:1000])
    differ = sum(gold != verdict for _, gold, verdict in pairs)
    return (f"<section id='golden'><h2>정답 라벨과 판정 <span class='n'>라벨 {len(pairs)}건 · 다름 {differ}건</span></h2>"
            f"<details{' open' if len(pairs) <= 40 else ''}><summary>라벨 {len(pairs)}건 모두 보기 (다른 것이 위)</summary>"
            "<p><label><input type='checkbox' data-only-differs> 다른 것만 보기</label></p><div class='wide'><table class='pairs'>"
            f"<thead><tr><th>id</th><th>정답 라벨</th><th>규칙 판정</th><th></th></tr></thead><tbody>{lines}</tbody></table></div></details></section>")
