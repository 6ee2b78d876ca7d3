"""The live_pick JSON Schemas (the contract) and their pydantic mirrors agree.

Same property names, same required sets, and on a corpus of rows — every row of the sample
files plus crafted invalid ones — the JSON Schema accepts a row exactly when the model does.
"""

from __future__ import annotations

import copy
import json
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from rules.live_pick import engine
from rules.live_pick import verdicts as V
from rules.live_pick.config import load_config
from rules.live_pick.normalise import load_dir
from schemas import columns, load_schema, required_columns, validator
from schemas.live_pick import DOMAIN, INPUT_DATASETS, OUTPUT
from schemas.live_pick.models import INPUT_MODELS, Dataset, Evidence, Pick, Verdict

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "seeds" / "live_pick"
FIXTURES = ROOT / "tests" / "fixtures" / "live_pick"
MODELS: dict[str, type[BaseModel]] = {**INPUT_MODELS, OUTPUT: Pick}


def schema_accepts(dataset: str, row) -> bool:
    return validator(DOMAIN, dataset).is_valid(row)


def model_accepts(dataset: str, row) -> bool:
    try:
        MODELS[dataset].model_validate(row)
    except ValidationError:
        return False
    return True


def evidence_schema() -> dict:
    return load_schema(DOMAIN, OUTPUT)["properties"]["evidence"]["items"]


def required_fields(model: type[BaseModel]) -> set[str]:
    return {name for name, f in model.model_fields.items() if f.is_required()}


@pytest.fixture(scope="module")
def picks() -> list[dict]:
    config = load_config()
    norm = load_dir(SAMPLE, config)
    return engine.records(engine.judge(norm.chat, norm.sheet, norm.relation, config))


# -- structure ---------------------------------------------------------------------------------


def test_every_dataset_has_a_model():
    assert set(INPUT_MODELS) == set(INPUT_DATASETS)
    assert list(INPUT_MODELS) == list(INPUT_DATASETS)


@pytest.mark.parametrize("dataset", [*INPUT_DATASETS, OUTPUT])
def test_same_property_names(dataset):
    assert set(MODELS[dataset].model_fields) == set(columns(DOMAIN, dataset))


@pytest.mark.parametrize("dataset", [*INPUT_DATASETS, OUTPUT])
def test_schema_required_equals_model_fields_without_default(dataset):
    assert required_fields(MODELS[dataset]) == set(required_columns(DOMAIN, dataset))


def test_evidence_item_properties_and_required_agree():
    items = evidence_schema()
    assert set(Evidence.model_fields) == set(items["properties"])
    assert required_fields(Evidence) == set(items["required"])


def test_verdict_enum_equals_the_rule_verdicts():
    enum = load_schema(DOMAIN, OUTPUT)["properties"]["verdict"]["enum"]
    assert len(enum) == len(set(enum)) == 5
    assert set(enum) == set(V.ORDER)
    assert set(typing.get_args(Verdict)) == set(V.ORDER)


def test_evidence_dataset_enum_equals_the_input_datasets():
    assert set(evidence_schema()["properties"]["dataset"]["enum"]) == set(INPUT_DATASETS)
    assert set(typing.get_args(Dataset)) == set(INPUT_DATASETS)


# -- the corpus --------------------------------------------------------------------------------


