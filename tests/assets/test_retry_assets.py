"""The retry assets materialised with test resources, as the nightly job runs them.

A partition is the judged scope: each surface's baseline is taken over the day's events.
The sample's second day holds a surface no other day uses, so every day reproduces the oracle.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from dagster import AssetKey, Definitions

from assets.common.chain import build_assets
from assets.common.wiring import chain_for
from evals.domains import get
from tests.assets.helpers import materialise_day, materialise_in_turn, oracle_rows, resources_in
from tests.conftest import SEEDS

DAY1, DAY2 = "2026-09-21", "2026-09-22"
DAY2_EVENTS = {"EV-1701", "EV-1702"}

CHAIN = chain_for(get("retry"))
"""retry has no asset module of its own: its chain is the shared one, wired from the registry."""
ASSETS = build_assets(CHAIN)


def _run(resources: dict, day: str, instance=None):
    return materialise_day(ASSETS, resources, day, instance)


def _expected(day: str) -> dict:
    return {r["event_id"]: r for r in oracle_rows("retry") if (r["event_id"] in DAY2_EVENTS) == (day == DAY2)}


@pytest.fixture(scope="module")
def day1(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("retry_assets")
    res = resources_in(tmp)
    return tmp, res, _run(res, DAY1)


def test_partition_reproduces_the_oracle_and_passes_every_check(day1):
    _, res, result = day1
    assert result.success
    checks = result.get_asset_check_evaluations()
    assert checks and all(c.passed for c in checks), [(c.check_name, c.description) for c in checks if not c.passed]
    names = {(c.asset_key.path[-1], c.check_name) for c in checks}
    assert {("verdicts", "recompute"), ("verdicts", "schema"), ("verdicts", "12_polite")} <= names
    assert {("interaction_events", "rows_reconcile"), ("surface_catalog", "expectations")} <= names

    verdicts = res["warehouse"].read_partition("retry_verdicts", DAY1, ("evidence",))
    expected = _expected(DAY1)
    assert len(verdicts) == len(expected) == 39
    for row in CHAIN.records(verdicts):
        exp = expected[row["event_id"]]
        assert (row["verdict"], row["surface_key"], row["matched_event_id"]) == (exp["verdict"], exp["surface_key"], exp["matched_event_id"])
        assert row["surface_baseline"] == float(Fraction(exp["surface_baseline"]))
        assert row["max_overlap"] == (None if exp["max_overlap"] is None else float(Fraction(exp["max_overlap"])))
        assert row["evidence"] and row["reason"]


def test_quarantine_reconciles_per_dataset(day1):
    _, res, _ = day1
    wh = res["warehouse"]
    q = wh.read_partition("retry_quarantine", DAY1)
    for dataset, n in (("interaction_events", 11), ("surface_catalog", 3)):
        raw = wh.count_partition(f"retry_raw_{dataset}", DAY1)
        assert int((q["dataset"] == dataset).sum()) == n
        assert raw == wh.count_partition(f"retry_{dataset}", DAY1) + n


def test_report_carries_the_sweep_and_the_golden_agreement(day1):
    tmp, _, result = day1
    mats = [m for m in result.get_asset_materialization_events() if m.asset_key == AssetKey(["retry", "agreement_report"])]
    md = mats[0].materialization.metadata["report"].value
    assert "12 / 14 (85.7%)" in md and "## 기준선 스윕" in md and "Cohen's kappa" in md
    data = json.loads((tmp / "reports" / "retry" / DAY1 / "report.json").read_text(encoding="utf-8"))
    # Day 1 has every retry of the sample but EV-1702 (rewrite, day 2).
    assert {s["factor"]: s["retries"] for s in data["baseline_sweep"]}["1"] == 11
    assert all(c["passed"] for c in data["checks"])


def test_second_day_and_rematerialising_replace_the_partition(tmp_path):
    wh = materialise_in_turn(resources_in(tmp_path), _run, (DAY2, DAY1, DAY2))
    assert wh.count_partition("retry_verdicts", DAY1) == 39
    rows = CHAIN.records(wh.read_partition("retry_verdicts", DAY2, ("evidence",)))
    assert {r["event_id"]: (r["verdict"], r["surface_baseline"]) for r in rows} == {
        "EV-1701": ("one_shot", 0), "EV-1702": ("reworded_retry", 0)}
    assert "기본값도 비어 있어" in rows[1]["reason"]


def test_a_day_without_events_gives_empty_tables_not_a_failure(tmp_path):
    res = resources_in(tmp_path)
    assert _run(res, "2026-11-29").success
    assert res["warehouse"].count_partition("retry_verdicts", "2026-11-29") == 0


def test_the_chain_loads_in_a_code_location_with_its_checks():
    defs = Definitions(assets=ASSETS, resources=resources_in(Path("/tmp")))
    graph = defs.get_repository_def().asset_graph
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"retry/raw_interaction_events", "retry/interaction_events", "retry/surface_catalog", "retry/quarantine",
            "retry/verdicts", "retry/agreement_report"} <= keys
    checks = {n for a, n in ((c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys) if a == "retry/verdicts"}
    from evals.check_titles import dagster_name, keys

    # The report's check ids, `12.polite` → `12_polite`: the same keys in Dagster.
    assert checks == {"schema", "recompute", *(dagster_name(k) for k in keys("retry"))} and "12_polite" in checks
    blocking = {s.name for s in defs.get_assets_def(AssetKey(["retry", "verdicts"])).check_specs if s.blocking}
    assert blocking == {"schema", "recompute"}


def test_the_same_assets_run_on_postgresql(tmp_path, postgres_url):
    res = resources_in(tmp_path, url=postgres_url)
    assert _run(res, DAY1).success
    assert _run(res, DAY1).success
    assert res["warehouse"].count_partition("retry_verdicts", DAY1) == 39
    rows = CHAIN.records(res["warehouse"].read_partition("retry_verdicts", DAY1, ("evidence",)))
    assert {r["event_id"]: r["verdict"] for r in rows} == {k: e["verdict"] for k, e in _expected(DAY1).items()}


def test_a_reference_table_with_no_valid_rows_blocks_the_verdicts(tmp_path):
    """An empty (here: wholly quarantined) surface_catalog fails a blocking check naming the table."""
    root = tmp_path / "raw"
    (root / "retry").mkdir(parents=True)
    for name in ("interaction_events", "surface_catalog"):
        (root / "retry" / f"{name}.jsonl").write_bytes((SEEDS / "retry" / f"{name}.jsonl").read_bytes())
    (root / "retry" / "surface_catalog.jsonl").write_text('{"surface_key": "  ", "surface_name": "빈 키"}\n', encoding="utf-8")
    result = materialise_day(ASSETS, resources_in(tmp_path, raw_root=root), DAY1, raise_on_error=False)
    check = next(c for c in result.get_asset_check_evaluations() if c.check_name == "has_valid_rows")
    assert check.asset_key.path[-1] == "surface_catalog" and not check.passed
    assert "surface_catalog has no valid rows" in check.description
    materialised = {m.asset_key.path[-1] for m in result.get_asset_materialization_events() for m in [m.materialization]}
    assert "verdicts" not in materialised, "a blocking check stops the verdicts"
