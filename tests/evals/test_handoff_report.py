"""The handoff golden-agreement report: pairing labels with rooms (listed, unlisted, held), the
header counts, the held group, agreement per verdict and the rooms listed for review."""

from __future__ import annotations

import pandas as pd

from evals.handoff import build_report, diverging_step, held_group
from evals.render import render_html, render_markdown
from rules.common.checks import CheckResult
from rules.handoff import verdicts as V
from rules.handoff.config import load_config

CFG = load_config()


def rooms(*rows) -> pd.DataFrame:
    cols = ["room_id", "customer_id", "opened_day", "status", "verdict", "handoff_at", "reply_wait_min", "first_reply_min",
            "on_time", "late", "provisional", "next_room_id"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows], columns=cols)


DAY_ROOMS = rooms(
    ("R-1", "C-1", "d", V.LISTED, V.UNCITED, None, None, None, False, False, False, None),
    ("R-2", "C-2", "d", V.LISTED, V.AI_ENDED, None, None, None, False, False, True, None),
    ("R-3", "C-3", "d", V.UNLISTED, None, "t", 4, 10, True, False, False, None),
    ("R-4", "C-4", "d", V.OUT_OF_SCOPE, None, "t", 7.5, 10, True, False, False, None),
    ("R-5", None, "d", V.HELD_STATUS, None, None, None, None, None, None, None, None),
)
ROWS = [{"room_id": "R-1", "verdict": V.UNCITED, "summary": "요약입니다."},
        {"room_id": "R-2", "verdict": V.AI_ENDED, "summary": "<b>닫았습니다</b>."}]
HELD = pd.DataFrame([{"room_id": "R-5", "dataset": "chat_messages", "file": "f", "line": 3.0, "id": "M-9", "reason_code": "missing_sent_at",
                      "reason": "sent_at is missing"},
                     {"room_id": None, "dataset": "chat_messages", "file": "f", "line": float("nan"), "id": None,
                      "reason_code": "empty_room_id", "reason": "room_id is empty"}])
GOLDEN = [{"room_id": "R-1", "verdict": V.UNCITED}, {"room_id": "R-2", "verdict": V.REENTRY},
          {"room_id": "R-3", "verdict": V.NOT_LISTED}, {"room_id": "R-4", "verdict": V.LATE_REPLY},
          {"room_id": "R-5", "verdict": V.AI_ENDED}, {"room_id": "R-9", "verdict": V.AI_ENDED}]


def report(**kw):
    args = dict(checks=[CheckResult("schema", "t", True)], quarantine=None, reconciliation={}, config=CFG, scope="handoff · d",
                day_rooms=DAY_ROOMS, held_rows=HELD)
    args.update(kw)
    return build_report(ROWS, GOLDEN, **args)


def test_unlisted_rooms_pair_as_not_listed_held_ones_as_not_judged():
    r = report()
    assert sorted(zip(r.gold, r.predicted)) == sorted([(V.UNCITED, V.UNCITED), (V.REENTRY, V.AI_ENDED), (V.NOT_LISTED, V.NOT_LISTED),
                                                       (V.LATE_REPLY, V.NOT_LISTED)])
    assert r.golden_not_judged == [{"id": "R-5", "reason": f"{V.HELD}: 판정하지 않은 대화입니다"}]
    metrics = {m.name: m for m in r.metrics}
    assert metrics["판정 일치"].ratio.format() == "2 / 4"
    assert metrics[f"판정별 일치 · {V.NOT_LISTED}"].ratio.format() == "1 / 1"
    assert metrics[f"판정별 일치 · {V.LATE_REPLY}"].ratio.format() == "0 / 1"
    assert metrics["제때 연결"].ratio.format() == "2 / 2" and metrics["판정 보류"].ratio.format() == "1 / 5"
    assert metrics["재문의 잠정"].ratio.format() == "1 / 2"


def test_wrong_cases_name_the_step_and_are_listed_for_review():
    r = report()
    assert {(w.id, w.step) for w in r.wrong_cases} == {("R-2", "재문의 단계 (24시간 창)"), ("R-4", "연결 지연 단계")}
    assert diverging_step(V.KEPT_ANSWERING, V.NOT_LISTED) == "상담원 요청 단계 (연결 문구 목록)"
    sections = dict(r.extra_sections)
    assert "R-2" in sections["검토할 대화"] and "R-5" in sections[V.HELD]


def test_held_group_lists_each_row_with_its_reason():
    assert held_group(HELD) == [
        {"id": "R-5", "code": "missing_sent_at", "reason": "chat_messages 3행 · M-9: sent_at is missing"},
        {"id": "(대화 모름)", "code": "empty_room_id", "reason": "chat_messages · —: room_id is empty"},
    ]
    assert held_group(None) == []


def test_without_the_days_rooms_only_listed_rooms_are_paired():
    r = report(day_rooms=None, held_rows=None)
    assert len(r.gold) == 2 and r.excluded == [] and "판정 보류" not in {m.name for m in r.metrics}


def test_without_golden_labels_there_are_no_agreement_metrics():
    r = build_report(ROWS, None, checks=[], quarantine=None, reconciliation={}, config=CFG, scope="s", day_rooms=DAY_ROOMS, held_rows=HELD)
    assert not r.has_golden
    assert not any(m.name.startswith(("판정 일치", "판정별 일치")) for m in r.metrics)
    assert "판정 보류" in {m.name for m in r.metrics}


def test_text_from_logs_is_escaped_in_both_renderings():
    r = report()
    md, page = render_markdown(r), render_html(r)
    assert "&lt;b&gt;닫았습니다" in md and "<b>" not in md and "<b>닫았습니다" not in page
