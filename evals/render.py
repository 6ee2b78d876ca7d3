"""Rendering a `Report` as Markdown (Dagster UI metadata, files) or a self-contained HTML page.

Every piece of text that came from logs is escaped: Markdown table cells lose their pipes
and line breaks, and angle brackets become entities in both forms.
"""

from __future__ import annotations

import html
import json

from evals import csp
from evals.fidelity import basis_of
from evals.manual_checks import checks_of, reviewer_lines
from evals.markdown import md_cell
from evals.next_steps import next_steps
from evals.pins import pins_text
from evals.report import Report, by_step, values_text
from evals.stats import label_order

EMPTY_NOTICE = ("이 범위에는 판정한 항목이 없습니다. 기준 판정은 내리지 않았고, 자동 검증은 검사할 판정이 없어 확인한 것이 없습니다. "
                "격리 수치는 날마다 다시 읽는 기준 데이터의 행입니다.")
NO_MANUAL = "이 도메인의 시드는 수동 검증(사람이 보는 항목)을 정하지 않았습니다."


def check_result(report: Report, passed: bool) -> str:
    """A check's result in words; on an empty scope a pass checked nothing and says so."""
    if not passed:
        return "❌ 실패"
    return "— 검사할 판정 없음" if report.empty else "✅ 통과"


def manual_lines(report: Report) -> list[tuple[str, str, list[str]]]:
    """Per manual check the seed defines: (key, title, lines on its sample, decisions and reviewers)."""
    team = dict(reviewer_lines(report))
    out = []
    for c in checks_of(report.domain):
        m = next((x for x in report.metrics if x.key == c.key), None)
        lines = [f"{m.status} — {m.note}" if m else "이 리포트에는 이 검증의 행이 없습니다."]
        if m is not None and m.ratio is not None:
            lines.append(f"동의 {m.ratio.format()} · 95% Wilson {m.interval_text()}")
        lines += team.get(c.key, [])
        out.append((c.key, c.title, lines))
    return out


