"""Hostile input through `judge` and `validate`: every value the gates let through is bounded.

Each test breaks one line of a domain's sample in one way and asserts that the run goes on:
`judge` exits 0, the line is quarantined with its specific reason code (and the field named),
every output line is strict JSON, and `validate` passes on what `judge` wrote.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rules.common import timestamps
from tests.cli.helpers import read_jsonl, run
from tests.conftest import SEEDS

DATASETS = {
    "persona": ("profiles", "turns"),
    "live_pick": ("live_chat", "character_sheet", "viewer_relation"),
    "retry": ("interaction_events", "surface_catalog"),
    "handoff": ("chat_messages", "rooms", "handoff_phrases", "help_articles"),
}
TIME_FIELDS = [
    ("persona", "turns", "created_at"),
    ("live_pick", "live_chat", "sent_at"),
    ("live_pick", "viewer_relation", "last_replied_at"),
    ("retry", "interaction_events", "sent_at"),
    ("handoff", "chat_messages", "sent_at"),
]


def _strict(line: str):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=refuse)


def corrupt(tmp: Path, domain: str, dataset: str, field: str, literal: str, line: int = 1) -> Path:
    """A copy of the domain's sample where `field` of the given line is the raw JSON `literal`."""
    folder = tmp / domain
    shutil.copytree(SEEDS / domain, folder)
    path = folder / f"{dataset}.jsonl"
    lines = path.read_text(encoding="utf-8").split("\n")
    obj = json.loads(lines[line - 1])
    obj[field] = "\x00HOLE\x00"
    lines[line - 1] = json.dumps(obj, ensure_ascii=False).replace(json.dumps("\x00HOLE\x00"), literal)
    path.write_text("\n".join(lines), encoding="utf-8")
    return folder


def judge_and_validate(tmp: Path, domain: str, folder: Path) -> dict:
    out, q = tmp / "out.jsonl", tmp / "q.jsonl"
    code, _, err = run("judge", domain, "--input", folder, "--out", out, "--quarantine", q)
    assert code == 0, err
    for text in (out.read_text(encoding="utf-8") + q.read_text(encoding="utf-8")).split("\n")[:-1]:
        _strict(text)  # raises on Infinity / NaN, which json.dumps would otherwise write
    vcode, vout, _ = run("validate", domain, "--input", folder, "--verdicts", out)
    assert vcode == 0, vout
    return {"rows": read_jsonl(out), "q": read_jsonl(q), "stderr": err}


def quarantined(result: dict, dataset: str, line: int = 1) -> dict:
    found = [r for r in result["q"] if r["dataset"] == dataset and r["line"] == line]
    assert len(found) == 1, result["q"]
    return found[0]


# -- timestamps ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("domain", "dataset", "field"), TIME_FIELDS)
@pytest.mark.parametrize("text", ["0001-01-01T00:00:00", "2300-01-01T00:00:00+09:00", "9999-12-31T23:59:59-14:00"])
def test_a_timestamp_outside_the_representable_range_is_quarantined(tmp_path, domain, dataset, field, text):
    folder = corrupt(tmp_path, domain, dataset, field, json.dumps(text))
    row = quarantined(judge_and_validate(tmp_path, domain, folder), dataset)
    assert row["reason_code"] == "timestamp_out_of_range"
    assert field in row["reason"] and text in row["reason"]


def test_a_lower_case_z_is_read_the_same_by_judge_and_validate(tmp_path):
    folder = corrupt(tmp_path, "handoff", "chat_messages", "sent_at", json.dumps("2026-09-30T11:55:00z"))
    result = judge_and_validate(tmp_path, "handoff", folder)
    assert not [r for r in result["q"] if r["dataset"] == "chat_messages" and r["line"] == 1]


def test_the_one_parser_bounds_and_keeps_nanoseconds():
    assert timestamps.parse("1829-12-31T23:59:59Z", "UTC") is None
    assert timestamps.parse("2110-01-01T00:00:00Z", "UTC") is None
    assert timestamps.parse("1830-01-01T00:00:00Z", "UTC") is not None
    assert timestamps.problem("0001-01-01T00:00:00", "UTC")[0] == timestamps.OUT_OF_RANGE
    a = timestamps.parse("2026-09-08T21:14:03.123456789+09:00", "UTC")
    b = timestamps.parse("2026-09-08T21:14:03.123456788+09:00", "UTC")
    assert a.ns - b.ns == 1, "nine fraction digits are kept to the nanosecond"
    assert timestamps.parse("2026-09-08T21:14:03.1234567891+09:00", "UTC") is None
    assert timestamps.parse("2026-09-08T21:14:03+09:00:30", "UTC") is None, "an offset with seconds is not ISO-8601"
    assert timestamps.problem("2026-09-08T21:14:03+09:00:30", "UTC")[0] == timestamps.BAD
    assert timestamps.parse("2026-09-08T21:14:03z", "UTC").ns == timestamps.parse("2026-09-08T21:14:03Z", "UTC").ns


