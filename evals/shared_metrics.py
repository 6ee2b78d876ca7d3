"""The metrics every domain's golden-agreement report shares; the domain supplies the wording.

Agreement with golden labels is a sample proportion (the labelled items stand for the rest) and
carries a Wilson interval; the checks passed and the quarantined share count everything in scope
and carry none (`Metric.census`)."""

from __future__ import annotations

from typing import Callable

from evals.report import Metric, Paired, record_metric, threshold_metric
from evals.stats import Ratio
from rules.common.checks import CheckResult

AGREEMENT = "판정 일치"
"""The headline metric; the UI, the command line and the regression gate look it up by this name."""
RULE_AND_LABELS = "규칙 · 골든 라벨"
RECONCILIATION_NOTE = "원본 = 정규화 + 격리가 데이터셋마다 맞는지 아래 표에 있습니다"


def agreement_metric(definition: str, paired: Paired, minimum: float) -> Metric:
    """Verdicts equal to their golden label, over the judged labelled items."""
    return threshold_metric(AGREEMENT, definition, Ratio(paired.same, len(paired.pairs)), minimum, RULE_AND_LABELS)


def flag_metrics(
    paired: Paired,
    flagged: Callable[[str], bool],
    minimum: float,
    agreement: tuple[str, str],
    caught: tuple[str, str],
    confirmed: tuple[str, str],
) -> list[Metric]:
    """A yes/no reading of the verdicts (`flagged`): agreement on it, then both directions.

    Each wording is (name, definition): `agreement` is judged against `minimum`, `caught`
    records the golden yeses the rule also flagged, `confirmed` the rule's yeses the labels share.
    """
    gold_yes = [p for _, g, p in paired.pairs if flagged(g)]
    rule_yes = [g for _, g, p in paired.pairs if flagged(p)]
    both = sum(flagged(g) == flagged(p) for _, g, p in paired.pairs)
    return [
        threshold_metric(*agreement, Ratio(both, len(paired.pairs)), minimum, RULE_AND_LABELS),
        record_metric(*caught, Ratio(sum(map(flagged, gold_yes)), len(gold_yes)), RULE_AND_LABELS),
        record_metric(*confirmed, Ratio(sum(map(flagged, rule_yes)), len(rule_yes)), RULE_AND_LABELS),
    ]


def checks_metric(checks: list[CheckResult]) -> Metric:
    """Automatic checks passed; all must pass."""
    return threshold_metric("자동 검증 통과", "통과한 검증 / 자동 검증", Ratio(sum(c.passed for c in checks), len(checks)), 1.0,
                            "코드", "판정 재계산과 출력 스키마 포함", census=True)


def quarantine_metric(reconciliation: dict, datasets: str, note: str = "") -> Metric:
    """Quarantined rows over raw rows of every dataset; `datasets` says how many, in words."""
    raw = sum(r["raw"] for r in reconciliation.values())
    quarantined = sum(r["quarantined"] for r in reconciliation.values())
    return record_metric("격리된 행", f"격리된 행 / 원본 행({datasets} 데이터셋)", Ratio(quarantined, raw), "데이터", note, census=True)
