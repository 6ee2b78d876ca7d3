"""Golden agreement for persona: planner labels against rule codes.

`reply_empty` and `profile_unmapped` turns are listed with their reason and left out of the
denominators. A mismatch is placed at the first rule (in rule order) either side names.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from evals import report
from evals.report import Report, WrongCase, label, pair_with_golden, person_metric, quarantined_ids, record_metric, rows_by_id, threshold_metric
from evals.markdown import md_table
from evals.stats import Ratio
from rules.common.checks import CheckResult
from rules.persona import verdicts as V
from rules.persona.config import PersonaConfig

STEPS = {
    V.PROFILE_UNMAPPED: "설정 연결 단계",
    V.REPLY_EMPTY: "빈 응답 단계",
    V.FORBIDDEN_TOPIC: "금지 주제 단계",
    V.AGE_CONFLICT: "나이 단계",
    V.JOB_CONFLICT: "직업 단계",
}
EXCLUDED_REASONS = {
    V.REPLY_EMPTY: "응답이 비어 있어 대조할 내용이 없습니다",
    V.PROFILE_UNMAPPED: "설정 목록에 없는 캐릭터라 대조할 설정이 없습니다",
}
HONESTY = [
    "골든 라벨은 규칙을 쓴 같은 팀이 만든 합성 라벨이고 사람 검수 전입니다. 일치율은 규칙이 자기 시험을 통과했다는 뜻 이상이 아닙니다.",
    "대화와 캐릭터 설정도 같은 손으로 만들었습니다. 실제 일관성 품질은 실제 대화 로그가 있어야 잴 수 있습니다.",
    "topic_tag, stated_age, stated_job은 데이터에 붙은 값을 그대로 믿었습니다. 발화에서 이 값을 뽑는 단계의 오류는 이 수치에 들어 있지 않습니다.",
    "빈 설정 항목에 대한 판정(설정을 채워야 한다는 충돌)은 기획 기준에 따라 바뀔 수 있는 정책입니다.",
    "분모가 10보다 작은 지표는 퍼센트를 적지 않습니다.",
]


def load_golden(path: str | Path) -> list[dict]:
    return report.load_golden(path, "turn_no", "persona_code")


def diverging_step(gold: str, predicted: str) -> str:
    for code in V.RULE_ORDER[:-1]:
        if code in (gold, predicted):
            return STEPS[code]
    return "판정 코드 밖"


def build_report(
    rows: list[dict],
    golden: list[dict] | None,
    *,
    checks: list[CheckResult],
    quarantine: pd.DataFrame | None,
    reconciliation: dict,
    config: PersonaConfig,
    scope: str,
    extra_sections: list[tuple[str, str]] | None = None,
) -> Report:
    predicted = rows_by_id(rows, "turn_no")
    codes = {k: label(r.get("persona_code")) for k, r in predicted.items()}
    judged = {k: c for k, c in codes.items() if c not in V.EXCLUDED}
    pairs, not_judged = pair_with_golden(
        judged, [(g["turn_no"], g["persona_code"]) for g in golden or []], quarantined_ids(quarantine), "격리된 턴이라 판정하지 않았습니다"
    )
    for g in golden or []:
        if codes.get(g["turn_no"]) in V.EXCLUDED:
            not_judged.append({"id": g["turn_no"], "reason": f"{codes[g['turn_no']]}: 판정에서 뺀 턴입니다"})
    gold = [p[1] for p in pairs]
    pred = [p[2] for p in pairs]
    bad = set(V.INCONSISTENT)
    same = sum(a == b for a, b in zip(gold, pred))
    binary_same = sum((a in bad) == (b in bad) for a, b in zip(gold, pred))
    gold_bad = [b for _, a, b in pairs if a in bad]
    pred_bad = [a for _, a, b in pairs if b in bad]
    passed = sum(c.passed for c in checks)
    raw_total = sum(r["raw"] for r in reconciliation.values())
    q_total = sum(r["quarantined"] for r in reconciliation.values())
    excluded = [
        {"id": k, "code": c, "reason": EXCLUDED_REASONS[c]} for k, c in sorted(codes.items()) if c in V.EXCLUDED
    ]
    metrics = [
        threshold_metric("판정 일치", "규칙 코드가 기획자 라벨과 같은 턴 / 라벨이 있고 판정한 턴", Ratio(same, len(pairs)),
                         config.report.verdict_agreement_min, "규칙 · 합성 라벨"),
        threshold_metric("어긋남 여부 일치", "어긋남(나이·직업·금지 주제) 여부가 라벨과 같은 턴 / 라벨이 있고 판정한 턴",
                         Ratio(binary_same, len(pairs)), config.report.verdict_agreement_min, "규칙 · 합성 라벨"),
        record_metric("라벨의 어긋남을 규칙도 잡았나", "규칙도 어긋남으로 본 턴 / 라벨이 어긋남인 턴",
                      Ratio(sum(b in bad for b in gold_bad), len(gold_bad)), "규칙 · 합성 라벨"),
        record_metric("규칙이 잡은 어긋남이 라벨과 맞나", "라벨도 어긋남인 턴 / 규칙이 어긋남으로 본 턴",
                      Ratio(sum(a in bad for a in pred_bad), len(pred_bad)), "규칙 · 합성 라벨"),
        threshold_metric("자동 검증 통과", "통과한 검증 / 자동 검증", Ratio(passed, len(checks)), 1.0, "코드",
                         "판정 재계산과 출력 스키마 포함"),
        record_metric("판정에서 뺀 턴", "빈 응답·설정 없음 턴 / 전체 턴", Ratio(len(excluded), len(codes)), "데이터"),
        record_metric("격리된 행", "격리된 행 / 원본 행(두 데이터셋)", Ratio(q_total, raw_total), "데이터"),
        person_metric("사용자가 설정을 바꿔 부르는 연출을 어긋남으로 볼까", "검토 대기열 표본 20건을 눈으로 봅니다"),
        person_metric("설정 항목이 비어 있는 캐릭터를 어디까지 판정할까", "기획 기준에 따라 담당자가 정합니다"),
    ]
    wrong = [WrongCase("판정 일치", i, a, b, diverging_step(a, b), predicted[i].get("summary", "")) for i, a, b in pairs if a != b]
    counts = Counter(codes.values())
    return Report(
        domain="persona",
        scope=scope,
        title="persona 골든 일치 리포트 (합성 데이터 기준)",
        metrics=metrics if pairs else metrics[4:],
        labels=list(V.ORDER[:4]),
        gold=gold,
        predicted=pred,
        wrong_cases=wrong,
        checks=checks,
        verdict_counts={c: counts.get(c, 0) for c in V.ORDER},
        quarantine=quarantine,
        reconciliation=reconciliation,
        golden_not_judged=not_judged,
        excluded=excluded,
        extra_sections=extra_sections or [],
        honesty=HONESTY,
        has_golden=bool(pairs),
    )


def render_review_queue(queue: pd.DataFrame, candidates: int, size: int) -> str:
    head = (f"# 검토 대기열: 사용자가 설정을 바꿔 부른 턴\n\n후보 {candidates}턴 가운데 {len(queue)}턴 (표본 크기 {size}). "
            "규칙 판정을 보고 이 연출을 어긋남으로 볼지 `reviewer_decision`에 적어 주세요.\n\n")
    rows = [[r["turn_no"], r["cue_phrase"], r["user_text"], r["reply_text"], r["persona_code"], ""] for r in queue.to_dict("records")]
    return head + md_table(["turn_no", "신호 문구", "사용자 발화", "응답", "규칙 판정", "사람 판단"], rows)
