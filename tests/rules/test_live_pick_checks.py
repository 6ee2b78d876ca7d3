"""Seed 001's automatic checks, the output schema and the re-computation, on the sample data.

The engine's own output must pass every check; then each test injects exactly one fault into
a deep copy of those rows and expects the named check to fail, naming the faulty line (and
no other line).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from rules.common.jsonl import read_jsonl_objects
from rules.live_pick import engine
from rules.live_pick import verdicts as V
from rules.live_pick.checks import CHECKS, run_checks
from rules.live_pick.config import load_config
from rules.live_pick.normalise import load_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "seeds" / "live_pick"

SEED_ORDER = [
    "schema",
    "1.verdict_enum",
    "2.required_filled",
    "3.ranges",
    "4.cooldown",
    "5.rank",
    "6.evidence_fields",
    "7.evidence_values",
    "8.polite",
    "9.empty_tags",
    "10.rule_order",
    "11.closeness",
    "12.vocabulary",
    "13.filled_when",
    "recompute",
]


@pytest.fixture(scope="module")
def sample():
    config = load_config()
    norm = load_dir(SAMPLE, config)
    rows = engine.records(engine.judge(norm.chat, norm.sheet, norm.relation, config))
    return norm, rows, config


def results(sample, rows) -> dict:
    norm, _, config = sample
    return {r.id: r for r in run_checks(norm, rows, config)}


def row_of(rows: list, msg_id: str) -> dict:
    found = [r for r in rows if isinstance(r, dict) and r.get("msg_id") == msg_id]
    assert len(found) == 1, f"{msg_id} should have exactly one row"
    return found[0]


def evidence_of(row: dict, dataset: str, field: str) -> dict:
    found = [e for e in row["evidence"] if e["dataset"] == dataset and e["field"] == field]
    assert found, f"{row['msg_id']} cites no {dataset}.{field}"
    return found[0]


# -- the clean output ------------------------------------------------------------------------


def test_checks_run_in_seed_order_with_their_ids(sample):
    _, rows, _ = sample
    assert list(results(sample, rows)) == SEED_ORDER
    assert len(CHECKS) == len(SEED_ORDER)


def test_every_check_passes_on_the_engine_output(sample):
    _, rows, _ = sample
    assert len(rows) == 80
    failed = {k: r.detail for k, r in results(sample, rows).items() if not r.passed}
    assert failed == {}
    for r in results(sample, rows).values():
        assert r.failing_ids == []


def test_the_sample_has_the_lines_the_faults_rely_on(sample):
    """Preconditions of the fault table below, so that a fault is a real change."""
    _, rows, _ = sample
    r = {m[-6:]: row_of(rows, m) for m in (
        "MSG-20260908-4401", "MSG-20260908-4402", "MSG-20260908-4403", "MSG-20260908-4404", "MSG-20260908-4406",
        "MSG-20260908-4407", "MSG-20260908-1409", "MSG-20260908-1502", "MSG-20260908-1504", "MSG-20260908-3402",
        "MSG-20260908-2408", "MSG-20260909-6409")}
    assert (r["8-4402"]["verdict"], r["8-4402"]["rank_in_window"]) == (V.PICK, 1)
    assert (r["8-4406"]["verdict"], r["8-4406"]["rank_in_window"]) == (V.PICK, 2)
    assert (r["8-4407"]["verdict"], r["8-4407"]["rank_in_window"]) == (V.PICK, 3)
    assert (r["8-4404"]["verdict"], r["8-4404"]["rank_in_window"]) == (V.DEFERRED, 4)
    assert (r["8-4401"]["verdict"], r["8-4401"]["cooldown_elapsed_sec"]) == (V.JUST_ANSWERED, 41)
    assert (r["8-1409"]["verdict"], r["8-1409"]["cooldown_elapsed_sec"]) == (V.OUT_OF_WORLD, 2067)
    assert r["8-1502"]["verdict"] in V.RANKED and r["8-1502"]["cooldown_elapsed_sec"] == 99
    assert r["8-1504"]["verdict"] == V.OUT_OF_WORLD  # banned 정치, 100,000 won
    assert r["8-3402"]["verdict"] == V.BELOW_CLOSENESS
    assert r["8-2408"]["verdict"] == V.OUT_OF_WORLD  # 노래 is outside 하루's vocabulary
    assert r["8-4403"]["hedge"] is not None
    assert evidence_of(r["9-6409"], "viewer_relation", "closeness_level")["value"] == 1


# -- injected faults ---------------------------------------------------------------------------


@dataclass
class Fault:
    name: str
    inject: Callable[[list], list[str]]
    """Mutates the rows in place; returns the ids the checks must name."""
    checks: tuple[str, ...]


def _set(msg_id: str, **fields):
    def inject(rows):
        row = row_of(rows, msg_id)
        for k, v in fields.items():
            assert row.get(k) != v, f"{msg_id}.{k} is already {v!r}"
            row[k] = v
        return [msg_id]

    return inject


def _evidence(msg_id: str, dataset: str, field: str, value):
    def inject(rows):
        e = evidence_of(row_of(rows, msg_id), dataset, field)
        assert e["value"] != value or type(e["value"]) is not type(value)
        e["value"] = value
        return [msg_id]

    return inject


def _add_evidence(msg_id: str, item: dict):
    def inject(rows):
        row_of(rows, msg_id)["evidence"].append(item)
        return [msg_id]

    return inject


def _rename_evidence_field(msg_id: str, dataset: str, field: str, new: str):
    def inject(rows):
        evidence_of(row_of(rows, msg_id), dataset, field)["field"] = new
        return [msg_id]

    return inject


def _duplicate_pick_id(rows):
    row_of(rows, "MSG-20260908-4406")["pick_id"] = row_of(rows, "MSG-20260908-4402")["pick_id"]
    return ["MSG-20260908-4402", "MSG-20260908-4406"]


def _missing_row(rows):
    rows.remove(row_of(rows, "MSG-20260908-4404"))
    return ["MSG-20260908-4404"]


def _quarantined_row(rows):
    extra = copy.deepcopy(row_of(rows, "MSG-20260908-4404"))
    extra["msg_id"], extra["pick_id"] = "MSG-20260908-3411", "PICK-3411"  # quarantined: reply after the line
    rows.append(extra)
    return ["MSG-20260908-3411"]


def _unknown_row(rows):
    extra = copy.deepcopy(row_of(rows, "MSG-20260908-4404"))
    extra["msg_id"], extra["pick_id"] = "MSG-20260908-9999", "PICK-9999"
    rows.append(extra)
    return ["MSG-20260908-9999"]


def _second_row_for_a_line(rows):
    extra = copy.deepcopy(row_of(rows, "MSG-20260908-4404"))
    extra["pick_id"] = "PICK-4404-bis"
    rows.append(extra)
    return ["MSG-20260908-4404"]


def _promote(msg_id: str, rank: int | None = 1):
    return _set(msg_id, verdict=V.PICK, rank_in_window=rank)


FAULTS = [
    # 5 and re-computation: ranks
    Fault("wrong rank", _set("MSG-20260908-4402", rank_in_window=2), ("5.rank", "recompute")),
    Fault("rank 4 labelled 지금 답변할 질문", _set("MSG-20260908-4404", verdict=V.PICK), ("5.rank", "recompute")),
    Fault("rank 3 labelled 다음 차례로 미룸", _set("MSG-20260908-4407", verdict=V.DEFERRED), ("5.rank", "recompute")),
    # 4: cooldown
    Fault("wrong cooldown", _set("MSG-20260908-4401", cooldown_elapsed_sec=42), ("4.cooldown", "recompute")),
    Fault("answered topic inside the cooldown ranked",
          _set("MSG-20260908-4401", verdict=V.PICK, rank_in_window=1), ("4.cooldown", "10.rule_order")),
    Fault("방금 답한 주제 on a different topic inside the cooldown",
          _set("MSG-20260908-1502", verdict=V.JUST_ANSWERED, rank_in_window=None), ("4.cooldown", "10.rule_order")),
    # 3: ranges
    Fault("negative cooldown", _set("MSG-20260908-4401", cooldown_elapsed_sec=-41), ("3.ranges", "schema")),
    Fault("rank 0", _set("MSG-20260908-4402", rank_in_window=0), ("3.ranges", "schema")),
    # 6: evidence fields
    Fault("evidence field that is not a column",
          _add_evidence("MSG-20260908-4402", {"dataset": "live_chat", "field": "mood", "value": "기쁨"}), ("6.evidence_fields",)),
    Fault("evidence field renamed to a near miss",
          _rename_evidence_field("MSG-20260908-4402", "live_chat", "donation_amount", "donation"), ("6.evidence_fields",)),
    Fault("evidence column of another dataset",
          _add_evidence("MSG-20260908-4402", {"dataset": "character_sheet", "field": "closeness_level", "value": 3}),
          ("6.evidence_fields",)),
    Fault("evidence dataset that is not an input",
          _add_evidence("MSG-20260908-4402", {"dataset": "golden", "field": "verdict", "value": V.PICK}),
          ("6.evidence_fields", "schema")),
    # 7: evidence values
    Fault("evidence value that differs from its row",
          _evidence("MSG-20260908-4402", "live_chat", "donation_amount", 9000), ("7.evidence_values",)),
    Fault("evidence list element not in the list",
          _evidence("MSG-20260908-4402", "live_chat", "topic_tags", "노래"), ("7.evidence_values",)),
    Fault("evidence bool True where the row has 1",
          _evidence("MSG-20260909-6409", "viewer_relation", "closeness_level", True), ("7.evidence_values",)),
    Fault("evidence 1 where the row has true",
          _evidence("MSG-20260908-4402", "live_chat", "is_question", 1), ("7.evidence_values",)),
    Fault("evidence wrong agg count",
          _evidence("MSG-20260908-4402", "live_chat", "msg_id", 5), ("7.evidence_values",)),
    Fault("evidence map entry not the line's topic's",
          _evidence("MSG-20260908-4403", "character_sheet", "min_closeness_by_topic", 3.0), ("7.evidence_values",)),
    Fault("evidence sent_at one second off",
          _evidence("MSG-20260908-4402", "live_chat", "sent_at", "2026-09-08T20:05:04"), ("7.evidence_values",)),
    Fault("evidence agg that cannot be re-computed",
          _add_evidence("MSG-20260908-4402", {"dataset": "live_chat", "field": "body", "agg": "count", "value": 1}),
          ("7.evidence_values",)),
    Fault("evidence not_in naming a tag the line does not have",
          _evidence("MSG-20260908-2408", "character_sheet", "world_topic_tags", "꿈"), ("7.evidence_values",)),
    # 1: verdict enum
    Fault("non-enum verdict", _set("MSG-20260908-4402", verdict="지금 답변"), ("1.verdict_enum", "schema", "recompute")),
    # 8: politeness
    Fault("impolite summary (plain speech)", _set("MSG-20260908-4402", summary="좋아."), ("8.polite",)),
    Fault("impolite summary (English)", _set("MSG-20260908-4402", summary="This line is picked for an answer."), ("8.polite",)),
    Fault("impolite summary (plain -다)", _set("MSG-20260908-4402", summary="지금 답변한다."), ("8.polite",)),
    Fault("impolite hedge", _set("MSG-20260908-4403", hedge="기준은 다시 잡아야 한다."), ("8.polite",)),
    # 2: required fields, unique ids
    Fault("empty summary", _set("MSG-20260908-4402", summary=""), ("2.required_filled", "8.polite")),
    Fault("blank summary", _set("MSG-20260908-4402", summary="   "), ("2.required_filled", "8.polite")),
    Fault("empty evidence", _set("MSG-20260908-4402", evidence=[]), ("2.required_filled",)),
    Fault("duplicate pick_id", _duplicate_pick_id, ("2.required_filled",)),
    Fault("two rows for one line", _second_row_for_a_line, ("2.required_filled",)),
    # re-computation: one row per judged line
    Fault("missing row for a judged line", _missing_row, ("recompute",)),
    Fault("extra row for a quarantined msg_id", _quarantined_row, ("recompute",)),
    Fault("extra row for an unknown msg_id", _unknown_row, ("recompute",)),
    Fault("wrong character_id", _set("MSG-20260908-2408", character_id="CH-0007"), ("recompute",)),
    Fault("wrong window_start", _set("MSG-20260908-4402", window_start="2026-09-08T20:05:30"), ("recompute",)),
    # 13: what is filled when
    Fault("rank on a filtered line", _set("MSG-20260908-4401", rank_in_window=1), ("13.filled_when", "recompute")),
    Fault("cooldown removed where last_replied_at exists",
          _set("MSG-20260908-1409", cooldown_elapsed_sec=None), ("13.filled_when", "4.cooldown")),
    Fault("cooldown filled where last_replied_at is null",
          _set("MSG-20260908-4407", cooldown_elapsed_sec=60), ("13.filled_when", "4.cooldown")),
    Fault("ranked verdict without a rank", _set("MSG-20260908-4406", rank_in_window=None), ("13.filled_when", "5.rank")),
    # 9-12: the rule order and per-character lookups
    Fault("null-tag line given a pick verdict", _promote("MSG-20260908-1409"), ("9.empty_tags", "10.rule_order")),
    Fault("null-tag line keeps its verdict but gets a rank", _set("MSG-20260908-1409", rank_in_window=2), ("9.empty_tags",)),
    Fault("banned-tag line moved to a rank", _promote("MSG-20260908-1504"), ("10.rule_order",)),
    Fault("closeness-filtered line marked as a pick", _promote("MSG-20260908-3402"), ("11.closeness", "10.rule_order")),
    Fault("ranked line marked as below closeness",
          _set("MSG-20260908-4406", verdict=V.BELOW_CLOSENESS, rank_in_window=None), ("11.closeness",)),
    Fault("out-of-vocabulary tag line judged as a pick", _promote("MSG-20260908-2408"), ("12.vocabulary", "10.rule_order")),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_an_injected_fault_fails_the_named_check(sample, fault):
    _, clean, _ = sample
    before = json.dumps(clean, ensure_ascii=False)
    rows = copy.deepcopy(clean)
    faulty = fault.inject(rows)
    got = results(sample, rows)
    for check in fault.checks:
        r = got[check]
        assert not r.passed, f"{check} should fail for {fault.name}"
        assert set(r.failing_ids) == set(faulty), f"{check} names {r.failing_ids}, expected {faulty}"
        assert all(i in r.detail for i in faulty[:5])
    assert json.dumps(clean, ensure_ascii=False) == before, "the shared clean rows must stay untouched"


def test_the_fault_table_exercises_every_check():
    exercised = {c for f in FAULTS for c in f.checks}
    assert exercised == set(SEED_ORDER)


def test_a_line_that_is_not_json_fails_the_schema_check(sample, tmp_path):
    _, clean, _ = sample
    path = tmp_path / "verdicts.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in clean]
    victim = clean[10]["msg_id"]
    lines[10] = lines[10][: len(lines[10]) // 2]  # a truncated line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = read_jsonl_objects(path)
    assert rows[10] is None
    got = results(sample, rows)
    assert not got["schema"].passed
    assert got["schema"].failing_ids == ["line 11"]
    # The line's msg_id cannot be read, so the judged line has no verdict row.
    assert not got["recompute"].passed
    assert got["recompute"].failing_ids == [victim]


def test_a_json_array_line_fails_the_schema_check(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean) + [None]
    got = results(sample, rows)
    assert got["schema"].failing_ids == [f"line {len(rows)}"]
    assert got["recompute"].passed


def test_no_rows_at_all_fail_the_recompute_for_every_judged_line(sample):
    _, clean, _ = sample
    got = results(sample, [])
    assert not got["recompute"].passed
    assert set(got["recompute"].failing_ids) == {r["msg_id"] for r in clean}


def test_swapped_ranks_name_both_lines(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    row_of(rows, "MSG-20260908-4402")["rank_in_window"] = 2
    row_of(rows, "MSG-20260908-4406")["rank_in_window"] = 1
    got = results(sample, rows)
    assert set(got["5.rank"].failing_ids) == {"MSG-20260908-4402", "MSG-20260908-4406"}
    assert set(got["recompute"].failing_ids) == {"MSG-20260908-4402", "MSG-20260908-4406"}


def test_rows_in_a_different_order_still_pass(sample):
    _, clean, _ = sample
    rows = list(reversed(copy.deepcopy(clean)))
    assert all(r.passed for r in results(sample, rows).values())


def test_reordered_evidence_and_a_missing_hedge_key_still_pass(sample):
    """hedge is optional in the schema; evidence order carries no meaning."""
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    for r in rows:
        r["evidence"].reverse()
        if r["hedge"] is None:
            del r["hedge"]
    assert all(r.passed for r in results(sample, rows).values())


# -- values of the wrong JSON kind -----------------------------------------------------------

UNHASHABLE = [
    ("msg_id is an array", lambda r: r.__setitem__("msg_id", ["MSG-20260908-4402"])),
    ("pick_id is an object", lambda r: r.__setitem__("pick_id", {"id": "PICK-4402"})),
    ("evidence dataset is an array", lambda r: r["evidence"][0].__setitem__("dataset", ["live_chat"])),
    ("evidence field is an array", lambda r: r["evidence"][0].__setitem__("field", ["donation_amount"])),
]


@pytest.mark.parametrize(("name", "mutate"), UNHASHABLE, ids=[u[0] for u in UNHASHABLE])
def test_a_value_of_the_wrong_json_kind_fails_the_schema_instead_of_crashing(sample, name, mutate):
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    target = next(i for i, r in enumerate(rows) if r["msg_id"] == "MSG-20260908-4402")
    mutate(rows[target])
    got = results(sample, rows)
    assert not got["schema"].passed
    assert len(got["schema"].failing_ids) == 1


@pytest.mark.parametrize(
    ("field", "value", "check"),
    [
        ("rank_in_window", "1", "3.ranges"),
        ("rank_in_window", True, "3.ranges"),
        ("cooldown_elapsed_sec", 41.5, "3.ranges"),
        ("verdict", [V.PICK], "1.verdict_enum"),
        ("summary", ["지금 답변합니다."], "8.polite"),
    ],
)
def test_wrong_json_kinds_fail_the_schema_and_the_content_check(sample, field, value, check):
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    msg_id = "MSG-20260908-4401" if field == "cooldown_elapsed_sec" else "MSG-20260908-4402"
    row_of(rows, msg_id)[field] = value
    got = results(sample, rows)
    assert got["schema"].failing_ids == [msg_id]
    assert got[check].failing_ids == [msg_id]
