"""The persona rules (seed 000, SPEC §3): the sample against the hand-worked oracle, small
hand-made frames for every rule and its precedence, summaries and evidence, and property
tests that the vectorised engine agrees with the row-by-row reference on random tables and that
the column-wise explanation agrees with the row-by-row builders.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.common.cells import trim
from rules.common.korean import is_polite
from rules.persona import engine
from rules.persona import verdicts as V
from rules.persona.checks import run_checks
from rules.persona.config import PersonaConfig, load_config
from rules.persona.explain import explain
from rules.persona.normalise import normalise, read_input_dir
from rules.persona.reference import expected_codes
from tests import conftest
from tests.rules import persona_explain_reference as explain_reference
from tests.rules.helpers import judge_persona, judged_sample, raw_frame, read_jsonl

SAMPLE = conftest.SEEDS / "persona"
FIXTURES = conftest.FIXTURES / "persona"

MINOR_HEDGE_WORDS = "연출"  # the seed's hedge on pk_0006: staging may allow it


def json_key(value) -> str:
    """A value with its JSON kind: 24, 24.0 and True all differ."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def config_with(**changes) -> PersonaConfig:
    """The shipped configuration with some settings changed, validated like a file would be."""
    data = load_config().model_dump()
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return PersonaConfig(**data)


# -- small frames ------------------------------------------------------------------------------

PROFILE = {"profile_no": "CP-1", "character_code": "CH-1", "character_name": "박진우", "age": 35, "job": "셰프",
           "forbidden_topic": "의료 상담", "note": None}
TURN = {"turn_no": "T-1", "character_code_raw": "CH-1", "prompt_ver": "p13", "scenario_id": None,
        "created_at": "2026-10-04T10:00:00", "user_text": "오늘 뭐 했어요?", "reply_text": "장 보고 왔어요.",
        "stated_age": None, "stated_job": None, "topic_tag": "일상", "user_topic_tag": "일상", "note": None}


def gate(profiles: list, turns: list, config: PersonaConfig):
    return normalise({"profiles": raw_frame("profiles", profiles), "turns": raw_frame("turns", turns)}, config)


def judge_rows(profiles: list, turns: list, config: PersonaConfig | None = None) -> dict[str, dict]:
    config = config or load_config()
    norm = gate(profiles, turns, config)
    assert norm.quarantine.empty, norm.quarantine[["line", "reason"]].values.tolist()
    rows = judge_persona(norm, config)
    assert len(rows) == len(turns)
    return {r["turn_no"]: r for r in rows}


def judge_one(profile: dict | None = None, config: PersonaConfig | None = None, **turn) -> dict:
    profiles = [{**PROFILE, **(profile or {})}]
    return judge_rows(profiles, [{**TURN, **turn}], config)["T-1"]


def evidence_keys(row: dict) -> set[tuple]:
    return {(e["source"], e["field"], e.get("agg"), json_key(e["value"])) for e in row["evidence"]}


def cited(row: dict, source: str, field: str) -> dict:
    found = [e for e in row["evidence"] if e["source"] == source and e["field"] == field]
    assert found, f"{row['turn_no']} cites no {source}.{field}: {row['evidence']}"
    return found[0]


def assert_evidence_equals_rows(row: dict, turn: dict, profile: dict | None) -> None:
    """Every evidence row without agg carries the cited row's value as written."""
    for e in row["evidence"]:
        if e.get("agg") is not None:
            continue
        source = turn if e["source"] == "turn" else profile
        assert source is not None, f"{row['turn_no']}: cites the profile of an unmapped turn"
        assert e["field"] in source, f"{e['field']} is not a column"
        assert json_key(e["value"]) == json_key(source[e["field"]]), (row["turn_no"], e, source[e["field"]])


# -- the sample --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample():
    return judged_sample("persona")


@pytest.fixture(scope="module")
def by_turn(sample) -> dict[str, dict]:
    return {r["turn_no"]: r for r in sample[1]}


def test_sample_reproduces_the_hand_worked_oracle(sample, by_turn):
    _, rows, _ = sample
    expected = read_jsonl(FIXTURES / "expected.jsonl")
    assert len(rows) == len(expected) == 469
    assert len(by_turn) == len(rows), "one row per turn"
    assert set(by_turn) == {e["turn_no"] for e in expected}
    wrong = [(e["turn_no"], by_turn[e["turn_no"]]["profile_no"], by_turn[e["turn_no"]]["persona_code"],
              e["profile_no"], e["persona_code"])
             for e in expected
             if (by_turn[e["turn_no"]]["profile_no"], by_turn[e["turn_no"]]["persona_code"]) != (e["profile_no"], e["persona_code"])]
    assert wrong == []
    for e in expected:
        assert (by_turn[e["turn_no"]]["persona_code"] in V.EXCLUDED) == e["excluded"], e["turn_no"]


def test_sample_code_counts_match_the_readme(sample):
    _, rows, _ = sample
    counts = pd.Series([r["persona_code"] for r in rows]).value_counts().to_dict()
    assert counts == {V.CONSISTENT: 384, V.AGE_CONFLICT: 21, V.JOB_CONFLICT: 23, V.FORBIDDEN_TOPIC: 22,
                      V.REPLY_EMPTY: 12, V.PROFILE_UNMAPPED: 7}


