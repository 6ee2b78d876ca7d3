"""The retry gates (SPEC §2, §5): raw lines → normalised tables + quarantine, and the reading of text.

Every bad row is kept with a reason code, counts reconcile, a quarantined catalog row is
absent (its events are unknown surfaces), and a file that lacks a required column everywhere is
rejected whole with a message naming the file and the column.
"""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.gates import BAD_TIMESTAMP, DUPLICATE_ID, INVALID_JSON, MISSING_ID, SCHEMA

from rules.common.reconcile import QUARANTINE_COLUMNS
from rules.common.jsonl import DatasetError
from rules.retry import text
from rules.retry.config import load_config
from rules.retry.normalise import (EMPTY_INPUT, KEY_NOT_LOWER, MISSING_SESSION, NO_WORDS, UNKNOWN_SURFACE, load_dir,
                                   read_input_dir, restore, stored_columns)
from rules.retry.reference import normal_text
from tests import conftest
from tests.rules.helpers import read_jsonl
from tests.rules.test_retry_engine import CATALOG, event, gate, surface

SAMPLE = conftest.SEEDS / "retry"
FIXTURES = conftest.FIXTURES / "retry"
CFG = load_config()


def codes(norm) -> list[tuple]:
    return [(r["dataset"], r["line"], r["id"], r["reason_code"]) for r in norm.quarantine.to_dict("records")]


# -- the sample --------------------------------------------------------------------------------


def test_sample_quarantine_is_exactly_the_expected_rows_and_counts_reconcile():
    norm = load_dir(SAMPLE, CFG)
    expected = [(r["dataset"], r["line"], r["id"], r["reason_code"]) for r in read_jsonl(FIXTURES / "expected_quarantine.jsonl")]
    assert sorted(codes(norm), key=str) == sorted(expected, key=str)
    assert norm.reconciliation() == {
        "interaction_events": {"raw": 52, "normalised": 41, "quarantined": 11, "reconciles": True},
        "surface_catalog": {"raw": 9, "normalised": 6, "quarantined": 3, "reconciles": True},
    }
    assert list(norm.quarantine.columns) == QUARANTINE_COLUMNS
    lines = (SAMPLE / "interaction_events.jsonl").read_text(encoding="utf-8").splitlines()
    for r in norm.quarantine.to_dict("records"):
        assert r["reason"].strip()
        if r["dataset"] == "interaction_events":
            assert r["raw"] == lines[r["line"] - 1]


def test_the_kept_row_of_a_repeated_id_is_the_first():
    norm = load_dir(SAMPLE, CFG)
    events = norm.tables["interaction_events"].set_index("event_id")
    assert events.loc["EV-0202", "input_text"] == "더 짧게 요약해줘"
    catalog = norm.tables["surface_catalog"].set_index("surface_key")
    assert catalog.loc["search", "default_baseline"] == 0.3
    assert "image" not in catalog.index


# -- one gate at a time ------------------------------------------------------------------------


def test_each_event_gate_quarantines_with_its_reason():
    events = [
        event("E-1", "s", "회의록 요약해줘", 0),
        event("E-2", "s", "요약해줘", 1, surface="summarise"),
        event("E-3", "s", "", 2),
        event("E-4", "s", " \u3000\t", 3),
        event("E-5", "s", "!?…~ 🙏👍", 4),
        event("E-6", "  ", "안녕", 5),
        event("E-7", "s", "안녕", at="어제"),
        {**event("E-8", "s", "안녕", 6), "result_shown": "yes"},
        {k: v for k, v in event("E-9", "s", "안녕", 7).items() if k != "input_text"},
        '{"event_id": "E-10", "session_id"',
        event("E-1", "s", "다른 글", 8),
        event("  ", "s", "안녕", 9),
    ]
    norm = gate(events)
    assert codes(norm) == [
        ("interaction_events", 2, "E-2", UNKNOWN_SURFACE),
        ("interaction_events", 3, "E-3", EMPTY_INPUT),
        ("interaction_events", 4, "E-4", EMPTY_INPUT),
        ("interaction_events", 5, "E-5", NO_WORDS),
        ("interaction_events", 6, "E-6", MISSING_SESSION),
        ("interaction_events", 7, "E-7", BAD_TIMESTAMP),
        ("interaction_events", 8, "E-8", SCHEMA),
        ("interaction_events", 9, "E-9", SCHEMA),
        ("interaction_events", 10, None, INVALID_JSON),
        ("interaction_events", 11, "E-1", DUPLICATE_ID),
        ("interaction_events", 12, None, MISSING_ID),
    ]
    assert list(norm.tables["interaction_events"]["event_id"]) == ["E-1"]
    reasons = dict(zip(norm.quarantine["id"], norm.quarantine["reason"]))
    assert "summarise" in reasons["E-2"] and "input_text" in reasons["E-9"]


def test_untidy_surface_keys_are_trimmed_and_lower_cased_and_ids_trimmed():
    norm = gate([
        event(" E-1 ", " s ", "가", 0, surface="\u3000Summarize\t"),
        event("E-2", "s", "나", 1, surface="CHAT "),
    ])
    t = norm.tables["interaction_events"]
    assert list(t["event_id"]) == ["E-1", "E-2"] and list(t["session_id"]) == ["s", "s"]
    assert list(t["surface_key"]) == ["summarize", "chat"]
    assert list(t["surface_key_raw"]) == ["\u3000Summarize\t", "CHAT "]  # kept as written for evidence


