"""Gates of the live_pick datasets (SPEC §2, §4): quarantine reasons, file-level errors, day partitions.

Every bad row must leave for quarantine with a reason code, never disappear; counts reconcile.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rules.common.days import line_days
from rules.common.jsonl import DatasetError, RAW_COLUMNS, read_raw
from rules.live_pick.config import load_config
from rules.live_pick.normalise import load_dir, normalise, read_input_dir
from tests import conftest
from tests.rules.helpers import judge_live_pick, raw_frame, read_jsonl

SEEDS = conftest.SEEDS / "live_pick"
FIXTURES = conftest.FIXTURES / "live_pick"
CFG = load_config()
FIRST_TIME = "관계 기록이 없는 첫 시청자"


# -- builder -------------------------------------------------------------------------------


def sheet(character_id="CH-A", **over):
    return {
        "character_id": character_id,
        "character_name": "미아",
        "world_topic_tags": ["노래", "게임"],
        "banned_tags": ["정치"],
        "min_closeness_by_topic": {"게임": 1},
        "reply_cooldown_sec": 180,
        "note": None,
        **over,
    }


def viewer(viewer_id="VW-1", **over):
    return {
        "viewer_id": viewer_id,
        "nickname": "루루",
        "closeness_level": 3,
        "answered_topics": ["노래"],
        "last_replied_at": "2026-09-08T21:13:00",
        "note": None,
        **over,
    }


def line(msg_id="MSG-1", **over):
    return {
        "msg_id": msg_id,
        "character_id": "CH-A",
        "viewer_id": "VW-1",
        "sent_at": "2026-09-08T21:14:00",
        "body": "오늘 뭐 불러 줄 거야?",
        "topic_tags": ["게임"],
        "donation_amount": 0,
        "is_question": True,
        "note": None,
        **over,
    }


def without(row: dict, field: str) -> dict:
    return {k: v for k, v in row.items() if k != field}


def gate(chat=(), sheets=None, relations=()):
    raw = {
        "live_chat": raw_frame("live_chat", chat),
        "character_sheet": raw_frame("character_sheet", [sheet()] if sheets is None else sheets),
        "viewer_relation": raw_frame("viewer_relation", relations),
    }
    return normalise(raw, CFG)


def quarantined(norm, dataset: str | None = None) -> list[tuple]:
    q = norm.quarantine
    if dataset:
        q = q[q["dataset"] == dataset]
    return [(r.dataset, int(r.line), r.id, r.reason_code) for r in q.itertuples()]


def reconciles(norm) -> bool:
    return all(v["reconciles"] for v in norm.reconciliation().values())


def judged(norm) -> dict[str, dict]:
    return {r["msg_id"]: r for r in judge_live_pick(norm, CFG)}


# -- the sample ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample():
    return load_dir(SEEDS, CFG)


def test_sample_quarantine_equals_expected(sample):
    expected = read_jsonl(FIXTURES / "expected_quarantine.jsonl")
    got = [
        {"dataset": r.dataset, "line": int(r.line), "id": r.id, "reason_code": r.reason_code}
        for r in sample.quarantine.itertuples()
    ]
    key = lambda d: (d["dataset"], d["line"])  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)


def test_sample_counts_reconcile(sample):
    assert sample.reconciliation() == {
        "live_chat": {"raw": 83, "normalised": 80, "quarantined": 3, "reconciles": True},
        "character_sheet": {"raw": 10, "normalised": 7, "quarantined": 3, "reconciles": True},
        "viewer_relation": {"raw": 42, "normalised": 39, "quarantined": 3, "reconciles": True},
    }


def test_sample_quarantine_keeps_file_raw_text_and_a_reason(sample):
    for r in sample.quarantine.itertuples():
        path = Path(r.file)
        assert path.name == f"{r.dataset}.jsonl"
        assert path.read_text(encoding="utf-8").splitlines()[r.line - 1] == r.raw
        assert isinstance(r.reason, str) and r.reason.strip()


def test_sample_duplicate_viewer_keeps_the_first_row(sample):
    rel = sample.relation.set_index("viewer_id")
    assert rel.loc["VW-1043", "closeness_level"] == 4
    assert rel.loc["VW-1043", "last_replied_at"] == "2026-09-08T21:09:40"


# -- one reason code at a time ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ['{"msg_id": "MSG-1", "character_id": "CH-A"', "[1, 2]", '"MSG-1"', "null", "그냥 글"],
    ids=["truncated", "array", "string", "null", "prose"],
)
def test_invalid_json(text):
    norm = gate([line("MSG-0"), text])
    assert quarantined(norm) == [("live_chat", 2, None, "invalid_json")]
    assert list(norm.chat["msg_id"]) == ["MSG-0"]
    assert norm.quarantine.iloc[0]["raw"] == text
    assert reconciles(norm)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (without(line(), "body"), "body"),
        (without(line(), "sent_at"), "sent_at"),
        (line(donation_amount="1000"), "donation_amount"),
        (line(donation_amount=-1), "donation_amount"),
        (line(donation_amount=10.5), "donation_amount"),
        (line(is_question="true"), "is_question"),
        (line(is_question=1), "is_question"),
        (line(topic_tags="노래"), "topic_tags"),
        (line(topic_tags=["노래", 3]), "topic_tags"),
        (line(viewer_id=None), "viewer_id"),
    ],
    ids=["missing-body", "missing-sent_at", "donation-string", "donation-negative", "donation-fraction",
         "question-string", "question-int", "tags-string", "tags-non-string", "viewer-null"],
)
def test_chat_schema_failures(row, field):
    norm = gate([row, line("MSG-2")])
    assert quarantined(norm) == [("live_chat", 1, "MSG-1", "schema")]
    assert field in norm.quarantine.iloc[0]["reason"]
    assert list(norm.chat["msg_id"]) == ["MSG-2"]
    assert reconciles(norm)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (sheet(reply_cooldown_sec=901), "reply_cooldown_sec"),
        (sheet(reply_cooldown_sec=-1), "reply_cooldown_sec"),
        (without(sheet(), "reply_cooldown_sec"), "reply_cooldown_sec"),
        (sheet(banned_tags="정치, 연애"), "banned_tags"),
        (sheet(min_closeness_by_topic={"게임": "1"}), "min_closeness_by_topic"),
    ],
    ids=["cooldown-901", "cooldown-negative", "cooldown-missing", "banned-string", "map-string-value"],
)
def test_sheet_schema_failures(row, field):
    norm = gate([], [row, sheet("CH-B")])
    assert quarantined(norm) == [("character_sheet", 1, "CH-A", "schema")]
    assert field in norm.quarantine.iloc[0]["reason"] or "(row)" in norm.quarantine.iloc[0]["reason"]
    assert list(norm.sheet["character_id"]) == ["CH-B"]


def test_sheet_cooldown_bounds_are_inclusive():
    norm = gate([], [sheet("CH-A", reply_cooldown_sec=0), sheet("CH-B", reply_cooldown_sec=900)])
    assert quarantined(norm) == []


@pytest.mark.parametrize(
    "row",
    [viewer(closeness_level=7), viewer(closeness_level=-1), viewer(closeness_level="3"),
     viewer(answered_topics=None), without(viewer(), "nickname")],
    ids=["closeness-7", "closeness-negative", "closeness-string", "answered-null", "missing-nickname"],
)
def test_viewer_schema_failures(row):
    norm = gate([], None, [row])
    assert quarantined(norm) == [("viewer_relation", 1, "VW-1", "schema")]


def test_closeness_bounds_are_inclusive():
    norm = gate([], None, [viewer("VW-1", closeness_level=0), viewer("VW-2", closeness_level=5)])
    assert quarantined(norm) == []


@pytest.mark.parametrize("sent_at", ["어제 밤", "2026-09-31T10:00:00", "2026-09-08T25:00:00", "", "21:14:00"])
def test_bad_sent_at(sent_at):
    norm = gate([line("MSG-1", sent_at=sent_at), line("MSG-2")], None, [viewer()])
    assert quarantined(norm) == [("live_chat", 1, "MSG-1", "bad_timestamp")]
    assert "sent_at" in norm.quarantine.iloc[0]["reason"]
    assert reconciles(norm)


@pytest.mark.parametrize("last", ["어제 밤 11시쯤", "2026-13-01T00:00:00", "21:13:00"])
def test_bad_last_replied_at(last):
    norm = gate([], None, [viewer("VW-1", last_replied_at=last), viewer("VW-2")])
    assert quarantined(norm) == [("viewer_relation", 1, "VW-1", "bad_timestamp")]
    assert "last_replied_at" in norm.quarantine.iloc[0]["reason"]


def test_null_last_replied_at_is_not_a_bad_timestamp():
    norm = gate([], None, [viewer("VW-1", last_replied_at=None), without(viewer("VW-2"), "last_replied_at")])
    assert quarantined(norm) == []


@pytest.mark.parametrize("blank", ["", "   ", "\u3000", "\t\n"], ids=["empty", "spaces", "ideographic", "tab-newline"])
def test_missing_id_in_every_dataset(blank):
    norm = gate([line(blank), line("MSG-2")], [sheet(blank), sheet("CH-A")], [viewer(blank), viewer("VW-1")])
    assert sorted(quarantined(norm)) == [
        ("character_sheet", 1, None, "missing_id"),
        ("live_chat", 1, None, "missing_id"),
        ("viewer_relation", 1, None, "missing_id"),
    ]
    assert reconciles(norm)


def test_duplicate_msg_id_keeps_the_first_and_names_its_line():
    norm = gate([
        line("MSG-0"),
        line("MSG-1", topic_tags=["노래"], donation_amount=1000),
        line(" MSG-1\u3000", topic_tags=["노래"], donation_amount=50_000),
    ])
    assert quarantined(norm) == [("live_chat", 3, "MSG-1", "duplicate_id")]
    assert "line 2" in norm.quarantine.iloc[0]["reason"]
    rows = judged(norm)
    donation = [e["value"] for e in rows["MSG-1"]["evidence"] if e["field"] == "donation_amount"]
    assert donation == [1000]


def test_duplicate_sheet_keeps_the_first():
    # The first sheet has 노래 as a world topic, the copy does not.
    norm = gate(
        [line("MSG-1", topic_tags=["노래"], viewer_id="VW-NEW")],
        [sheet("CH-A"), sheet("CH-A", world_topic_tags=["게임"])],
    )
    assert quarantined(norm) == [("character_sheet", 2, "CH-A", "duplicate_id")]
    assert "line 1" in norm.quarantine.iloc[0]["reason"]
    assert judged(norm)["MSG-1"]["verdict"] == "지금 답변할 질문"


def test_duplicate_viewer_keeps_the_first():
    norm = gate(
        [line("MSG-1", topic_tags=["노래"])],
        None,
        [viewer("VW-1", answered_topics=[], last_replied_at=None), viewer("VW-1")],
    )
    assert quarantined(norm) == [("viewer_relation", 2, "VW-1", "duplicate_id")]
    row = judged(norm)["MSG-1"]
    assert (row["verdict"], row["cooldown_elapsed_sec"]) == ("지금 답변할 질문", None)


def test_unknown_character_is_quarantined_with_the_id_named():
    norm = gate([line("MSG-1", character_id="CH-Z"), line("MSG-2", character_id="ch-a"), line("MSG-3")])
    assert quarantined(norm) == [("live_chat", 1, "MSG-1", "unknown_character"), ("live_chat", 2, "MSG-2", "unknown_character")]
    assert "CH-Z" in norm.quarantine.iloc[0]["reason"]
    assert list(norm.chat["msg_id"]) == ["MSG-3"]


@pytest.mark.parametrize(
    ("last", "sent", "kept"),
    [
        ("2026-09-08T21:14:00.500", "2026-09-08T21:14:00", False),  # half a second later
        ("2026-09-08T12:14:01Z", "2026-09-08T21:14:00", False),  # one second later, other form
        ("2026-09-08T21:14:00", "2026-09-08T12:14:00Z", True),  # same instant: elapsed 0
        ("2026-09-08T21:14:00+09:00", "2026-09-08T21:14:00.999", True),
    ],
)
def test_reply_after_line(last, sent, kept):
    norm = gate([line("MSG-1", sent_at=sent), line("MSG-2", viewer_id="VW-2")], None, [viewer("VW-1", last_replied_at=last)])
    if kept:
        assert quarantined(norm) == []
        assert judged(norm)["MSG-1"]["cooldown_elapsed_sec"] == 0
    else:
        assert quarantined(norm) == [("live_chat", 1, "MSG-1", "reply_after_line")]
        assert "VW-1" in norm.quarantine.iloc[0]["reason"]
        assert list(norm.chat["msg_id"]) == ["MSG-2"]
    assert reconciles(norm)


def test_ids_are_trimmed_before_joining_and_compared_case_sensitively():
    norm = gate(
        [line(" MSG-1 ", character_id=" CH-A\u3000", viewer_id="\tVW-1 ", topic_tags=["노래"])],
        [sheet("CH-A ")],
        [viewer(" VW-1")],
    )
    assert quarantined(norm) == []
    row = judged(norm)["MSG-1"]
    assert (row["msg_id"], row["character_id"], row["viewer_id"]) == ("MSG-1", "CH-A", "VW-1")
    # Joined to the relation: inside the 180 s cooldown on the answered topic 노래.
    assert (row["verdict"], row["cooldown_elapsed_sec"]) == ("방금 답한 주제", 60)


def test_ids_differing_only_in_case_do_not_join():
    norm = gate([line("MSG-1", viewer_id="vw-1", topic_tags=["노래"])], None, [viewer("VW-1")])
    row = judged(norm)["MSG-1"]
    assert row["cooldown_elapsed_sec"] is None and FIRST_TIME in row["summary"]


def test_quarantined_sheet_is_treated_as_absent():
    norm = gate([line("MSG-1"), line("MSG-2", character_id="CH-B")], [sheet("CH-A", reply_cooldown_sec=901), sheet("CH-B")])
    assert sorted(quarantined(norm)) == [
        ("character_sheet", 1, "CH-A", "schema"),
        ("live_chat", 1, "MSG-1", "unknown_character"),
    ]
    assert list(norm.chat["msg_id"]) == ["MSG-2"]
    assert reconciles(norm)


@pytest.mark.parametrize(
    "bad",
    [viewer("VW-1", closeness_level=7), viewer("VW-1", last_replied_at="어제 밤 11시쯤")],
    ids=["schema", "bad_timestamp"],
)
def test_quarantined_viewer_row_is_judged_as_first_time(bad):
    # The broken row says closeness 7/3 and a reply a minute ago on 노래; none of it may be used.
    norm = gate([line("MSG-1", topic_tags=["노래"]), line("MSG-2", topic_tags=["게임"])], None, [bad])
    assert [q[3] for q in quarantined(norm)] == [("schema" if bad["closeness_level"] == 7 else "bad_timestamp")]
    rows = judged(norm)
    assert (rows["MSG-1"]["verdict"], rows["MSG-1"]["cooldown_elapsed_sec"]) == ("지금 답변할 질문", None)
    assert (rows["MSG-2"]["verdict"], rows["MSG-2"]["cooldown_elapsed_sec"]) == ("관계 단계에 아직 못 미침", None)
    for r in rows.values():
        assert FIRST_TIME in r["summary"]
        assert {"dataset": "viewer_relation", "field": "viewer_id", "value": 0, "agg": "count"} in r["evidence"]


def test_quarantine_row_carries_every_column():
    norm = gate([line("MSG-1", donation_amount=-5)])
    q = norm.quarantine.iloc[0].to_dict()
    assert set(q) == {"dataset", "file", "line", "id", "reason_code", "reason", "raw"}
    assert (q["dataset"], q["file"], q["line"], q["id"], q["reason_code"]) == (
        "live_chat", "live_chat.jsonl", 1, "MSG-1", "schema",
    )
    assert json.loads(q["raw"])["donation_amount"] == -5


def test_every_row_lands_exactly_once():
    chat = [
        line("MSG-1"), "{broken", line("MSG-1"), line("  "), line("MSG-4", character_id="CH-Z"),
        line("MSG-5", sent_at="nope"), line("MSG-6", donation_amount=-1), line("MSG-7"),
    ]
    norm = gate(chat, None, [viewer()])
    assert norm.reconciliation()["live_chat"] == {"raw": 8, "normalised": 2, "quarantined": 6, "reconciles": True}
    lines = sorted([int(x) for x in norm.chat["line"]] + [int(x) for x in norm.quarantine["line"]])
    assert lines == list(range(1, 9))


# -- whole files -----------------------------------------------------------------------------


def test_read_raw_missing_file_names_the_file(tmp_path):
    path = tmp_path / "live_chat.jsonl"
    with pytest.raises(DatasetError) as err:
        read_raw(path, "live_chat")
    assert str(path) in str(err.value) and err.value.file == str(path)


def test_read_raw_non_utf8_file_names_the_file(tmp_path):
    path = tmp_path / "live_chat.jsonl"
    path.write_bytes(json.dumps(line(body="노래 불러 줘"), ensure_ascii=False).encode("euc-kr") + b"\n")
    with pytest.raises(DatasetError) as err:
        read_raw(path, "live_chat")
    assert str(path) in str(err.value)
    assert "UTF-8" in str(err.value)


def test_read_raw_required_column_absent_from_every_row_names_the_column(tmp_path):
    path = tmp_path / "live_chat.jsonl"
    path.write_text("\n".join(json.dumps(without(line(f"MSG-{i}"), "sent_at")) for i in range(3)) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_raw(path, "live_chat", ["msg_id", "sent_at"])
    assert err.value.column == "sent_at"
    assert "sent_at" in str(err.value) and str(path) in str(err.value)


def test_read_raw_column_present_in_some_row_is_not_a_file_error(tmp_path):
    path = tmp_path / "live_chat.jsonl"
    rows = [without(line("MSG-1"), "sent_at"), line("MSG-2")]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    raw = read_raw(path, "live_chat", ["msg_id", "sent_at"])
    assert len(raw) == 2


def test_read_raw_ignores_blank_lines_and_keeps_file_line_numbers(tmp_path):
    path = tmp_path / "live_chat.jsonl"
    text = "\ufeff" + json.dumps(line("MSG-1")) + "\r\n\r\n   \n" + json.dumps(line("MSG-2")) + "\n\t\n"
    path.write_text(text, encoding="utf-8")
    raw = read_raw(path, "live_chat", ["msg_id"])
    assert list(raw.columns) == RAW_COLUMNS
    assert list(raw["line"]) == [1, 4]
    assert [json.loads(t)["msg_id"] for t in raw["text"]] == ["MSG-1", "MSG-2"]  # the BOM is not part of line 1


def test_read_input_dir_without_character_sheet_names_that_file(tmp_path):
    for name in ("live_chat", "viewer_relation"):
        shutil.copy(SEEDS / f"{name}.jsonl", tmp_path / f"{name}.jsonl")
    with pytest.raises(DatasetError) as err:
        read_input_dir(tmp_path)
    assert "character_sheet.jsonl" in str(err.value)
    assert err.value.dataset == "character_sheet"


def test_read_input_dir_reads_every_dataset():
    raw = read_input_dir(SEEDS)
    assert {k: len(v) for k, v in raw.items()} == {"live_chat": 83, "character_sheet": 10, "viewer_relation": 42}


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85"], ids=["LS", "PS", "NEL"])
def test_read_raw_splits_only_on_newlines(tmp_path, sep):
    path = tmp_path / "live_chat.jsonl"
    rows = [line("MSG-1", body=f"첫 줄{sep}둘째 줄"), line("MSG-2")]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    raw = read_raw(path, "live_chat", ["msg_id"])
    assert list(raw["line"]) == [1, 2]
    assert [json.loads(t)["msg_id"] for t in raw["text"]] == ["MSG-1", "MSG-2"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_quarantined(constant):
    # Python's json module reads these, but they are not JSON; a closeness threshold of NaN or
    # Infinity must not reach the rules.
    text = json.dumps(sheet("CH-A", min_closeness_by_topic={"게임": 1}), ensure_ascii=False)
    text = text.replace('"게임": 1', f'"게임": {constant}')
    assert constant in text
    norm = gate([], [text, sheet("CH-B")])
    assert [(q[0], q[1], q[2]) for q in quarantined(norm)] == [("character_sheet", 1, "CH-A")]
    assert list(norm.sheet["character_id"]) == ["CH-B"]


# -- day partitions ------------------------------------------------------------------------------


def days_of(rows, tz="Asia/Seoul", field="sent_at") -> list[str]:
    raw = raw_frame("live_chat", rows)
    return list(line_days(raw, field, tz))


def test_line_days_by_seoul_day():
    assert days_of([
        {"sent_at": "2026-09-08T23:59:59"},  # naive: Seoul local time
        {"sent_at": "2026-09-08T23:59:59+00:00"},  # 08:59:59 on the 9th in Seoul
        {"sent_at": "2026-09-08T14:59:59Z"},  # 23:59:59 on the 8th in Seoul
        {"sent_at": "2026-09-08T15:00:00Z"},  # midnight of the 9th in Seoul
        {"sent_at": "2026-09-09T00:30:00+09:00"},
    ]) == ["2026-09-08", "2026-09-09", "2026-09-08", "2026-09-09", "2026-09-09"]


def test_line_days_follow_the_given_timezone():
    assert days_of([{"sent_at": "2026-09-09T08:00:00+09:00"}, {"sent_at": "2026-09-08T23:30:00"}], tz="UTC") == [
        "2026-09-08", "2026-09-08",
    ]


def test_broken_line_goes_with_the_previous_line():
    assert days_of([
        {"sent_at": "2026-09-08T23:59:59"},
        "{broken",
        {"sent_at": "어제"},
        {"msg_id": "no time"},
        {"sent_at": "2026-09-09T00:00:00"},
        "[]",
        {"sent_at": "2026-09-08T23:00:00"},
    ]) == ["2026-09-08", "2026-09-08", "2026-09-08", "2026-09-08", "2026-09-09", "2026-09-09", "2026-09-08"]


def test_leading_broken_lines_go_with_the_first_readable_one():
    assert days_of(["{", {"sent_at": "nope"}, {"sent_at": "2026-09-09T00:00:00"}, {"sent_at": "2026-09-10T00:00:00"}]) == [
        "2026-09-09", "2026-09-09", "2026-09-09", "2026-09-10",
    ]


def test_line_days_with_no_readable_timestamp_names_the_column():
    with pytest.raises(DatasetError) as err:
        days_of(["{", {"sent_at": "nope"}, {"other": "2026-09-09T00:00:00"}])
    assert err.value.column == "sent_at"
    assert "sent_at" in str(err.value) and "live_chat.jsonl" in str(err.value)


def test_line_days_of_the_sample_split_into_two_days():
    raw = read_raw(SEEDS / "live_chat.jsonl", "live_chat")
    days = line_days(raw, "sent_at", "Asia/Seoul")
    assert days.index.equals(raw.index)
    assert days.value_counts().to_dict() == {"2026-09-08": 54, "2026-09-09": 29}
