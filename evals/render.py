"""Rendering a `Report` as Markdown (Dagster UI metadata, files) or a self-contained HTML page.

Every piece of text that came from logs is escaped: Markdown table cells lose their pipes
and line breaks, and angle brackets become entities in both forms.
"""

from __future__ import annotations

import html
import json

from evals import csp
from evals.fidelity import basis_of, next_steps
from evals.markdown import md_cell
from evals.report import Report
from evals.stats import label_order


def _ratio_cells(m) -> tuple[str, str]:
    if m.ratio is None:
        return "—", "—"
    return m.ratio.format(), m.ratio.format_interval()


def render_markdown(report: Report) -> str:
    out = [f"# {md_cell(report.title)}", "", f"범위: `{md_cell(report.scope)}`", ""]
    out += [f"> ⚠️ **데이터 품질 실패** {md_cell(w)}" for w in report.warnings] + ([""] if report.warnings else [])
    if report.honesty:
        out += ["**정직하게 밝혀 둘 점**", ""] + [f"- {md_cell(h)}" for h in report.honesty] + [""]

    if not report.verdict_counts_total:
        out += ["**이 범위에는 판정한 항목이 없습니다.** 자동 검증은 검사할 판정이 없어 통과로 나오고, 격리 수치는 날마다 다시 읽는 기준 데이터의 행입니다.", ""]
    out += ["## 지표", "", "| 지표 | 값 (분자 / 분모) | 95% Wilson 구간 | 기준 | 판정 | 근거 · 한계 |", "|---|---|---|---|---|---|"]
    for m in report.metrics:
        value, interval = _ratio_cells(m)
        name = f"**{md_cell(m.name)}** {md_cell(m.definition)}" + (f" · {md_cell(m.note)}" if m.note else "")
        basis = f"{md_cell(m.rests_on)} · {md_cell(basis_of(report.domain, m))}"
        out.append(f"| {name} | {value} | {interval} | {md_cell(m.criterion)} | {md_cell(m.status)} | {basis} |")
    out.append("")
    steps = next_steps(report, has_rows=bool(report.verdict_counts_total))
    out += ["## 다음 할 일", ""] + ([f"{i}. {md_cell(x)}" for i, x in enumerate(steps, start=1)] or ["기준 미달·얇은 분모·실패한 검증이 없습니다."]) + [""]

    out += ["## 판정 분포", "", "| 판정 | 줄 수 |", "|---|---|"]
    out += [f"| {md_cell(k)} | {v} |" for k, v in report.verdict_counts.items()] + [""]

    out += ["## 자동 검증", "", "| 검증 | 결과 | 실패한 id |", "|---|---|---|"]
    for c in report.checks:
        ids = ", ".join(c.failing_ids[:10]) + (f" 외 {len(c.failing_ids) - 10}건" if len(c.failing_ids) > 10 else "")
        out.append(f"| `{md_cell(c.id)}` {md_cell(c.title)} | {'✅ 통과' if c.passed else '❌ 실패'} | {md_cell(ids) or '—'} |")
    out.append("")

    if report.has_golden and report.gold:
        labels = label_order(report.gold, report.predicted, report.labels)
        matrix = report.confusion
        out += ["## 혼동 행렬 (행: 정답, 열: 판정)", "", "| 정답 \\ 판정 | " + " | ".join(md_cell(l) for l in labels) + " |",
                "|---|" + "---|" * len(labels)]
        for label in labels:
            out.append(f"| {md_cell(label)} | " + " | ".join(str(int(matrix.loc[label, c])) for c in labels) + " |")
        kappa = report.kappa
        out += ["", f"Cohen's kappa: {'—' if kappa is None else f'{kappa:.3f}'}", ""]
        out += ["| 판정 | 정밀도 | 재현율 |", "|---|---|---|"]
        for label, pr in report.per_label.items():
            out.append(f"| {md_cell(label)} | {pr['precision'].format()} | {pr['recall'].format()} |")
        out.append("")
        out += ["## 틀린 사례", ""]
        if not report.wrong_cases:
            out += ["없습니다.", ""]
        by_metric: dict[str, list] = {}
        for w in report.wrong_cases:
            by_metric.setdefault(w.metric, []).append(w)
        for metric, cases in by_metric.items():
            out += [f"**{md_cell(metric)}** · {len(cases)}건", ""]
            for w in cases:
                out.append(f"- `{md_cell(w.id)}` — 정답 {md_cell(w.gold)} / 판정 {md_cell(w.predicted)} · 갈라진 단계: {md_cell(w.step)}")
            out.append("")
    elif not report.has_golden:
        out += ["## 골든 일치", "", "이 범위에는 골든 라벨이 없어 일치율을 재지 않았습니다.", ""]

    if report.golden_not_judged:
        out += ["## 판정하지 못한 골든 줄", ""]
        out += [f"- `{md_cell(g['id'])}` — {md_cell(g['reason'])}" for g in report.golden_not_judged] + [""]

    if report.excluded:
        out += [f"## 판정에서 뺀 항목 (분모 밖) · {len(report.excluded)}건", "", "| id | 코드 | 사유 |", "|---|---|---|"]
        out += [f"| `{md_cell(x['id'])}` | {md_cell(x['code'])} | {md_cell(x['reason'])} |" for x in report.excluded] + [""]

    for heading, body in report.extra_sections:
        out += [f"## {md_cell(heading)}", "", body, ""]

    out += ["## 격리된 행", ""]
    if report.reconciliation:
        out += ["| 데이터셋 | 원본 | 정규화 | 격리 | 맞음 |", "|---|---|---|---|---|"]
        for name, r in report.reconciliation.items():
            out.append(f"| {md_cell(name)} | {r['raw']} | {r['normalised']} | {r['quarantined']} | {'✅' if r['reconciles'] else '❌'} |")
        out.append("")
    if report.quarantine is not None and not report.quarantine.empty:
        out += ["| 데이터셋 | 줄 | id | 사유 코드 | 사유 |", "|---|---|---|---|---|"]
        for r in report.quarantine.itertuples(index=False):
            out.append(f"| {md_cell(r.dataset)} | {r.line} | {md_cell(r.id) or '—'} | `{md_cell(r.reason_code)}` | {md_cell(r.reason)} |")
    else:
        out.append("격리된 행이 없습니다.")
    out.append("")
    return "\n".join(out)


