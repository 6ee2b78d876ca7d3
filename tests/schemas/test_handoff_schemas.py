"""The handoff JSON Schemas: the seed's output schema, the four input datasets, and the engine's rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rules.handoff import verdicts as V
from rules.handoff.config import load_config
from rules.handoff.engine import OUTPUT_COLUMNS, judge, records
from rules.handoff.normalise import load_dir
from rules.handoff.view import whole_input
from schemas import column_kinds, columns, load_schema, required_columns, row_checker, validator
from schemas.handoff import DOMAIN, INPUT_DATASETS, OUTPUT

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "seeds" / "handoff"
SEED = Path("/work/shared/seeds/003_29153c7678c31430.txt")
FIXTURES = ROOT / "tests" / "fixtures" / "handoff"


def test_every_schema_is_valid_draft_2020_12():
    for name in (*INPUT_DATASETS, OUTPUT):
        load_schema(DOMAIN, name)


def test_output_enum_and_required_fields_are_the_seeds():
    schema = load_schema(DOMAIN, OUTPUT)
    assert schema["properties"]["verdict"]["enum"] == list(V.ORDER)
    assert set(V.RULE_ORDER) == set(V.ORDER)
    assert required_columns(DOMAIN, OUTPUT) == ("room_id", "customer_id", "verdict", "ai_after_trigger", "counselor_message_count",
                                                "uncited_message_ids", "evidence", "summary")
    assert list(columns(DOMAIN, OUTPUT)) == OUTPUT_COLUMNS


@pytest.mark.skipif(not SEED.is_file(), reason="the shared seed folder is not beside this checkout")
def test_output_schema_has_the_seeds_properties_and_types():
    text = SEED.read_text(encoding="utf-8")
    seed = json.loads(re.search(r'^\{"type":"object".*$', text, re.M).group(0))
    ours = load_schema(DOMAIN, OUTPUT)
    assert list(seed["properties"]) == list(ours["properties"])
    for name, spec in seed["properties"].items():
        assert spec.get("type") == ours["properties"][name].get("type"), name
    assert seed["required"] == ours["required"]


def test_evidence_dataset_names_the_input_datasets():
    item = load_schema(DOMAIN, OUTPUT)["properties"]["evidence"]["items"]
    assert item["properties"]["dataset"]["enum"] == list(INPUT_DATASETS)
    assert item["required"] == ["field", "value"]


def test_seed_examples_validate():
    check = row_checker(DOMAIN, OUTPUT)
    for row in json.loads((FIXTURES / "seed_examples.json").read_text(encoding="utf-8")):
        assert check(row) is None, row["room_id"]


def test_engine_rows_validate_and_use_every_verdict():
    config = load_config()
    norm = load_dir(SAMPLE, config)
    rows = records(judge(whole_input(norm.tables, norm.quarantine, config), config))
    check = row_checker(DOMAIN, OUTPUT)
    assert all(check(r) is None for r in rows)
    assert {r["verdict"] for r in rows} == set(V.ORDER)


@pytest.mark.parametrize(("dataset", "row", "valid"), [
    ("chat_messages", {"message_id": "M-1", "room_id": "R-1", "sender": "ai", "text": None, "sent_at": "2026-10-01T10:00:00+09:00"}, True),
    ("chat_messages", {"message_id": "M-1", "room_id": "R-1", "sender": "bot", "text": "x", "sent_at": "2026-10-01T10:00:00+09:00"}, False),
    ("chat_messages", {"message_id": "M-1", "room_id": "R-1", "sender": "ai", "text": "x"}, False),
    ("rooms", {"room_id": "R-1", "customer_id": "C-1", "closed_by": None}, True),
    ("rooms", {"room_id": "R-1", "customer_id": "C-1"}, True),
    ("rooms", {"room_id": "R-1", "customer_id": "C-1", "closed_by": "bot"}, False),
    ("handoff_phrases", {"trigger_phrase": "상담사", "first_reply_min": 15}, True),
    ("handoff_phrases", {"trigger_phrase": "상담사", "first_reply_min": 15.0}, True),
    ("handoff_phrases", {"trigger_phrase": "상담사", "first_reply_min": 0}, False),
    ("handoff_phrases", {"trigger_phrase": "상담사", "first_reply_min": 1.5}, False),
    ("help_articles", {"article_id": "A-1", "title": "배송"}, True),
    ("help_articles", {"article_id": "A-1"}, True),
    ("help_articles", {"article_id": "A-1", "title": ["a"]}, False),
    ("chat_messages", {"message_id": "M-1", "room_id": "R-1", "sender": "system", "sent_at": "2026-10-01T10:00:00+09:00"}, True),
])
def test_input_schemas_accept_and_reject(dataset, row, valid):
    assert validator(DOMAIN, dataset).is_valid(row) is valid
    assert (row_checker(DOMAIN, dataset)(row) is None) is valid


def test_storage_kinds_follow_the_schema():
    kinds = column_kinds(DOMAIN, OUTPUT)
    assert kinds["uncited_message_ids"] == "json" and kinds["evidence"] == "json"
    assert kinds["reply_wait_min"] == "float" and kinds["first_reply_min"] == "integer"