def render_markdown(report: Report) -> str:
    out = [f"# {md_cell(report.title)}", "", f"범위: `{md_cell(report.scope)}`", ""]
    pins = pins_text(report.pins)
    if pins:
        out += ["고정 입력: " + " · ".join(f"{what} {md_cell(value)}" for what, value in pins), ""]
    out += [f"> ⚠️ **데이터 품질 실패** {md_cell(w)}" for w in report.warnings] + ([""] if report.warnings else [])
    if report.honesty:
        out += ["**정직하게 밝혀 둘 점**", ""] + [f"- {md_cell(h)}" for h in report.honesty] + [""]

    if report.empty:
        out += [f"**{EMPTY_NOTICE}**", ""]
    out += ["## 지표", "", "| 지표 | 값 (분자 / 분모) | 95% Wilson 구간 | 기준 | 판정 | 근거 · 한계 |", "|---|---|---|---|---|---|"]
    for m in report.metrics:
        name = f"**{md_cell(m.name)}** {md_cell(m.definition)}" + (f" · {md_cell(m.note)}" if m.note else "")
        basis = f"{md_cell(m.rests_on)} · {md_cell(basis_of(report.domain, m))}"
        out.append(f"| {name} | {md_cell(m.value_text())} | {md_cell(m.interval_text())} | {md_cell(m.criterion)} | {md_cell(m.status)} | {basis} |")
    out.append("")
    steps = next_steps(report)
    out += ["## 다음 할 일", ""] + ([f"{i}. {md_cell(x)}" for i, x in enumerate(steps, start=1)] or ["기준 미달·얇은 분모·실패한 검증·틀린 사례가 없습니다."]) + [""]

    out += ["## 판정 분포", "", "| 판정 | 줄 수 |", "|---|---|"]
    out += [f"| {md_cell(k)} | {v} |" for k, v in report.verdict_counts.items()] + [""]

    out += ["## 자동 검증", "", "| 검증 | 결과 | 실패한 id |", "|---|---|---|"]
    for c in report.checks:
        ids = ", ".join(c.failing_ids[:10]) + (f" 외 {len(c.failing_ids) - 10}건" if len(c.failing_ids) > 10 else "")
        out.append(f"| `{md_cell(c.id)}` {md_cell(c.title)} | {check_result(report, c.passed)} | {md_cell(ids) or '—'} |")
    out.append("")

    out += ["## 수동 검증 · 사람이 봅니다", ""]
    manual = manual_lines(report)
    for key, title, lines in manual:
        out += [f"**`{md_cell(key)}`** {md_cell(title)}", ""] + [f"- {md_cell(x)}" for x in lines] + [""]
    if not manual:
        out += [NO_MANUAL, ""]

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
        out += [f"## 틀린 사례 · {len(report.wrong_cases)}건 (갈라진 단계별)", ""]
        if not report.wrong_cases:
            out += ["없습니다.", ""]
        for step, cases in by_step(report.wrong_cases).items():
            out += [f"**{md_cell(step)}** · {len(cases)}건", ""]
            for w in cases:
                values = f" · 값: {md_cell(values_text(w.values))}" if w.values else ""
                out.append(f"- `{md_cell(w.id)}` — 정답 {md_cell(w.gold)} / 판정 {md_cell(w.predicted)}{values}"
                           f" · 지표: {md_cell(', '.join(w.metrics or [w.metric]))}" + (f" · {md_cell(w.summary)}" if w.summary else ""))
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
.pins{color:#555}.empty-run{padding:.5rem .8rem;background:#fff7d6;border:1px solid #e8c84a}
"""


def render_html(report: Report) -> str:
    """A self-contained page (inline CSS, no scripts or fetches) with the same content."""
    e = lambda v: html.escape("" if v is None else str(v))  # noqa: E731
    parts = [f"<!doctype html><html lang='ko'><head><meta charset='utf-8'>{csp.meta(styles=(_CSS,))}<title>{e(report.title)}</title>",
             f"<style>{_CSS}</style></head><body>", f"<h1>{e(report.title)}</h1><p>범위: <code>{e(report.scope)}</code></p>"]
    pins = pins_text(report.pins)
    if pins:
        parts.append("<p class='pins' id='pins'>고정 입력: " + " · ".join(f"{e(what)} <code>{e(value)}</code>" for what, value in pins) + "</p>")
    parts += [f"<p class='fail' role='alert'>데이터 품질 실패: {e(w)}</p>" for w in report.warnings]
    if report.honesty:
        parts.append("<h2>정직하게 밝혀 둘 점</h2><ul>" + "".join(f"<li>{e(h)}</li>" for h in report.honesty) + "</ul>")
    if report.empty:
        parts.append(f"<p class='empty-run' role='note'><b>{e(EMPTY_NOTICE)}</b></p>")
    parts.append("<h2>지표</h2><table><tr><th>지표</th><th>값 (분자 / 분모)</th><th>95% Wilson 구간</th><th>기준</th><th>판정</th><th>근거 · 한계</th></tr>")
    for m in report.metrics:
        parts.append(f"<tr><td><b>{e(m.name)}</b> {e(m.definition)} {e(m.note)}</td><td>{e(m.value_text())}</td><td>{e(m.interval_text())}</td>"
                     f"<td>{e(m.criterion)}</td><td>{e(m.status)}</td><td><b>{e(m.rests_on)}</b> {e(basis_of(report.domain, m))}</td></tr>")
    steps = next_steps(report)
    parts.append("</table><h2>다음 할 일</h2>" + ("<ol>" + "".join(f"<li>{e(x)}</li>" for x in steps) + "</ol>" if steps else "<p>없습니다.</p>"))
    parts.append("<h2>자동 검증</h2><table><tr><th>검증</th><th>결과</th><th>실패한 id</th></tr>")
    for c in report.checks:
        cls = "pass" if c.passed else "fail"
        parts.append(f"<tr><td><code>{e(c.id)}</code> {e(c.title)}</td><td class='{cls}'>{e(check_result(report, c.passed))}</td>"
                     f"<td>{e(', '.join(c.failing_ids))}</td></tr>")
    parts.append("</table><h2>수동 검증 · 사람이 봅니다</h2>")
    manual = manual_lines(report)
    parts += [f"<h3><code>{e(key)}</code> {e(title)}</h3><ul>" + "".join(f"<li>{e(x)}</li>" for x in lines) + "</ul>" for key, title, lines in manual]
    if not manual:
        parts.append(f"<p>{e(NO_MANUAL)}</p>")
    if report.wrong_cases:
        parts.append(f"<h2>틀린 사례 · {len(report.wrong_cases)}건 (갈라진 단계별)</h2>")
        for step, cases in by_step(report.wrong_cases).items():
            parts.append(f"<h3>{e(step)} · {len(cases)}건</h3><ul>")
            parts += [f"<li><code>{e(w.id)}</code> — 정답 {e(w.gold)} / 판정 {e(w.predicted)}"
                      + (f" · 값: <code>{e(values_text(w.values))}</code>" if w.values else "")
                      + f" · 지표: {e(', '.join(w.metrics or [w.metric]))}" + (f" · {e(w.summary)}" if w.summary else "") + "</li>" for w in cases]
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
