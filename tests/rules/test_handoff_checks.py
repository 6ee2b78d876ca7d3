"""Seed 003's eleven automatic checks, the output schema and the re-computation, on the sample day.

The engine's own output must pass every check; each fault below changes a deep copy of those
rows in one way and expects the named checks to fail, naming the faulty room and no other.
"""

from __future__ import annotations

import copy

import pytest

from rules.common.normalised import Normalised
from rules.handoff import verdicts as V
from rules.handoff.checks import CHECKS, run_checks
from rules.handoff.config import load_config
from rules.handoff.engine import judge, records
from rules.handoff.normalise import read_input_dir
from rules.handoff.view import from_raw
from tests import conftest
from tests.rules.faults import Fault, Faults, loosened

SAMPLE = conftest.SEEDS / "handoff"
DAY = "2026-10-01"
SEED_ORDER = ["schema", "1.verdict_enum", "2.required_fields", "3.ranges", "4.durations", "5.kept_answering", "6.uncited",
              "7.reentry", "8.late_or_ai_ended", "9.evidence_fields", "10.evidence_values", "11.polite", "recompute"]
F = Faults("room_id", run_checks)


@pytest.fixture(scope="module")
def sample():
    config = load_config()
    norm, view = from_raw(read_input_dir(SAMPLE), DAY, config)
    return Normalised(view, norm.quarantine), records(judge(view, config)), config


def test_checks_run_in_seed_order(sample):
    assert list(F.results(sample, sample[1])) == SEED_ORDER
    assert len(CHECKS) == len(SEED_ORDER)


def test_every_check_passes_on_the_engine_output(sample):
    _, rows, _ = sample
    assert len(rows) == 21
    assert F.failures(sample, rows) == {}


def test_rows_without_the_dataset_key_as_the_seed_writes_them_still_pass(sample):
    rows = copy.deepcopy(sample[1])
    for r in rows:
        r["evidence"] = [{k: v for k, v in e.items() if k != "dataset"} for e in r["evidence"]]
    assert F.failures(sample, rows) == {}


def test_rows_in_another_order_with_a_missing_hedge_key_still_pass(sample):
    assert F.failures(sample, loosened(sample[1])[::-1]) == {}


# -- injected faults ------------------------------------------------------------------------------


