"""Golden agreement for live_pick: operator labels against rule verdicts.

A mismatch is placed at the rule step where the two diverge: the out-of-world step, the
cooldown step, the closeness step, or the ranking step.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from evals.divergence import step_finder, wrong_cases
from evals.markdown import md_table
from evals.report import SMALL_DENOMINATOR_NOTE, Report, golden_report, record_metric
from evals.report import count_labels, golden_loader, labels_of, pair_labels, quarantined_ids, rows_by_id
from evals.shared_metrics import RECONCILIATION_NOTE, agreement_metric, checks_metric, flag_metrics, quarantine_metric
from evals.stats import Ratio
from rules.common.checks import CheckResult
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig
from rules.live_pick.summaries import summary_counts

STEPS = {
    V.OUT_OF_WORLD: "세계관·금칙 단계",
    V.JUST_ANSWERED: "쿨다운 단계",
    V.BELOW_CLOSENESS: "친밀 단계",
}
RANK_STEP = "순위 단계"
DECIDING = {
    STEPS[V.OUT_OF_WORLD]: ("topic_tags", "world_topic_tags", "banned_tags"),
    STEPS[V.JUST_ANSWERED]: ("cooldown_elapsed_sec", "reply_cooldown_sec", "answered_topics", "last_replied_at"),
    STEPS[V.BELOW_CLOSENESS]: ("closeness_level", "min_closeness_by_topic"),
    RANK_STEP: ("rank_in_window", "donation_amount", "is_question", "sent_at"),
}
"""Per step, the fields whose values decide it (from the verdict row and its evidence)."""
LOOK_AT = {
    STEPS[V.OUT_OF_WORLD]: "topic_tags 를 그 캐릭터의 world_topic_tags·banned_tags 와 대조합니다 (태그가 비면 세계관 밖입니다).",
    STEPS[V.JUST_ANSWERED]: "cooldown_elapsed_sec 를 reply_cooldown_sec 와, 태그를 answered_topics 와 견줍니다.",
    STEPS[V.BELOW_CLOSENESS]: "closeness_level 을 그 줄 태그의 min_closeness_by_topic 가운데 가장 큰 값과 견줍니다.",
    RANK_STEP: "같은 캐릭터·구간의 donation_amount, is_question, sent_at 순서와 rank_in_window 를 봅니다 (세 번째까지가 지금 답변).",
}
"""Per step, what governs it: the next steps name it beside the cases that diverged there."""
HONESTY = [
    SMALL_DENOMINATOR_NOTE,
    "후원이 크다고 좋은 질문은 아닙니다. 순위는 참고 자리이고 최종 선택은 운영자가 합니다.",
]

load_golden = golden_loader("msg_id", "verdict")
diverging_step = step_finder(STEPS, RANK_STEP)


GOLD_TAGS_NOTE = "태그는 수집기의 정답 태그(topic_tags)로 판정했습니다. 실제 운영에서 태거가 틀리는 경우는 이 수치에 들어 있지 않습니다."


def _provenance(rows: list[dict]) -> list[dict]:
    """Each row's provenance; a row without one was judged on gold tags with the template."""
    return [r["provenance"] if isinstance(r.get("provenance"), dict) else {"tagger": "gold", "summary": "template"}
            for r in rows if isinstance(r, dict)]


def run_notes(rows: list[dict]) -> list[str]:
    """Which tagger and which summary writer the run used, read from the rows themselves (none: nothing to say)."""
    prov = _provenance(rows)
    if not prov:
        return []
    taggers = Counter(p.get("tagger", "gold") for p in prov)
    notes = []
    if set(taggers) <= {"gold"}:
        notes.append(GOLD_TAGS_NOTE)
    else:
        used = ", ".join(f"{t} {n}줄" for t, n in taggers.most_common())
        discards = Counter(p.get("discard") for p in prov if p.get("discard") not in (None, "no_tag"))
        why = ", ".join(f"{k} {v}" for k, v in discards.most_common())
        notes.append(f"태그는 본문만 본 태거의 답으로 판정했습니다({used}). 재계산도 이 실행이 쓴 태그로 하고, 정답 태그(topic_tags)는 태거 채점에만 씁니다."
                     + (f" 태거의 답을 버리고 세계관 밖으로 둔 줄은 {sum(discards.values())}줄입니다({why})." if discards else ""))
    counts = summary_counts([r for r in rows if isinstance(r, dict)])
    asked = counts["kept"] + counts["fallback"]
    if asked:
        why = ", ".join(f"{k} {v}" for k, v in sorted(counts["reasons"].items()))
        notes.append(f"요약 문장은 모델이 썼고, 검증(판정·인용 컬럼·값·존댓말·숫자)을 통과한 {counts['kept']}줄만 남겼으며 "
                     f"{counts['fallback']}줄은 규칙의 기본 문장으로 되돌렸습니다" + (f" (사유: {why})." if why else "."))
    else:
        notes.append("요약 문장은 모두 규칙의 기본 문장(템플릿)입니다.")
    return notes


