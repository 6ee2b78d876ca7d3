"""Two runs of a domain side by side: items whose verdict changed, items only in one, and metrics moved."""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from evals.board import e
from evals.diff import diff_runs
from orchestration.web.admin.page import domain_crumbs, label_chip, page, ratio_cells, url
from orchestration.web.admin.pages import filled_report, load_run
from orchestration.web.admin.runs import RUN_KEY


def _pct(x) -> str:
    return "—" if x is None else f"{x * 100:+.1f}%p"


async def diff_page(request: Request) -> Response:
    domain = request.path_params["domain"]
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    if not (RUN_KEY.match(a) and RUN_KEY.match(b)):
        raise HTTPException(400, "choose two runs: ?a=<run>&b=<run> (all, day-YYYY-MM-DD, up-<id>)")
    run_a, run_b = await asyncio.gather(load_run(request, domain, a), load_run(request, domain, b))
    spec = run_a.spec
    d = diff_runs(run_a.rows, run_b.rows, filled_report(request, run_a), filled_report(request, run_b),
                  id_field=spec.id_field, verdict_key=spec.verdict_key, summary_field=spec.summary_field)
    item = lambda run, i: url(domain, "runs", run.key, "items", i)  # noqa: E731
    body = [f"<p class='lead'>이전 <a href='{e(url(domain, 'runs', a, 'board'))}'>{e(run_a.title)}</a> → 이후 "
            f"<a href='{e(url(domain, 'runs', b, 'board'))}'>{e(run_b.title)}</a> · "
            f"<a href='{e(url(domain, 'diff', a=b, b=a))}'>방향 바꾸기</a></p>",
            f"<p class='tally'>같은 id {len(d.changed) + d.unchanged}건 가운데 판정이 바뀐 항목 {len(d.changed)}건 · 그대로 {d.unchanged}건 · "
            f"이전에만 {len(d.only_before)}건 · 이후에만 {len(d.only_after)}건</p>"]
    changed = "".join(
        f"<tr><td><a href='{e(item(run_b, c.id))}'><code>{e(c.id)}</code></a></td><td>{label_chip(c.before, spec.order)}</td>"
        f"<td>{label_chip(c.after, spec.order)}</td><td>{e(c.summary)}</td></tr>" for c in d.changed[:500])
    body.append(f"<section id='changed'><h2>판정이 바뀐 항목 <span class='n'>{len(d.changed)}건</span></h2>"
                + (f"<table><thead><tr><th>id</th><th>이전</th><th>이후</th><th>이후 요약</th></tr></thead><tbody>{changed}</tbody></table>"
                   if d.changed else "<p class='empty'>없습니다.</p>") + "</section>")
    rows = []
    for m in d.metrics:
        va, ia = ratio_cells(m.before)
        vb, ib = ratio_cells(m.after)
        interval = f"[{_pct(m.interval[0])}, {_pct(m.interval[1])}]" if m.interval else "—"
        rows.append(f"<tr class='{'moved' if m.moved else ''}'><td>{e(m.name)}</td><td class='num'>{e(va)}<div class='def'>{e(ia)}</div></td>"
                    f"<td class='num'>{e(vb)}<div class='def'>{e(ib)}</div></td><td class='num'>{e(_pct(m.difference))}</td><td class='num'>{e(interval)}</td></tr>")
    body.append("<section id='metrics'><h2>지표의 움직임</h2><div class='wide'><table><thead><tr><th>지표</th><th>이전 (95% Wilson)</th>"
                "<th>이후 (95% Wilson)</th><th>차이</th><th>차이의 95% Newcombe 구간</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table></div></section>")
    counts = "".join(f"<tr><td>{label_chip(v, spec.order)}</td><td class='num'>{x}</td><td class='num'>{y}</td><td class='num'>{y - x:+d}</td></tr>"
                     for v, x, y in d.counts)
    body.append("<section id='counts'><h2>판정 분포</h2><table><thead><tr><th>판정</th><th>이전</th><th>이후</th><th>차이</th></tr></thead>"
                f"<tbody>{counts}</tbody></table></section>")
    word = {True: "통과", False: "실패", None: "—"}
    checks = "".join(f"<tr class='{'moved' if x != y else ''}'><td><code>{e(cid)}</code> {e(title)}</td><td>{word[x]}</td><td>{word[y]}</td></tr>"
                     for cid, title, x, y in d.checks)
    body.append("<section id='checks'><h2>자동 검증</h2><table><thead><tr><th>검증</th><th>이전</th><th>이후</th></tr></thead>"
                f"<tbody>{checks}</tbody></table></section>")
    for title, items, run in (("이전에만 있는 항목", d.only_before, run_a), ("이후에만 있는 항목", d.only_after, run_b)):
        lis = "".join(f"<li><a href='{e(item(run, i))}'><code>{e(i)}</code></a> {label_chip(v, spec.order)}</li>" for i, v in items[:200])
        more = f"<p class='more'>그 밖 {len(items) - 200}건</p>" if len(items) > 200 else ""
        body.append(f"<section><h2>{title} <span class='n'>{len(items)}건</span></h2><ul class='compact'>{lis}</ul>{more}</section>")
    crumbs = domain_crumbs(domain, (f"비교 {run_a.title} → {run_b.title}", None))
    return page(request, f"{domain} 실행 비교", "".join(body), crumbs)