def test_an_offset_with_seconds_is_quarantined_not_printed_back_shortened(tmp_path):
    folder = corrupt(tmp_path, "live_pick", "live_chat", "sent_at", json.dumps("2026-09-08T20:05:01+09:00:30"))
    row = quarantined(judge_and_validate(tmp_path, "live_pick", folder), "live_chat")
    assert row["reason_code"] == "bad_timestamp" and "+09:00:30" in row["reason"]


# -- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize("literal", ["99999999999999999999999", "1e30", "-9223372036854775809", "1" * 5000])
def test_an_integer_beyond_64_bits_is_quarantined(tmp_path, literal):
    folder = corrupt(tmp_path, "handoff", "handoff_phrases", "first_reply_min", literal)
    row = quarantined(judge_and_validate(tmp_path, "handoff", folder), "handoff_phrases")
    assert row["reason_code"] in ("integer_out_of_range", "schema")
    assert "first_reply_min" in row["reason"]


def test_an_integer_beyond_64_bits_anywhere_in_a_row_is_named(tmp_path):
    folder = corrupt(tmp_path, "live_pick", "live_chat", "donation_amount", "99999999999999999999999")
    row = quarantined(judge_and_validate(tmp_path, "live_pick", folder), "live_chat")
    assert row["reason_code"] == "integer_out_of_range" and "donation_amount" in row["reason"]


def test_a_finite_literal_that_parses_to_infinity_is_quarantined(tmp_path):
    folder = SEEDS / "live_pick"
    lines = (folder / "character_sheet.jsonl").read_text(encoding="utf-8").split("\n")
    sheet = json.loads(lines[0])
    topic = next(iter(sheet["min_closeness_by_topic"]))
    folder = corrupt(tmp_path, "live_pick", "character_sheet", "min_closeness_by_topic",
                     json.dumps({**sheet["min_closeness_by_topic"], topic: "\x01"}, ensure_ascii=False).replace('"\\u0001"', "1e400"))
    result = judge_and_validate(tmp_path, "live_pick", folder)
    row = quarantined(result, "character_sheet")
    assert row["reason_code"] == "non_finite_number"
    assert f"min_closeness_by_topic.{topic}" in row["reason"]
    assert not any("inf" in r["summary"] for r in result["rows"])


# -- text -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("domain", "dataset", "field"), [
    ("persona", "turns", "turn_no"), ("retry", "interaction_events", "input_text"), ("live_pick", "live_chat", "body"),
    ("handoff", "chat_messages", "text"), ("live_pick", "live_chat", "sent_at"),
])
def test_a_lone_surrogate_is_quarantined_with_the_field_named(tmp_path, domain, dataset, field):
    folder = corrupt(tmp_path, domain, dataset, field, '"ab\\ud800cd"')
    row = quarantined(judge_and_validate(tmp_path, domain, folder), dataset)
    assert row["reason_code"] == "lone_surrogate" and field in row["reason"]


def test_a_key_with_a_lone_surrogate_is_quarantined(tmp_path):
    folder = corrupt(tmp_path, "retry", "surface_catalog", "note", '"x", "\\udfff": 1')
    row = quarantined(judge_and_validate(tmp_path, "retry", folder), "surface_catalog")
    assert row["reason_code"] == "lone_surrogate"


# -- files and lines ------------------------------------------------------------------------------


def test_a_truncated_multibyte_character_quarantines_that_line_only(tmp_path):
    folder = tmp_path / "retry"
    shutil.copytree(SEEDS / "retry", folder)
    path = folder / "interaction_events.jsonl"
    data = path.read_bytes().rstrip(b"\n")
    last = data.rsplit(b"\n", 1)[1]
    cut = next(i for i, b in enumerate(last) if b >= 0x80) + 1  # inside a multi-byte character
    path.write_bytes(data[: len(data) - len(last)] + last[:cut] + b"\n")
    result = judge_and_validate(tmp_path, "retry", folder)
    n = data.count(b"\n") + 1
    row = quarantined(result, "interaction_events", n)
    assert row["reason_code"] == "not_utf8" and "byte" in row["reason"]
    assert f"interaction_events: {n} raw = {n - 1 - _sample_quarantined('retry', 'interaction_events')} normalised" in result["stderr"]