def summary_metric(rows: list[dict]) -> list:
    counts = summary_counts([r for r in rows if isinstance(r, dict)])
    asked = counts["kept"] + counts["fallback"]
    if not asked:
        return []
    return [record_metric("모델 요약 유지", "검증을 통과해 남은 모델 요약 / 모델에 요약을 맡긴 줄", Ratio(counts["kept"], asked),
                          "모델 · 자동 검증", "떨어진 줄은 규칙의 기본 문장으로 되돌렸습니다", census=True)]


PICK_AGREEMENT = "답변 선택 일치"


def _picked(verdict: str) -> bool:
    """The yes/no reading of a verdict: answer this line now."""
    return verdict == V.PICK


def build_report(rows: list[dict], golden: list[dict] | None, *, checks: list[CheckResult], quarantine: pd.DataFrame | None,
                 reconciliation: dict, config: LivePickConfig, scope: str) -> Report:
    predicted = rows_by_id(rows, "msg_id")
    labels = labels_of(predicted, "verdict")
    paired = pair_labels(labels, golden, "msg_id", "verdict", quarantined_ids(quarantine), "격리된 줄이라 판정하지 않았습니다")
    criteria = config.report
    # Without judged labels there is no agreement to report.
    golden_metrics = [
        agreement_metric("규칙 판정이 운영자 라벨과 같은 줄 / 라벨이 있고 판정된 줄", paired, criteria.verdict_agreement_min),
        *flag_metrics(paired, _picked, criteria.pick_agreement_min,
                      (PICK_AGREEMENT, "지금 답변 여부가 운영자와 같은 줄 / 라벨이 있고 판정된 줄"),
                      ("운영자가 고른 줄을 규칙도 골랐나", "규칙도 지금 답변으로 세운 줄 / 운영자가 답한 줄"),
                      ("규칙이 고른 줄을 운영자도 골랐나", "운영자도 답한 줄 / 규칙이 지금 답변으로 세운 줄")),
    ] if paired.pairs else []
    metrics = [
        *golden_metrics,
        checks_metric(checks),
        *summary_metric(rows),
        quarantine_metric(reconciliation, "세", RECONCILIATION_NOTE),
    ]
    # A line wrong on the pick is wrong on the verdict too: listed once, with both metrics.
    wrong = wrong_cases(paired, diverging_step, predicted, "summary", DECIDING,
                        also=[(PICK_AGREEMENT, lambda g, p: _picked(g) != _picked(p))])
    report = golden_report("live_pick", scope, paired, checks, quarantine, reconciliation, [*run_notes(rows), *HONESTY],
                           metrics=metrics, labels=list(V.ORDER), wrong_cases=wrong,
                           verdict_counts=count_labels(labels.values(), V.ORDER), step_hints=LOOK_AT)
    report.extra_sections.append(("설정표 버전", _sheet_versions(predicted.values())))
    return report


def _sheet_versions(rows) -> str:
    """Lines judged per character and sheet version (unversioned: judged against a plain sheet file)."""
    counts = Counter((r.get("character_id"), r.get("sheet_version")) for r in rows)
    if not counts:
        return "판정된 줄이 없습니다."
    table = [[c, "—" if v is None else f"v{v}", n] for (c, v), n in sorted(counts.items(), key=lambda x: (str(x[0][0]), x[0][1] or 0))]
    note = ("\n\n—: 버전 없는 설정표 파일로 판정한 줄입니다 (`verdicts judge`)." if any(v is None for _, v in counts) else "")
    return md_table(["character_id", "sheet_version", "lines"], table) + note
