"""The retry JSON Schemas: the seed's output schema, the input datasets, and the sample against them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas import columns, load_schema, required_columns, validator
from schemas.retry import DOMAIN, INPUT_DATASETS, OUTPUT

ROOT = Path(__file__).resolve().parents[2]
SEED = Path("/work/shared/seeds/002_3f9f9effa528f1a9.txt")
FIXTURES = ROOT / "tests" / "fixtures" / "retry"

VERDICT = {"event_id": "EV-1", "session_id": "s", "surface_key": "summarize", "verdict": "one_shot",
           "surface_baseline": 0.3333333333333333, "max_overlap": None, "matched_event_id": None, "reason": "처음입니다.",
           "evidence": [{"dataset": "interaction_events", "field": "input_text", "value": "이거 요약해줘"}]}


def test_every_dataset_and_the_output_have_a_schema():
    for name in (*INPUT_DATASETS, OUTPUT):
        assert load_schema(DOMAIN, name)["title"]
    assert columns(DOMAIN, "interaction_events") == (
        "event_id", "session_id", "surface_key_raw", "input_text", "sent_at", "result_shown")
    assert set(required_columns(DOMAIN, "surface_catalog")) == {"surface_key", "surface_name"}


def test_the_output_schema_keeps_the_seeds_fields_required_set_and_enum():
    ours = load_schema(DOMAIN, OUTPUT)
    assert list(ours["properties"]) == ["event_id", "session_id", "surface_key", "verdict", "surface_baseline",
                                        "max_overlap", "matched_event_id", "reason", "evidence"]
    assert ours["required"] == ["event_id", "session_id", "surface_key", "verdict", "surface_baseline", "max_overlap", "evidence"]
    assert ours["properties"]["verdict"]["enum"] == ["one_shot", "exact_retry", "reworded_retry", "surface_hop"]
    assert ours["properties"]["evidence"]["items"]["required"] == ["field", "value"]


@pytest.mark.skipif(not SEED.is_file(), reason="the shared seed folder is not beside this checkout")
def test_the_output_schema_is_the_seeds_own():
    text = SEED.read_text(encoding="utf-8")
    seed = json.loads(next(line for line in text.splitlines() if line.startswith('{"type":"object"')))
    ours = load_schema(DOMAIN, OUTPUT)
    assert seed["required"] == ours["required"]
    for name, spec in seed["properties"].items():
        assert ours["properties"][name]["type"] == spec["type"], name


def test_the_seeds_examples_validate():
    v = validator(DOMAIN, OUTPUT)
    for row in json.loads((FIXTURES / "seed_examples.json").read_text(encoding="utf-8")):
        assert list(v.iter_errors(row)) == [], row["event_id"]


@pytest.mark.parametrize(("change", "path"), [
    ({"verdict": "retry"}, "verdict"),
    ({"surface_baseline": None}, "surface_baseline"),
    ({"surface_baseline": "0.33"}, "surface_baseline"),
    ({"max_overlap": True}, "max_overlap"),
    ({"evidence": [{"field": "input_text"}]}, "evidence"),
    ({"evidence": [{"dataset": "turns", "field": "input_text", "value": "x"}]}, "evidence"),
])
def test_the_output_schema_rejects_broken_rows(change, path):
    errors = list(validator(DOMAIN, OUTPUT).iter_errors({**VERDICT, **change}))
    assert errors and str(errors[0].absolute_path[0]) == path


def test_a_row_without_max_overlap_is_rejected_though_null_is_fine():
    v = validator(DOMAIN, OUTPUT)
    assert v.is_valid(VERDICT)
    assert not v.is_valid({k: x for k, x in VERDICT.items() if k != "max_overlap"})


def test_input_schemas_accept_the_sample_rows_that_are_not_marked_malformed():
    rows = [json.loads(t) for t in (ROOT / "seeds" / "retry" / "interaction_events.jsonl").read_text(encoding="utf-8").splitlines()
            if t.startswith("{") and t.endswith("}")]
    bad = [r["event_id"] for r in rows if not validator(DOMAIN, "interaction_events").is_valid(r)]
    assert bad == ["EV-1809"]
    catalog = [json.loads(t) for t in (ROOT / "seeds" / "retry" / "surface_catalog.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [c["surface_key"] for c in catalog if not validator(DOMAIN, "surface_catalog").is_valid(c)] == ["image"]
