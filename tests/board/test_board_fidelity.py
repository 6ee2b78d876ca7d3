"""What the board and the report say beyond the verdict rows: held rooms as a column, retry's
evidence reasons, an empty day said as such, the re-entry sentence, next steps, check titles."""

from __future__ import annotations

import copy
import html

from evals.board import Board, render_board
from evals.fidelity import basis_of
from evals.next_steps import next_steps
from tests.board import board_spec, sample_board, sample_parts


def test_handoff_held_rooms_are_a_column_beside_the_verdicts():
    """Seed 003: the verdicts as columns, the held rooms as one more column; the rows left out are
    listed, with why, on top of the board (a row of no known room holds no room back)."""
    from evals.handoff import UNKNOWN_ROOM
    from rules.handoff import verdicts as V

    page = render_board(sample_board("handoff"))
    columns = page[page.index("<div class='columns'>"):page.index("id='g-held'")]
    assert [v for v in V.ORDER if f"data-group-verdict='{v}'" in columns] == list(V.ORDER)
    held = page[page.index("id='g-held'"):]
    held = held[:held.index("</details></div>")]
    _, _, report, _ = sample_parts("handoff")
    rooms = {x["id"] for x in report.excluded} - {UNKNOWN_ROOM}
    assert rooms and all(f"data-id='{r}'" in held for r in rooms) and UNKNOWN_ROOM not in held
    top = page[:page.index("<div class='layout")]
    assert f"판정에서 뺀 줄 {len(report.excluded)}개" in top and all(html.escape(x["reason"]) in top for x in report.excluded)


def test_retry_evidence_has_the_reason_column():
    page = render_board(sample_board("retry"))
    row = page[page.index("data-id='EV-0102'"):]
    row = row[: row.index("</details>")]
    assert "<th>reason</th>" in row and "이 이벤트가 보낸 말입니다" in row and "견준 앞선 말입니다 (EV-0101)" in row


def test_a_day_with_nothing_judged_says_so():
    board = sample_board("live_pick")
    empty = Board("live_pick", [], copy.copy(board.report), board_spec("live_pick"))
    empty.report.verdict_counts = {k: 0 for k in empty.report.verdict_counts}
    page = render_board(empty)
    assert "이 범위에는 판정한 항목이 없습니다" in page and "(검사할 판정 없음)" in page
    assert next_steps(empty.report, has_rows=False)[0].startswith("이 범위에는 판정한 항목이 없습니다")


def test_reentry_past_the_window_only_by_rounding_names_the_rounded_hours():
    _, rows, _, _ = sample_parts("handoff")
    r = next(r for r in rows if r["room_id"] == "R-55232")
    assert "24시간 17초" in r["summary"] and "반올림한 24.00시간" in r["summary"] and "24시간 안입니다" not in r["summary"]


def test_every_metric_says_what_it_rests_on_and_check_titles_are_korean():
    for name in ("persona", "live_pick", "retry", "handoff"):
        _, _, report, _ = sample_parts(name, golden=True)
        assert all(basis_of(name, m) for m in report.metrics)
        assert all(any("가" <= ch <= "힣" for ch in c.title) for c in report.checks), name


def test_the_aggregates_are_labelled_with_the_days_they_cover():
    from tests.evals.reports import forms, make_report

    rows, day = make_report("handoff", day="2026-10-01")
    md, _, _ = forms(day)
    assert "## 하루 집계 · 2026-10-01" in md and "| 그날 열린 대화 |" in md
    assert "<h2>하루 집계 · 2026-10-01</h2>" in render_board(Board("handoff", rows, day, board_spec("handoff")))
    rows, whole = make_report("handoff")
    md, _, _ = forms(whole)
    assert "## 집계 · 5일 (2026-09-30 ~ 2026-10-05)" in md and "하루 집계" not in md and "| 범위 안에 열린 대화 |" in md
    held = next(m for m in whole.metrics if m.name == "판정 보류")
    assert held.definition == "판정 보류 대화 / 범위 안에 열린 대화"
