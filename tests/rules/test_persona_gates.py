"""The persona gates (SPEC §2, §3): raw lines → normalised tables + quarantine.

Every bad row is kept with a reason code, counts reconcile, a quarantined profile is absent
(its turns are profile_unmapped), and a file that lacks a required column everywhere is
rejected whole with a message naming the file and the column.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules.common.gates import BAD_TIMESTAMP, DUPLICATE_ID, INVALID_JSON, MISSING_ID, SCHEMA

from rules.common.reconcile import QUARANTINE_COLUMNS
from rules.common.jsonl import DatasetError
from rules.persona import engine
from rules.persona import verdicts as V
from rules.persona.config import load_config
from rules.persona.normalise import load_dir, normalise
from tests import conftest
from tests.rules.helpers import judge_persona, raw_frame, read_jsonl
from tests.rules.test_persona_engine import PROFILE, TURN

SAMPLE = conftest.SEEDS / "persona"
FIXTURES = conftest.FIXTURES / "persona"


def gate(profiles: list, turns: list):
    return normalise({"profiles": raw_frame("profiles", profiles), "turns": raw_frame("turns", turns)}, load_config())


def quarantined(norm) -> list[tuple]:
    return [(r["dataset"], int(r["line"]), r["id"], r["reason_code"]) for r in norm.quarantine.to_dict("records")]


def assert_reconciles(norm, profiles: int, turns: int) -> None:
    rec = norm.reconciliation()
    assert rec["profiles"]["raw"] == profiles and rec["turns"]["raw"] == turns
    for name, r in rec.items():
        assert r["reconciles"], (name, r)
        assert r["raw"] == r["normalised"] + r["quarantined"]
        assert r["normalised"] == len(norm.tables[name])


def judge(norm) -> dict[str, dict]:
    return {r["turn_no"]: r for r in judge_persona(norm, load_config())}


# -- the sample --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample():
    return load_dir(SAMPLE, load_config())


def test_sample_quarantine_equals_the_oracle(sample):
    expected = read_jsonl(FIXTURES / "expected_quarantine.jsonl")
    got = [{"dataset": d, "line": line, "id": i, "reason_code": c} for d, line, i, c in quarantined(sample)]
    key = lambda r: (r["dataset"], r["line"])  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)
    assert len(got) == 6


def test_sample_quarantine_rows_carry_file_reason_and_raw_text(sample):
    q = sample.quarantine
    assert list(q.columns) == QUARANTINE_COLUMNS
    lines = {d: (SAMPLE / f"{d}.jsonl").read_text(encoding="utf-8").splitlines() for d in ("profiles", "turns")}
    for r in q.to_dict("records"):
        assert Path(r["file"]).name == f"{r['dataset']}.jsonl"
        assert isinstance(r["reason"], str) and r["reason"].strip()
        assert r["raw"] == lines[r["dataset"]][int(r["line"]) - 1]
    reasons = {(r["dataset"], int(r["line"])): r["reason"] for r in q.to_dict("records")}
    assert "age" in reasons[("profiles", 8)] and "150" in reasons[("profiles", 8)]
    assert "stated_age" in reasons[("turns", 60)] and "121" in reasons[("turns", 60)]
    assert "stated_age" in reasons[("turns", 62)] and "-1" in reasons[("turns", 62)]
    assert "CH-007" in reasons[("profiles", 15)] and "7" in reasons[("profiles", 15)]
    assert "TN-9002" in reasons[("turns", 64)] and "2" in reasons[("turns", 64)]


def test_sample_counts_reconcile(sample):
    assert_reconciles(sample, profiles=15, turns=472)
    assert len(sample.tables["profiles"]) == 12
    assert len(sample.tables["turns"]) == 469


def test_sample_keeps_the_first_of_repeated_ids(sample):
    turns = sample.tables["turns"].set_index("turn_no")
    assert turns.loc["TN-9002", "stated_job"] == "바리스타"
    assert int(turns.loc["TN-9002", "line"]) == 2
    profiles = sample.tables["profiles"].set_index("character_code")
    assert profiles.loc["CH-007", "profile_no"] == "CP-007"
    assert profiles.loc["CH-007", "age"] == 17
    assert not sample.tables["turns"]["turn_no"].duplicated().any()
    assert not sample.tables["profiles"]["character_code"].duplicated().any()


def test_sample_quarantined_profiles_make_their_turns_unmapped(sample):
    rows = judge(sample)
    assert rows["TN-9026"]["persona_code"] == V.PROFILE_UNMAPPED  # CP-013, age 150
    assert rows["TN-9027"]["persona_code"] == V.PROFILE_UNMAPPED  # blank profile_no
    assert "TN-9060" not in rows and "TN-9062" not in rows


def test_sample_normalised_tables_hold_python_ints_and_trimmed_ids(sample):
    ages = [a for a in sample.tables["turns"]["stated_age"] if a is not None]
    assert ages and all(type(a) is int for a in ages)
    assert all(type(a) is int for a in sample.tables["profiles"]["age"] if a is not None)
    assert sample.tables["turns"]["created_at_ns"].dtype == "int64"


# -- one minimal case per reason code ----------------------------------------------------------


@pytest.mark.parametrize(("name", "turns", "expected"), [
    ("truncated JSON", [TURN, '{"turn_no": "T-2", "character_code_raw": "CH-1"'], [("turns", 2, None, INVALID_JSON)]),
    ("a JSON array", [TURN, '["T-2", "CH-1"]'], [("turns", 2, None, INVALID_JSON)]),
    ("a JSON string", [TURN, '"T-2"'], [("turns", 2, None, INVALID_JSON)]),
    ("stated_age 121", [TURN, {**TURN, "turn_no": "T-2", "stated_age": 121}], [("turns", 2, "T-2", SCHEMA)]),
    ("stated_age -1", [TURN, {**TURN, "turn_no": "T-2", "stated_age": -1}], [("turns", 2, "T-2", SCHEMA)]),
    ("stated_age as text", [TURN, {**TURN, "turn_no": "T-2", "stated_age": "20"}], [("turns", 2, "T-2", SCHEMA)]),
    ("stated_age true", [TURN, {**TURN, "turn_no": "T-2", "stated_age": True}], [("turns", 2, "T-2", SCHEMA)]),
    ("stated_age 20.5", [TURN, {**TURN, "turn_no": "T-2", "stated_age": 20.5}], [("turns", 2, "T-2", SCHEMA)]),
    ("reply_text a number", [TURN, {**TURN, "turn_no": "T-2", "reply_text": 5}], [("turns", 2, "T-2", SCHEMA)]),
    ("required user_text missing in one row", [TURN, {k: v for k, v in {**TURN, "turn_no": "T-2"}.items() if k != "user_text"}],
     [("turns", 2, "T-2", SCHEMA)]),
    ("blank turn_no", [TURN, {**TURN, "turn_no": "  "}], [("turns", 2, None, MISSING_ID)]),
    ("empty turn_no", [TURN, {**TURN, "turn_no": ""}], [("turns", 2, None, MISSING_ID)]),
    ("repeated turn_no", [TURN, {**TURN, "stated_job": "가수"}], [("turns", 2, "T-1", DUPLICATE_ID)]),
    ("turn_no repeated after trimming", [TURN, {**TURN, "turn_no": " T-1\u3000"}], [("turns", 2, "T-1", DUPLICATE_ID)]),
    ("unreadable created_at", [TURN, {**TURN, "turn_no": "T-2", "created_at": "yesterday"}], [("turns", 2, "T-2", BAD_TIMESTAMP)]),
    ("month 13", [TURN, {**TURN, "turn_no": "T-2", "created_at": "2026-13-01T10:00:00"}], [("turns", 2, "T-2", BAD_TIMESTAMP)]),
])
def test_each_turn_reason_code_on_a_minimal_case(name, turns, expected):
    norm = gate([PROFILE], turns)
    assert quarantined(norm) == expected
    assert_reconciles(norm, profiles=1, turns=len(turns))
    r = norm.quarantine.iloc[0]
    assert r["reason"].strip() and r["raw"] == (turns[-1] if isinstance(turns[-1], str) else json.dumps(turns[-1], ensure_ascii=False))
    # The good turn is still judged.
    assert list(norm.tables["turns"]["turn_no"]) == ["T-1"]


def test_the_first_of_two_repeated_turns_is_kept():
    norm = gate([PROFILE], [TURN, {**TURN, "stated_job": "가수"}])
    assert judge(norm)["T-1"]["persona_code"] == V.CONSISTENT
    norm = gate([PROFILE], [{**TURN, "stated_job": "가수"}, TURN])
    assert judge(norm)["T-1"]["persona_code"] == V.JOB_CONFLICT


def test_schema_reason_names_the_field():
    norm = gate([PROFILE], [{**TURN, "stated_age": 121}])
    assert "stated_age" in norm.quarantine.iloc[0]["reason"]
    norm = gate([PROFILE], [{**TURN, "created_at": "not a time"}])
    assert "created_at" in norm.quarantine.iloc[0]["reason"]


@pytest.mark.parametrize(("name", "profiles", "expected"), [
    ("age 150", [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": "CH-2", "age": 150}], [("profiles", 2, "CP-2", SCHEMA)]),
    ("age 121", [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": "CH-2", "age": 121}], [("profiles", 2, "CP-2", SCHEMA)]),
    ("age -1", [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": "CH-2", "age": -1}], [("profiles", 2, "CP-2", SCHEMA)]),
    ("character_code null", [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": None}], [("profiles", 2, "CP-2", SCHEMA)]),
    ("not JSON", [PROFILE, "{profile_no: CP-2}"], [("profiles", 2, None, INVALID_JSON)]),
    ("blank profile_no", [PROFILE, {**PROFILE, "profile_no": "  ", "character_code": "CH-2"}], [("profiles", 2, None, MISSING_ID)]),
    ("blank character_code", [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": "\u3000"}], [("profiles", 2, "CP-2", MISSING_ID)]),
    ("repeated profile_no", [PROFILE, {**PROFILE, "character_code": "CH-2"}], [("profiles", 2, "CP-1", DUPLICATE_ID)]),
    ("repeated character_code", [PROFILE, {**PROFILE, "profile_no": "CP-2", "age": 22}], [("profiles", 2, "CP-2", DUPLICATE_ID)]),
    ("character_code repeated after trimming", [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": " CH-1\t"}],
     [("profiles", 2, "CP-2", DUPLICATE_ID)]),
])
def test_each_profile_reason_code_on_a_minimal_case(name, profiles, expected):
    norm = gate(profiles, [TURN])
    assert quarantined(norm) == expected
    assert_reconciles(norm, profiles=len(profiles), turns=1)
    assert list(norm.tables["profiles"]["profile_no"]) == ["CP-1"]
    assert norm.quarantine.iloc[0]["reason"].strip()


def test_duplicate_character_code_reason_names_the_kept_line():
    norm = gate([PROFILE, {**PROFILE, "profile_no": "CP-2"}], [TURN])
    reason = norm.quarantine.iloc[0]["reason"]
    assert "character_code" in reason and "CH-1" in reason and "line 1" in reason


@pytest.mark.parametrize("bad_profile", [
    {**PROFILE, "age": 150},
    {**PROFILE, "profile_no": "  "},
    {**PROFILE, "character_name": None},
])
def test_a_quarantined_profile_makes_its_turns_profile_unmapped(bad_profile):
    turns = [TURN, {**TURN, "turn_no": "T-2", "reply_text": ""}, {**TURN, "turn_no": "T-3", "stated_age": 50}]
    norm = gate([bad_profile], turns)
    assert len(norm.quarantine) == 1 and norm.tables["profiles"].empty
    rows = judge(norm)
    assert {t: (r["profile_no"], r["persona_code"]) for t, r in rows.items()} == {
        t: (None, V.PROFILE_UNMAPPED) for t in ("T-1", "T-2", "T-3")}


def test_a_repeated_character_code_is_never_judged_against():
    """The later profile (age 22) would make a 19-year-old's 음주 turn adult; the first is kept."""
    profiles = [{**PROFILE, "age": 19, "forbidden_topic": None}, {**PROFILE, "profile_no": "CP-2", "age": 22}]
    rows = judge(gate(profiles, [{**TURN, "topic_tag": "음주"}]))
    assert (rows["T-1"]["profile_no"], rows["T-1"]["persona_code"]) == ("CP-1", V.FORBIDDEN_TOPIC)