def _sample_quarantined(domain: str, dataset: str) -> int:
    from tests.conftest import FIXTURES

    return sum(1 for r in read_jsonl(FIXTURES / domain / "expected_quarantine.jsonl") if r["dataset"] == dataset)


def test_a_directory_in_place_of_a_dataset_file_is_named_as_such(tmp_path):
    folder = tmp_path / "persona"
    shutil.copytree(SEEDS / "persona", folder)
    (folder / "profiles.jsonl").unlink()
    (folder / "profiles.jsonl").mkdir()
    code, _, err = run("judge", "persona", "--input", folder, "--out", tmp_path / "o.jsonl")
    assert code == 2 and "profiles.jsonl" in err and "is a directory" in err
    (folder / "profiles.jsonl").rmdir()
    code, _, err = run("judge", "persona", "--input", folder, "--out", tmp_path / "o.jsonl")
    assert code == 2 and "file not found" in err


def test_an_unreadable_dataset_file_gets_its_own_message(tmp_path, monkeypatch):
    folder = tmp_path / "persona"
    shutil.copytree(SEEDS / "persona", folder)
    real = Path.open

    def refuse(self, *args, **kwargs):
        if self.name == "turns.jsonl":
            raise PermissionError(13, "Permission denied")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    code, _, err = run("judge", "persona", "--input", folder, "--out", tmp_path / "o.jsonl")
    assert code == 2 and "turns.jsonl" in err and "cannot be read (Permission denied)" in err


# -- ids ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pad", ["\u200b", "\ufeff", "\u200d", " \u200b\u3000"])
def test_an_id_padded_with_format_characters_is_the_same_id(tmp_path, pad):
    folder = SEEDS / "live_pick"
    first = json.loads((folder / "live_chat.jsonl").read_text(encoding="utf-8").split("\n")[0])
    folder = corrupt(tmp_path, "live_pick", "live_chat", "msg_id", json.dumps(first["msg_id"] + pad), line=2)
    row = quarantined(judge_and_validate(tmp_path, "live_pick", folder), "live_chat", 2)
    assert row["reason_code"] == "duplicate_id" and row["id"] == first["msg_id"]


def test_a_code_padded_with_a_zero_width_space_still_maps(tmp_path):
    first = json.loads((SEEDS / "persona" / "turns.jsonl").read_text(encoding="utf-8").split("\n")[0])
    folder = corrupt(tmp_path, "persona", "turns", "character_code_raw", json.dumps("\u200b" + first["character_code_raw"] + "\ufeff"))
    result = judge_and_validate(tmp_path, "persona", folder)
    row = next(r for r in result["rows"] if r["turn_no"] == first["turn_no"])
    assert row["persona_code"] != "profile_unmapped"


# -- outputs --------------------------------------------------------------------------------------


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path):
    from rules.common.jsonl import write_jsonl

    path = tmp_path / "verdicts.jsonl"
    write_jsonl(path, [{"a": 1}, {"a": 2}])
    before = path.read_bytes()
    with pytest.raises((UnicodeEncodeError, ValueError)):
        write_jsonl(path, [{"a": 3}, {"a": "\ud800"}])
    with pytest.raises(ValueError):
        write_jsonl(path, [{"a": 3}, {"a": float("inf")}])
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verdicts.jsonl"], "no temporary file is left behind"


# -- empty reference tables -----------------------------------------------------------------------


def test_a_reference_table_with_no_valid_rows_is_a_loud_warning(tmp_path):
    folder = tmp_path / "handoff"
    shutil.copytree(SEEDS / "handoff", folder)
    (folder / "handoff_phrases.jsonl").write_text('{"trigger_phrase": "", "first_reply_min": 5}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code, _, err = run("judge", "handoff", "--input", folder, "--out", out)
    assert code == 0
    assert "warning: handoff_phrases has no valid rows (1 raw, 1 quarantined)" in err
    report = tmp_path / "report.md"
    code, _, _ = run("agree", "handoff", "--verdicts", out, "--golden", folder / "golden.jsonl", "--input", folder, "--out", report)
    text = report.read_text(encoding="utf-8")
    assert code == 0 and "handoff_phrases" in text and "유효한 행이 없습니다" in text
    board = tmp_path / "board.html"
    code, _, _ = run("board", "handoff", "--input", folder, "--out", board)
    page = board.read_text(encoding="utf-8")
    assert code == 0 and "role='alert'><b>데이터 품질 실패</b> 기준 표 handoff_phrases" in page
