"""One item: its verdict, the evidence with the source file and line of every cited row, the
golden label beside the verdict, the manual checks it is sampled for, and the transcript around it."""

from __future__ import annotations

from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from evals.board import e
from evals.domains import get as get_domain
from evals.manual_checks import DECISION_WORDS, checks_of, item_review
from evals.report import label
from evals.trace import cited_rows, transcript
from web.admin.page import cell, domain_crumbs, label_chip, page, url
from web.admin.pages import decisions_of, load_run


def _where(file, line) -> str:
    if not file:
        return "<span class='null'>—</span>"
    return f"<code>{e(Path(str(file)).name)}</code>:{e(line) if line is not None else '?'}"


async def item_page(request: Request) -> Response:
    domain, key, item_id = request.path_params["domain"], request.path_params["run"], request.path_params["item"]
    run = await load_run(request, domain, key)
    spec = run.spec
    row = run.by_id.get(item_id)
    if row is None:
        raise HTTPException(404, f"{item_id}: no such item in this run")
    verdict = label(row.get(spec.verdict_key))
    body = [f"<p class='verdict'>{label_chip(verdict, spec.order)} <code class='id'>{e(item_id)}</code> {e(row.get(spec.summary_field))}</p>"]
    if row.get("hedge"):
        body.append(f"<p class='hedge'><b>데이터가 정하지 못하는 점</b> {e(row['hedge'])}</p>")
    gold = next((g[spec.verdict_key] for g in run.golden or [] if g.get(spec.id_field) == item_id), None)
    if gold is not None:
        body.append("<table class='pairs'><thead><tr><th>정답 라벨</th><th>규칙 판정</th></tr></thead>"
                    f"<tbody><tr class='{'same' if gold == verdict else 'differs'}'><td>{label_chip(gold, spec.order)}</td>"
                    f"<td>{label_chip(verdict, spec.order)}</td></tr></tbody></table>")
    skip = {spec.verdict_key, spec.id_field, spec.summary_field, "hedge", "evidence"}
    fields = "".join(f"<div><dt>{e(k)}</dt><dd>{cell(v)}</dd></div>" for k, v in row.items() if k not in skip)
    body.append(f"<dl class='fields'>{fields}</dl>")
    cited = cited_rows(get_domain(domain), row, run.tables)
    ev = "".join(
        f"<tr><td>{e(c.dataset)}</td><td><code>{e(c.field)}</code></td><td class='val'>{cell(c.value)}</td><td>{e(c.agg or '')}</td>"
        f"<td>{_where(c.file, c.line)}</td><td>{e(c.row_id or '')}</td><td class='note'>{e(c.note)}</td></tr>" for c in cited)
    body.append("<section id='evidence'><h2>근거와 출처 행</h2><table class='evidence'><thead><tr><th>데이터셋</th><th>field</th><th>value</th>"
                f"<th>agg</th><th>파일:줄</th><th>행 id</th><th></th></tr></thead><tbody>{ev}</tbody></table></section>")
    sampled = [c for c in checks_of(domain) if item_id in run.samples.get(c.key, [])]
    if sampled:
        stored = decisions_of(request, domain)
        lis = "".join(
            f"<li><a href='{e(url(domain, 'runs', key, 'review', c.key))}#r-{e(item_id)}'><code>{e(c.key)}</code> {e(c.title)}</a> — "
            f"{_decided(stored.get(c.key, {}).get(item_id, {}))}</li>" for c in sampled)
        body.append(f"<section id='manual'><h2>수동 검증 표본</h2><ul>{lis}</ul></section>")
    verdicts = {i: label(r.get(spec.verdict_key)) for i, r in run.by_id.items()}
    t = transcript(get_domain(domain), row, run.tables, verdicts)
    if t.rows:
        head = "".join(f"<th>{e(c)}</th>" for c in t.columns)
        lines = "".join(
            f"<tr class='{'focus' if r['_focus'] else ''}'><td>{_where(r['file'], r['line'])}</td>"
            + "".join(f"<td>{cell(r.get(c))}</td>" for c in t.columns)
            + f"<td>{_verdict_link(run, r['_id'], t.verdicts, spec.order)}</td></tr>" for r in t.rows)
        body.append(f"<section id='transcript'><h2>{e(t.title)}</h2><div class='wide'><table class='transcript'><thead><tr><th>파일:줄</th>{head}"
                    f"<th>판정</th></tr></thead><tbody>{lines}</tbody></table></div></section>")
    else:
        body.append("<section id='transcript'><h2>대화 흐름</h2><p class='empty'>이 항목 주변의 입력 행을 찾지 못했습니다.</p></section>")
    crumbs = domain_crumbs(domain, (run.title, url(domain, "runs", key, "board")), (item_id, None))
    return page(request, f"{domain} · {item_id}", "".join(body), crumbs)


def _decided(votes: dict) -> str:
    """The item's majority, and who decided what."""
    review = item_review(votes)
    if not votes:
        return "판단 전"
    who = ", ".join(f"{e(r)} {e(DECISION_WORDS.get(v['decision'], ''))}" for r, v in review["decisions"].items())
    return f"{e(DECISION_WORDS.get(review['reviewer_decision'], '판단 전'))} ({who})"


def _verdict_link(run, item_id, verdicts: dict, order) -> str:
    if item_id not in verdicts:
        return ""
    return f"<a href='{e(url(run.domain, 'runs', run.key, 'items', item_id))}'>{label_chip(verdicts[item_id], order)}</a>"