def test_a_bad_row_of_every_kind_together_still_reconciles():
    turns = [TURN, "not json", {**TURN, "turn_no": "T-2", "stated_age": 121}, {**TURN, "turn_no": " "},
             {**TURN, "stated_job": "가수"}, {**TURN, "turn_no": "T-3", "created_at": "2026-02-30T10:00:00"},
             {**TURN, "turn_no": "T-4"}]
    profiles = [PROFILE, {**PROFILE, "profile_no": "CP-2", "age": 150}, {**PROFILE, "profile_no": "CP-3"}, "[]"]
    norm = gate(profiles, turns)
    assert_reconciles(norm, profiles=4, turns=7)
    assert sorted(norm.tables["turns"]["turn_no"]) == ["T-1", "T-4"]
    assert sorted(quarantined(norm)) == sorted([
        ("profiles", 2, "CP-2", SCHEMA), ("profiles", 3, "CP-3", DUPLICATE_ID), ("profiles", 4, None, INVALID_JSON),
        ("turns", 2, None, INVALID_JSON), ("turns", 3, "T-2", SCHEMA), ("turns", 4, None, MISSING_ID),
        ("turns", 5, "T-1", DUPLICATE_ID), ("turns", 6, "T-3", BAD_TIMESTAMP),
    ])