FAULTS = [
    Fault("verdict outside the enum", F.set("R-55150", verdict="AI 종료"), ("1.verdict_enum", "schema", "8.late_or_ai_ended", "recompute")),
    Fault("summary key missing", F.drop_key("R-55150", "summary"), ("2.required_fields", "schema", "11.polite")),
    Fault("uncited_message_ids key missing", F.drop_key("R-55131", "uncited_message_ids"), ("2.required_fields", "schema")),
    Fault("two rows for one room", F.duplicate("R-55150"), ("2.required_fields",)),
    Fault("empty evidence", F.set("R-55150", evidence=[]), ("2.required_fields",)),
    Fault("negative ai_after_trigger", F.set("R-55102", ai_after_trigger=-1), ("3.ranges", "schema")),
    Fault("negative reentry_hours", F.set("R-55140", reentry_hours=-1.75), ("3.ranges", "schema", "4.durations")),
    Fault("wait one minute short", F.set("R-55177", reply_wait_min=35), ("4.durations", "recompute")),
    Fault("re-entry rounded the wrong way", F.set("R-55160", reentry_hours=25.09), ("4.durations", "recompute")),
    Fault("handoff_at moved", F.set("R-55177", handoff_at="2026-10-01T11:06:00+09:00"), ("4.durations", "recompute")),
    Fault("next room of another customer", F.set("R-55140", next_room_id="R-55199"), ("4.durations", "recompute")),
    Fault("wait without a handoff", F.set("R-55150", reply_wait_min=3), ("4.durations", "recompute")),
    Fault("ignored request called uncited", F.set("R-55102", verdict=V.UNCITED), ("5.kept_answering", "6.uncited", "recompute")),
    Fault("one AI answer called ignored request", F.set("R-55212", ai_after_trigger=1), ("5.kept_answering", "recompute")),
    Fault("uncited answer called AI ended", F.set("R-55131", verdict=V.AI_ENDED), ("6.uncited", "8.late_or_ai_ended", "recompute")),
    Fault("re-entry called AI ended", F.set("R-55140", verdict=V.AI_ENDED), ("7.reentry", "8.late_or_ai_ended", "recompute")),
    Fault("24.01 h called re-entry", F.set("R-55231", verdict=V.REENTRY), ("7.reentry", "8.late_or_ai_ended", "recompute")),
    Fault("late reply called AI ended", F.set("R-55177", verdict=V.AI_ENDED), ("8.late_or_ai_ended", "recompute")),
    Fault("a room no rule lists", F.copy_as("R-55150", "R-55236", customer_id="C-3236", closed_at=None),
          ("8.late_or_ai_ended", "recompute")),
    Fault("a held room listed", F.copy_as("R-55150", "R-55240", customer_id="C-3240"), ("recompute",)),
    Fault("a room of the next day listed", F.copy_as("R-55150", "R-55199", customer_id="C-3115"), ("recompute",)),
    Fault("a listed room left out", F.remove("R-55165"), ("recompute",)),
    Fault("uncited list cut short", F.set("R-55220", uncited_message_ids=["M-901331"]), ("recompute",)),
    Fault("the other phrase of the message", F.set("R-55210", matched_phrase="환불"), ("recompute",)),
    Fault("evidence field that is no column", F.add_evidence("R-55150", {"dataset": "chat_messages", "field": "mood", "value": 1}),
          ("9.evidence_fields",)),
    Fault("evidence field of another dataset", F.add_evidence("R-55150", {"dataset": "rooms", "field": "text", "value": "x"}),
          ("9.evidence_fields",)),
    Fault("evidence dataset that is no input", F.add_evidence("R-55150", {"dataset": "golden", "field": "verdict", "value": "x"}),
          ("9.evidence_fields", "schema")),
    Fault("evidence field without dataset that is no column", F.add_evidence("R-55150", {"field": "wait", "value": 3}),
          ("9.evidence_fields",)),
    Fault("evidence value of another phrase row", F.evidence("R-55177", None, "first_reply_min", {"value": 10}), ("10.evidence_values",)),
    Fault("evidence sent_at a second off", F.evidence("R-55177", None, "sent_at", {"value": "2026-10-01T11:41:01+09:00"}, nth=1),
          ("10.evidence_values",)),
    Fault("evidence count of ai answers wrong", F.evidence("R-55102", None, "sender", {"value": 2}), ("10.evidence_values",)),
    Fault("evidence count of articles wrong", F.evidence("R-55165", None, "article_id", {"value": 11}), ("10.evidence_values",)),
    Fault("evidence agg that cannot be re-computed", F.add_evidence("R-55150", {"field": "text", "agg": "count", "value": 3}),
          ("10.evidence_values",)),
    Fault("evidence citing another room's article", F.add_evidence("R-55150", {"field": "cited_article_id", "value": "A-104"}),
          ("10.evidence_values",)),
    Fault("evidence 15 as a string", F.evidence("R-55177", None, "first_reply_min", {"value": "15"}), ("10.evidence_values",)),
    Fault("plain-speech summary", F.set("R-55150", summary="AI가 답하고 닫았다."), ("11.polite",)),
    Fault("English summary", F.set("R-55150", summary="The AI closed the room."), ("11.polite",)),
    Fault("impolite hedge", F.set("R-55160", hedge="24시간 밖이다."), ("11.polite",)),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_an_injected_fault_fails_the_named_checks(sample, fault):
    F.assert_fails(sample, fault)


def test_the_fault_table_exercises_every_check():
    assert {c for f in FAULTS for c in f.checks} == set(SEED_ORDER)


def test_a_line_that_is_not_an_object_fails_the_schema_by_line(sample):
    rows = [*copy.deepcopy(sample[1]), None]
    got = F.results(sample, rows)
    assert got["schema"].failing_ids == [f"line {len(rows)}"]
    assert got["recompute"].passed


def test_no_rows_fail_the_recompute_for_every_listed_room(sample):
    got = F.results(sample, [])
    assert len(got["recompute"].failing_ids) == 21
    assert all(got[c].passed for c in SEED_ORDER if c != "recompute")


@pytest.mark.parametrize(("field", "value"), [("ai_after_trigger", "3"), ("uncited_message_ids", "M-1"), ("reply_wait_min", True),
                                              ("room_id", ["R-55150"]), ("evidence", {"field": "x"})])
def test_values_of_the_wrong_json_kind_fail_without_crashing(sample, field, value):
    got = F.results_with(sample, "R-55177", lambda r: r.update({field: value}))
    assert not got["schema"].passed