def test_a_quarantined_catalog_row_makes_its_events_unknown_surfaces():
    catalog = [*CATALOG, surface("image", "이미지", 1.5), surface("Draw", "그림"), surface("chat", "대화 (옛)", 0.9)]
    norm = gate([event("E-1", "s", "고양이", 0, surface="image"), event("E-2", "s", "강아지", 1, surface="draw")], catalog)
    assert codes(norm) == [
        ("interaction_events", 1, "E-1", UNKNOWN_SURFACE),
        ("interaction_events", 2, "E-2", UNKNOWN_SURFACE),
        ("surface_catalog", 5, "image", SCHEMA),
        ("surface_catalog", 6, "Draw", KEY_NOT_LOWER),
        ("surface_catalog", 7, "chat", DUPLICATE_ID),
    ]
    reasons = dict(zip(norm.quarantine["id"], norm.quarantine["reason"]))
    assert "quarantined" in reasons["E-1"]
    assert norm.tables["surface_catalog"].set_index("surface_key").loc["chat", "default_baseline"] is None


def test_a_file_without_a_required_column_is_rejected_naming_file_and_column(tmp_path):
    (tmp_path / "surface_catalog.jsonl").write_text(json.dumps(surface("chat")) + "\n", encoding="utf-8")
    (tmp_path / "interaction_events.jsonl").write_text(
        json.dumps({"event_id": "E-1", "session_id": "s", "surface_key_raw": "chat", "sent_at": "2026-09-21T10:00:00"}) + "\n",
        encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_input_dir(tmp_path)
    assert "interaction_events.jsonl" in str(err.value) and "input_text" in str(err.value)
    (tmp_path / "interaction_events.jsonl").write_text(json.dumps(event("E-1", "s", "안녕", 0)) + "\n", encoding="utf-8")
    (tmp_path / "surface_catalog.jsonl").unlink()
    with pytest.raises(DatasetError, match="surface_catalog.jsonl"):
        read_input_dir(tmp_path)


def test_tables_survive_storage_columns_and_restore():
    norm = load_dir(SAMPLE, CFG)
    stored = {d: norm.tables[d][stored_columns(d)].copy() for d in norm.tables}
    stored["interaction_events"]["result_shown"] = stored["interaction_events"]["result_shown"].map(
        lambda v: float("nan") if v is None else float(v))  # as SQL may give it back
    stored["surface_catalog"]["default_baseline"] = stored["surface_catalog"]["default_baseline"].astype(float)
    back = restore(stored, CFG)
    ev, orig = back["interaction_events"], norm.tables["interaction_events"]
    for col in ("event_id", "sent_at_ns", "surface_key", "words", "squashed", "result_shown"):
        assert list(ev[col]) == list(orig[col]), col
    assert list(back["surface_catalog"]["default_baseline"]) == list(norm.tables["surface_catalog"]["default_baseline"])


# -- reading text ------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "words", "squashed"), [
    ("이거 요약해줘!", {"이거", "요약해줘"}, "이거요약해줘"),
    ("PDF 요약해줘.", {"pdf", "요약해줘"}, "pdf요약해줘"),
    ("「회의록」 요약 — 부탁해요~ 🙏", {"회의록", "요약", "부탁해요"}, "회의록요약부탁해요"),
    ("3분기 $100 매출 +5%", {"3분기", "100", "매출", "5"}, "3분기100매출5"),
    ("ÉCOLE Straße ΑΒΓ", {"école", "straße", "ΑΒΓ"}, "écolestraßeΑΒΓ"),  # Latin only is lower-cased
    ("Ｐｄｆ\u3000요약\t해줘\n", {"ｐｄｆ", "요약", "해줘"}, "ｐｄｆ요약해줘"),
    ("☀️ 날씨", {"\ufe0f", "날씨"}, "\ufe0f날씨"),  # the variation selector (Mn) is neither P* nor S*
    ("?!…", set(), ""),
])
def test_normalised_text_words_and_squashed_form(raw, words, squashed):
    assert text.words(raw) == frozenset(words)
    assert text.squashed(raw) == squashed


def test_the_reference_reads_every_character_of_unicode_the_same_way():
    # Two independent readings of the rule, compared on every code point.
    bad = [cp for cp in range(sys.maxunicode + 1)
           if 0xD800 > cp or cp > 0xDFFF
           if text.normalised(chr(cp)) != normal_text(chr(cp))]
    assert bad == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=30), min_size=1, max_size=8))
def test_the_reference_reading_is_the_same_with_its_table_emptied_as_it_fills(texts):
    # A table of four characters is emptied over and over: each text still reads character by character.
    from rules.retry import reference

    table = reference._KeptChars()
    table.limit = 4
    for t in texts * 2:  # the second time, from the table
        assert t.translate(table) == "".join(reference.kept_char(ch) for ch in t)
        assert len(table) <= 4
    assert [normal_text(t) for t in texts] == ["".join(reference.kept_char(ch) for ch in t) for t in texts]
