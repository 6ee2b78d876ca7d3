"""A day's raw tables, normalised tables and quarantine are one step: the graph still shows every
table, a run pays one step for them, and any subset can be materialised on its own."""

from __future__ import annotations

from dagster import AssetKey, AssetSelection

from assets.common.chain import build_assets
from assets.common.wiring import chain_for
from evals.domains import get
from orchestration.definitions import defs
from tests.assets.helpers import materialise_day, resources_in

DAY = "2026-10-04"


def test_the_nightly_job_runs_one_ingest_step_per_domain():
    nodes = sorted(n.name for n in defs.resolve_job_def("nightly").nodes)
    assert nodes == ["handoff_normalise",
                     "live_pick__agreement_report", "live_pick__verdicts", "live_pick_normalise",
                     "persona__agreement_report", "persona__verdicts", "persona_normalise",
                     "retry__agreement_report", "retry__verdicts", "retry_normalise"]
    graph = defs.resolve_asset_graph()
    for name in ("persona", "live_pick", "retry", "handoff"):
        spec = get(name).spec
        for d in spec.datasets:  # the raw table still stands before its normalised table
            assert AssetKey([name, f"raw_{d}"]) in graph.get(AssetKey([name, d])).parent_keys


def test_a_raw_table_can_be_materialised_alone_and_normalised_later(tmp_path):
    assets = build_assets(chain_for(get("persona")))
    resources = resources_in(tmp_path)
    raw = materialise_day(assets, resources, DAY, selection=AssetSelection.assets(AssetKey(["persona", "raw_turns"])))
    assert raw.success
    materialised = {e.asset_key.to_user_string() for e in raw.get_asset_materialization_events()}
    assert materialised == {"persona/raw_turns"}
    wh = resources["warehouse"]
    assert wh.count_partition("persona_raw_turns", DAY) > 0
    assert wh.count_partition("persona_turns", DAY) == 0  # nothing normalised yet

    rest = materialise_day(assets, resources, DAY, selection=AssetSelection.assets(
        AssetKey(["persona", "raw_profiles"]), AssetKey(["persona", "profiles"]), AssetKey(["persona", "turns"]),
        AssetKey(["persona", "quarantine"])))
    assert rest.success
    checks = {(c.asset_key.to_user_string(), c.check_name, c.passed) for c in rest.get_asset_check_evaluations()}
    assert ("persona/turns", "rows_reconcile", True) in checks and ("persona/profiles", "expectations", True) in checks
    assert wh.count_partition("persona_turns", DAY) > 0
