"""The next steps a report's own figures call for, most pressing first.

Every sentence is written from this run's numbers and rows: a failed check with its ids, a
criterion missed with its wrong cases, each rule step where cases diverged with the values that
decided it and what governs that step, a thin golden denominator (only for figures that rest on
labels), labelled items not judged, quarantined rows by reason with where they are, the manual
checks' progress with the items still open. Nothing is said that the figures do not show.
"""

from __future__ import annotations

from collections import Counter

from evals.report import MET, NO_DATA, NOT_MET, PERSON, Report, by_step, values_text

THIN = 10
"""Below this many labels a criterion's verdict rests on too few items to read as a rate."""
SHOWN = 5
"""Ids named per sentence; the rest are counted."""
LOW_KAPPA = 0.4
"""Below this (fair or worse, Landis & Koch) two reviewers read the check differently."""


def _ids(ids: list[str]) -> str:
    more = f" 외 {len(ids) - SHOWN}건" if len(ids) > SHOWN else ""
    return ", ".join(ids[:SHOWN]) + more


def next_steps(report: Report, has_rows: bool | None = None) -> list[str]:
    empty = report.empty if has_rows is None else not has_rows
    out: list[str] = []
    rec = report.reconciliation
    if empty:
        raw = ", ".join(f"{k} 원본 {r['raw']}줄(격리 {r['quarantined']})" for k, r in rec.items())
        out.append("이 범위에는 판정한 항목이 없습니다" + (f" ({raw})" if raw else "")
                   + ". 이 범위의 입력이 들어왔는지, 파티션 날짜와 입력의 시각대가 맞는지부터 봅니다. 기준 판정은 내리지 않았습니다.")
    for c in report.checks:
        if not c.passed:
            out.append(f"자동 검증 {c.id}({c.title})가 실패했습니다" + (f": {c.detail}" if c.detail else "")
                       + (f" (걸린 id {len(c.failing_ids)}건: {_ids(c.failing_ids)})" if c.failing_ids else "")
                       + ". 원인을 고치기 전에는 이 범위의 수치를 믿지 않습니다.")
    for name, r in rec.items():
        if not r["reconciles"]:
            out.append(f"{name}: 원본 {r['raw']}줄 ≠ 정규화 {r['normalised']} + 격리 {r['quarantined']}. 행이 조용히 사라졌는지 먼저 확인합니다.")
    steps = by_step(report.wrong_cases)
    for m in report.metrics:
        # A census missing its criterion is the failed checks, each named above.
        if m.status == NOT_MET and m.ratio is not None and not m.census:
            cases = [w for w in report.wrong_cases if m.name in (w.metrics or [w.metric])]
            where = ", ".join(f"{step} {n}건" for step, n in Counter(w.step for w in cases).most_common())
            out.append(f"{m.name} {m.ratio.format()}가 기준({m.criterion})에 못 미칩니다."
                       + (f" 틀린 사례 {len(cases)}건이 갈라진 단계: {where}." if cases else ""))
    for step, cases in steps.items():
        first = cases[0]
        shown = f" 예: {first.id}(정답 {first.gold}, 판정 {first.predicted}" + (f"; {values_text(first.values)}" if first.values else "") + ")"
        hint = report.step_hints.get(step, "")
        out.append(f"{step}에서 {len(cases)}건이 갈라졌습니다: {_ids([w.id for w in cases])}.{shown}." + (f" {hint}" if hint else ""))
    for m in report.metrics:
        if m.census or m.ratio is None:
            continue
        if m.status in (MET, NOT_MET) and 0 < m.ratio.denominator < THIN:
            out.append(f"{m.name}의 분모 {m.ratio.denominator}건은 라벨과 판정이 모두 있는 항목 수입니다. "
                       f"기준 판정({m.status})을 믿으려면 라벨을 {THIN - m.ratio.denominator}건 이상 더 모읍니다.")
    for m in report.metrics:
        if m.status == NO_DATA:
            out.append(f"{m.name}의 분모가 0입니다 ({m.definition}). 이 범위에는 그 분모에 드는 항목이 없습니다.")
    if report.golden_not_judged:
        reasons = Counter(g["reason"] for g in report.golden_not_judged)
        out.append(f"라벨이 있는데 판정하지 못한 항목 {len(report.golden_not_judged)}건({_ids([g['id'] for g in report.golden_not_judged])}): "
                   + "; ".join(f"{why} {n}건" for why, n in reasons.most_common()) + ".")
    q = report.quarantine
    if q is not None and len(q) and not empty:
        reasons = Counter(zip(q["dataset"], q["reason_code"]))
        where = [f"{d}:{int(line)}" for d, line in zip(q["dataset"], q["line"]) if line == line and line is not None][:SHOWN]
        out.append(f"격리된 행 {len(q)}건 (" + ", ".join(f"{d} {code} {n}" for (d, code), n in reasons.most_common())
                   + f"). 먼저 볼 줄: {', '.join(where)}. 원본을 고쳐 다시 넣으면 판정에 들어갑니다.")
    out += _manual(report)
    return out


def _manual(report: Report) -> list[str]:
    out = []
    for m in report.metrics:
        if not (m.key and m.status.startswith(PERSON)):
            continue
        drawn = report.manual.get(m.key) or {}
        ids = drawn.get("ids") or []
        if not ids:
            continue
        team = report.reviewers.get(m.key)
        how = f"관리 화면의 수동 검증 {m.key}, 또는 `verdicts review {report.domain} --check {m.key} --reviewer 이름 --decide ID=agree`"
        if team is None or team["complete"] < len(ids):
            done = 0 if team is None else team["complete"]
            per = team["per_item"] if team else None
            out.append(f"{m.key} {m.name}: 표본 {len(ids)}건 가운데 다 본 항목 {done}건"
                       + (f"(항목당 검토자 {per}명)" if per else "") + f". 남은 항목을 {how}로 판단합니다.")
        if team and team["split"]:
            out.append(f"{m.key}: 검토자 의견이 갈린 항목 {_ids(team['split'])}을 함께 다시 봅니다.")
        for p in (team or {}).get("pairs", []):
            if p["kappa"] is not None and p["kappa"] < LOW_KAPPA and p["n"] >= SHOWN:
                out.append(f"{m.key}: {p['a']}와 {p['b']}의 일치가 낮습니다(κ {p['kappa']:.2f}, n={p['n']}). '동의'가 무엇을 뜻하는지 먼저 맞춥니다.")
    return out
