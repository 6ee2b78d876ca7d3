"""The static board of a large day stays bounded: the first items of each group, every count, and a
sentence saying the page is cut and where the rest is listed."""

from __future__ import annotations

import json
import re

import pytest

import evals.board as B
from evals import domains
from evals.board import Board, Rest, board_from_dir, render_board
from tests.board import Page, available, sample_board

BOUND = 5_000_000
"""Bytes a board may take at any size: 1.1–3.9 MB were measured at 60,000 rows (400 items per group
keep the seed samples whole; live_pick shows 40 windows)."""
SMALL, LARGE = 20_000, 60_000


@pytest.fixture(scope="module")
def sizes(tmp_path_factory):
    got = {}

    def of(name: str, rows: int) -> str:
        if (name, rows) not in got:
            folder = tmp_path_factory.mktemp(f"{name}-{rows}")
            domains.get(name).generate(rows, 1, folder)
            got[name, rows] = board_from_dir(domains.get(name), folder)
        return got[name, rows]

    return of


@pytest.mark.parametrize("name", ["live_pick", "persona", "retry", "handoff"])
def test_a_large_day_s_board_stays_under_a_bound_that_does_not_grow_with_rows(name, sizes):
    if not available(name):
        pytest.skip(f"{name} not registered")
    small, large = sizes(name, SMALL), sizes(name, LARGE)
    assert len(small.encode()) < BOUND and len(large.encode()) < BOUND
    if name == "live_pick":  # its windows fill their caps already at the smaller size: the page barely moves
        assert len(large.encode()) < 1.05 * len(small.encode())
    page = Page(large)
    groups = len(domains.get(name).board().order) + 1
    assert len(page.items) <= groups * B.MAX_ITEMS_PER_GROUP
    counts = re.search(r"판정 (\d+)건 가운데 (\d+)건만 실었습니다", large)
    assert counts and int(counts.group(2)) == len(page.items) < int(counts.group(1))
    # every row is counted in the chips even though few are shown
    data = json.loads(re.search(r"<script type='application/json' id='board-data'>(.*?)</script>", large).group(1))
    assert sum(data["counts"].values()) == int(counts.group(1))


def test_the_cut_page_says_where_the_rest_is_listed(sizes, monkeypatch):
    if not available("live_pick") or not available("persona"):
        pytest.skip("live_pick or persona not registered")
    html = sizes("live_pick", LARGE)
    assert "전체는 판정 표에 있습니다" in html  # a file of `verdicts board` knows no server
    monkeypatch.setattr(B, "MAX_ITEMS_PER_GROUP", 3)
    board: Board = sample_board("persona")
    board.rest = Rest("/admin/persona/runs/day-2026-10-05/items", link=False)  # the nightly file without VERDICTS_ADMIN_URL
    nightly = render_board(board)
    assert "<code>/admin/persona/runs/day-2026-10-05/items?page=1</code>" in nightly
    assert "<code>/admin/persona/runs/day-2026-10-05/items?verdict=consistent</code>" in nightly
    board.rest = Rest("http://127.0.0.1:8765/admin/persona/runs/day-2026-10-05/items")
    assert "href='http://127.0.0.1:8765/admin/persona/runs/day-2026-10-05/items?verdict=consistent'" in render_board(board)


def test_a_page_that_holds_every_row_says_nothing_about_cutting():
    if not available("live_pick"):
        pytest.skip("live_pick not registered")
    html = render_board(sample_board("live_pick"))
    assert "요약 화면" not in html and "표시 한도" not in html
