"""The persona JSON Schemas (the contract): valid schemas, the sample rows they accept, the
seed's output schema, and the engine's output.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from rules.persona import engine
from rules.persona import verdicts as V
from rules.persona.config import load_config
from rules.persona.normalise import load_dir
from schemas import columns, load_schema, required_columns, row_checker, schema_path, validator
from schemas.persona import DOMAIN, INPUT_DATASETS, OUTPUT

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "seeds" / "persona"
FIXTURES = ROOT / "tests" / "fixtures" / "persona"

# The output schema as seed 000 prints it.
SEED_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "check_id": {"type": "string"},
        "turn_no": {"type": "string"},
        "profile_no": {"type": ["string", "null"]},
        "persona_code": {"type": "string", "enum": ["consistent", "age_conflict", "job_conflict", "forbidden_topic",
                                                    "reply_empty", "profile_unmapped"]},
        "evidence": {"type": "array", "items": {"type": "object", "properties": {
            "source": {"type": "string", "enum": ["profile", "turn"]},
            "field": {"type": "string"},
            "agg": {"type": ["string", "null"]},
            "value": {"type": ["string", "number", "null"]},
        }, "required": ["source", "field", "value"]}},
        "summary": {"type": "string"},
        "hedge": {"type": ["string", "null"]},
    },
    "required": ["check_id", "turn_no", "persona_code", "evidence", "summary"],
}

MALFORMED = {(r["dataset"], r["line"]): r["reason_code"]
             for r in map(json.loads, (FIXTURES / "expected_quarantine.jsonl").read_text(encoding="utf-8").splitlines())}


def sample_rows(dataset: str) -> list[tuple[int, dict]]:
    lines = (SAMPLE / f"{dataset}.jsonl").read_text(encoding="utf-8").splitlines()
    return [(i, json.loads(text)) for i, text in enumerate(lines, start=1) if text.strip()]


@pytest.fixture(scope="module")
def verdict_rows() -> list[dict]:
    config = load_config()
    norm = load_dir(SAMPLE, config)
    return engine.records(engine.judge(norm.tables["turns"], norm.tables["profiles"], config))


# -- the schemas themselves --------------------------------------------------------------------


@pytest.mark.parametrize("name", [*INPUT_DATASETS, OUTPUT])
def test_each_schema_is_a_valid_draft_2020_12_schema(name):
    path = schema_path(DOMAIN, name)
    raw = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(raw)
    assert raw["$schema"].endswith("2020-12/schema")
    assert raw["type"] == "object"
    assert set(raw["required"]) <= set(raw["properties"])
    assert load_schema(DOMAIN, name) == raw


def test_the_input_datasets_are_profiles_and_turns():
    assert INPUT_DATASETS == ("profiles", "turns")


def test_the_input_columns_are_the_specs():
    assert set(columns(DOMAIN, "profiles")) == {"profile_no", "character_code", "character_name", "age", "job",
                                                "forbidden_topic", "note"}
    assert set(columns(DOMAIN, "turns")) == {"turn_no", "character_code_raw", "prompt_ver", "scenario_id", "created_at",
                                             "user_text", "reply_text", "stated_age", "stated_job", "topic_tag",
                                             "user_topic_tag", "note"}
    for name in INPUT_DATASETS:
        assert {"profiles": "profile_no", "turns": "turn_no"}[name] in required_columns(DOMAIN, name)


@pytest.mark.parametrize(("dataset", "field"), [("profiles", "age"), ("turns", "stated_age")])
def test_ages_are_bounded_0_to_120(dataset, field):
    spec = load_schema(DOMAIN, dataset)["properties"][field]
    assert (spec["minimum"], spec["maximum"]) == (0, 120)
    assert set(spec["type"]) == {"integer", "null"}


def test_the_persona_code_enum_is_the_verdict_order():
    enum = load_schema(DOMAIN, OUTPUT)["properties"]["persona_code"]["enum"]
    assert tuple(enum) == V.ORDER
    assert set(V.RULE_ORDER) == set(V.ORDER) and len(V.RULE_ORDER) == 6
    assert set(V.EXCLUDED) | set(V.INCONSISTENT) | {V.CONSISTENT} == set(V.ORDER)


def test_the_output_schema_is_the_seeds():
    ours = load_schema(DOMAIN, OUTPUT)
    assert ours["required"] == SEED_OUTPUT_SCHEMA["required"]
    assert set(ours["properties"]) == set(SEED_OUTPUT_SCHEMA["properties"])
    for name, spec in SEED_OUTPUT_SCHEMA["properties"].items():
        mine = {k: v for k, v in ours["properties"][name].items() if k not in ("description", "title")}
        assert mine == spec, name


def test_evidence_fields_the_seed_allows_are_real_columns():
    for field in ("stated_age", "topic_tag", "stated_job", "reply_text", "prompt_ver", "character_code_raw"):
        assert field in columns(DOMAIN, "turns")
    for field in ("age", "forbidden_topic", "job", "character_code"):
        assert field in columns(DOMAIN, "profiles")


# -- the sample rows ---------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", INPUT_DATASETS)
def test_every_sample_row_except_the_malformed_ones_validates(dataset):
    v = validator(DOMAIN, dataset)
    rows = sample_rows(dataset)
    assert len(rows) == {"profiles": 15, "turns": 472}[dataset]
    invalid = [line for line, row in rows if (dataset, line) not in MALFORMED and not v.is_valid(row)]
    assert invalid == []


@pytest.mark.parametrize("dataset", INPUT_DATASETS)
def test_the_schema_rejects_exactly_the_rows_quarantined_for_schema(dataset):
    v = validator(DOMAIN, dataset)
    rejected = {line for line, row in sample_rows(dataset) if not v.is_valid(row)}
    assert rejected == {line for (d, line), code in MALFORMED.items() if d == dataset and code == "schema"}
    assert rejected  # profiles line 8 (age 150); turns lines 60 and 62


@pytest.mark.parametrize("dataset", INPUT_DATASETS)
def test_the_fast_row_checker_agrees_with_jsonschema_on_the_sample(dataset):
    check, v = row_checker(DOMAIN, dataset), validator(DOMAIN, dataset)
    for line, row in sample_rows(dataset):
        assert (check(row) is None) == v.is_valid(row), line


@pytest.mark.parametrize(("dataset", "change"), [
    ("turns", {"stated_age": 121}), ("turns", {"stated_age": -1}), ("turns", {"stated_age": True}),
    ("turns", {"stated_age": "20"}), ("turns", {"reply_text": 0}), ("turns", {"scenario_id": 1}),
    ("turns", {"topic_tag": ["정치"]}), ("turns", {"created_at": None}),
    ("profiles", {"age": 150}), ("profiles", {"age": 19.5}), ("profiles", {"job": 1}), ("profiles", {"character_code": None}),
])
def test_crafted_invalid_rows_are_rejected(dataset, change):
    row = {**sample_rows(dataset)[0][1], **change}
    assert not validator(DOMAIN, dataset).is_valid(row)
    assert row_checker(DOMAIN, dataset)(row) is not None


@pytest.mark.parametrize(("dataset", "change"), [
    ("turns", {"stated_age": 0}), ("turns", {"stated_age": 120}), ("turns", {"reply_text": None}), ("turns", {"reply_text": ""}),
    ("profiles", {"age": 0}), ("profiles", {"age": 120}), ("profiles", {"age": None, "job": None, "forbidden_topic": None}),
])
def test_crafted_edge_rows_are_accepted(dataset, change):
    row = {**sample_rows(dataset)[0][1], **change}
    assert validator(DOMAIN, dataset).is_valid(row)


@pytest.mark.parametrize("dataset", INPUT_DATASETS)
def test_each_required_field_is_required(dataset):
    base = sample_rows(dataset)[0][1]
    for field in required_columns(DOMAIN, dataset):
        row = {k: v for k, v in base.items() if k != field}
        assert not validator(DOMAIN, dataset).is_valid(row), field


# -- the engine's output -----------------------------------------------------------------------


def test_every_engine_output_row_validates(verdict_rows):
    v = validator(DOMAIN, OUTPUT)
    assert len(verdict_rows) == 469
    bad = [(r["turn_no"], [e.message for e in v.iter_errors(r)]) for r in verdict_rows if not v.is_valid(r)]
    assert bad == []
    seed_v = Draft202012Validator(SEED_OUTPUT_SCHEMA)
    assert all(seed_v.is_valid(r) for r in verdict_rows)


def test_every_engine_output_row_survives_a_json_round_trip(verdict_rows):
    v = validator(DOMAIN, OUTPUT)
    for r in verdict_rows:
        again = json.loads(json.dumps(r, ensure_ascii=False))
        assert again == r and v.is_valid(again)


def test_the_seed_examples_shapes_validate():
    v = validator(DOMAIN, OUTPUT)
    for e in json.loads((FIXTURES / "seed_examples.json").read_text(encoding="utf-8")):
        row = {"check_id": "pk_x", "summary": "설정과 같습니다.", "hedge": None, **e}
        assert v.is_valid(row), e["turn_no"]


@pytest.mark.parametrize(("path", "value"), [
    (("persona_code",), "job_mismatch"), (("persona_code",), None), (("evidence", 0, "source"), "turns"),
    (("evidence", 0, "value"), ["x"]), (("evidence", 0, "value"), {"x": 1}), (("summary",), None), (("profile_no",), 1),
])
def test_the_output_schema_rejects_malformed_verdicts(verdict_rows, path, value):
    row = copy.deepcopy(verdict_rows[0])
    target = row
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert not validator(DOMAIN, OUTPUT).is_valid(row)


@pytest.mark.parametrize("field", ["check_id", "turn_no", "persona_code", "evidence", "summary"])
def test_the_output_schema_requires_the_seeds_fields(verdict_rows, field):
    row = {k: v for k, v in verdict_rows[0].items() if k != field}
    assert not validator(DOMAIN, OUTPUT).is_valid(row)
