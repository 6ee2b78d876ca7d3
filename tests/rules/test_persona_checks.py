"""Seed 000's automatic checks, the output schema and the re-computation, on the sample data.

The engine's own output passes every check; each test then injects one fault into a deep copy
of those rows and expects the named checks to fail, naming the faulty turn (and no other).
"""

from __future__ import annotations

import copy

import pytest

from rules.persona import verdicts as V
from rules.persona.checks import CHECKS, run_checks
from tests.rules.faults import Fault, Faults, loosened
from tests.rules.helpers import judged_sample

CHECK_IDS = ["schema", "1.code_enum", "2.required_filled", "3.stated_age", "4.evidence_fields", "5.evidence_values",
             "6.forbidden_topic", "7.polite", "recompute"]
F = Faults("turn_no", run_checks, source_key="source")


@pytest.fixture(scope="module")
def sample():
    return judged_sample("persona")


# -- the clean output --------------------------------------------------------------------------


def test_checks_run_in_seed_order_with_their_ids(sample):
    _, rows, _ = sample
    assert list(F.results(sample, rows)) == CHECK_IDS
    assert len(CHECKS) == len(CHECK_IDS)


def test_every_check_passes_on_the_engine_output(sample):
    _, rows, _ = sample
    assert len(rows) == 469
    got = F.results(sample, rows)
    assert {k: r.detail for k, r in got.items() if not r.passed} == {}
    for r in got.values():
        assert r.failing_ids == [] and r.title


def test_the_sample_has_the_turns_the_faults_rely_on(sample):
    _, rows, _ = sample
    assert F.row_of(rows, "TN-9002")["persona_code"] == V.JOB_CONFLICT
    assert F.evidence_of(F.row_of(rows, "TN-9002"), "turn", "stated_job")["value"] == "바리스타"
    assert F.row_of(rows, "TN-9004")["persona_code"] == V.FORBIDDEN_TOPIC
    assert F.evidence_of(F.row_of(rows, "TN-9004"), "turn", "topic_tag")["value"] == "실제 사건"
    assert F.row_of(rows, "TN-9041")["persona_code"] == V.FORBIDDEN_TOPIC  # "법률 자문 " trimmed
    assert F.row_of(rows, "TN-9012")["persona_code"] == V.AGE_CONFLICT
    assert F.evidence_of(F.row_of(rows, "TN-9012"), "turn", "stated_age")["value"] == 42
    assert F.row_of(rows, "TN-9006")["hedge"] is not None
    assert F.row_of(rows, "TN-9008")["persona_code"] == V.PROFILE_UNMAPPED
    assert F.row_of(rows, "TN-9001")["persona_code"] == V.CONSISTENT


# -- injected faults ---------------------------------------------------------------------------


def _duplicate_check_id(rows):
    F.row_of(rows, "TN-9003")["check_id"] = F.row_of(rows, "TN-9001")["check_id"]
    return ["TN-9001", "TN-9003"]


