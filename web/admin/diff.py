"""Two runs of a domain side by side, as evaluation tools have it: per item regressed / improved /
changed against the baseline (a), a "different only" view with the regressions first (`?view=all`
lists every item), the metrics and checks that moved, and, at the top, what differs in the runs'
pinned inputs."""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from evals.board import e
from evals.diff import KIND_WORDS, diff_runs
from evals.diff_render import pct, tally_text
from web.admin.page import domain_crumbs, label_chip, page, ratio_cells, url
from web.admin.pages import filled_report, load_run
from web.admin.runs import valid_key

SHOWN = 500


async def diff_page(request: Request) -> Response:
    domain = request.path_params["domain"]
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    everything = request.query_params.get("view") == "all"
    if not (valid_key(a) and valid_key(b)):
        raise HTTPException(400, "choose two runs: ?a=<run>&b=<run> (all, day-YYYY-MM-DD, up-<id>)")
    run_a, run_b = await asyncio.gather(load_run(request, domain, a), load_run(request, domain, b))
    spec = run_a.spec
    d = diff_runs(run_a.rows, run_b.rows, filled_report(request, run_a), filled_report(request, run_b),
                  id_field=spec.id_field, verdict_key=spec.verdict_key, summary_field=spec.summary_field)
    item = lambda run, i: url(domain, "runs", run.key, "items", i)  # noqa: E731
    body = []
    if d.pins:
        body.append("<div class='error' role='alert' id='pins'><p><b>두 실행의 고정 입력이 다릅니다.</b> 아래 비교는 같은 잣대로 잰 것이 아닐 수 있습니다.</p><ul>"
                    + "".join(f"<li>{e(p)}</li>" for p in d.pins) + "</ul></div>")
    body += [f"<p class='lead'>기준 <a href='{e(url(domain, 'runs', a, 'board'))}'>{e(run_a.title)}</a> → 비교 "
             f"<a href='{e(url(domain, 'runs', b, 'board'))}'>{e(run_b.title)}</a> · "
             f"<a href='{e(url(domain, 'diff', a=b, b=a))}'>방향 바꾸기</a></p>",
             f"<p class='tally' id='tally'>{e(tally_text(d))}</p>"]
    if d.agreement is not None:
        a = d.agreement
        body.append(f"<p id='agreement'>판정 일치 (같은 라벨 항목 {a.pairs}건을 짝지어): {a.both + a.only_a} → {a.both + a.only_b} · "
                    f"퇴보 {a.only_a} · 개선 {a.only_b} · 차이 {e(pct(a.difference))}, 95% 구간 [{e(pct(a.interval[0]))}, {e(pct(a.interval[1]))}]"
                    f"<span class='def'> — {e(a.method)}</span></p>")
    items = sorted(d.items, key=lambda i: i.id) if everything else d.different()
    toggle = (f"<a href='{e(url(domain, 'diff', a=a, b=b))}'>다른 것만 보기</a>" if everything
              else f"<a href='{e(url(domain, 'diff', a=a, b=b, view='all'))}'>모든 항목 보기</a>")
    rows = "".join(
        f"<tr class='kind-{e(i.kind)}' data-kind='{e(i.kind)}'><td><span class='kind {e(i.kind)}'>{e(KIND_WORDS[i.kind])}</span></td>"
        f"<td><a href='{e(item(run_b if i.after is not None else run_a, i.id))}'><code>{e(i.id)}</code></a></td>"
        f"<td>{label_chip(i.gold, spec.order) if i.gold else '—'}{' <span class=n>라벨 바뀜</span>' if i.label_changed else ''}</td>"
        f"<td>{label_chip(i.before, spec.order) if i.before else '—'}</td><td>{label_chip(i.after, spec.order) if i.after else '—'}</td>"
        f"<td>{e(i.summary)}</td></tr>" for i in items[:SHOWN])
    more = f"<p class='more'>그 밖 {len(items) - SHOWN}건</p>" if len(items) > SHOWN else ""
    body.append(f"<section id='items'><h2>{'모든 항목' if everything else '다른 것만 (퇴보 먼저)'} <span class='n'>{len(items)}건</span> {toggle}</h2>"
                + (f"<div class='wide'><table><thead><tr><th>구분</th><th>id</th><th>정답</th><th>기준</th><th>비교</th><th>비교 요약</th></tr></thead>"
                   f"<tbody>{rows}</tbody></table></div>{more}" if items else "<p class='empty'>달라진 항목이 없습니다.</p>") + "</section>")
    metric_rows = []
    for m in d.metrics:
        va, ia = ratio_cells(m.before)
        vb, ib = ratio_cells(m.after)
        if m.census:
            ia = ib = interval = "표본 아님 (전수)"
        else:
            interval = f"[{pct(m.interval[0])}, {pct(m.interval[1])}]" if m.interval else "—"
        metric_rows.append(f"<tr class='{'moved' if m.moved else ''}'><td>{e(m.name)}</td><td class='num'>{e(va)}<div class='def'>{e(ia)}</div></td>"
                           f"<td class='num'>{e(vb)}<div class='def'>{e(ib)}</div></td><td class='num'>{e(pct(m.difference))}</td><td class='num'>{e(interval)}</td></tr>")
    body.append("<section id='metrics'><h2>지표의 움직임</h2><div class='wide'><table><thead><tr><th>지표</th><th>기준 (95% Wilson)</th>"
                "<th>비교 (95% Wilson)</th><th>차이</th><th>차이의 95% Newcombe 구간 (독립 표본)</th></tr></thead>"
                f"<tbody>{''.join(metric_rows)}</tbody></table></div></section>")
    counts = "".join(f"<tr><td>{label_chip(v, spec.order)}</td><td class='num'>{x}</td><td class='num'>{y}</td><td class='num'>{y - x:+d}</td></tr>"
                     for v, x, y in d.counts)
    body.append("<section id='counts'><h2>판정 분포</h2><table><thead><tr><th>판정</th><th>기준</th><th>비교</th><th>차이</th></tr></thead>"
                f"<tbody>{counts}</tbody></table></section>")
    word = {True: "통과", False: "실패", None: "—"}
    checks = "".join(f"<tr class='{'moved' if x != y else ''}'><td><code>{e(cid)}</code> {e(title)}</td><td>{word[x]}</td><td>{word[y]}</td></tr>"
                     for cid, title, x, y in d.checks)
    body.append("<section id='checks'><h2>자동 검증</h2><table><thead><tr><th>검증</th><th>기준</th><th>비교</th></tr></thead>"
                f"<tbody>{checks}</tbody></table></section>")
    crumbs = domain_crumbs(domain, (f"비교 {run_a.title} → {run_b.title}", None))
    return page(request, f"{domain} 실행 비교", "".join(body), crumbs)
