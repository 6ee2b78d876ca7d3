"""A stored day's board asks the warehouse for its counts and the rows it shows, and is the same page
as the board laid out over every row of the day read back (what the admin pages served before)."""

from __future__ import annotations

import re

import pytest

from assets import live_pick, persona
from assets.common.chain import build_assets
from assets.common.wiring import chain_for
from evals import board as board_module
from evals.board import Board, render_board
from evals.boards import live_pick as live_pick_board
from evals.domains import get
from tests.assets.helpers import materialise_day, resources_in
from tests.conftest import SEEDS
from web.admin.stored_run import stored_run

DAYS = {"persona": "2026-10-05", "live_pick": "2026-09-08", "retry": "2026-09-21"}
DOMAINS = sorted(DAYS)


def _assets(domain: str):
    return live_pick.assets if domain == "live_pick" else build_assets(persona.CHAIN if domain == "persona" else chain_for(get(domain)))


def _both_boards(tmp_path, url: str, domain: str, day: str) -> tuple[str, str, str]:
    """The stored day's board as served, the board over every stored row read back in the order the
    table holds them, and the board over the day judged again from the raw folder (both over the stored report)."""
    assert materialise_day(_assets(domain), resources_in(tmp_path, url=url), day).success
    run = stored_run(url, domain, f"day-{day}")
    bounded = run.board(run.report)
    assert bounded.rows == [] and bounded.stored is not None
    chain = bounded.stored.chain
    stored = chain.records(run.warehouse.read_rows(chain.table("verdicts"), day, chain.verdict_json_columns,
                                                   order_by="ctid" if run.warehouse.is_postgres else "rowid"))
    judged = get(domain).judge_dir(SEEDS / domain, day=day).rows
    return tuple(render_board(b) for b in (bounded, Board(domain, stored, run.report, run.spec), Board(domain, judged, run.report, run.spec)))


def _limits(monkeypatch) -> None:
    """Small limits, so the seed's days are cut as a large day is."""
    monkeypatch.setattr(board_module, "MAX_ITEMS_PER_GROUP", 2)
    monkeypatch.setattr(live_pick_board, "MAX_WINDOWS", 3)
    monkeypatch.setattr(live_pick_board, "MAX_PER_WINDOW_REASON", 1)


def shown(page: str) -> list[tuple[str, str, str]]:
    """The page's items with their anchors, in page order, and its count per verdict."""
    return (re.findall(r"<details class='item' id='(i-\d+)' data-id='([^']*)' data-verdict='([^']*)'", page)
            + re.findall(r"data-verdict-filter='([^']*)'.*?<b>(\d+)</b>", page))


def _same(bounded: str, every: str, judged: str) -> None:
    assert "요약 화면" in every and every.count("<details class='item' ") > 2  # the limits cut the day
    assert bounded == every
    # The stored rows are in the order the day was judged (live_pick's stored rows carry the sheet
    # version the nightly chain adds, so only what is shown where is compared).
    assert shown(bounded) == shown(judged)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_stored_day_s_board_is_the_board_of_every_row(tmp_path, monkeypatch, domain):
    _limits(monkeypatch)
    bounded, every, judged = _both_boards(tmp_path, f"sqlite:///{tmp_path / 'wh.sqlite'}", domain, DAYS[domain])
    _same(bounded, every, judged)
    if domain == "live_pick":
        assert "구간은 앞의 3개만" in bounded


@pytest.mark.postgres
@pytest.mark.parametrize("domain", DOMAINS)
def test_a_stored_day_s_board_is_the_board_of_every_row_on_postgresql(tmp_path, monkeypatch, postgres_url, domain):
    _limits(monkeypatch)
    _same(*_both_boards(tmp_path, postgres_url, domain, DAYS[domain]))
