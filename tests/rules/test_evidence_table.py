"""Evidence slots made into each row's list of dicts, and into each row's JSON text, agree with the
row-by-row reading, and an encoded column is written as the values it stands for."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common import evidence
from rules.common.evidence_table import Slot, lists, texts
from rules.common.json_columns import Encoded, json_texts, write_jsonl_columns
from rules.common.jsonl import write_jsonl
from rules.common.output import output_frame
from tests.rules.test_json_columns import SCALARS, TRICKY_TEXT, VALUES


def reference(slots: list[Slot], n: int) -> list[list[dict]]:
    """Row by row: each slot the row cites, in order, as `evidence.row` makes it."""
    return [[evidence.row(s.key, s.table, s.field, s.values[i], s.agg) for s in slots if s.where is None or s.where[i]]
            for i in range(n)]


@st.composite
def slot_sets(draw, values=VALUES):
    n = draw(st.integers(0, 8))
    slots = []
    for _ in range(draw(st.integers(0, 5))):
        where = draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=n, max_size=n).map(np.array)))
        slots.append(Slot(draw(st.sampled_from(["dataset", "source"])), draw(TRICKY_TEXT), draw(TRICKY_TEXT),
                          draw(st.lists(values, min_size=n, max_size=n)), where,
                          draw(st.one_of(st.none(), st.sampled_from(["count", "not_in", 'tag:"x"']), TRICKY_TEXT))))
    return slots, n


@settings(max_examples=300, deadline=None)
@given(case=slot_sets())
def test_lists_are_the_row_by_row_evidence(case):
    slots, n = case
    got = lists(slots, n)
    want = reference(slots, n)
    assert got == want
    assert [[list(e) for e in row] for row in got] == [[list(e) for e in row] for row in want]  # key order


@settings(max_examples=300, deadline=None)
@given(case=slot_sets())
def test_texts_are_orjson_s_of_the_lists_or_none_where_orjson_refuses_a_value(case):
    slots, n = case
    rows = reference(slots, n)
    try:
        want = [orjson.dumps(r) for r in rows]
    except orjson.JSONEncodeError:
        want = None
    encoded = texts(slots, n)
    if want is None:
        assert encoded is None
    else:
        assert encoded is not None and encoded.texts.to_pylist() == want
        assert list(encoded) == rows


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), [1.0, -float("inf")]])
def test_a_cited_non_finite_number_fails_as_writing_it_would(bad):
    slots = [Slot("dataset", "t", "a", ["x", "y"]), Slot("dataset", "t", "v", [1, bad])]
    with pytest.raises(ValueError, match="JSON compliant"):
        texts(slots, 2)
    uncited = [Slot("dataset", "t", "v", [1, bad], np.array([True, False]))]
    assert texts(uncited, 2).texts.to_pylist() == [b'[{"dataset":"t","field":"v","value":1}]', b"[]"]


@settings(max_examples=200, deadline=None)
@given(case=slot_sets(values=SCALARS), others=st.lists(SCALARS, min_size=8, max_size=8), cut=st.integers(0, 8),
       slice_rows=st.integers(1, 3))
def test_an_encoded_column_is_written_as_its_values_would_be(tmp_path_factory, case, others, cut, slice_rows):
    """Beside another column, whose integers past 64 bits make their rows written the stdlib's way;
    in parts and slices, so an encoded column is cut on both sides."""
    slots, n = case
    encoded = texts(slots, n)
    if encoded is None:
        return
    rows = reference(slots, n)
    folder = tmp_path_factory.mktemp("out")
    cut = min(cut, n)
    parts = [{"other": others[:cut], "evidence": encoded[:cut]}, {"other": others[cut:n], "evidence": encoded[cut:]}]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("rules.common.json_columns.SLICE_ROWS", slice_rows)
        write_jsonl_columns(folder / "c.jsonl", parts)
    write_jsonl(folder / "r.jsonl", [{"other": o, "evidence": e} for o, e in zip(others, rows)])
    assert (folder / "c.jsonl").read_bytes() == (folder / "r.jsonl").read_bytes()


def test_an_encoded_column_in_a_frame_reads_back_as_itself():
    encoded = Encoded(json_texts([[{"a": 1}], [], ["값", None]])[0])
    frame = output_frame(pd.DataFrame({"id": ["x", "y", "z"]}), ["id", "evidence"], evidence=encoded)
    back = Encoded.of(frame["evidence"])
    assert back.texts.to_pylist() == encoded.texts.to_pylist()
    assert Encoded.of(frame["id"]) is None
    assert evidence.plain_columns(frame)["evidence"].texts.equals(encoded.texts)
    assert evidence.rows_of(evidence.plain_columns(frame)) == [
        {"id": "x", "evidence": [{"a": 1}]}, {"id": "y", "evidence": []}, {"id": "z", "evidence": ["값", None]}]
    assert encoded[1] == [] and list(encoded[1:]) == [[], ["값", None]] and len(encoded[3:]) == 0
    with pytest.raises(ValueError):
        encoded[::2]
