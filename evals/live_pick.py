"""Golden agreement for live_pick: operator labels against rule verdicts.

A mismatch is placed at the rule step where the two diverge: the out-of-world step, the
cooldown step, the closeness step, or the ranking step.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from evals import report
from evals.report import Report, WrongCase, label, pair_with_golden, person_metric, quarantined_ids, record_metric, rows_by_id, threshold_metric
from evals.stats import Ratio
from rules.common.checks import CheckResult
from rules.live_pick import verdicts as V
from rules.live_pick.config import LivePickConfig

STEPS = (
    (V.OUT_OF_WORLD, "세계관·금칙 단계"),
    (V.JUST_ANSWERED, "쿨다운 단계"),
    (V.BELOW_CLOSENESS, "친밀 단계"),
)
RANK_STEP = "순위 단계"

HONESTY = [
    "골든 라벨은 규칙을 쓴 같은 팀이 만든 합성 라벨이고 사람 검수 전입니다. 일치율은 규칙이 자기 시험을 통과했다는 뜻 이상이 아닙니다.",
    "채팅 로그, 캐릭터 설정표, 시청자 관계 기록도 같은 손으로 만들었습니다. 실제 선별 품질은 실제 방송 채팅과 운영자 선택이 있어야 잴 수 있습니다.",
    "태그는 수집기의 정답 태그(topic_tags)로 판정했습니다. 실제 운영에서 태거가 틀리는 경우는 이 수치에 들어 있지 않습니다.",
    "분모가 10보다 작은 지표는 퍼센트를 적지 않습니다.",
    "후원이 크다고 좋은 질문은 아닙니다. 순위는 참고 자리이고 최종 선택은 운영자가 합니다.",
]


def load_golden(path: str | Path) -> list[dict]:
    return report.load_golden(path, "msg_id", "verdict")


def diverging_step(gold: str, predicted: str) -> str:
    for verdict, step in STEPS:
        if verdict in (gold, predicted):
            return step
    return RANK_STEP


def build_report(
    rows: list[dict],
    golden: list[dict] | None,
    *,
    checks: list[CheckResult],
    quarantine: pd.DataFrame | None,
    reconciliation: dict,
    config: LivePickConfig,
    scope: str,
) -> Report:
    predicted = rows_by_id(rows, "msg_id")
    pairs, not_judged = pair_with_golden(
        {k: label(r.get("verdict")) for k, r in predicted.items()},
        [(g["msg_id"], g["verdict"]) for g in golden or []],
        quarantined_ids(quarantine),
        "격리된 줄이라 판정하지 않았습니다",
    )
    gold = [p[1] for p in pairs]
    pred = [p[2] for p in pairs]
    same = sum(a == b for a, b in zip(gold, pred))
    pick_same = sum((a == V.PICK) == (b == V.PICK) for a, b in zip(gold, pred))
    gold_picks = [(i, b) for i, a, b in pairs if a == V.PICK]
    rule_picks = [(i, a) for i, a, b in pairs if b == V.PICK]
    passed = sum(c.passed for c in checks)
    raw_total = sum(r["raw"] for r in reconciliation.values())
    q_total = sum(r["quarantined"] for r in reconciliation.values())
    criteria = config.report

    metrics = [
        threshold_metric("판정 일치", "규칙 판정이 운영자 라벨과 같은 줄 / 라벨이 있고 판정된 줄", Ratio(same, len(pairs)),
                         criteria.verdict_agreement_min, "규칙 · 합성 라벨"),
        threshold_metric("답변 선택 일치", "지금 답변 여부가 운영자와 같은 줄 / 라벨이 있고 판정된 줄", Ratio(pick_same, len(pairs)),
                         criteria.pick_agreement_min, "규칙 · 합성 라벨"),
        record_metric("운영자가 고른 줄을 규칙도 골랐나", "규칙도 지금 답변으로 세운 줄 / 운영자가 답한 줄",
                      Ratio(sum(b == V.PICK for _, b in gold_picks), len(gold_picks)), "규칙 · 합성 라벨"),
        record_metric("규칙이 고른 줄을 운영자도 골랐나", "운영자도 답한 줄 / 규칙이 지금 답변으로 세운 줄",
                      Ratio(sum(a == V.PICK for _, a in rule_picks), len(rule_picks)), "규칙 · 합성 라벨"),
        threshold_metric("자동 검증 통과", "통과한 검증 / 자동 검증", Ratio(passed, len(checks)), 1.0, "코드",
                         "판정 재계산과 출력 스키마 포함"),
        record_metric("격리된 행", "격리된 행 / 원본 행(세 데이터셋)", Ratio(q_total, raw_total), "데이터",
                      "원본 = 정규화 + 격리가 데이터셋마다 맞는지 아래 표에 있습니다"),
        person_metric("지금 답변할 질문을 운영자가 실제로 넘기나", "표본 20건을 따라가 봅니다",
                      "후원이 큰 줄이라도 방송 흐름과 안 맞으면 건너뛰는 경우가 있습니다"),
        person_metric("쿨다운이 팬이 느끼기에 적당한가", "방송 뒤 채팅 반응을 보고 정합니다"),
    ]
    wrong = []
    for i, a, b in pairs:
        if a != b:
            wrong.append(WrongCase("판정 일치", i, a, b, diverging_step(a, b), predicted[i].get("summary", "")))
    for i, a, b in pairs:
        if (a == V.PICK) != (b == V.PICK):
            wrong.append(WrongCase("답변 선택 일치", i, a, b, diverging_step(a, b), predicted[i].get("summary", "")))
    counts = Counter(label(r.get("verdict")) for r in predicted.values())
    return Report(
        domain="live_pick",
        scope=scope,
        title="live_pick 골든 일치 리포트 (합성 데이터 기준)",
        metrics=metrics if pairs else metrics[4:],
        labels=list(V.ORDER),
        gold=gold,
        predicted=pred,
        wrong_cases=wrong,
        checks=checks,
        verdict_counts={v: counts.get(v, 0) for v in V.ORDER},
        quarantine=quarantine,
        reconciliation=reconciliation,
        golden_not_judged=not_judged,
        honesty=HONESTY,
        has_golden=bool(pairs),
    )
