"""The persona assets materialised with test resources: the daily chain for the comparison
days, then the prompt comparison and the review queue that read every judged day.
"""

from __future__ import annotations

import json

import pytest
from dagster import AssetKey, DagsterInstance, materialize
from statsmodels.stats.contingency_tables import mcnemar

from assets import persona
from assets.resources.reports import ReportsResource
from rules.persona import verdicts as V
from tests.assets.helpers import materialise_day, materialise_in_turn, oracle_rows, resources_in
from tests.conftest import SEEDS

DAY1, DAY2 = "2026-10-05", "2026-10-06"  # p12 and p13 of CH-002
COMPARISON = AssetKey(["persona", "prompt_comparison"])
REVIEW = AssetKey(["persona", "review_queue"])


def _run_day(resources: dict, day: str, instance):
    return materialise_day(persona.assets, resources, day, instance, selection=_daily_keys())


def _daily_keys() -> list[AssetKey]:
    keys = []
    for a in persona.assets:
        for k in a.keys:
            if k not in (COMPARISON, REVIEW):
                keys.append(k)
    return keys


def _expected(day: str) -> dict[str, dict]:
    days = {}
    for line in (SEEDS / "persona" / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        days.setdefault(t["turn_no"], t["created_at"][:10])
    return {r["turn_no"]: r for r in oracle_rows("persona") if days[r["turn_no"]] == day}


@pytest.fixture(scope="module")
def two_days(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("persona_assets")
    res = resources_in(tmp)
    instance = DagsterInstance.ephemeral()
    results = {day: _run_day(res, day, instance) for day in (DAY1, DAY2)}
    return tmp, res, instance, results


def test_the_asset_set_holds_the_chain_and_the_cross_day_assets():
    keys = {k for a in persona.assets for k in a.keys}
    for name in ("raw_profiles", "raw_turns", "profiles", "turns", "quarantine", "verdicts", "agreement_report",
                 "prompt_comparison", "review_queue"):
        assert AssetKey(["persona", name]) in keys, name


@pytest.mark.parametrize("day", [DAY1, DAY2])
def test_each_day_succeeds_and_every_asset_check_passes(two_days, day):
    _, _, _, results = two_days
    result = results[day]
    assert result.success
    checks = result.get_asset_check_evaluations()
    assert checks and all(c.passed for c in checks), [(c.asset_key.path[-1], c.check_name) for c in checks if not c.passed]
    names = {(c.asset_key.path[-1], c.check_name) for c in checks}
    for n in ("schema", "1_code_enum", "2_required_filled", "3_stated_age", "4_evidence_fields", "5_evidence_values",
              "6_forbidden_topic", "7_polite", "recompute"):
        assert ("verdicts", n) in names, n
    for d in ("profiles", "turns"):
        assert (d, "rows_reconcile") in names and (d, "expectations") in names


@pytest.mark.parametrize("day", [DAY1, DAY2])
def test_each_day_reproduces_the_oracle(two_days, day):
    _, res, _, _ = two_days
    verdicts = res["warehouse"].read_partition("persona_verdicts", day, ("evidence",))
    expected = _expected(day)
    assert len(verdicts) == len(expected) == 200
    assert not verdicts["turn_no"].duplicated().any()
    for row in verdicts.to_dict("records"):
        exp = expected[row["turn_no"]]
        assert row["persona_code"] == exp["persona_code"], row["turn_no"]
        assert (row["profile_no"] or None) == exp["profile_no"]
        assert isinstance(row["evidence"], list) and row["evidence"]


@pytest.mark.parametrize("day", [DAY1, DAY2])
def test_each_day_quarantine_reconciles(two_days, day):
    _, res, _, _ = two_days
    wh = res["warehouse"]
    q = wh.read_partition("persona_quarantine", day)
    for dataset, raw, kept in (("profiles", 15, 12), ("turns", 200, 200)):
        assert wh.count_partition(f"persona_raw_{dataset}", day) == raw
        assert wh.count_partition(f"persona_{dataset}", day) == kept
        assert raw == kept + int((q["dataset"] == dataset).sum())
    assert sorted(q["reason_code"]) == ["duplicate_id", "missing_id", "schema"]  # the profile snapshot's three


def test_day_counts_per_code(two_days):
    _, res, _, _ = two_days
    for day, counts in ((DAY1, {V.CONSISTENT: 169, V.AGE_CONFLICT: 8, V.JOB_CONFLICT: 10, V.FORBIDDEN_TOPIC: 9, V.REPLY_EMPTY: 4}),
                        (DAY2, {V.CONSISTENT: 185, V.AGE_CONFLICT: 3, V.JOB_CONFLICT: 6, V.FORBIDDEN_TOPIC: 3, V.REPLY_EMPTY: 3})):
        v = res["warehouse"].read_partition("persona_verdicts", day)
        assert v["persona_code"].value_counts().to_dict() == counts


def test_the_report_is_written(two_days):
    tmp, _, _, results = two_days
    mats = [m for m in results[DAY1].get_asset_materialization_events() if m.asset_key == AssetKey(["persona", "agreement_report"])]
    md = mats[0].materialization.metadata["report"].value
    assert "판정 일치" in md
    folder = tmp / "reports" / "persona" / DAY1
    assert {p.name for p in folder.iterdir()} >= {"report.md", "report.html", "report.json"}
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert all(c["passed"] for c in data["checks"])
    assert data["wrong_cases"] == []  # the deliberate disagreements are all on 2026-10-04


def test_rematerialising_a_day_replaces_it(tmp_path):
    wh = materialise_in_turn(resources_in(tmp_path), _run_day, (DAY1, DAY2, DAY1))
    for table, day, n in (("persona_verdicts", DAY1, 200), ("persona_verdicts", DAY2, 200), ("persona_turns", DAY1, 200),
                          ("persona_raw_turns", DAY1, 200), ("persona_quarantine", DAY1, 3), ("persona_checks", DAY1, 9)):
        assert wh.count_partition(table, day) == n, (table, day)
    assert not wh.read_partition("persona_verdicts", DAY1)["turn_no"].duplicated().any()


# -- the cross-day assets ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cross_day(two_days):
    tmp, res, instance, _ = two_days
    result = materialize(persona.assets, selection=[COMPARISON, REVIEW], resources=res, instance=instance)
    return tmp, result


def _metadata(result, key: AssetKey) -> dict:
    mats = [m for m in result.get_asset_materialization_events() if m.asset_key == key]
    assert len(mats) == 1
    return mats[0].materialization.metadata


def test_cross_day_assets_succeed(cross_day):
    _, result = cross_day
    assert result.success


def test_prompt_comparison_metadata(cross_day):
    tmp, result = cross_day
    meta = _metadata(result, COMPARISON)
    assert meta["rate_a"].value == "27 / 196 (13.8%)"
    assert meta["rate_b"].value == "12 / 197 (6.1%)"
    assert "McNemar" in meta["test"].value
    assert meta["p_value"].value == pytest.approx(mcnemar([[4, 22], [7, 161]], exact=True).pvalue)
    md = meta["comparison"].value
    assert "job_conflict → consistent: 9" in md
    data = json.loads((tmp / "reports" / "persona" / "comparison" / "p12_vs_p13.json").read_text(encoding="utf-8"))
    assert data["table"] == [[4, 22], [7, 161]] and data["pairs"] == 194


def test_review_queue_file_has_twenty_rows(cross_day):
    tmp, result = cross_day
    assert _metadata(result, REVIEW)["items"].value == 20
    path = tmp / "reports" / "persona" / "review" / "review_queue.jsonl"
    rows = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    assert len(rows) == 20
    assert all(r["reviewer_decision"] is None and r["reviewer_note"] is None for r in rows)
    assert all(r["turn_no"].startswith(("TN-12", "TN-13")) for r in rows)  # only the two judged days
    assert all(r["cue_phrase"] in r["user_text"] for r in rows)
    assert (path.parent / "review_queue.md").is_file()


def test_comparison_with_explicit_versions_via_run_config(two_days, tmp_path):
    _, res, instance, _ = two_days
    res = {**res, "reports": ReportsResource(root=str(tmp_path / "r2"))}
    result = materialize(persona.assets, selection=[COMPARISON], resources=res, instance=instance,
                         run_config={"ops": {"persona__prompt_comparison": {"config": {"a": "p13", "b": "p12"}}}})
    assert result.success
    meta = _metadata(result, COMPARISON)
    assert meta["rate_a"].value == "12 / 197 (6.1%)" and meta["rate_b"].value == "27 / 196 (13.8%)"
