"""Golden agreement for retry: product-owner labels against rule verdicts, plus the baseline sweep.

A mismatch is placed at the first rule (in rule order) either side names: the same-text
step, the baseline step or the surface-hop step. The report adds mismatch counts per verdict
and the sweep of every surface's baseline from ×0.5 to ×1.5 (a table, with a bar per step).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pandas as pd

from evals.divergence import step_finder, wrong_cases
from evals.markdown import md_table
from evals.report import SMALL_DENOMINATOR_NOTE, Report, golden_report
from evals.report import count_labels, golden_loader, labels_of, pair_labels, quarantined_ids, rows_by_id
from evals.shared_metrics import RECONCILIATION_NOTE, agreement_metric, checks_metric, flag_metrics, quarantine_metric
from rules.common.checks import CheckResult
from rules.retry import verdicts as V
from rules.retry.config import RetryConfig
from rules.retry.sweep import SweepStep, sweep

STEPS = {
    V.EXACT_RETRY: "같은 말 단계 (공백·문장부호를 지운 글)",
    V.REWORDED_RETRY: "기준선 단계 (평소 겹침과 비교)",
    V.SURFACE_HOP: "접점 이동 단계",
}
OUTSIDE = "판정 키 밖"
DECIDING = {
    STEPS[V.EXACT_RETRY]: ("matched_event_id", "input_text"),
    STEPS[V.REWORDED_RETRY]: ("max_overlap", "surface_baseline", "matched_event_id"),
    STEPS[V.SURFACE_HOP]: ("surface_key", "matched_event_id", "max_overlap"),
}
"""Per step, the fields whose values decide it (from the verdict row and its evidence)."""
LOOK_AT = {
    STEPS[V.EXACT_RETRY]: "공백·문장부호를 지운 input_text 를 같은 세션·접점의 앞선 말(matched_event_id)과 대조합니다.",
    STEPS[V.REWORDED_RETRY]: "max_overlap 을 그 접점의 surface_baseline 과 견줍니다 (같으면 다시 시도가 아닙니다). 기준선 스윕이 배율별 건수를 보여 줍니다.",
    STEPS[V.SURFACE_HOP]: "세션의 서로 다른 접점 수(셋 이상)와 다른 접점의 앞선 말과 겹치는 낱말을 봅니다.",
    OUTSIDE: "라벨이나 판정이 네 키 밖입니다. 골든 파일의 그 줄을 고칩니다.",
}
"""Per step, what governs it: the next steps name it beside the cases that diverged there."""
HONESTY = [
    "평소 겹침(기준선)은 판정한 범위(그날 파티션, 또는 명령줄에 준 입력 전체) 안에서만 셉니다. 범위가 바뀌면 기준선도 바뀝니다.",
    "세션 경계는 로그의 session_id를 그대로 믿었습니다. 자정을 넘긴 세션은 날마다 따로 판정됩니다.",
    "겹침 수치는 읽기 좋게 반올림해 보여 줄 뿐이고 판정은 분수 그대로 비교했습니다.",
    SMALL_DENOMINATOR_NOTE,
]
BAR = "█"


@dataclass
class RetryReport(Report):
    """The shared report plus the retry sections, which the JSON form carries too."""

    sweep: list[SweepStep] = field(default_factory=list)
    mismatches: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["mismatch_by_verdict"] = self.mismatches
        out["baseline_sweep"] = [s.to_dict() for s in self.sweep]
        return out

    @classmethod
    def own_fields(cls, data: dict) -> dict:
        return {"mismatches": list(data.get("mismatch_by_verdict") or []),
                "sweep": [SweepStep(Fraction(s["factor"]), s["exact_retry"], s["reworded_retry"], dict(s.get("by_surface") or {}))
                          for s in data.get("baseline_sweep") or []]}


load_golden = golden_loader("event_id", "verdict")
diverging_step = step_finder(STEPS, OUTSIDE, V.RULE_ORDER)


TRIED_AGREEMENT = "다시 시도 여부 일치"


def _tried(verdict: str) -> bool:
    """The yes/no reading of a verdict: any verdict but one_shot means the user tried again."""
    return verdict != V.ONE_SHOT


def mismatch_counts(pairs: list[tuple[str, str, str]]) -> list[dict]:
    """Per verdict: labelled, predicted, agreed, missed (label, not predicted) and extra (predicted, not labelled)."""
    out = []
    for v in V.ORDER:
        out.append({
            "verdict": v,
            "gold": sum(g == v for _, g, _ in pairs),
            "predicted": sum(p == v for _, _, p in pairs),
            "agreed": sum(g == p == v for _, g, p in pairs),
            "missed": sum(g == v != p for _, g, p in pairs),
            "extra": sum(p == v != g for _, g, p in pairs),
        })
    return out


def render_mismatches(rows: list[dict]) -> str:
    table = [[r["verdict"], r["gold"], r["predicted"], r["agreed"], r["missed"], r["extra"]] for r in rows]
    return md_table(["판정", "정답 라벨", "규칙 판정", "일치", "놓침 (라벨인데 다른 판정)", "더 잡음 (판정인데 다른 라벨)"], table)


def render_sweep(steps: list[SweepStep]) -> str:
    """The sweep as tables: totals with a bar per step, then retries per surface."""
    if not steps:
        return "판정된 이벤트가 없어 스윕할 기준선이 없습니다."
    base = next((s for s in steps if s.factor == 1), steps[0])
    width = max(s.retries for s in steps) or 1
    rows = [[f"×{_factor(s.factor)}", s.exact, s.reworded, s.retries, f"{s.retries - base.retries:+d}",
             BAR * round(20 * s.retries / width)] for s in steps]
    out = [md_table(["기준선 배율", "exact_retry", "reworded_retry", "다시 시도 합계", f"×{_factor(base.factor)} 대비", "막대"], rows)]
    surfaces = list(steps[0].by_surface)
    if surfaces:
        out += ["", "접점별 다시 시도 (exact_retry + reworded_retry):", "",
                md_table(["기준선 배율", *surfaces], [[f"×{_factor(s.factor)}", *[s.by_surface[x] for x in surfaces]] for s in steps])]
    out += ["", "배율을 곱한 기준선보다 겹침이 커야(같으면 아님) 말을 바꾼 다시 시도로 셉니다. 같은 말 다시 보내기는 기준선과 상관없이 셉니다."]
    return "\n".join(out)


def _factor(f) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{float(f):g}"


def build_report(rows: list[dict], golden: list[dict] | None, *, checks: list[CheckResult], quarantine: pd.DataFrame | None,
                 reconciliation: dict, config: RetryConfig, scope: str) -> RetryReport:
    predicted = rows_by_id(rows, "event_id")
    labels = labels_of(predicted, "verdict")
    paired = pair_labels(labels, golden, "event_id", "verdict", quarantined_ids(quarantine), "격리된 이벤트라 판정하지 않았습니다")
    criteria = config.report
    # Without judged labels there is no agreement to report.
    golden_metrics = [
        agreement_metric("규칙 판정이 제품 담당자 라벨과 같은 이벤트 / 라벨이 있고 판정한 이벤트", paired, criteria.verdict_agreement_min),
        *flag_metrics(paired, _tried, criteria.retry_agreement_min,
                      (TRIED_AGREEMENT, "one_shot인지 아닌지가 라벨과 같은 이벤트 / 라벨이 있고 판정한 이벤트"),
                      ("라벨의 다시 시도를 규칙도 잡았나", "규칙도 one_shot이 아닌 이벤트 / 라벨이 one_shot이 아닌 이벤트"),
                      ("규칙이 잡은 다시 시도가 라벨과 맞나", "라벨도 one_shot이 아닌 이벤트 / 규칙이 one_shot이 아니라고 본 이벤트")),
    ] if paired.pairs else []
    metrics = [
        *golden_metrics,
        checks_metric(checks),
        quarantine_metric(reconciliation, "두", RECONCILIATION_NOTE),
    ]
    # Seed 002 lists no manual check (수동 검증): the baseline per surface is the sweep's to show.
    steps = sweep(list(predicted.values()), config.factors) if predicted else []
    mismatches = mismatch_counts(paired.pairs)
    sections = [("기준선 스윕", render_sweep(steps))]
    if paired.pairs:
        sections.insert(0, ("판정별 어긋남", render_mismatches(mismatches)))
    return golden_report("retry", scope, paired, checks, quarantine, reconciliation, HONESTY, RetryReport,
                         metrics=metrics, labels=list(V.ORDER),
                         wrong_cases=wrong_cases(paired, diverging_step, predicted, "reason", DECIDING,
                                                 also=[(TRIED_AGREEMENT, lambda g, p: _tried(g) != _tried(p))]),
                         verdict_counts=count_labels(labels.values(), V.ORDER), extra_sections=sections,
                         sweep=steps, mismatches=mismatches, step_hints=LOOK_AT)