SEED_EXAMPLES = json.loads((FIXTURES / "seed_examples.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("example", SEED_EXAMPLES, ids=[e["turn_no"] for e in SEED_EXAMPLES])
def test_every_seed_example_is_reproduced_with_its_evidence(by_turn, example):
    row = by_turn[example["turn_no"]]
    assert (row["profile_no"], row["persona_code"]) == (example["profile_no"], example["persona_code"])
    ours = evidence_keys(row)
    for e in example["evidence"]:
        assert (e["source"], e["field"], e.get("agg"), json_key(e["value"])) in ours, (example["turn_no"], e, row["evidence"])
    assert is_polite(row["summary"])


def test_seed_example_hedge_only_on_the_minor_topic(by_turn):
    assert by_turn["TN-9006"]["hedge"] is not None and MINOR_HEDGE_WORDS in by_turn["TN-9006"]["hedge"]
    for t in ("TN-9001", "TN-9011", "TN-9002", "TN-9012", "TN-9004", "TN-9009", "TN-9008"):
        assert by_turn[t]["hedge"] is None, t


def test_sample_rows_carry_the_output_columns_and_unique_ids(sample):
    _, rows, _ = sample
    for r in rows:
        assert list(r) == engine.OUTPUT_COLUMNS
        assert r["evidence"] and r["summary"].strip()
        assert isinstance(r["check_id"], str) and r["check_id"]
    assert len({r["check_id"] for r in rows}) == len(rows)


def test_sample_rows_are_in_time_order(sample):
    norm, rows, _ = sample
    at = dict(zip(norm.tables["turns"]["turn_no"], norm.tables["turns"]["created_at_ns"]))
    keys = [(at[r["turn_no"]], r["turn_no"]) for r in rows]
    assert keys == sorted(keys)


def test_sample_summaries_and_hedges_are_polite(sample):
    _, rows, _ = sample
    assert [r["turn_no"] for r in rows if not is_polite(r["summary"])] == []
    assert [r["turn_no"] for r in rows if r["hedge"] is not None and not is_polite(r["hedge"])] == []


def test_sample_evidence_values_equal_the_rows_in_the_files(sample):
    """Checked against the files themselves (first line of each id), not the engine's frames."""
    _, rows, _ = sample
    turns, profiles = {}, {}
    for line in (SAMPLE / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        turns.setdefault(t["turn_no"], t)
    accepted_profiles = {"CP-001", "CP-002", "CP-003", "CP-004", "CP-005", "CP-006", "CP-007", "CP-008", "CP-009",
                         "CP-010", "CP-011", "CP-012"}
    for line in (SAMPLE / "profiles.jsonl").read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        if p["profile_no"] in accepted_profiles:
            profiles[p["profile_no"]] = p
    for r in rows:
        assert_evidence_equals_rows(r, turns[r["turn_no"]], profiles.get(r["profile_no"]))
        for e in r["evidence"]:
            if e.get("agg") is not None:
                assert (e["source"], e["field"], e["agg"]) == ("profile", "character_code", "count")
                assert e["value"] == (0 if r["profile_no"] is None else 1)


@pytest.mark.parametrize(
    ("turn_no", "code"),
    [
        ("TN-9019", V.CONSISTENT), ("TN-9022", V.CONSISTENT),  # codes that match after trimming
        ("TN-9020", V.PROFILE_UNMAPPED), ("TN-9021", V.PROFILE_UNMAPPED), ("TN-9048", V.PROFILE_UNMAPPED),
        ("TN-9069", V.PROFILE_UNMAPPED),
        ("TN-9026", V.PROFILE_UNMAPPED), ("TN-9027", V.PROFILE_UNMAPPED),  # their profiles are quarantined
        ("TN-9023", V.REPLY_EMPTY), ("TN-9024", V.REPLY_EMPTY), ("TN-9025", V.REPLY_EMPTY), ("TN-9057", V.REPLY_EMPTY),
        ("TN-9007", V.FORBIDDEN_TOPIC), ("TN-9029", V.FORBIDDEN_TOPIC), ("TN-9028", V.CONSISTENT), ("TN-9047", V.CONSISTENT),
        ("TN-9041", V.FORBIDDEN_TOPIC), ("TN-9042", V.CONSISTENT),
        ("TN-9031", V.FORBIDDEN_TOPIC), ("TN-9043", V.FORBIDDEN_TOPIC), ("TN-9032", V.AGE_CONFLICT), ("TN-9044", V.AGE_CONFLICT),
        ("TN-9016", V.CONSISTENT), ("TN-9018", V.CONSISTENT), ("TN-9017", V.CONSISTENT),
        ("TN-9013", V.AGE_CONFLICT), ("TN-9038", V.AGE_CONFLICT), ("TN-9039", V.JOB_CONFLICT), ("TN-9015", V.CONSISTENT),
        ("TN-9036", V.CONSISTENT), ("TN-9040", V.CONSISTENT), ("TN-9037", V.CONSISTENT),
        ("TN-9033", V.CONSISTENT), ("TN-9034", V.CONSISTENT), ("TN-9035", V.AGE_CONFLICT),
    ],
)
def test_sample_hard_cases(by_turn, turn_no, code):
    assert by_turn[turn_no]["persona_code"] == code


def test_sample_duplicate_trap_rows_are_not_used(by_turn):
    # TN-9002's re-sent copy says 플로리스트; CP-014 (CH-007 again, age 22) would make TN-9007 adult.
    assert by_turn["TN-9002"]["persona_code"] == V.JOB_CONFLICT
    assert cited(by_turn["TN-9002"], "turn", "stated_job")["value"] == "바리스타"
    assert by_turn["TN-9007"]["profile_no"] == "CP-007"
    assert cited(by_turn["TN-9007"], "profile", "age")["value"] == 17


@pytest.mark.parametrize("turn_no", ["TN-9011", "TN-9005", "TN-9066", "TN-9070"])
def test_sample_forbidden_topic_asked_and_avoided(by_turn, turn_no):
    row = by_turn[turn_no]
    assert row["persona_code"] == V.CONSISTENT
    assert "금지 주제" in row["summary"] and "피해" in row["summary"]
    forbidden = cited(row, "profile", "forbidden_topic")["value"]
    assert cited(row, "turn", "user_topic_tag")["value"] == forbidden
    assert forbidden in row["summary"]


# -- hand-worked small frames: every rule and its precedence -----------------------------------

CASES = [
    # (name, profile overrides, turn overrides, code)
    ("plain consistent", {}, {}, V.CONSISTENT),
    # 1. profile_unmapped
    ("unknown code", {}, {"character_code_raw": "CH-9"}, V.PROFILE_UNMAPPED),
    ("code differs in case", {}, {"character_code_raw": "ch-1"}, V.PROFILE_UNMAPPED),
    ("code with an extra digit", {}, {"character_code_raw": "CH-10"}, V.PROFILE_UNMAPPED),
    ("empty code", {}, {"character_code_raw": ""}, V.PROFILE_UNMAPPED),
    ("blank code", {}, {"character_code_raw": "   "}, V.PROFILE_UNMAPPED),
    ("untrimmed code matches", {}, {"character_code_raw": "  CH-1 "}, V.CONSISTENT),
    ("ideographic space and tab trimmed", {}, {"character_code_raw": "\u3000CH-1\t"}, V.CONSISTENT),
    ("unmapped before empty", {}, {"character_code_raw": "CH-9", "reply_text": ""}, V.PROFILE_UNMAPPED),
    ("unmapped before forbidden", {}, {"character_code_raw": "CH-9", "topic_tag": "의료 상담"}, V.PROFILE_UNMAPPED),
    ("unmapped before age", {}, {"character_code_raw": "CH-9", "stated_age": 50}, V.PROFILE_UNMAPPED),
    # 2. reply_empty
    ("null reply", {}, {"reply_text": None}, V.REPLY_EMPTY),
    ("empty reply", {}, {"reply_text": ""}, V.REPLY_EMPTY),
    ("spaces reply", {}, {"reply_text": "   "}, V.REPLY_EMPTY),
    ("newline reply", {}, {"reply_text": "\n"}, V.REPLY_EMPTY),
    ("ideographic space reply", {}, {"reply_text": "\u3000"}, V.REPLY_EMPTY),
    ("mixed whitespace reply", {}, {"reply_text": " \n\t "}, V.REPLY_EMPTY),
    ("one character is a reply", {}, {"reply_text": "네"}, V.CONSISTENT),
    ("empty before forbidden", {}, {"reply_text": "", "topic_tag": "의료 상담"}, V.REPLY_EMPTY),
    ("empty before age", {}, {"reply_text": " ", "stated_age": 50}, V.REPLY_EMPTY),
    ("empty before job", {}, {"reply_text": None, "stated_job": "가수"}, V.REPLY_EMPTY),
    # 3. forbidden_topic
    ("forbidden topic engaged", {}, {"topic_tag": "의료 상담"}, V.FORBIDDEN_TOPIC),
    ("forbidden topic with a trailing space", {}, {"topic_tag": "의료 상담 "}, V.FORBIDDEN_TOPIC),
    ("forbidden topic near miss", {}, {"topic_tag": "의료 상식"}, V.CONSISTENT),
    ("forbidden before age", {}, {"topic_tag": "의료 상담", "stated_age": 50}, V.FORBIDDEN_TOPIC),
    ("forbidden before job", {}, {"topic_tag": "의료 상담", "stated_job": "가수"}, V.FORBIDDEN_TOPIC),
    ("forbidden asked but avoided", {}, {"user_topic_tag": "의료 상담", "topic_tag": "요리"}, V.CONSISTENT),
    ("forbidden asked, topic null", {}, {"user_topic_tag": "의료 상담", "topic_tag": None}, V.CONSISTENT),
    ("null forbidden never matches a topic", {"forbidden_topic": None}, {"topic_tag": "정치"}, V.CONSISTENT),
    ("null forbidden never matches a null topic", {"forbidden_topic": None}, {"topic_tag": None}, V.CONSISTENT),
    ("minor, 음주", {"age": 19}, {"topic_tag": "음주"}, V.FORBIDDEN_TOPIC),
    ("minor, 흡연", {"age": 19}, {"topic_tag": "흡연"}, V.FORBIDDEN_TOPIC),
    ("minor with no forbidden topic, 흡연", {"age": 17, "forbidden_topic": None}, {"topic_tag": "흡연"}, V.FORBIDDEN_TOPIC),
    ("newborn, 음주", {"age": 0}, {"topic_tag": "음주"}, V.FORBIDDEN_TOPIC),
    ("minor, restricted topic with spaces", {"age": 19}, {"topic_tag": " 음주 "}, V.FORBIDDEN_TOPIC),
    ("adult at exactly 20, 음주", {"age": 20}, {"topic_tag": "음주"}, V.CONSISTENT),
    ("adult at 20, 흡연", {"age": 20}, {"topic_tag": "흡연"}, V.CONSISTENT),
    ("minor on another topic", {"age": 19}, {"topic_tag": "연애"}, V.CONSISTENT),
    ("minor asked about 음주, avoided", {"age": 17}, {"user_topic_tag": "음주", "topic_tag": "일상"}, V.CONSISTENT),
    ("null age is not a minor", {"age": None}, {"topic_tag": "음주"}, V.CONSISTENT),
    ("minor topic before age conflict", {"age": 19}, {"topic_tag": "음주", "stated_age": 20}, V.FORBIDDEN_TOPIC),
    # 4. age_conflict
    ("older", {}, {"stated_age": 42}, V.AGE_CONFLICT),
    ("younger", {}, {"stated_age": 30}, V.AGE_CONFLICT),
    ("same age", {}, {"stated_age": 35}, V.CONSISTENT),
    ("stated 0 against 0", {"age": 0}, {"stated_age": 0}, V.CONSISTENT),
    ("stated 0 against 24", {"age": 24}, {"stated_age": 0}, V.AGE_CONFLICT),
    ("stated 120 against 120", {"age": 120}, {"stated_age": 120}, V.CONSISTENT),
    ("age before job", {}, {"stated_age": 36, "stated_job": "요리 유튜버"}, V.AGE_CONFLICT),
    ("stated age against null age", {"age": None}, {"stated_age": 27}, V.AGE_CONFLICT),
    ("null-age conflict before job", {"age": None}, {"stated_age": 27, "stated_job": "가수"}, V.AGE_CONFLICT),
    ("nothing stated against null age", {"age": None}, {}, V.CONSISTENT),
    # 5. job_conflict
    ("other job", {}, {"stated_job": "가수"}, V.JOB_CONFLICT),
    ("same job", {}, {"stated_job": "셰프"}, V.CONSISTENT),
    ("same job untrimmed", {}, {"stated_job": " 셰프 "}, V.CONSISTENT),
    ("same job with an ideographic space", {}, {"stated_job": "\u3000셰프"}, V.CONSISTENT),
    ("blank stated job", {}, {"stated_job": "  "}, V.CONSISTENT),
    ("empty stated job", {}, {"stated_job": ""}, V.CONSISTENT),
    ("blank stated job against null job", {"job": None}, {"stated_job": "  "}, V.CONSISTENT),
    ("stated job against null job", {"job": None}, {"stated_job": "회계사"}, V.JOB_CONFLICT),
    ("job that contains the profile's", {}, {"stated_job": "셰프 지망생"}, V.JOB_CONFLICT),
    ("same age and job", {}, {"stated_age": 35, "stated_job": "셰프"}, V.CONSISTENT),
]


@pytest.mark.parametrize(("name", "profile", "turn", "code"), CASES, ids=[c[0] for c in CASES])
def test_rule_and_precedence(name, profile, turn, code):
    row = judge_one(profile, **turn)
    assert row["persona_code"] == code
    assert row["profile_no"] == (None if code == V.PROFILE_UNMAPPED else "CP-1")
    assert row["turn_no"] == "T-1"
    assert is_polite(row["summary"]), row["summary"]
    assert row["hedge"] is None or is_polite(row["hedge"])
    full_turn, full_profile = {**TURN, **turn}, {**PROFILE, **profile}
    assert_evidence_equals_rows(row, full_turn, None if code == V.PROFILE_UNMAPPED else full_profile)
    # The reference re-computation agrees on every hand-worked case.
    config = load_config()
    assert expected_codes(gate([full_profile], [full_turn], config), config) == {"T-1": (row["profile_no"], code)}


def test_unmapped_turn_cites_the_raw_code_and_a_zero_count():
    row = judge_one(character_code_raw=" CH-9\t")
    assert row["profile_no"] is None
    assert cited(row, "turn", "character_code_raw")["value"] == " CH-9\t"
    count = cited(row, "profile", "character_code")
    assert (count["agg"], count["value"]) == ("count", 0)
    assert "CH-9" in row["summary"]
    assert not any(e["source"] == "profile" and e.get("agg") is None for e in row["evidence"])


@pytest.mark.parametrize("reply", [None, "", "   ", "\n", "\u3000"])
def test_empty_reply_cites_the_reply_as_written(reply):
    row = judge_one(reply_text=reply, prompt_ver="p12")
    assert row["persona_code"] == V.REPLY_EMPTY
    assert json_key(cited(row, "turn", "reply_text")["value"]) == json_key(reply)
    assert cited(row, "turn", "prompt_ver")["value"] == "p12"


def test_forbidden_topic_cites_both_values_as_written():
    row = judge_one({"forbidden_topic": "의료 상담"}, topic_tag="의료 상담 ")
    assert row["persona_code"] == V.FORBIDDEN_TOPIC
    assert cited(row, "turn", "topic_tag")["value"] == "의료 상담 "
    assert cited(row, "profile", "forbidden_topic")["value"] == "의료 상담"
    assert "의료 상담" in row["summary"]
    assert row["hedge"] is None


@pytest.mark.parametrize(("age", "topic"), [(19, "음주"), (19, "흡연"), (17, "흡연"), (0, "음주")])
def test_minor_restricted_topic_carries_the_hedge_and_cites_the_age(age, topic):
    row = judge_one({"age": age, "forbidden_topic": None}, topic_tag=topic)
    assert row["persona_code"] == V.FORBIDDEN_TOPIC
    assert cited(row, "profile", "age")["value"] == age
    assert cited(row, "turn", "topic_tag")["value"] == topic
    assert row["hedge"] is not None and is_polite(row["hedge"]) and MINOR_HEDGE_WORDS in row["hedge"]
    assert str(age) in row["summary"] and topic in row["summary"] and "미성년" in row["summary"]


def test_adult_at_twenty_has_no_hedge():
    row = judge_one({"age": 20}, topic_tag="음주")
    assert (row["persona_code"], row["hedge"]) == (V.CONSISTENT, None)
    assert "미성년" not in row["summary"]


def test_directly_forbidden_restricted_topic_for_a_minor_has_no_hedge():
    """The profile itself forbids 음주: the direct rule decides, not the age rule."""
    row = judge_one({"age": 19, "forbidden_topic": "음주"}, topic_tag="음주")
    assert row["persona_code"] == V.FORBIDDEN_TOPIC
    assert row["hedge"] is None
    assert cited(row, "profile", "forbidden_topic")["value"] == "음주"


@pytest.mark.parametrize(("stated", "age", "diff", "direction"), [(42, 35, 7, "많게"), (30, 35, 5, "적게"), (0, 24, 24, "적게"),
                                                                  (120, 1, 119, "많게")])
def test_age_conflict_summary_cites_the_age_and_the_difference(stated, age, diff, direction):
    row = judge_one({"age": age}, stated_age=stated)
    assert row["persona_code"] == V.AGE_CONFLICT
    assert cited(row, "turn", "stated_age")["value"] == stated
    assert cited(row, "profile", "age")["value"] == age
    numbers = {int(n) for n in re.findall(r"\d+", row["summary"])}
    assert {age, diff} <= numbers, row["summary"]
    assert direction in row["summary"]
    assert is_polite(row["summary"])


def test_job_conflict_summary_names_both_jobs_and_cites_them_as_written():
    row = judge_one({"job": "셰프"}, stated_job=" 요리 유튜버 ")
    assert row["persona_code"] == V.JOB_CONFLICT
    assert cited(row, "turn", "stated_job")["value"] == " 요리 유튜버 "
    assert cited(row, "profile", "job")["value"] == "셰프"
    assert "셰프" in row["summary"] and "요리 유튜버" in row["summary"]


@pytest.mark.parametrize(("profile", "turn", "code", "field"), [
    ({"age": None}, {"stated_age": 27}, V.AGE_CONFLICT, "age"),
    ({"job": None}, {"stated_job": "회계사"}, V.JOB_CONFLICT, "job"),
])
def test_null_profile_field_conflict_says_the_profile_should_be_filled(profile, turn, code, field):
    row = judge_one(profile, **turn)
    assert row["persona_code"] == code
    assert cited(row, "profile", field)["value"] is None
    assert "비어" in row["summary"] and "채워야" in row["summary"]
    assert str(next(iter(turn.values()))) in row["summary"]
    assert is_polite(row["summary"])


def test_consistent_summary_on_a_turn_that_states_nothing():
    row = judge_one()
    assert row["persona_code"] == V.CONSISTENT
    assert row["evidence"] and is_polite(row["summary"])


def test_avoided_forbidden_topic_summary_and_evidence():
    row = judge_one({"forbidden_topic": "의료 상담"}, user_topic_tag="의료 상담", topic_tag=None)
    assert row["persona_code"] == V.CONSISTENT
    assert "의료 상담" in row["summary"] and "피해" in row["summary"]
    assert cited(row, "turn", "user_topic_tag")["value"] == "의료 상담"
    assert cited(row, "turn", "topic_tag")["value"] is None
    assert cited(row, "profile", "forbidden_topic")["value"] == "의료 상담"


def test_a_turn_not_asked_for_the_forbidden_topic_does_not_claim_it_was():
    row = judge_one({"forbidden_topic": "의료 상담"}, user_topic_tag="요리", topic_tag="요리")
    assert row["persona_code"] == V.CONSISTENT
    assert "요청받았지만" not in row["summary"]


def test_consistent_with_stated_values_cites_them():
    row = judge_one({"age": 35, "job": "셰프"}, stated_age=35, stated_job=" 셰프 ")
    assert row["persona_code"] == V.CONSISTENT
    assert cited(row, "turn", "stated_age")["value"] == 35 and cited(row, "profile", "age")["value"] == 35
    assert cited(row, "turn", "stated_job")["value"] == " 셰프 " and cited(row, "profile", "job")["value"] == "셰프"
    assert "35" in row["summary"] and "셰프" in row["summary"]


def test_each_turn_is_judged_against_its_own_profile():
    profiles = [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": "CH-2", "age": 19, "job": "연습생",
                          "forbidden_topic": None}]
    turns = [{**TURN, "turn_no": "T-1", "topic_tag": "음주"},
             {**TURN, "turn_no": "T-2", "character_code_raw": "CH-2", "topic_tag": "음주"},
             {**TURN, "turn_no": "T-3", "character_code_raw": "CH-2", "stated_job": "셰프"},
             {**TURN, "turn_no": "T-4", "stated_job": "셰프"}]
    rows = judge_rows(profiles, turns)
    assert {t: (r["profile_no"], r["persona_code"]) for t, r in rows.items()} == {
        "T-1": ("CP-1", V.CONSISTENT), "T-2": ("CP-2", V.FORBIDDEN_TOPIC),
        "T-3": ("CP-2", V.JOB_CONFLICT), "T-4": ("CP-1", V.CONSISTENT)}


def test_no_turns_gives_an_empty_frame_with_the_output_columns():
    config = load_config()
    norm = gate([PROFILE], [], config)
    out = engine.judge(norm.tables["turns"], norm.tables["profiles"], config)
    assert out.empty and list(out.columns) == engine.OUTPUT_COLUMNS


def test_no_profiles_at_all_makes_every_turn_unmapped():
    rows = judge_rows([], [TURN, {**TURN, "turn_no": "T-2", "reply_text": ""}])
    assert {r["persona_code"] for r in rows.values()} == {V.PROFILE_UNMAPPED}


# -- configuration -----------------------------------------------------------------------------


@pytest.mark.parametrize(("policy", "profile", "turn", "code"), [
    ({"age": "ignore"}, {"age": None}, {"stated_age": 27}, V.CONSISTENT),
    ({"age": "ignore"}, {"age": None}, {"stated_age": 27, "stated_job": "가수"}, V.JOB_CONFLICT),
    ({"age": "ignore"}, {"age": 35}, {"stated_age": 27}, V.AGE_CONFLICT),  # only a null profile value is ignored
    ({"age": "ignore"}, {"job": None}, {"stated_job": "가수"}, V.JOB_CONFLICT),
    ({"job": "ignore"}, {"job": None}, {"stated_job": "가수"}, V.CONSISTENT),
    ({"job": "ignore"}, {"job": "셰프"}, {"stated_job": "가수"}, V.JOB_CONFLICT),
    ({"job": "ignore"}, {"age": None}, {"stated_age": 27}, V.AGE_CONFLICT),
    ({"age": "ignore", "job": "ignore"}, {"age": None, "job": None}, {"stated_age": 22, "stated_job": "가수"}, V.CONSISTENT),
    ({"age": "conflict", "job": "conflict"}, {"age": None, "job": None}, {"stated_age": 22, "stated_job": "가수"}, V.AGE_CONFLICT),
])
def test_null_field_policy(policy, profile, turn, code):
    config = config_with(null_field_policy=policy)
    row = judge_one(profile, config, **turn)
    assert row["persona_code"] == code
    assert is_polite(row["summary"])
    norm = gate([{**PROFILE, **profile}], [{**TURN, **turn}], config)
    assert expected_codes(norm, config)["T-1"][1] == code
    assert all(r.passed for r in run_checks(norm, [row], config)), [r.detail for r in run_checks(norm, [row], config) if not r.passed]


def test_sample_under_the_ignore_policy_flips_exactly_the_null_field_conflicts(sample, by_turn):
    norm, _, _ = sample
    config = config_with(null_field_policy={"age": "ignore", "job": "ignore"})
    rows = {r["turn_no"]: r for r in judge_persona(norm, config)}
    changed = {t: (by_turn[t]["persona_code"], r["persona_code"]) for t, r in rows.items() if r["persona_code"] != by_turn[t]["persona_code"]}
    # Null profile age: TN-9013, 9038, 9067; null job: TN-9010, 9039, 9068. TN-9044 (29 says 31) stays age_conflict.
    assert changed == {
        "TN-9013": (V.AGE_CONFLICT, V.CONSISTENT), "TN-9038": (V.AGE_CONFLICT, V.CONSISTENT),
        "TN-9067": (V.AGE_CONFLICT, V.CONSISTENT), "TN-9010": (V.JOB_CONFLICT, V.CONSISTENT),
        "TN-9039": (V.JOB_CONFLICT, V.CONSISTENT), "TN-9068": (V.JOB_CONFLICT, V.CONSISTENT),
    }
    assert all(r.passed for r in run_checks(norm, list(rows.values()), config))


@pytest.mark.parametrize(("profile", "turn"), [({"age": None}, {"stated_age": 27}), ({"job": None}, {"stated_job": "가수"})])
def test_ignore_policy_summary_does_not_claim_the_empty_field_matches(profile, turn):
    config = config_with(null_field_policy={"age": "ignore", "job": "ignore"})
    row = judge_one(profile, config, **turn)
    assert row["persona_code"] == V.CONSISTENT
    assert "설정과 같" not in row["summary"], row["summary"]


@pytest.mark.parametrize(("adult_age", "age", "code"), [(18, 19, V.CONSISTENT), (18, 17, V.FORBIDDEN_TOPIC),
                                                        (18, 18, V.CONSISTENT), (21, 20, V.FORBIDDEN_TOPIC),
                                                        (0, 0, V.CONSISTENT)])
def test_configured_adult_age(adult_age, age, code):
    config = config_with(adult_age=adult_age)
    row = judge_one({"age": age}, config, topic_tag="음주")
    assert row["persona_code"] == code
    assert (row["hedge"] is not None) == (code == V.FORBIDDEN_TOPIC)


@pytest.mark.parametrize(("topics", "tag", "code"), [
    (["도박"], "도박", V.FORBIDDEN_TOPIC),
    (["도박"], "음주", V.CONSISTENT),
    (["음주", "흡연", "도박"], "흡연", V.FORBIDDEN_TOPIC),
    ([], "음주", V.CONSISTENT),
])
def test_configured_age_restricted_topics(topics, tag, code):
    config = config_with(age_restricted_topics=topics)
    assert judge_one({"age": 19}, config, topic_tag=tag)["persona_code"] == code
    assert judge_one({"age": 30}, config, topic_tag=tag)["persona_code"] == V.CONSISTENT


def test_the_shipped_configuration_holds_the_spec_decisions():
    config = load_config()
    assert config.adult_age == 20
    assert set(config.age_restricted_topics) == {"음주", "흡연"}
    assert (config.null_field_policy.age, config.null_field_policy.job) == ("conflict", "conflict")


@pytest.mark.parametrize("bad", [{"adult_age": -1}, {"adult_age": 121}, {"null_field_policy": {"age": "maybe"}},
                                 {"unknown_setting": 1}])
def test_a_bad_setting_is_rejected_on_load(bad):
    with pytest.raises(ValueError):
        config_with(**bad)


# -- summaries built from unusual log text -----------------------------------------------------


def test_blank_character_code_summary_has_no_dangling_particle(by_turn):
    summary = by_turn["TN-9048"]["summary"]
    assert "(이)" not in summary and "코드 라" not in summary, summary


@pytest.mark.parametrize("tag", ["연애?", "정치."])
def test_summary_stays_polite_for_a_topic_tag_with_sentence_punctuation(tag):
    row = judge_one({"forbidden_topic": tag}, topic_tag=tag)
    assert row["persona_code"] == V.FORBIDDEN_TOPIC
    assert is_polite(row["summary"]), row["summary"]


# -- property: the vectorised engine agrees with the row-by-row reference ---------------------

CODES = ["CH-1", "CH-2", "CH-3", "CH\x001", "CH\x002"]
RAW_CODES = ["CH-1", " CH-1 ", "\u3000CH-2\t", "CH-2", "CH-3", "ch-1", "CH-9", "", "  ", "CH\x001", "CH\x002", "CH\x00"]
TOPICS = [None, "정치", "정치 ", "음주", "흡연", " 음주", "일상", "실제 사건", "", "  ", "정치\x00", "정치\x00a"]
JOBS = [None, "셰프", " 셰프 ", "가수", "", "  ", "요리 유튜버", "셰프\x00", "셰프\x00a"]
"""Codes, topics and jobs include some that differ only after a NUL, which pandas' text hashing misses."""
AGES = [None, 0, 17, 19, 20, 21, 35, 120]
REPLIES = [None, "", "   ", "\n", "\u3000", " \n ", "네, 그래요.", "x"]

profile_rows = st.fixed_dictionaries({
    "character_code": st.sampled_from(CODES + [" CH-1", "CH-2 "]),
    "character_name": st.just("가나"),
    "age": st.sampled_from(AGES),
    "job": st.sampled_from(JOBS),
    "forbidden_topic": st.sampled_from(TOPICS),
})
turn_rows = st.fixed_dictionaries({
    "character_code_raw": st.sampled_from(RAW_CODES),
    "reply_text": st.sampled_from(REPLIES),
    "stated_age": st.sampled_from(AGES),
    "stated_job": st.sampled_from(JOBS),
    "topic_tag": st.sampled_from(TOPICS),
    "user_topic_tag": st.sampled_from(TOPICS),
    "minute": st.integers(0, 59),
})
configs = st.fixed_dictionaries({
    "adult_age": st.sampled_from([0, 18, 20, 30]),
    "age_restricted_topics": st.sampled_from([["음주", "흡연"], ["정치"], []]),
    "null_field_policy": st.fixed_dictionaries({"age": st.sampled_from(["conflict", "ignore"]),
                                                "job": st.sampled_from(["conflict", "ignore"])}),
})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles=st.lists(profile_rows, max_size=4), turns=st.lists(turn_rows, min_size=1, max_size=8), changes=configs)
def test_engine_agrees_with_the_reference_on_random_tables(profiles, turns, changes):
    config = config_with(**changes)
    p_rows = [{"profile_no": f"CP-{i}", **p} for i, p in enumerate(profiles)]
    t_rows = []
    for i, t in enumerate(turns):
        t = dict(t)
        minute = t.pop("minute")
        t_rows.append({"turn_no": f"T-{i}", "prompt_ver": "p13", "scenario_id": None,
                       "created_at": f"2026-10-04T10:{minute:02d}:00", "user_text": "질문", **t})
    norm = gate(p_rows, t_rows, config)
    # Duplicate character codes (after trimming) are quarantined, never judged against.
    kept_codes = [trim(c) for c in norm.tables["profiles"]["character_code"]]
    assert len(kept_codes) == len(set(kept_codes))
    out = engine.judge(norm.tables["turns"], norm.tables["profiles"], config)
    rows = engine.records(out)
    reference = expected_codes(norm, config)
    assert {r["turn_no"]: (r["profile_no"], r["persona_code"]) for r in rows} == reference
    assert len(rows) == len(t_rows)
    failed = {r.id: r.detail for r in run_checks(norm, rows, config) if not r.passed}
    assert failed == {}


# -- property: the column-wise explanation agrees with the row-by-row builders ------------------

WORDS = st.text(alphabet="가나다라마바사각난달람밥삿왕읽값 AZaz09.?!·\n\u3000-()", max_size=6)
explained_profiles = st.fixed_dictionaries({
    "character_code": st.sampled_from(CODES),
    "character_name": st.just("가나"),
    "age": st.one_of(st.sampled_from(AGES), st.integers(0, 150), st.just(35.0)),
    "job": st.one_of(st.sampled_from(JOBS), WORDS),
    "forbidden_topic": st.one_of(st.sampled_from(TOPICS), WORDS),
})
explained_turns = st.fixed_dictionaries({
    "character_code_raw": st.one_of(st.sampled_from(RAW_CODES), WORDS),
    "reply_text": st.sampled_from(REPLIES),
    "stated_age": st.one_of(st.sampled_from(AGES), st.integers(0, 150), st.just(21.0)),
    "stated_job": st.one_of(st.sampled_from(JOBS), WORDS),
    "topic_tag": st.one_of(st.sampled_from(TOPICS), WORDS),
    "user_topic_tag": st.one_of(st.sampled_from(TOPICS), WORDS),
    "minute": st.integers(0, 59),
})


def explained_both_ways(profiles, turns, config):
    """(column-wise, row-by-row) explanations of the judged turns, in output order."""
    norm = gate([{"profile_no": f"CP-{i}", **p} for i, p in enumerate(profiles)],
                [{"turn_no": f"T-{i}", "prompt_ver": "p13", "scenario_id": None, "user_text": "질문",
                  "created_at": f"2026-10-04T10:{t['minute']:02d}:00", **{k: v for k, v in t.items() if k != "minute"}}
                 for i, t in enumerate(turns)], config)
    f, order = engine.decided(norm.tables["turns"], norm.tables["profiles"], config)
    f = f.iloc[order]
    return explain(f, config), explain_reference.explain(f, config)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles=st.lists(explained_profiles, max_size=3), turns=st.lists(explained_turns, min_size=1, max_size=10),
       changes=configs)
