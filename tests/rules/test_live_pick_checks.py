"""Seed 001's automatic checks, the output schema and the re-computation, on the sample data.

The engine's own output must pass every check; then each test injects exactly one fault into
a deep copy of those rows and expects the named check to fail, naming the faulty line (and
no other line).
"""

from __future__ import annotations

import copy
import json

import pytest

from rules.common.jsonl import read_jsonl_objects
from rules.live_pick import verdicts as V
from rules.live_pick.checks import CHECKS, run_checks
from tests.rules.faults import Fault, Faults, loosened
from tests.rules.helpers import judged_sample

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
F = Faults("msg_id", run_checks)


@pytest.fixture(scope="module")
def sample():
    return judged_sample("live_pick")


# -- the clean output ------------------------------------------------------------------------


def test_checks_run_in_seed_order_with_their_ids(sample):
    _, rows, _ = sample
    assert list(F.results(sample, rows)) == SEED_ORDER
    assert len(CHECKS) == len(SEED_ORDER)


def test_every_check_passes_on_the_engine_output(sample):
    _, rows, _ = sample
    assert len(rows) == 80
    assert F.failures(sample, rows) == {}
    for r in F.results(sample, rows).values():
        assert r.failing_ids == []


def test_the_sample_has_the_lines_the_faults_rely_on(sample):
    """Preconditions of the fault table below, so that a fault is a real change."""
    _, rows, _ = sample
    r = {m[-6:]: F.row_of(rows, m) for m in (
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
    assert F.evidence_of(r["9-6409"], "viewer_relation", "closeness_level")["value"] == 1


# -- injected faults ---------------------------------------------------------------------------


def _duplicate_pick_id(rows):
    F.row_of(rows, "MSG-20260908-4406")["pick_id"] = F.row_of(rows, "MSG-20260908-4402")["pick_id"]
    return ["MSG-20260908-4402", "MSG-20260908-4406"]


def _promote(msg_id: str, rank: int | None = 1):
    return F.set(msg_id, verdict=V.PICK, rank_in_window=rank)


FAULTS = [
    # 5 and re-computation: ranks
    Fault("wrong rank", F.set("MSG-20260908-4402", rank_in_window=2), ("5.rank", "recompute")),
    Fault("rank 4 labelled 지금 답변할 질문", F.set("MSG-20260908-4404", verdict=V.PICK), ("5.rank", "recompute")),
    Fault("rank 3 labelled 다음 차례로 미룸", F.set("MSG-20260908-4407", verdict=V.DEFERRED), ("5.rank", "recompute")),
    # 4: cooldown
    Fault("wrong cooldown", F.set("MSG-20260908-4401", cooldown_elapsed_sec=42), ("4.cooldown", "recompute")),
    Fault("answered topic inside the cooldown ranked",
          F.set("MSG-20260908-4401", verdict=V.PICK, rank_in_window=1), ("4.cooldown", "10.rule_order")),
    Fault("방금 답한 주제 on a different topic inside the cooldown",
          F.set("MSG-20260908-1502", verdict=V.JUST_ANSWERED, rank_in_window=None), ("4.cooldown", "10.rule_order")),
    # 3: ranges
    Fault("negative cooldown", F.set("MSG-20260908-4401", cooldown_elapsed_sec=-41), ("3.ranges", "schema")),
    Fault("rank 0", F.set("MSG-20260908-4402", rank_in_window=0), ("3.ranges", "schema")),
    # 6: evidence fields
    Fault("evidence field that is not a column",
          F.add_evidence("MSG-20260908-4402", {"dataset": "live_chat", "field": "mood", "value": "기쁨"}), ("6.evidence_fields",)),
    Fault("evidence field renamed to a near miss",
          F.evidence("MSG-20260908-4402", "live_chat", "donation_amount", {"field": "donation"}), ("6.evidence_fields",)),
    Fault("evidence column of another dataset",
          F.add_evidence("MSG-20260908-4402", {"dataset": "character_sheet", "field": "closeness_level", "value": 3}),
          ("6.evidence_fields",)),
    Fault("evidence dataset that is not an input",
          F.add_evidence("MSG-20260908-4402", {"dataset": "golden", "field": "verdict", "value": V.PICK}),
          ("6.evidence_fields", "schema")),
    # 7: evidence values
    Fault("evidence value that differs from its row",
          F.evidence("MSG-20260908-4402", "live_chat", "donation_amount", {"value": 9000}), ("7.evidence_values",)),
    Fault("evidence list element not in the list",
          F.evidence("MSG-20260908-4402", "live_chat", "topic_tags", {"value": "노래"}), ("7.evidence_values",)),
    Fault("evidence bool True where the row has 1",
          F.evidence("MSG-20260909-6409", "viewer_relation", "closeness_level", {"value": True}), ("7.evidence_values",)),
    Fault("evidence 1 where the row has true",
          F.evidence("MSG-20260908-4402", "live_chat", "is_question", {"value": 1}), ("7.evidence_values",)),
    Fault("evidence wrong agg count",
          F.evidence("MSG-20260908-4402", "live_chat", "msg_id", {"value": 5}), ("7.evidence_values",)),
    Fault("evidence map entry not the line's topic's",
          F.evidence("MSG-20260908-4403", "character_sheet", "min_closeness_by_topic", {"value": 3.0}), ("7.evidence_values",)),
    Fault("evidence sent_at one second off",
          F.evidence("MSG-20260908-4402", "live_chat", "sent_at", {"value": "2026-09-08T20:05:04"}), ("7.evidence_values",)),
    Fault("evidence agg that cannot be re-computed",
          F.add_evidence("MSG-20260908-4402", {"dataset": "live_chat", "field": "body", "agg": "count", "value": 1}),
          ("7.evidence_values",)),
    Fault("evidence not_in naming a tag the line does not have",
          F.evidence("MSG-20260908-2408", "character_sheet", "world_topic_tags", {"value": "꿈"}), ("7.evidence_values",)),
    # 1: verdict enum
    Fault("non-enum verdict", F.set("MSG-20260908-4402", verdict="지금 답변"), ("1.verdict_enum", "schema", "recompute")),
    # 8: politeness
    Fault("impolite summary (plain speech)", F.set("MSG-20260908-4402", summary="좋아."), ("8.polite",)),
    Fault("impolite summary (English)", F.set("MSG-20260908-4402", summary="This line is picked for an answer."), ("8.polite",)),
    Fault("impolite summary (plain -다)", F.set("MSG-20260908-4402", summary="지금 답변한다."), ("8.polite",)),
    Fault("impolite hedge", F.set("MSG-20260908-4403", hedge="기준은 다시 잡아야 한다."), ("8.polite",)),
    # 2: required fields, unique ids
    Fault("empty summary", F.set("MSG-20260908-4402", summary=""), ("2.required_filled", "8.polite")),
    Fault("blank summary", F.set("MSG-20260908-4402", summary="   "), ("2.required_filled", "8.polite")),
    Fault("empty evidence", F.set("MSG-20260908-4402", evidence=[]), ("2.required_filled",)),
    Fault("duplicate pick_id", _duplicate_pick_id, ("2.required_filled",)),
    Fault("two rows for one line", F.duplicate("MSG-20260908-4404", pick_id="PICK-4404-bis"), ("2.required_filled",)),
    # re-computation: one row per judged line
    Fault("missing row for a judged line", F.remove("MSG-20260908-4404"), ("recompute",)),
    Fault("extra row for a quarantined msg_id",  # quarantined: reply after the line
          F.copy_as("MSG-20260908-4404", "MSG-20260908-3411", pick_id="PICK-3411"), ("recompute",)),
    Fault("extra row for an unknown msg_id", F.copy_as("MSG-20260908-4404", "MSG-20260908-9999", pick_id="PICK-9999"), ("recompute",)),
    Fault("wrong character_id", F.set("MSG-20260908-2408", character_id="CH-0007"), ("recompute",)),
    Fault("wrong window_start", F.set("MSG-20260908-4402", window_start="2026-09-08T20:05:30"), ("recompute",)),
    # 13: what is filled when
    Fault("rank on a filtered line", F.set("MSG-20260908-4401", rank_in_window=1), ("13.filled_when", "recompute")),
    Fault("cooldown removed where last_replied_at exists",
          F.set("MSG-20260908-1409", cooldown_elapsed_sec=None), ("13.filled_when", "4.cooldown")),
    Fault("cooldown filled where last_replied_at is null",
          F.set("MSG-20260908-4407", cooldown_elapsed_sec=60), ("13.filled_when", "4.cooldown")),
    Fault("ranked verdict without a rank", F.set("MSG-20260908-4406", rank_in_window=None), ("13.filled_when", "5.rank")),
    # 9-12: the rule order and per-character lookups
    Fault("null-tag line given a pick verdict", _promote("MSG-20260908-1409"), ("9.empty_tags", "10.rule_order")),
    Fault("null-tag line keeps its verdict but gets a rank", F.set("MSG-20260908-1409", rank_in_window=2), ("9.empty_tags",)),
    Fault("banned-tag line moved to a rank", _promote("MSG-20260908-1504"), ("10.rule_order",)),
    Fault("closeness-filtered line marked as a pick", _promote("MSG-20260908-3402"), ("11.closeness", "10.rule_order")),
    Fault("ranked line marked as below closeness",
          F.set("MSG-20260908-4406", verdict=V.BELOW_CLOSENESS, rank_in_window=None), ("11.closeness",)),
    Fault("out-of-vocabulary tag line judged as a pick", _promote("MSG-20260908-2408"), ("12.vocabulary", "10.rule_order")),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_an_injected_fault_fails_the_named_check(sample, fault):
    F.assert_fails(sample, fault)


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
    got = F.results(sample, rows)
    assert not got["schema"].passed
    assert got["schema"].failing_ids == ["line 11"]
    # The line's msg_id cannot be read, so the judged line has no verdict row.
    assert not got["recompute"].passed
    assert got["recompute"].failing_ids == [victim]


def test_a_json_array_line_fails_the_schema_check(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean) + [None]
    got = F.results(sample, rows)
    assert got["schema"].failing_ids == [f"line {len(rows)}"]
    assert got["recompute"].passed


def test_no_rows_at_all_fail_the_recompute_for_every_judged_line(sample):
    _, clean, _ = sample
    got = F.results(sample, [])
    assert not got["recompute"].passed
    assert set(got["recompute"].failing_ids) == {r["msg_id"] for r in clean}


def test_swapped_ranks_name_both_lines(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    F.row_of(rows, "MSG-20260908-4402")["rank_in_window"] = 2
    F.row_of(rows, "MSG-20260908-4406")["rank_in_window"] = 1
    got = F.results(sample, rows)
    assert set(got["5.rank"].failing_ids) == {"MSG-20260908-4402", "MSG-20260908-4406"}
    assert set(got["recompute"].failing_ids) == {"MSG-20260908-4402", "MSG-20260908-4406"}


def test_rows_in_a_different_order_still_pass(sample):
    _, clean, _ = sample
    rows = list(reversed(copy.deepcopy(clean)))
    assert F.failures(sample, rows) == {}


def test_reordered_evidence_and_a_missing_hedge_key_still_pass(sample):
    """hedge is optional in the schema; evidence order carries no meaning."""
    _, clean, _ = sample
    assert F.failures(sample, loosened(clean)) == {}


# -- values of the wrong JSON kind -----------------------------------------------------------

UNHASHABLE = [
    ("msg_id is an array", lambda r: r.__setitem__("msg_id", ["MSG-20260908-4402"])),
    ("pick_id is an object", lambda r: r.__setitem__("pick_id", {"id": "PICK-4402"})),
    ("evidence dataset is an array", lambda r: r["evidence"][0].__setitem__("dataset", ["live_chat"])),
    ("evidence field is an array", lambda r: r["evidence"][0].__setitem__("field", ["donation_amount"])),
]


@pytest.mark.parametrize(("name", "mutate"), UNHASHABLE, ids=[u[0] for u in UNHASHABLE])
def test_a_value_of_the_wrong_json_kind_fails_the_schema_instead_of_crashing(sample, name, mutate):
    got = F.results_with(sample, "MSG-20260908-4402", mutate)
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
    msg_id = "MSG-20260908-4401" if field == "cooldown_elapsed_sec" else "MSG-20260908-4402"
    got = F.results_with(sample, msg_id, lambda r: r.update({field: value}))
    assert got["schema"].failing_ids == [msg_id]
    assert got[check].failing_ids == [msg_id]


def test_cited_columns_that_compare_equal_but_differ_in_kind_are_each_named(sample):
    """Check 6 judges each distinct (dataset, field) once; true, 1 and 1.0 are equal as keys but
    are different JSON, and each row's reason names what that row cites."""
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    ids = ["MSG-20260908-4402", "MSG-20260908-4403", "MSG-20260908-4401"]
    for msg_id, dataset in zip(ids, [True, 1, 1.0]):
        F.row_of(rows, msg_id)["evidence"].append({"dataset": dataset, "field": "body", "value": "x"})
    result = F.results(sample, rows)["6.evidence_fields"]
    assert sorted(result.failing_ids) == sorted(ids)
    assert dict(part.split(": ", 1) for part in result.detail.split("; ")) == {
        ids[0]: "dataset True is not an input dataset", ids[1]: "dataset 1 is not an input dataset",
        ids[2]: "dataset 1.0 is not an input dataset"}
