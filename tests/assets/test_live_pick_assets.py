"""The live_pick assets materialised with test resources, as the nightly job runs them."""

from __future__ import annotations

import json

import pandas as pd
from dagster import AssetKey, materialize

from assets import live_pick
from tests.assets.helpers import materialise_day, materialise_in_turn, oracle_rows, resources_in
from tests.conftest import SEEDS

DAY1, DAY2 = "2026-09-08", "2026-09-09"


def _run(resources: dict, day: str, instance=None):
    return materialise_day(live_pick.assets, resources, day, instance)


def _expected(day: str) -> dict:
    return {r["msg_id"]: r for r in oracle_rows("live_pick") if r["window_start"].startswith(day)}


def test_partition_reproduces_the_oracle_and_passes_every_check(tmp_path):
    res = resources_in(tmp_path)
    result = _run(res, DAY1)
    assert result.success
    checks = result.get_asset_check_evaluations()
    assert checks and all(c.passed for c in checks), [c.check_name for c in checks if not c.passed]
    names = {(c.asset_key.path[-1], c.check_name) for c in checks}
    assert ("verdicts", "recompute") in names and ("verdicts", "13_filled_when") in names
    assert ("live_chat", "rows_reconcile") in names and ("viewer_relation", "expectations") in names

    verdicts = res["warehouse"].read_partition("live_pick_verdicts", DAY1, ("evidence",))
    expected = _expected(DAY1)
    assert len(verdicts) == len(expected) == 51
    for row in verdicts.to_dict("records"):
        exp = expected[row["msg_id"]]
        assert row["verdict"] == exp["verdict"]
        assert (None if pd.isna(row["rank_in_window"]) else int(row["rank_in_window"])) == exp["rank_in_window"]
        assert (None if pd.isna(row["cooldown_elapsed_sec"]) else int(row["cooldown_elapsed_sec"])) == exp["cooldown_elapsed_sec"]
        assert row["window_start"] == exp["window_start"]


def test_rematerialising_a_partition_replaces_it(tmp_path):
    wh = materialise_in_turn(resources_in(tmp_path), _run, (DAY1, DAY2, DAY1))
    for table, day, n in (("live_pick_verdicts", DAY1, 51), ("live_pick_verdicts", DAY2, 29), ("live_pick_quarantine", DAY1, 9)):
        assert wh.count_partition(table, day) == n
    v = wh.read_partition("live_pick_verdicts", DAY1)
    assert not v["msg_id"].duplicated().any()


def test_quarantine_reconciles_per_dataset(tmp_path):
    res = resources_in(tmp_path)
    assert _run(res, DAY1).success
    wh = res["warehouse"]
    q = wh.read_partition("live_pick_quarantine", DAY1)
    for dataset in ("live_chat", "character_sheet", "viewer_relation"):
        raw = wh.count_partition(f"live_pick_raw_{dataset}", DAY1)
        assert raw == wh.count_partition(f"live_pick_{dataset}", DAY1) + int((q["dataset"] == dataset).sum())
    assert set(q["reason_code"]) >= {"duplicate_id", "invalid_json", "reply_after_line", "schema", "missing_id", "bad_timestamp"}


def test_report_is_written_and_shown_as_markdown(tmp_path):
    res = resources_in(tmp_path)
    result = _run(res, DAY1)
    mats = [m for m in result.get_asset_materialization_events() if m.asset_key == AssetKey(["live_pick", "agreement_report"])]
    md = mats[0].materialization.metadata["report"].value
    assert "판정 일치" in md and "38 / 40 (95.0%)" in md and "Cohen's kappa" in md
    folder = tmp_path / "reports" / "live_pick" / DAY1
    assert {p.name for p in folder.iterdir()} == {"report.md", "report.html", "report.json", "board.html"}
    # No admin address configured: no file:// link (a browser will not open it from the Dagster UI), but how to get one.
    board = mats[0].materialization.metadata["board"].value
    assert "file://" not in board and "VERDICTS_ADMIN_URL" in board and str(folder / "board.html") in board
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert {w["id"] for w in data["wrong_cases"]} == {"MSG-20260908-2401", "MSG-20260908-2405"}


def test_report_links_the_served_admin_pages_when_their_address_is_configured(tmp_path):
    from dagster import UrlMetadataValue

    from assets.resources.reports import ReportsResource

    res = {**resources_in(tmp_path), "reports": ReportsResource(root=str(tmp_path / "reports"), admin_url="http://127.0.0.1:8765/")}
    result = _run(res, DAY1)
    meta = next(m for m in result.get_asset_materialization_events()
                if m.asset_key == AssetKey(["live_pick", "agreement_report"])).materialization.metadata
    assert isinstance(meta["board"], UrlMetadataValue)
    assert meta["board"].value == f"http://127.0.0.1:8765/admin/live_pick/runs/day-{DAY1}/board"
    assert meta["report_page"].value == f"http://127.0.0.1:8765/admin/live_pick/runs/day-{DAY1}/report"


def test_a_day_without_data_gives_empty_tables_not_a_failure(tmp_path):
    res = resources_in(tmp_path)
    result = _run(res, "2026-11-29")
    assert result.success
    assert res["warehouse"].count_partition("live_pick_verdicts", "2026-11-29") == 0
    assert res["warehouse"].count_partition("live_pick_raw_live_chat", "2026-11-29") == 0


def test_day_folders_take_precedence_over_flat_files(tmp_path):
    root = tmp_path / "raw"
    day = root / "live_pick" / DAY2
    day.mkdir(parents=True)
    for name in ("character_sheet", "viewer_relation", "golden"):
        (root / "live_pick" / f"{name}.jsonl").write_bytes((SEEDS / "live_pick" / f"{name}.jsonl").read_bytes())
    lines = (SEEDS / "live_pick" / "live_chat.jsonl").read_text(encoding="utf-8").splitlines()
    day_lines = [l for l in lines if '"2026-09-09T' in l][:5]
    (day / "live_chat.jsonl").write_text("\n".join(day_lines) + "\n", encoding="utf-8")
    res = resources_in(tmp_path, raw_root=root)
    assert _run(res, DAY2).success
    assert res["warehouse"].count_partition("live_pick_verdicts", DAY2) == 5


def test_a_file_missing_a_required_column_fails_the_raw_asset_naming_it(tmp_path):
    root = tmp_path / "raw" / "live_pick"
    root.mkdir(parents=True)
    for name in ("character_sheet", "viewer_relation"):
        (root / f"{name}.jsonl").write_bytes((SEEDS / "live_pick" / f"{name}.jsonl").read_bytes())
    (root / "live_chat.jsonl").write_text(json.dumps({"msg_id": "M-1", "sent_at": "2026-09-08T21:00:00"}) + "\n", encoding="utf-8")
    res = resources_in(tmp_path, raw_root=tmp_path / "raw")
    result = materialize(live_pick.assets, resources=res, partition_key=DAY1, raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    assert "live_chat.jsonl" in str(failure.event_specific_data.error) and "character_id" in str(failure.event_specific_data.error)


def test_the_same_assets_run_on_postgresql(tmp_path, postgres_url):
    res = resources_in(tmp_path, url=postgres_url)
    assert _run(res, DAY1).success
    assert _run(res, DAY1).success
    assert res["warehouse"].count_partition("live_pick_verdicts", DAY1) == 51
    assert res["warehouse"].count_partition("live_pick_quarantine", DAY1) == 9
