"""Wrong cases in every domain: each item once (with every metric it is wrong on), the values that
decide its step, grouped by step in the Markdown, the HTML and the JSON, and counted once on the board."""

from __future__ import annotations

import re

import pytest

from evals import domains
from evals.board import Board, render_board
from tests.evals.reports import forms, html_text, make_report, md_section

EXPECTED = {
    # id: (step, values the step turns on)
    "persona": {"TN-9039": ("직업 단계", "stated_job=가수, job=null"), "TN-9051": ("나이 단계", "stated_age=20, age=19"),
                "TN-9042": ("금지 주제 단계", "topic_tag=법률 상식, forbidden_topic=법률 자문"),
                "TN-9059": ("금지 주제 단계", "topic_tag=음주, age=19")},
    "live_pick": {"MSG-20260908-2401": ("쿨다운 단계", "cooldown_elapsed_sec=185, reply_cooldown_sec=240, answered_topics=간식"),
                  "MSG-20260908-2405": ("세계관·금칙 단계", "topic_tags=null"),
                  "MSG-20260909-6409": ("순위 단계", "rank_in_window=1, donation_amount=100000, is_question=false")},
    "retry": {"EV-1002": ("기준선 단계 (평소 겹침과 비교)", "max_overlap=0.2, surface_baseline=0.25, matched_event_id=EV-1001"),
              "EV-1302": ("접점 이동 단계", "surface_key=summarize")},
    "handoff": {"R-55232": ("재문의 단계 (24시간 창)", "reentry_hours=24, next_room_id=R-55292"),
                "R-56125": ("도움말 인용 단계", "uncited_message_ids=[], cited_article_id=A-105"),
                "R-56007": ("상담원 요청 단계 (연결 문구 목록)", "matched_phrase=상담원 연결, first_trigger_message_id=M-960072, ai_after_trigger=2")},
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_wrong_case_once_with_its_deciding_values_grouped_by_step(name):
    rows, report = make_report(name)
    md, html, data = forms(report)
    ids = [w["id"] for w in data["wrong_cases"]]
    assert len(ids) == len(set(ids)) and ids
    section = md_section(md, "틀린 사례")
    page = html_text(html)
    for case_id, (step, values) in EXPECTED[name].items():
        case = next(w for w in data["wrong_cases"] if w["id"] == case_id)
        assert case["step"] == step and values in ", ".join(f"{v['field']}={_show(v['value'])}" for v in case["values"])
        assert section.count(f"`{case_id}`") == 1 and values in section and values in page
        # Listed under its step's heading.
        heading = section.index(f"**{step}**")
        assert heading < section.index(f"`{case_id}`") and case_id in data["wrong_cases_by_step"][step]
    steps = re.findall(r"^\*\*(.+?)\*\* · (\d+)건$", section, re.M)
    assert sum(int(n) for _, n in steps) == len(ids) and len({s for s, _ in steps}) == len(steps)


def _show(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)


def test_a_line_wrong_on_two_metrics_is_one_case_and_the_board_counts_it_once():
    rows, report = make_report("live_pick", day="2026-09-08")
    _, _, data = forms(report)
    assert [w["id"] for w in data["wrong_cases"]] == ["MSG-20260908-2401", "MSG-20260908-2405"]
    assert all(w["metrics"] == ["판정 일치", "답변 선택 일치"] for w in data["wrong_cases"])
    page = render_board(Board("live_pick", rows, report, domains.get("live_pick").board()))
    assert "틀린 사례 2건" in page and "틀린 사례 4건" not in page
