"""The nightly chain in parts stores what the whole-table chain stores: on generated data of every
domain (`verdicts generate`), read in blocks of a few dozen lines and judged in parts of a few
hundred rows, the raw, normalised and quarantine tables, the verdicts (and handoff's day tables)
and every check result equal those of the day gated, judged and checked in one piece
(`whole_day`). With three check steps the parts are checked in steps of their own, from what the
warehouse holds."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pandas as pd
import pytest
import sqlalchemy as sa
from dagster import AssetSelection, DagsterInstance

from assets.common import day_plan
from assets.common.chain import build_assets
from assets.common.wiring import chain_for
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource
from evals import domains
from rules.common import raw_chunks
from tests.assets.helpers import materialise_day, resources_in
from tests.assets.whole_day import judge_day, store_day

pytestmark = pytest.mark.slow

ROWS = 2_000
DAYS = {"persona": "2026-10-05", "live_pick": "2026-09-08", "retry": "2026-09-21", "handoff": "2026-10-04"}
"""Each domain's busiest sample day (the benchmark's nightly day)."""


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Each domain's generated folder, and at the end of every dataset gated in blocks: a copy of a line
    of the judged day (an id met blocks earlier) and a line that is not JSON (it joins that day)."""
    root = tmp_path_factory.mktemp("generated")
    for name in domains.names():
        spec = domains.get(name).spec
        domains.get(name).generate(ROWS, 1, root / name)
        for dataset in spec.day_parts.chunked:
            path = root / name / f"{dataset}.jsonl"
            lines = path.read_text(encoding="utf-8").splitlines()
            field = spec.time_fields.get(dataset)
            copied = next(line for line in lines[1:] if not field or DAYS[name] in line) if field else lines[1]
            path.write_text("\n".join([*lines, copied, '{"broken": '] ) + "\n", encoding="utf-8")
    _repeat_across_days(root / "handoff" / "chat_messages.jsonl", DAYS["handoff"])
    return root


def _repeat_across_days(path, day: str) -> None:
    """A message of the day repeated the next day in another customer's room: the later copy holds
    that room, which only a view of both rooms together can tell (`DayParts.merges`)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [r for r in (json.loads(line) for line in lines if line.startswith("{") and line.endswith("}"))
            if isinstance(r.get("sent_at"), str) and isinstance(r.get("room_id"), str)]
    nxt = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    first = next(r for r in rows if r["sent_at"].startswith(day))
    other = next(r for r in rows if r["sent_at"].startswith(nxt) and r["room_id"] != first["room_id"])
    copy = {**first, "room_id": other["room_id"], "sent_at": other["sent_at"]}
    path.write_text("\n".join([*lines, json.dumps(copy, ensure_ascii=False)]) + "\n", encoding="utf-8")


def _module_chain(name: str):
    import assets.handoff
    import assets.live_pick
    import assets.persona

    own = {"persona": assets.persona, "live_pick": assets.live_pick, "handoff": assets.handoff}
    if name in own:
        return own[name].CHAIN, own[name].assets
    c = chain_for(domains.get(name))
    return c, build_assets(c)


def _days(c, day: str) -> list[str]:
    w = c.window
    return [(date.fromisoformat(day) + timedelta(days=k)).isoformat() for k in range(-w.before, w.after + 1)] if w else [day]


def _tables(url: str, c, days: list[str]) -> dict[str, pd.DataFrame]:
    """Every table of the domain, the days' rows as text in a stable order, without the storage's own columns."""
    engine = sa.create_engine(url)
    out = {}
    try:
        with engine.connect() as conn:
            for table in sorted(t for t in sa.inspect(conn).get_table_names() if t.startswith(f"{c.domain}_")):
                marks = ", ".join(f"'{d}'" for d in days)
                frame = pd.read_sql_query(sa.text(f'SELECT * FROM "{table}" WHERE partition_key IN ({marks})'), conn)
                frame = frame.drop(columns=[x for x in frame.columns if x == "unit_bucket"]).astype(str)
                cols = sorted(frame.columns)
                out[table] = frame[cols].sort_values(cols).reset_index(drop=True)
    finally:
        engine.dispose()
    return out


@pytest.mark.parametrize(("name", "steps", "store"), [
    *[(name, steps, "sqlite") for name in DAYS for steps in (1, 3)],
    pytest.param("live_pick", 3, "postgres", marks=pytest.mark.postgres),
    pytest.param("handoff", 1, "postgres", marks=pytest.mark.postgres),
])
def test_a_day_in_parts_stores_the_tables_and_check_results_of_the_whole_day(name, steps, store, generated, tmp_path, monkeypatch,
                                                                             request):
    monkeypatch.setattr(raw_chunks, "BLOCK_BYTES", 24 << 10)  # a few dozen lines a block
    monkeypatch.setattr(day_plan, "PART_ROWS", 150)
    monkeypatch.setenv("VERDICTS_CHECK_STEPS", str(steps))
    c, assets = _module_chain(name)
    day = DAYS[name]
    days = _days(c, day)

    if store == "postgres":
        make = request.getfixturevalue("make_postgres_url")
        parts_url, whole_url = make(), make()
    else:
        parts_url, whole_url = f"sqlite:///{tmp_path / 'parts.sqlite'}", f"sqlite:///{tmp_path / 'whole.sqlite'}"
    resources = resources_in(tmp_path, parts_url, generated)
    instance = DagsterInstance.ephemeral()
    ingest = AssetSelection.assets(*[c.key(f"raw_{d}") for d in c.datasets], *[c.key(d) for d in c.datasets], c.key("quarantine"))
    for d in days:
        assert materialise_day(assets, resources, d, instance, selection=ingest).success
    judged = materialise_day(assets, resources, day, instance, selection=AssetSelection.assets(c.key("verdicts")))
    assert judged.success
    checks = {e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data
              for e in judged.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"}
    parts = [e for e in judged.all_events if e.is_step_success and "_check_parts[" in e.step_key]
    if steps > 1:
        assert len(parts) > 1  # the day was checked in several steps of its own

    warehouse = WarehouseResource(url=whole_url)
    for d in days:
        store_day(c, RawFilesResource(root=str(generated)), warehouse, d)
    want_checks = judge_day(c, warehouse, day, set(days))

    got, want = _tables(parts_url, c, days), _tables(whole_url, c, days)
    assert set(want) <= set(got)
    for table in want:
        assert len(got[table]) == len(want[table]), table
        pd.testing.assert_frame_equal(got[table], want[table], obj=table)
    assert len(got[c.table("verdicts")]) > 100 or name == "handoff"
    q = got[c.table("quarantine")]
    for dataset in c.day_parts.chunked:  # the lines added at the end of each file were met blocks after the ones they repeat
        assert {"duplicate_id", "invalid_json"} <= set(q.loc[q["dataset"] == dataset, "reason_code"]), dataset

    stored = WarehouseResource(url=parts_url).read_partition(c.table("checks"), day, ("failing_ids",))
    found = {r["id"]: (bool(r["passed"]), sorted(r["failing_ids"] or [])) for r in stored.to_dict("records")}
    found.pop("window_complete", None)  # the chain's own check of a day window, not one of the domain's
    assert found == {r.id: (r.passed, sorted(r.failing_ids)) for r in want_checks}
    assert {k for k, v in checks.items() if not v.passed} == {k.replace(".", "_") for k, (ok, _) in found.items() if not ok}
