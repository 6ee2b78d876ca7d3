"""The pieces of a day taken in parts: a file read in blocks gives `read_raw`'s rows and errors, the
lines of one day found across blocks are `line_days`' lines, and a check of a day in parts words its
result as one check of the whole day would."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common import raw_chunks
from rules.common.check_parts import Repeats, merged
from rules.common.checks import Findings, filled_findings
from rules.common.days import DaySplit, line_days
from rules.common.jsonl import DatasetError, read_raw
from rules.common.units import BUCKETS, buckets_of

LINE = st.one_of(
    st.builds(lambda d, h, t: '{"id": "%s", "t": "2026-09-%02dT%02d:00:00+09:00", "x": "%s"}' % (t, d, h, t),
              st.integers(1, 3), st.integers(0, 23), st.text("가나다abc \"\\", max_size=6).map(lambda s: s.replace('"', "").replace("\\", ""))),
    st.sampled_from(["", "   ", "{broken", '{"id": "z", "t": "yesterday"}', "[1, 2]"]),
)


def _frames_equal(got: list[pd.DataFrame], want: pd.DataFrame) -> None:
    joined = pd.concat(got, ignore_index=True) if got else want.iloc[:0]
    assert joined["line"].tolist() == want["line"].tolist()
    assert [str(t) for t in joined["text"]] == [str(t) for t in want["text"]]
    assert joined["not_utf8"].tolist() == want["not_utf8"].tolist()


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(LINE, max_size=40), block=st.integers(8, 200), crlf=st.booleans(), bom=st.booleans())
def test_a_file_read_in_blocks_gives_the_rows_of_the_whole_file(tmp_path_factory, lines, block, crlf, bom):
    path = tmp_path_factory.mktemp("raw") / "d.jsonl"
    data = ("\r\n" if crlf else "\n").join(lines).encode()
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    _frames_equal(list(raw_chunks.read_raw_chunks(path, "d", block_bytes=block)), read_raw(path, "d"))


def test_a_block_that_is_not_utf8_is_read_line_by_line_and_the_rest_stays_in_arrow(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "\xff"}\n' + b'{"id": "\xea\xb0\x80"}\n' * 50)
    got = list(raw_chunks.read_raw_chunks(path, "d", block_bytes=64))
    _frames_equal(got, read_raw(path, "d"))
    assert got[0]["not_utf8"].notna().any() and isinstance(got[-1]["text"].dtype, pd.ArrowDtype)


def test_a_file_in_another_encoding_or_without_a_required_column_is_refused_after_its_last_block(tmp_path):
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"id": "café"}\n'.encode("latin-1") * 20)
    with pytest.raises(DatasetError, match="not UTF-8 text"):
        list(raw_chunks.read_raw_chunks(latin, "d", block_bytes=32))
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "a"}\n' * 30)
    with pytest.raises(DatasetError, match="required column is missing") as raised:
        list(raw_chunks.read_raw_chunks(plain, "d", ("id", "body"), block_bytes=32))
    assert raised.value.column == "body"
    with pytest.raises(DatasetError, match="file not found"):
        list(raw_chunks.read_raw_chunks(tmp_path / "none.jsonl", "d"))


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=40), block=st.integers(1, 12), day=st.integers(1, 3))
def test_the_lines_of_a_day_found_block_by_block_are_those_of_the_whole_file(tmp_path_factory, lines, block, day):
    path = tmp_path_factory.mktemp("raw") / "d.jsonl"
    path.write_text("\n".join(lines))
    raw = read_raw(path, "d")
    name = f"2026-09-{day:02d}"
    try:
        want = raw[line_days(raw, "t", "Asia/Seoul") == name] if len(raw) else raw
    except DatasetError:
        want = None
    split, got = DaySplit("t", "Asia/Seoul"), []
    try:
        for start in range(0, len(raw), block):
            got.append(split.lines_of(raw.iloc[start:start + block].reset_index(drop=True), name))
        split.finish()
    except DatasetError:
        assert want is None
        return
    assert want is not None
    assert pd.concat(got, ignore_index=True)["line"].tolist() == want["line"].tolist() if got else want.empty


def test_buckets_are_the_same_for_the_same_unit_in_any_process_and_spread_over_all_buckets():
    keys = [f"S-{i}" for i in range(20_000)]
    first = buckets_of(keys)
    assert (first == buckets_of(list(keys))).all() and first.min() >= 0 and first.max() < BUCKETS
    assert len(set(first.tolist())) > BUCKETS * 0.95
    assert (buckets_of(["C-1", "C-1"], [3, 3])[0] == buckets_of(["C-1"], [3])[0])
    assert buckets_of(["C-1"], [3])[0] != buckets_of(["C-1"], [4])[0] or buckets_of(["C-1"], [5])[0] != buckets_of(["C-1"], [3])[0]


def _check(rows: list[dict]):
    """A check of the kind the domains write: required fields filled, the id column unique across the rows."""
    pairs = [(r["msg_id"], r) for r in rows]
    return filled_findings(pairs, "pick_id", lambda row: "empty: summary" if not row.get("summary") else None,
                           REPEAT.reason).result("2.required_filled", "filled")


REPEAT = Repeats("2.required_filled", "pick_id", lambda pick_id, _n: f"pick_id {pick_id} is not unique")


def test_a_check_of_a_day_in_parts_fails_the_rows_and_words_the_detail_one_check_of_the_day_would():
    rows = [{"msg_id": f"M-{i}", "pick_id": f"P-{i % 7 if i in (3, 10) else i}", "summary": "" if i in (1, 12) else "s"}
            for i in range(14)]
    whole = _check(rows)
    parts = [rows[:5], rows[5:9], rows[9:]]
    # what the database finds across the parts: the pick_id stated twice (rows 3 and 10)
    repeated = {REPEAT.check: {"M-3": REPEAT.reason("P-3", 2), "M-10": REPEAT.reason("P-3", 2)}}
    got = merged([[_check(p)] for p in parts], repeated)[0]
    assert not got.passed and not whole.passed
    assert sorted(got.failing_ids) == sorted(whole.failing_ids) == ["M-1", "M-10", "M-12", "M-3"]
    assert sorted(got.detail.split("; ")) == sorted(whole.detail.split("; "))  # the same reasons, parts in turn

    many = [{"msg_id": f"M-{i}", "pick_id": f"P-{i}", "summary": ""} for i in range(12)]
    got = merged([[_check(many[:6])], [_check(many[6:])]])[0]
    assert got.failing_ids == _check(many).failing_ids and got.detail == _check(many).detail  # first five, then "(+7 more)"


def test_a_check_passes_over_a_day_in_parts_only_when_it_passes_in_every_part_and_across_them():
    ok = Findings().result("x", "t")
    bad = Findings()
    bad.fail("M-9", "wrong")
    assert merged([[ok], [ok]])[0].passed
    assert not merged([[ok], [bad.result("x", "t")]])[0].passed
    assert not merged([[ok], [ok]], {"x": {"M-1": "stated twice"}})[0].passed