def script_json(data) -> str:
    """JSON safe inside a <script> element: script text is raw, so escape instead of entities."""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


_CSS = """
body{font-family:system-ui,'Noto Sans KR',sans-serif;margin:2rem;color:#1d1d1f;max-width:72rem}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f3f3f5}.pass{color:#0a7d2c}.fail{color:#b3261e;font-weight:600}code{background:#f3f3f5;padding:0 .2rem}
"""


def render_html(report: Report) -> str:
    """A self-contained page (inline CSS, no scripts or fetches) with the same content."""
    e = lambda v: html.escape("" if v is None else str(v))  # noqa: E731
    parts = [f"<!doctype html><html lang='ko'><head><meta charset='utf-8'>{csp.meta(styles=(_CSS,))}<title>{e(report.title)}</title>",
             f"<style>{_CSS}</style></head><body>", f"<h1>{e(report.title)}</h1><p>범위: <code>{e(report.scope)}</code></p>"]
    parts += [f"<p class='fail' role='alert'>데이터 품질 실패: {e(w)}</p>" for w in report.warnings]
    if report.honesty:
        parts.append("<h2>정직하게 밝혀 둘 점</h2><ul>" + "".join(f"<li>{e(h)}</li>" for h in report.honesty) + "</ul>")
    parts.append("<h2>지표</h2><table><tr><th>지표</th><th>값 (분자 / 분모)</th><th>95% Wilson 구간</th><th>기준</th><th>판정</th><th>근거 · 한계</th></tr>")
    for m in report.metrics:
        value, interval = _ratio_cells(m)
        parts.append(f"<tr><td><b>{e(m.name)}</b> {e(m.definition)} {e(m.note)}</td><td>{e(value)}</td><td>{e(interval)}</td>"
                     f"<td>{e(m.criterion)}</td><td>{e(m.status)}</td><td><b>{e(m.rests_on)}</b> {e(basis_of(report.domain, m))}</td></tr>")
    steps = next_steps(report, has_rows=bool(report.verdict_counts_total))
    parts.append("</table><h2>다음 할 일</h2>" + ("<ol>" + "".join(f"<li>{e(x)}</li>" for x in steps) + "</ol>" if steps else "<p>없습니다.</p>"))
    parts.append("<h2>자동 검증</h2><table><tr><th>검증</th><th>결과</th><th>실패한 id</th></tr>")
    for c in report.checks:
        cls, word = ("pass", "통과") if c.passed else ("fail", "실패")
        parts.append(f"<tr><td><code>{e(c.id)}</code> {e(c.title)}</td><td class='{cls}'>{word}</td><td>{e(', '.join(c.failing_ids))}</td></tr>")
    parts.append("</table>")
    if report.wrong_cases:
        parts.append("<h2>틀린 사례</h2><ul>")
        for w in report.wrong_cases:
            parts.append(f"<li>{e(w.metric)} · <code>{e(w.id)}</code> — 정답 {e(w.gold)} / 판정 {e(w.predicted)} · 갈라진 단계: {e(w.step)}</li>")
        parts.append("</ul>")
    if report.excluded:
        parts.append("<h2>판정에서 뺀 항목 (분모 밖)</h2><table><tr><th>id</th><th>코드</th><th>사유</th></tr>")
        parts += [f"<tr><td>{e(x['id'])}</td><td>{e(x['code'])}</td><td>{e(x['reason'])}</td></tr>" for x in report.excluded]
        parts.append("</table>")
    for heading, body in report.extra_sections:
        parts.append(f"<h2>{e(heading)}</h2><pre>{e(body)}</pre>")
    if report.quarantine is not None and not report.quarantine.empty:
        parts.append("<h2>격리된 행</h2><table><tr><th>데이터셋</th><th>줄</th><th>id</th><th>사유</th></tr>")
        for r in report.quarantine.itertuples(index=False):
            parts.append(f"<tr><td>{e(r.dataset)}</td><td>{e(r.line)}</td><td>{e(r.id)}</td><td><code>{e(r.reason_code)}</code> {e(r.reason)}</td></tr>")
        parts.append("</table>")
    parts.append(f"<script type='application/json' id='report-data'>{script_json(report.to_dict())}</script>")
    parts.append("</body></html>")
    return "".join(parts)