def test_column_wise_explanation_agrees_with_the_row_by_row_builders(profiles, turns, changes):
    columnar, reference = explained_both_ways(profiles, turns, config_with(**changes))
    # The same evidence (values of the same JSON kinds, keys in the same order), summaries and hedges.
    assert [[json.dumps(e, ensure_ascii=False) for e in row] for row in columnar[0]] == \
        [[json.dumps(e, ensure_ascii=False) for e in row] for row in reference[0]]
    assert columnar[1:] == reference[1:]


def test_column_wise_explanation_agrees_on_the_sample():
    config = load_config()
    norm = normalise(read_input_dir(SAMPLE), config)
    f, order = engine.decided(norm.tables["turns"], norm.tables["profiles"], config)
    f = f.iloc[order]
    assert len(set(f["persona_code"])) == len(V.RULE_ORDER), "the sample holds every code"
    columnar, reference = explain(f, config), explain_reference.explain(f, config)
    assert json.dumps(columnar, ensure_ascii=False) == json.dumps(reference, ensure_ascii=False)


_CELL = st.one_of(st.none(), st.just(float("nan")), st.integers(-3, 3),
                  st.sampled_from(["개발자", " 개발자\u200b", "\ufeff", "", "  ", "CH-001", "ch-001 "]), st.text(max_size=4))


