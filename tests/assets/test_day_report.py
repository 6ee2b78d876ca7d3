"""The nightly report reads a day's verdict rows with the columns it reads of every row alone
(`Domain.report_columns`) and fills in the others for the rows it explains (golden-labelled) and the
rows its board shows: the report and the board are the same as from the rows read whole, in every
domain, on the sample (with golden labels) and on generated data (with the board's groups cut short,
so the rows shown are a few of many)."""

from __future__ import annotations

import pandas as pd
import pytest

import evals.board as B
from assets.common.day_report import fill_whole, golden_rows, light_columns, verdict_rows
from assets.common.wiring import chain_for
from assets.resources.warehouse import WarehouseResource
from evals import domains
from evals.board import Board, render_board
from schemas import column_kinds
from tests.conftest import SEEDS

DAY = "2026-09-08"


def _stored(tmp_path, name: str, rows: list[dict]):
    """The rows stored as the nightly chain stores a day's verdicts."""
    c = chain_for(domains.get(name))
    warehouse = WarehouseResource(url=f"sqlite:///{tmp_path / 'wh.sqlite'}")
    warehouse.replace_partition(c.table("verdicts"), DAY, pd.DataFrame(rows, columns=c.output_columns),
                                json_columns=c.verdict_json_columns, kinds=column_kinds(name, c.output_schema),
                                index_columns=(c.output_columns[0],))
    return c, warehouse


def _both(tmp_path, name: str, folder, golden_file=None):
    d = domains.get(name)
    judged = d.judge_dir(folder)
    checks, gated = d.check_dir(folder, judged.rows)
    golden = d.load_golden(golden_file) if golden_file else None
    c, warehouse = _stored(tmp_path, name, judged.rows)
    whole = c.records(warehouse.read_partition(c.table("verdicts"), DAY, c.verdict_json_columns))
    light = verdict_rows(c, warehouse, DAY)
    assert len(light) == len(whole) and all(list(r) == light_columns(c) for r in light)
    assert "evidence" not in light_columns(c) and len(light_columns(c)) < len(c.output_columns)
    fill_whole(c, warehouse, DAY, golden_rows(light, golden, d.board().id_field))

    def report(rows):
        return d.report(rows, golden, checks, gated.quarantine, gated.reconciliation, scope=f"{name} · {DAY}", judged=gated.normalised)

    a, b = report(whole), report(light)
    assert a.to_dict() == b.to_dict()
    page_whole = render_board(Board(name, whole, a, d.board()))
    page_light = render_board(Board(name, light, b, d.board(), evidence=lambda shown: fill_whole(c, warehouse, DAY, shown)))
    assert page_light == page_whole
    shown = sum("evidence" in r for r in light)
    return whole, light, shown


@pytest.mark.parametrize("name", ["live_pick", "persona", "retry", "handoff"])
def test_the_sample_s_report_and_board_are_the_same_from_the_report_s_columns_as_read_whole(name, tmp_path):
    whole, light, _ = _both(tmp_path, name, SEEDS / name, SEEDS / name / "golden.jsonl")
    # every row shown on the sample's board: all have their columns back, in order, equal to the stored ones
    assert [list(r.items()) for r in light] == [list(r.items()) for r in whole]


@pytest.mark.parametrize("name", ["live_pick", "persona", "retry", "handoff"])
def test_a_generated_day_s_board_reads_the_whole_rows_it_shows_only(name, tmp_path, monkeypatch):
    monkeypatch.setattr(B, "MAX_ITEMS_PER_GROUP", 5)
    from evals.boards import live_pick

    monkeypatch.setattr(live_pick, "MAX_WINDOWS", 3)
    monkeypatch.setattr(live_pick, "MAX_PER_WINDOW_REASON", 2)
    domains.get(name).generate(2_000, 1, tmp_path / "input")
    whole, light, shown = _both(tmp_path, name, tmp_path / "input")
    assert 0 < shown < len(whole) / 10


@pytest.mark.parametrize("name", ["persona", "handoff", "live_pick"])
def test_the_manual_checks_draw_the_same_sample_from_the_columns_they_read(name, tmp_path):
    from assets.common.chain import _manual_check_tables
    from evals.manual_checks import draw

    d = domains.get(name)
    judged = d.judge_dir(SEEDS / name)
    c, warehouse = _stored(tmp_path, name, judged.rows)
    tables = dict(judged.normalised.tables)
    for dataset in c.datasets:
        frame = tables[dataset]
        warehouse.replace_partition(c.table(dataset), DAY, frame[[col for col in c.stored_columns(dataset) if col in frame.columns]],
                                    json_columns=c.json_columns)
    read = _manual_check_tables(c, warehouse, DAY)
    whole = draw(name, judged.rows, tables)
    assert draw(name, judged.rows, read) == whole
    if name == "persona":  # the turns are read with the two columns the check reads, and it finds candidates
        assert sorted(read["turns"].columns) == ["turn_no", "user_text"] and whole["persona.1"]["ids"]