FAULTS = [
    # re-computation
    Fault("wrong code", F.set("TN-9002", persona_code=V.CONSISTENT), ("recompute",)),
    Fault("conflict where consistent", F.set("TN-9001", persona_code=V.AGE_CONFLICT), ("recompute",)),
    Fault("excluded turn judged", F.set("TN-9009", persona_code=V.CONSISTENT), ("recompute",)),
    Fault("wrong profile_no", F.set("TN-9002", profile_no="CP-002"), ("recompute",)),
    Fault("profile_no on an unmapped turn", F.set("TN-9008", profile_no="CP-001"), ("recompute",)),
    Fault("missing row", F.remove("TN-9012"), ("recompute",)),
    Fault("extra row for an unknown turn", F.copy_as("TN-9012", "TN-9999", check_id="pk_TN-9999"), ("recompute",)),
    Fault("extra row for a quarantined turn", F.copy_as("TN-9012", "TN-9060", check_id="pk_TN-9060"),  # stated_age 121
          ("recompute",)),
    # 5. evidence values
    Fault("evidence value differs from the turn", F.evidence("TN-9002", "turn", "stated_job", {"value": "플로리스트"}), ("5.evidence_values",)),
    Fault("evidence value differs from the profile", F.evidence("TN-9012", "profile", "age", {"value": 36}), ("5.evidence_values",)),
    Fault("evidence value trimmed where the row is not", F.evidence("TN-9041", "turn", "topic_tag", {"value": "법률 자문"}),
          ("5.evidence_values",)),
    Fault("evidence value as a string where the row has a number", F.evidence("TN-9012", "turn", "stated_age", {"value": "42"}),
          ("5.evidence_values",)),
    Fault("evidence null where the profile has a value", F.evidence("TN-9002", "profile", "job", {"value": None}), ("5.evidence_values",)),
    Fault("evidence wrong count", F.evidence("TN-9008", "profile", "character_code", {"value": 1}), ("5.evidence_values",)),
    Fault("evidence agg that cannot be re-computed",
          F.add_evidence("TN-9002", {"source": "turn", "field": "stated_job", "agg": "count", "value": 1}), ("5.evidence_values",)),
    Fault("profile evidence on an unmapped turn",
          F.add_evidence("TN-9008", {"source": "profile", "field": "age", "value": 24}), ("5.evidence_values",)),
    # 4. evidence fields
    Fault("evidence field that is not a column", F.add_evidence("TN-9002", {"source": "turn", "field": "mood", "value": "기쁨"}),
          ("4.evidence_fields",)),
    Fault("evidence field of the other dataset", F.add_evidence("TN-9002", {"source": "profile", "field": "stated_job", "value": "바리스타"}),
          ("4.evidence_fields",)),
    Fault("evidence field renamed to a near miss", F.evidence("TN-9012", "turn", "stated_age", {"field": "age"}), ("4.evidence_fields",)),
    Fault("evidence source that is not an input", F.add_evidence("TN-9002", {"source": "golden", "field": "persona_code", "value": "x"}),
          ("4.evidence_fields", "schema")),
    Fault("evidence source spelled as the dataset", F.evidence("TN-9002", "turn", "stated_job", {"source": "turns"}),
          ("4.evidence_fields", "schema")),
    # 7. politeness
    Fault("impolite summary (plain speech)", F.set("TN-9002", summary="직업이 다르다."), ("7.polite",)),
    Fault("impolite summary (no mark)", F.set("TN-9002", summary="직업이 다릅니다"), ("7.polite",)),
    Fault("impolite summary (English)", F.set("TN-9002", summary="The job differs."), ("7.polite",)),
    Fault("impolite second sentence", F.set("TN-9002", summary="직업이 다릅니다. 확인 바람."), ("7.polite",)),
    Fault("impolite hedge", F.set("TN-9006", hedge="연출일 수도 있다."), ("7.polite",)),
    # 1. enum
    Fault("non-enum code", F.set("TN-9002", persona_code="job_mismatch"), ("1.code_enum", "schema", "recompute")),
    Fault("code in another case", F.set("TN-9002", persona_code="JOB_CONFLICT"), ("1.code_enum", "schema", "recompute")),
    # 2. required fields
    Fault("empty summary", F.set("TN-9002", summary=""), ("2.required_filled", "7.polite")),
    Fault("blank summary", F.set("TN-9002", summary="  "), ("2.required_filled", "7.polite")),
    Fault("empty evidence", F.set("TN-9002", evidence=[]), ("2.required_filled",)),
    Fault("empty check_id", F.set("TN-9002", check_id=""), ("2.required_filled",)),
    Fault("null persona_code", F.set("TN-9002", persona_code=None), ("2.required_filled", "1.code_enum", "schema", "recompute")),
    Fault("duplicate check_id", _duplicate_check_id, ("2.required_filled",)),
    # 3. stated_age
    Fault("stated_age 130 in evidence", F.evidence("TN-9012", "turn", "stated_age", {"value": 130}), ("3.stated_age", "5.evidence_values")),
    Fault("stated_age -1 in evidence", F.evidence("TN-9012", "turn", "stated_age", {"value": -1}), ("3.stated_age", "5.evidence_values")),
    # 6. forbidden topic
    Fault("forbidden topic_tag relabelled consistent", F.set("TN-9004", persona_code=V.CONSISTENT), ("6.forbidden_topic", "recompute")),
    Fault("forbidden topic_tag (untrimmed) relabelled age_conflict", F.set("TN-9041", persona_code=V.AGE_CONFLICT),
          ("6.forbidden_topic", "recompute")),
    # schema only
    Fault("evidence value of a kind the schema forbids", F.evidence("TN-9002", "turn", "stated_job", {"value": ["바리스타"]}),
          ("schema", "5.evidence_values")),
    Fault("hedge of the wrong kind", F.set("TN-9002", hedge=1), ("schema", "7.polite")),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_an_injected_fault_fails_the_named_check(sample, fault):
    F.assert_fails(sample, fault)


def test_the_fault_table_exercises_every_check():
    assert {c for f in FAULTS for c in f.checks} == set(CHECK_IDS)


def test_a_relabelled_forbidden_turn_fails_only_the_checks_that_see_it(sample):
    got = F.results_with(sample, "TN-9004", lambda r: r.update(persona_code=V.CONSISTENT))
    assert {k for k, r in got.items() if not r.passed} == {"6.forbidden_topic", "recompute"}


def test_an_avoided_forbidden_topic_labelled_consistent_passes_check_6(sample):
    """The dialogue holds turns that avoided the forbidden topic; check 6 must not flag them."""
    _, rows, _ = sample
    for t in ("TN-9011", "TN-9005", "TN-9066", "TN-9070"):
        assert F.row_of(rows, t)["persona_code"] == V.CONSISTENT
    assert F.results(sample, rows)["6.forbidden_topic"].passed


def test_a_second_row_for_a_turn_with_the_same_check_id_fails(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean) + [copy.deepcopy(F.row_of(clean, "TN-9012"))]
    assert not F.results(sample, rows)["2.required_filled"].passed


def test_a_second_row_for_a_turn_fails_even_with_its_own_check_id(sample):
    _, clean, _ = sample
    extra = copy.deepcopy(F.row_of(clean, "TN-9012"))
    extra["check_id"] = "pk_TN-9012-bis"
    rows = copy.deepcopy(clean) + [extra]
    failed = {k: r.failing_ids for k, r in F.results(sample, rows).items() if not r.passed}
    assert failed, "a duplicated verdict row passed every check"
    assert all(ids == ["TN-9012"] for ids in failed.values())


def test_rows_in_a_different_order_still_pass(sample):
    _, clean, _ = sample
    rows = list(reversed(copy.deepcopy(clean)))
    assert F.failures(sample, rows) == {}


def test_reordered_evidence_and_a_missing_hedge_key_still_pass(sample):
    _, clean, _ = sample
    assert F.failures(sample, loosened(clean)) == {}


def test_evidence_with_an_explicit_null_agg_passes(sample):
    """The seed writes "agg": null; that is the same as no agg."""
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    for r in rows:
        for e in r["evidence"]:
            e.setdefault("agg", None)
    assert F.failures(sample, rows) == {}


def test_no_rows_at_all_fail_the_recompute_for_every_judged_turn(sample):
    _, clean, _ = sample
    got = F.results(sample, [])
    assert not got["recompute"].passed
    assert set(got["recompute"].failing_ids) == {r["turn_no"] for r in clean}
    assert all(got[c].passed for c in CHECK_IDS if c != "recompute")


def test_a_line_that_is_not_a_json_object_fails_the_schema_check(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    victim = rows[10]["turn_no"]
    rows[10] = None
    got = F.results(sample, rows)
    assert got["schema"].failing_ids == ["line 11"]
    assert got["recompute"].failing_ids == [victim]


# -- values of the wrong JSON kind must not crash the checks ----------------------------------

UNHASHABLE = [
    ("turn_no is an array", lambda r: r.__setitem__("turn_no", ["TN-9002"])),
    ("turn_no is an object", lambda r: r.__setitem__("turn_no", {"id": "TN-9002"})),
    ("check_id is an array", lambda r: r.__setitem__("check_id", ["pk"])),
    ("persona_code is an array", lambda r: r.__setitem__("persona_code", [V.JOB_CONFLICT])),
    ("profile_no is an object", lambda r: r.__setitem__("profile_no", {"no": "CP-001"})),
    ("evidence source is an array", lambda r: r["evidence"][0].__setitem__("source", ["turn"])),
    ("evidence field is an array", lambda r: r["evidence"][0].__setitem__("field", ["stated_job"])),
    ("evidence agg is an object", lambda r: r["evidence"][0].__setitem__("agg", {"count": 1})),
    ("evidence value is an object", lambda r: r["evidence"][0].__setitem__("value", {"job": "바리스타"})),
    ("evidence item is a string", lambda r: r["evidence"].append("stated_job")),
    ("evidence is an object", lambda r: r.__setitem__("evidence", {"source": "turn"})),
    ("summary is an array", lambda r: r.__setitem__("summary", ["직업이 다릅니다."])),
]


@pytest.mark.parametrize(("name", "mutate"), UNHASHABLE, ids=[u[0] for u in UNHASHABLE])
def test_a_value_of_the_wrong_json_kind_fails_the_schema_instead_of_crashing(sample, name, mutate):
    got = F.results_with(sample, "TN-9002", mutate)
    assert list(got) == CHECK_IDS
    assert not got["schema"].passed
    assert len(got["schema"].failing_ids) == 1


def test_an_array_turn_no_is_named_by_its_line_and_the_turn_is_missing(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    target = next(i for i, r in enumerate(rows) if r["turn_no"] == "TN-9002")
    rows[target]["turn_no"] = ["TN-9002"]
    got = F.results(sample, rows)
    assert got["schema"].failing_ids == [f"line {target + 1}"]
    assert set(got["recompute"].failing_ids) == {f"line {target + 1}", "TN-9002"}


def test_an_array_source_fails_the_evidence_field_check(sample):
    _, clean, _ = sample
    rows = copy.deepcopy(clean)
    F.evidence_of(F.row_of(rows, "TN-9002"), "turn", "stated_job")["source"] = ["turn"]
    got = F.results(sample, rows)
    assert got["4.evidence_fields"].failing_ids == ["TN-9002"]