def test_timestamps_with_an_offset_and_naive_ones_are_both_accepted():
    turns = [TURN, {**TURN, "turn_no": "T-2", "created_at": "2026-10-04T01:00:00Z"},
             {**TURN, "turn_no": "T-3", "created_at": "2026-10-04T10:00:00+09:00"}]
    norm = gate([PROFILE], turns)
    assert norm.quarantine.empty
    ns = dict(zip(norm.tables["turns"]["turn_no"], norm.tables["turns"]["created_at_ns"]))
    assert ns["T-1"] == ns["T-3"]  # naive is Asia/Seoul
    assert ns["T-3"] - ns["T-2"] == 0


# -- whole files -------------------------------------------------------------------------------


def write(folder: Path, name: str, rows: list) -> Path:
    path = folder / f"{name}.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize(("dataset", "column"), [("turns", "created_at"), ("turns", "turn_no"), ("turns", "reply_text"),
                                                  ("profiles", "character_code"), ("profiles", "profile_no")])
def test_a_file_missing_a_required_column_in_every_row_is_rejected_naming_file_and_column(tmp_path, dataset, column):
    base = {"profiles": PROFILE, "turns": TURN}
    write(tmp_path, "profiles", [PROFILE, {**PROFILE, "profile_no": "CP-2", "character_code": "CH-2"}])
    write(tmp_path, "turns", [TURN, {**TURN, "turn_no": "T-2"}])
    rows = [{k: v for k, v in base[dataset].items() if k != column},
            {k: v for k, v in {**base[dataset], "profile_no": "CP-2", "turn_no": "T-2", "character_code": "CH-2"}.items()
             if k != column and k in base[dataset]}]
    path = write(tmp_path, dataset, rows)
    with pytest.raises(DatasetError) as info:
        load_dir(tmp_path, load_config())
    message = str(info.value)
    assert str(path) in message and column in message
    assert info.value.column == column and info.value.file == str(path)