def _sample_rows(dataset: str) -> list[tuple[str, dict | list | str, bool]]:
    """(label, row, schema-valid as the gates found it) for every JSON line of a sample file."""
    rejected = {
        r["line"] for r in map(json.loads, (FIXTURES / "expected_quarantine.jsonl").read_text(encoding="utf-8").splitlines())
        if r["dataset"] == dataset and r["reason_code"] == "schema"
    }
    out = []
    for n, line in enumerate((SAMPLE / f"{dataset}.jsonl").read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
        except ValueError:
            continue  # not JSON at all: neither side is asked
        out.append((f"{dataset}.jsonl:{n}", row, n not in rejected))
    return out


BASE = {
    "live_chat": {
        "msg_id": "MSG-1", "character_id": "CH-1", "viewer_id": "VW-1", "sent_at": "2026-09-08T21:14:03",
        "body": "오늘 뭐 했어?", "topic_tags": ["일상"], "donation_amount": 5000, "is_question": True, "note": None,
    },
    "character_sheet": {
        "character_id": "CH-1", "character_name": "미아", "world_topic_tags": ["일상", "노래"], "banned_tags": ["정치"],
        "min_closeness_by_topic": {"일상": 0, "노래": 1.5}, "reply_cooldown_sec": 180, "note": None,
    },
    "viewer_relation": {
        "viewer_id": "VW-1", "nickname": "루루", "closeness_level": 3, "answered_topics": ["노래"],
        "last_replied_at": "2026-09-08T21:10:00", "note": None,
    },
    "pick": {
        "pick_id": "PICK-1", "msg_id": "MSG-1", "viewer_id": "VW-1", "character_id": "CH-1",
        "window_start": "2026-09-08T21:14:00", "verdict": V.PICK, "rank_in_window": 1, "cooldown_elapsed_sec": 243,
        "evidence": [{"dataset": "live_chat", "field": "donation_amount", "value": 5000}],
        "summary": "지금 답합니다.", "hedge": None,
    },
}

_DROP = object()


def variant(dataset: str, **changes) -> dict:
    row = copy.deepcopy(BASE[dataset])
    for k, v in changes.items():
        if v is _DROP:
            row.pop(k, None)
        else:
            row[k] = v
    return row


def evidence_variant(**changes) -> dict:
    item = dict(BASE["pick"]["evidence"][0])
    for k, v in changes.items():
        if v is _DROP:
            item.pop(k, None)
        else:
            item[k] = v
    return variant("pick", evidence=[item])


# (dataset, label, row, valid)
CRAFTED = [
    # live_chat
    ("live_chat", "base", variant("live_chat"), True),
    ("live_chat", "topic_tags null", variant("live_chat", topic_tags=None), True),
    ("live_chat", "topic_tags empty", variant("live_chat", topic_tags=[]), True),
    ("live_chat", "topic_tags and note absent", variant("live_chat", topic_tags=_DROP, note=_DROP), True),
    ("live_chat", "donation 0", variant("live_chat", donation_amount=0), True),
    ("live_chat", "extra field", variant("live_chat", channel="main"), True),
    ("live_chat", "is_question 'true'", variant("live_chat", is_question="true"), False),
    ("live_chat", "is_question 1", variant("live_chat", is_question=1), False),
    ("live_chat", "is_question null", variant("live_chat", is_question=None), False),
    ("live_chat", "donation 1.5", variant("live_chat", donation_amount=1.5), False),
    ("live_chat", "donation '5000'", variant("live_chat", donation_amount="5000"), False),
    ("live_chat", "donation true", variant("live_chat", donation_amount=True), False),
    ("live_chat", "negative donation", variant("live_chat", donation_amount=-1), False),
    ("live_chat", "donation null", variant("live_chat", donation_amount=None), False),
    ("live_chat", "topic_tags a string", variant("live_chat", topic_tags="일상"), False),
    ("live_chat", "topic_tags with a number", variant("live_chat", topic_tags=["일상", 3]), False),
    ("live_chat", "topic_tags with null", variant("live_chat", topic_tags=[None]), False),
    ("live_chat", "msg_id a number", variant("live_chat", msg_id=1401), False),
    ("live_chat", "sent_at a number", variant("live_chat", sent_at=1757333643), False),
    ("live_chat", "body null", variant("live_chat", body=None), False),
    ("live_chat", "note a number", variant("live_chat", note=3), False),
    *[("live_chat", f"missing {c}", variant("live_chat", **{c: _DROP}), False)
      for c in ("msg_id", "character_id", "viewer_id", "sent_at", "body", "donation_amount", "is_question")],
    ("live_chat", "an array, not an object", [BASE["live_chat"]], False),
    # character_sheet
    ("character_sheet", "base", variant("character_sheet"), True),
    ("character_sheet", "cooldown 0", variant("character_sheet", reply_cooldown_sec=0), True),
    ("character_sheet", "cooldown 900", variant("character_sheet", reply_cooldown_sec=900), True),
    ("character_sheet", "empty lists and map", variant("character_sheet", banned_tags=[], min_closeness_by_topic={}), True),
    ("character_sheet", "extra field", variant("character_sheet", version=3), True),
    ("character_sheet", "cooldown 901", variant("character_sheet", reply_cooldown_sec=901), False),
    ("character_sheet", "cooldown -1", variant("character_sheet", reply_cooldown_sec=-1), False),
    ("character_sheet", "cooldown 1.5", variant("character_sheet", reply_cooldown_sec=1.5), False),
    ("character_sheet", "cooldown '180'", variant("character_sheet", reply_cooldown_sec="180"), False),
    ("character_sheet", "cooldown true", variant("character_sheet", reply_cooldown_sec=True), False),
    ("character_sheet", "banned_tags a comma string", variant("character_sheet", banned_tags="정치,종교"), False),
    ("character_sheet", "world_topic_tags null", variant("character_sheet", world_topic_tags=None), False),
    ("character_sheet", "min closeness '2'", variant("character_sheet", min_closeness_by_topic={"노래": "2"}), False),
    ("character_sheet", "min closeness true", variant("character_sheet", min_closeness_by_topic={"노래": True}), False),
    ("character_sheet", "min closeness null", variant("character_sheet", min_closeness_by_topic={"노래": None}), False),
    ("character_sheet", "min closeness a list", variant("character_sheet", min_closeness_by_topic=[["노래", 2]]), False),
    *[("character_sheet", f"missing {c}", variant("character_sheet", **{c: _DROP}), False)
      for c in ("character_id", "character_name", "world_topic_tags", "banned_tags", "min_closeness_by_topic",
                "reply_cooldown_sec")],
    # viewer_relation
    ("viewer_relation", "base", variant("viewer_relation"), True),
    ("viewer_relation", "closeness 0", variant("viewer_relation", closeness_level=0), True),
    ("viewer_relation", "closeness 5", variant("viewer_relation", closeness_level=5), True),
    ("viewer_relation", "never replied", variant("viewer_relation", last_replied_at=None), True),
    ("viewer_relation", "last_replied_at absent", variant("viewer_relation", last_replied_at=_DROP), True),
    ("viewer_relation", "extra field", variant("viewer_relation", since="2026-01-01"), True),
    ("viewer_relation", "closeness 6", variant("viewer_relation", closeness_level=6), False),
    ("viewer_relation", "closeness -1", variant("viewer_relation", closeness_level=-1), False),
    ("viewer_relation", "closeness 2.5", variant("viewer_relation", closeness_level=2.5), False),
    ("viewer_relation", "closeness '3'", variant("viewer_relation", closeness_level="3"), False),
    ("viewer_relation", "closeness true", variant("viewer_relation", closeness_level=True), False),
    ("viewer_relation", "answered_topics null", variant("viewer_relation", answered_topics=None), False),
    ("viewer_relation", "answered_topics a string", variant("viewer_relation", answered_topics="노래"), False),
    ("viewer_relation", "last_replied_at a number", variant("viewer_relation", last_replied_at=0), False),
    ("viewer_relation", "nickname null", variant("viewer_relation", nickname=None), False),
    *[("viewer_relation", f"missing {c}", variant("viewer_relation", **{c: _DROP}), False)
      for c in ("viewer_id", "nickname", "closeness_level", "answered_topics")],
    # pick
    ("pick", "base", variant("pick"), True),
    ("pick", "filtered line: no rank", variant("pick", verdict=V.OUT_OF_WORLD, rank_in_window=None), True),
    ("pick", "never replied: no cooldown", variant("pick", cooldown_elapsed_sec=None), True),
    ("pick", "cooldown 0", variant("pick", cooldown_elapsed_sec=0), True),
    ("pick", "hedge a sentence", variant("pick", hedge="이 데이터로는 알 수 없습니다."), True),
    ("pick", "only the required fields",
     {k: BASE["pick"][k] for k in ("pick_id", "msg_id", "verdict", "evidence", "summary")}, True),
    ("pick", "no evidence items", variant("pick", evidence=[]), True),
    ("pick", "extra field", variant("pick", model_version="p13"), True),
    ("pick", "evidence with agg", evidence_variant(field="msg_id", agg="count", value=4), True),
    ("pick", "evidence agg null", evidence_variant(agg=None), True),
    ("pick", "evidence value bool", evidence_variant(field="is_question", value=True), True),
    ("pick", "evidence value float", evidence_variant(field="min_closeness_by_topic", value=2.5), True),
    ("pick", "evidence value string", evidence_variant(field="body", value="안녕"), True),
    ("pick", "evidence value null", evidence_variant(field="topic_tags", value=None), True),
    ("pick", "non-enum verdict", variant("pick", verdict="지금 답변"), False),
    ("pick", "verdict in English", variant("pick", verdict="pick"), False),
    ("pick", "rank 0", variant("pick", rank_in_window=0), False),
    ("pick", "rank 1.5", variant("pick", rank_in_window=1.5), False),
    ("pick", "rank '1'", variant("pick", rank_in_window="1"), False),
    ("pick", "rank true", variant("pick", rank_in_window=True), False),
    ("pick", "negative cooldown", variant("pick", cooldown_elapsed_sec=-5), False),
    ("pick", "cooldown 41.5", variant("pick", cooldown_elapsed_sec=41.5), False),
    ("pick", "summary null", variant("pick", summary=None), False),
    ("pick", "hedge a number", variant("pick", hedge=0), False),
    ("pick", "evidence an object", variant("pick", evidence={"dataset": "live_chat"}), False),
    ("pick", "evidence dataset golden", evidence_variant(dataset="golden"), False),
    ("pick", "evidence without value", evidence_variant(value=_DROP), False),
    ("pick", "evidence without field", evidence_variant(field=_DROP), False),
    ("pick", "evidence without dataset", evidence_variant(dataset=_DROP), False),
    ("pick", "evidence value a list", evidence_variant(field="topic_tags", value=["노래"]), False),
    ("pick", "evidence value an object", evidence_variant(field="min_closeness_by_topic", value={"노래": 2}), False),
    ("pick", "evidence agg a number", evidence_variant(agg=1), False),
    ("pick", "evidence field null", evidence_variant(field=None), False),
    ("pick", "evidence item a string", variant("pick", evidence=["live_chat.donation_amount"]), False),
    *[("pick", f"missing {c}", variant("pick", **{c: _DROP}), False)
      for c in ("pick_id", "msg_id", "verdict", "evidence", "summary")],
]


def _corpus():
    params = []
    for dataset in INPUT_DATASETS:
        params += [pytest.param(dataset, row, valid, id=label) for label, row, valid in _sample_rows(dataset)]
    for label, row, valid in _sample_rows_of_fixture():
        params.append(pytest.param("pick", row, valid, id=label))
    params += [pytest.param(d, row, valid, id=f"{d}: {label}") for d, label, row, valid in CRAFTED]
    return params


def _sample_rows_of_fixture():
    """The expected fixture rows lack evidence and summary: not complete verdict rows."""
    lines = (FIXTURES / "expected.jsonl").read_text(encoding="utf-8").splitlines()
    return [(f"expected.jsonl:{n}", json.loads(line), False) for n, line in enumerate(lines, start=1)]


@pytest.mark.parametrize(("dataset", "row", "valid"), _corpus())
def test_schema_and_model_accept_the_same_rows(dataset, row, valid):
    assert schema_accepts(dataset, row) is valid
    assert model_accepts(dataset, row) is valid


def test_the_corpus_covers_both_outcomes_for_every_dataset():
    for dataset in [*INPUT_DATASETS, OUTPUT]:
        outcomes = {valid for d, _, _, valid in CRAFTED if d == dataset}
        assert outcomes == {True, False}
    for dataset in INPUT_DATASETS:
        rows = _sample_rows(dataset)
        assert len(rows) >= 7
    # The sample's schema-broken rows are in the corpus (sheet CH-0031, CH-0032; viewer VW-6007).
    assert sum(not v for d in INPUT_DATASETS for _, _, v in _sample_rows(d)) == 3


# -- known disagreements -------------------------------------------------------------------------

INTEGRAL_FLOATS = [
    ("live_chat", "donation 5000.0", variant("live_chat", donation_amount=5000.0)),
    ("character_sheet", "cooldown 180.0", variant("character_sheet", reply_cooldown_sec=180.0)),
    ("viewer_relation", "closeness 3.0", variant("viewer_relation", closeness_level=3.0)),
    ("pick", "rank 1.0", variant("pick", rank_in_window=1.0)),
    ("pick", "cooldown 243.0", variant("pick", cooldown_elapsed_sec=243.0)),
]


@pytest.mark.parametrize(("dataset", "label", "row"), INTEGRAL_FLOATS, ids=[f"{d}: {l}" for d, l, _ in INTEGRAL_FLOATS])
def test_integral_float_for_an_integer(dataset, label, row):
    assert schema_accepts(dataset, row) == model_accepts(dataset, row)


@pytest.mark.parametrize("field", ["viewer_id", "character_id", "window_start"])
def test_null_for_a_string_column_of_the_pick(field):
    row = variant("pick", **{field: None})
    assert schema_accepts("pick", row) == model_accepts("pick", row)


def test_extra_key_in_an_evidence_item():
    row = evidence_variant(note="후원 합계")
    assert schema_accepts("pick", row) == model_accepts("pick", row)


# -- the engine's output -------------------------------------------------------------------------


def test_every_engine_row_validates_against_the_schema_and_the_model(picks):
    assert len(picks) == 80
    v = validator(DOMAIN, OUTPUT)
    for row in picks:
        errors = [e.message for e in v.iter_errors(row)]
        assert errors == [], (row["msg_id"], errors)
        parsed = Pick.model_validate(row)
        assert parsed.msg_id == row["msg_id"] and parsed.verdict == row["verdict"]


def test_engine_rows_round_trip_through_json_and_still_validate(picks):
    for row in picks:
        back = json.loads(json.dumps(row, ensure_ascii=False))
        assert schema_accepts(OUTPUT, back) and model_accepts(OUTPUT, back)
        dumped = Pick.model_validate(back).model_dump(mode="json")
        assert {k: dumped[k] for k in row if k != "evidence"} == {k: back[k] for k in row if k != "evidence"}


def test_engine_rows_use_every_verdict_of_the_enum(picks):
    assert {r["verdict"] for r in picks} == set(V.ORDER)
