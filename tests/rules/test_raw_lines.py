"""A file's lines found column-wise in its bytes (`jsonl.utf8_frame`) against Python's own reading:
decode, split at \\n, drop one \\r, skip lines that `str.strip` leaves empty."""

from __future__ import annotations

import sys
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common import gates, jsonl
from rules.common.bounded_json import utf8_lines
from rules.common.jsonl import TEXT, read_raw, utf8_frame
from rules.live_pick.config import load_config
from rules.live_pick.normalise import normalise, read_input_dir
from rules.common.environment import SAMPLE_DIR


def python_lines(data: bytes) -> list[tuple[int, str]] | None:
    """The reference: None when the bytes are not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return [(i, t.removesuffix("\r")) for i, t in enumerate(text.split("\n"), start=1) if t.strip()]


def column_lines(data: bytes) -> list[tuple[int, str]] | None:
    """utf8_frame's lines, the same whether the bytes are copied or moved in place, and whether the
    breaks are taken out of pieces of a few bytes or of the whole file at once."""
    found = []
    for scan in (jsonl._SCAN, 3):
        with patch.object(jsonl, "_SCAN", scan):
            array = np.frombuffer(data, dtype=np.uint8).copy()
            for source in (data, array):
                frame = utf8_frame("d", "f", source)
                if frame is None:
                    assert source is data or array.tobytes() == data  # refused before anything was moved
                    found.append(None)
                    continue
                assert frame["text"].dtype == TEXT and frame["not_utf8"].isna().all()
                spaced = any(line.removesuffix(b"\r") and not line.decode().strip() for line in data.split(b"\n"))
                if source is array and not spaced:  # moved in place, not copied (but past blank lines holding spaces)
                    assert utf8_lines(frame["text"]).buffers()[2].address == array.ctypes.data
                found.append(list(zip(frame["line"].tolist(), frame["text"].tolist())))
    assert all(f == found[0] for f in found)
    return found[0]


PIECES = st.sampled_from([
    "\n", "\r", "\r\n", " ", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\u00a0", "\u2028", "\u3000", "\ufeff",
    "\u200b", "{", "}", "\"a\": 1", "노래", "😀", "\x00", "x",
])
BROKEN = st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe0\x80\xaf", b"\xf4\x90\x80\x80", b"\xc0\xaf"])


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_text_reads_as_python_reads_it(text):
    data = text.encode("utf-8")
    assert column_lines(data) == python_lines(data)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PIECES.map(lambda p: p.encode("utf-8")), BROKEN), max_size=30).map(b"".join))
def test_bytes_that_are_not_utf8_are_refused_as_python_refuses_them(data):
    assert (column_lines(data) is None) == (python_lines(data) is None)
    if python_lines(data) is not None:
        assert column_lines(data) == python_lines(data)


def test_a_surrogate_encoded_in_utf8_is_not_text():
    assert column_lines(b'{"a": "\xed\xa0\x80"}\n') is None


def test_an_empty_file_has_no_lines():
    assert column_lines(b"") == [] and column_lines(b"\n \r\n") == []


def test_a_file_is_read_as_its_bytes_say_with_a_byte_order_mark_and_crlf_breaks(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "_SCAN", 5)  # many pieces, some ending inside a line
    path = tmp_path / "rows.jsonl"
    lines = ['{"a": "노래"}', '{"b": 2}', "", '{"c": "\u2028😀"}', '{"d": 4}']
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n")
    raw = read_raw(path, "rows")
    assert raw["text"].dtype == TEXT
    assert list(zip(raw["line"], raw["text"].tolist())) == [(1, lines[0]), (2, lines[1]), (4, lines[3]), (5, lines[4])]


def test_a_file_holds_its_text_in_one_arrow_buffer_not_a_string_per_line(tmp_path):
    path = tmp_path / "live_chat.jsonl"
    # a chat line's shape: ASCII keys, ids and times around a short Korean body (one Hangul
    # syllable makes a Python string two bytes a character, keys included; UTF-8 keeps ASCII at one)
    line = ('{"msg_id": "MSG-%d", "character_id": "CH-0007", "viewer_id": "V-00412", "sent_at": '
            '"2026-10-01T20:00:05+09:00", "body": "오늘 노래 불러 줘요", "topic_tags": ["노래"], '
            '"donation_amount": 0, "is_question": true, "note": null}\n')
    path.write_text("".join(line % i for i in range(2000)), encoding="utf-8")
    raw = read_raw(path, "live_chat")
    assert raw["text"].dtype == TEXT
    as_strings = sum(sys.getsizeof(t) for t in raw["text"].tolist())
    assert raw["text"].memory_usage(deep=True) < as_strings / 1.5


def test_a_broken_line_keeps_the_file_readable_line_by_line(tmp_path):
    path = tmp_path / "live_chat.jsonl"
    path.write_bytes('{"msg_id": "MSG-1", "body": "노래"}\n'.encode() + b'{"msg_id": "MSG-2", "body": "\xff"}\n')
    raw = read_raw(path, "live_chat")
    assert raw["text"].dtype == object
    assert raw["not_utf8"].notna().tolist() == [False, True]


def test_quarantine_carries_the_line_text_as_strings(tmp_path, monkeypatch):
    """Rows refused by a later gate (after the chunk they were read in) quote their own line."""
    monkeypatch.setattr(gates, "CHUNK_ROWS", 7)
    raw = read_input_dir(SAMPLE_DIR / "live_pick")
    assert raw["live_chat"]["text"].dtype == TEXT
    norm = normalise(raw, load_config())
    q = norm.quarantine
    assert len(q) and q["raw"].dtype == object
    by_line = {(f, n): t for f, n, t in zip(raw["live_chat"]["file"], raw["live_chat"]["line"], raw["live_chat"]["text"].tolist())}
    chat_q = q[q["dataset"] == "live_chat"]
    assert len(chat_q) and all(type(t) is str and t == by_line[(f, n)] for f, n, t in zip(chat_q["file"], chat_q["line"], chat_q["raw"]))