@settings(max_examples=300, deadline=None)
@given(st.lists(_CELL, max_size=20), st.booleans())
def test_clean_by_distinct_value_gives_what_one_pass_gives(cells, text_only):
    """Text columns take the factorised path, others the list pass; both give trimmed text, None else."""
    if text_only:
        cells = [c for c in cells if c is None or isinstance(c, str)]
    series = pd.Series(cells, dtype=object, index=range(10, 10 + len(cells)))
    want = [(trim(v) or None) if isinstance(v, str) else None for v in cells]
    got = engine._clean(series)
    assert list(got.index) == list(series.index) and got.dtype == object
    assert [repr(v) for v in got] == [repr(v) for v in want]


def test_codes_that_differ_only_after_a_nul_are_different_profiles():
    """pandas' text hashing stops at a NUL: a merge's key check took these two codes for one."""
    config = config_with(adult_age=18, age_restricted_topics=[], null_field_policy={"age": "ignore", "job": "ignore"})
    p_rows = [{"profile_no": f"CP-{i}", "character_code": code, "character_name": "가나", "age": 30, "job": job,
               "forbidden_topic": None} for i, (code, job) in enumerate([("CH\x001", "셰프"), ("CH\x002", "가수")])]
    t_rows = [{"turn_no": f"T-{i}", "prompt_ver": "p13", "scenario_id": None, "created_at": "2026-10-04T10:00:00",
               "user_text": "질문", "character_code_raw": code, "reply_text": "네", "stated_age": None, "stated_job": "셰프",
               "topic_tag": None, "user_topic_tag": None} for i, code in enumerate(["CH\x002", "CH\x001", "CH\x00"])]
    norm = gate(p_rows, t_rows, config)
    rows = engine.records(engine.judge(norm.tables["turns"], norm.tables["profiles"], config))
    got = {r["turn_no"]: (r["profile_no"], r["persona_code"]) for r in rows}
    assert got == {"T-0": ("CP-1", V.JOB_CONFLICT), "T-1": ("CP-0", V.CONSISTENT), "T-2": (None, V.PROFILE_UNMAPPED)}
    assert got == expected_codes(norm, config)