@pytest.mark.parametrize("dataset", ["profiles", "turns"])
def test_a_missing_file_is_rejected_naming_it(tmp_path, dataset):
    write(tmp_path, "profiles", [PROFILE])
    write(tmp_path, "turns", [TURN])
    (tmp_path / f"{dataset}.jsonl").unlink()
    with pytest.raises(DatasetError) as info:
        load_dir(tmp_path, load_config())
    assert f"{dataset}.jsonl" in str(info.value)


def test_a_file_that_is_not_utf8_is_rejected_naming_it(tmp_path):
    write(tmp_path, "profiles", [PROFILE])
    (tmp_path / "turns.jsonl").write_bytes(json.dumps(TURN, ensure_ascii=False).encode("cp949") + b"\n")
    with pytest.raises(DatasetError) as info:
        load_dir(tmp_path, load_config())
    assert "turns.jsonl" in str(info.value)


def test_blank_lines_are_skipped_and_line_numbers_are_the_files(tmp_path):
    write(tmp_path, "profiles", [PROFILE])
    path = tmp_path / "turns.jsonl"
    path.write_text(json.dumps(TURN) + "\n\n   \n" + json.dumps({**TURN, "turn_no": "T-2", "stated_age": 121}) + "\n",
                    encoding="utf-8")
    norm = load_dir(tmp_path, load_config())
    assert quarantined(norm) == [("turns", 4, "T-2", SCHEMA)]
    assert norm.reconciliation()["turns"] == {"raw": 2, "normalised": 1, "quarantined": 1, "reconciles": True}


def test_an_empty_turns_file_is_not_an_error(tmp_path):
    write(tmp_path, "profiles", [PROFILE])
    (tmp_path / "turns.jsonl").write_text("", encoding="utf-8")
    norm = load_dir(tmp_path, load_config())
    assert norm.tables["turns"].empty and norm.quarantine.empty
    assert engine.judge(norm.tables["turns"], norm.tables["profiles"], load_config()).empty
