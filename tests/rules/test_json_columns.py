"""JSON Lines from columns: byte for byte what `write_jsonl` writes from the same rows, as strict."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.common.evidence import rows_of
from rules.common.json_columns import json_texts, object_texts, split_array, split_marked, write_jsonl_columns
from rules.common.jsonl import write_jsonl

TRICKY_TEXT = st.one_of(
    st.text(max_size=6),
    st.text(alphabet=',"\\[]{}:n0 값\n\x00\x1f\u2028\U0010ffff', max_size=8),  # what the cutting reads, and what orjson escapes
    st.sampled_from(["", ",", '"', "\\", '\\"', '\\\\"', '",', '\\",', "a\\\\", "null", "노래, 춤", "😀,😀"]),
)
SCALARS = st.one_of(
    st.none(), st.booleans(), TRICKY_TEXT,
    st.integers(-(2**63), 2**63 - 1), st.integers(2**63, 2**64 - 1), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, -0.0, 1e16, 5e-324, 1.7976931348623157e308]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TRICKY_TEXT, inner, max_size=3),
                            st.dictionaries(st.integers(0, 3), inner, max_size=2)),
    max_leaves=6,
)


def column_strategy(rows: int):
    """A column of one kind, as the engines' columns are, or of mixed kinds."""
    return st.one_of(
        st.lists(st.one_of(st.none(), TRICKY_TEXT), min_size=rows, max_size=rows),
        st.lists(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)), min_size=rows, max_size=rows),
        st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), min_size=rows, max_size=rows),
        st.lists(SCALARS, min_size=rows, max_size=rows),
        st.lists(VALUES, min_size=rows, max_size=rows),
    )


@st.composite
def column_parts(draw):
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        rows = draw(st.integers(0, 6))
        names = draw(st.lists(st.text(alphabet='ab"\\,값', min_size=1, max_size=3), min_size=1, max_size=4, unique=True))
        parts.append({name: draw(column_strategy(rows)) for name in names})
    return parts


@settings(max_examples=400, deadline=None)
@given(parts=column_parts(), slice_rows=st.integers(1, 4))
def test_the_file_is_write_jsonl_s_byte_for_byte(tmp_path_factory, parts, slice_rows):
    folder = tmp_path_factory.mktemp("out")
    with pytest.MonkeyPatch.context() as mp:  # small slices: rows fall on both sides of a slice's end
        mp.setattr("rules.common.json_columns.SLICE_ROWS", slice_rows)
        n = write_jsonl_columns(folder / "columns.jsonl", iter(parts))
    rows = [row for part in parts for row in rows_of(part)]
    assert n == write_jsonl(folder / "rows.jsonl", rows) == len(rows)
    assert (folder / "columns.jsonl").read_bytes() == (folder / "rows.jsonl").read_bytes()


@settings(max_examples=400, deadline=None)
@given(values=st.lists(VALUES, max_size=8))
def test_each_value_s_text_is_orjson_s_and_what_orjson_refuses_is_named(values):
    texts, refused = json_texts(values)
    assert len(texts) == len(values)
    for i, (value, text) in enumerate(zip(values, texts.to_pylist())):
        try:
            expected = orjson.dumps(value)
        except orjson.JSONEncodeError:
            assert i in refused
        else:
            assert i not in refused and text == expected


@settings(max_examples=300, deadline=None)
@given(columns=st.integers(0, 5).flatmap(lambda rows: st.dictionaries(st.text(alphabet='ab"\\,값', min_size=1, max_size=3),
                                                                     column_strategy(rows), min_size=1, max_size=4)),
       constants=st.dictionaries(st.text(alphabet="xy값", min_size=1, max_size=2),
                                 st.one_of(st.none(), st.booleans(), TRICKY_TEXT, st.integers(-(2**63), 2**63 - 1)), max_size=2))
def test_objects_of_columns_are_orjson_s_dicts_or_none_where_orjson_refuses_a_value(columns, constants):
    constants = {k: v for k, v in constants.items() if k not in columns}
    rows = [{**dict(zip(columns, cells)), **constants} for cells in zip(*columns.values())]
    try:
        want = [orjson.dumps(r) for r in rows]
    except orjson.JSONEncodeError:
        want = None
    got = object_texts(columns, constants)
    if got is None:  # a value orjson refuses in some column
        assert want is None and any(json_texts(values)[1] for values in columns.values())
    else:
        assert got.texts.to_pylist() == want


@pytest.mark.parametrize("values", [
    ['a"', ",", '\\",\\', "\\\\", '\\\\",'],  # a quote after an even run of backslashes ends the string
    [",,,", None, 1, "x"],
    ["노래, 춤", 2.5, True, ""],
])
def test_an_array_is_cut_at_its_own_commas_alone(values):
    assert split_array(orjson.dumps(values), len(values)).to_pylist() == [orjson.dumps(v) for v in values]


def test_a_column_of_texts_holding_commas_and_escapes_is_cut_right():
    values = ['say "hi", then go', "back\\slash,", '\\"', "\n,\t", None] * 3
    texts, refused = json_texts(values)
    assert texts.to_pylist() == [orjson.dumps(v) for v in values] and refused == []


def test_values_of_any_kind_are_cut_at_the_marks_between_them():
    values = [[{"dataset": "d", "value": '",'}], None, {"a": [1, 2.5]}, [], "x", [["\U0010ffff"]], {"k": "\U0010ffff,"}]
    assert split_marked(values).to_pylist() == [orjson.dumps(v) for v in values]


def test_a_value_holding_the_mark_between_commas_is_written_a_value_at_a_time():
    values = [[1, "\U0010ffff", 2], [3]]
    assert split_marked(values) is None
    assert json_texts(values) == (json_texts(values)[0], []) and json_texts(values)[0].to_pylist() == [orjson.dumps(v) for v in values]


def test_numbers_keep_their_spelling():
    values = [0.0, -0.0, 1.0, 1e16, 1e-7, None, 2**63 - 1, -(2**63), True, False, 36]
    assert json_texts(values)[0].to_pylist() == [orjson.dumps(v) for v in values]


def test_an_integer_past_64_bits_writes_its_row_as_write_jsonl_does(tmp_path):
    columns = {"big": [1, 2**70, 3], "f": [0.5, 1e-7, 2.0], "t": ["a", "값", None]}
    write_jsonl_columns(tmp_path / "c.jsonl", [columns])
    write_jsonl(tmp_path / "r.jsonl", rows_of(columns))
    assert (tmp_path / "c.jsonl").read_bytes() == (tmp_path / "r.jsonl").read_bytes()
    assert b'"big":1180591620717411303424' in (tmp_path / "c.jsonl").read_bytes()


NON_FINITE = [float("nan"), float("inf"), -float("inf"), np.float64("nan")]


def test_orjson_still_writes_nan_and_infinity_as_null():
    """The screen looks only at values whose text holds null: it rests on this."""
    assert orjson.dumps([float("nan"), float("inf"), -float("inf"), {"v": [float("nan")]}]) == b'[null,null,null,{"v":[null]}]'


@settings(max_examples=300, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=6), bad=st.sampled_from(NON_FINITE[:3]), where=st.integers(0, 5),
       depth=st.integers(0, 3))
def test_a_non_finite_number_anywhere_in_a_column_fails(values, bad, where, depth):
    value = bad
    for level in range(depth):
        value = [value, "x"] if level % 2 else {"v": value}
    values[where % len(values)] = value
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_texts(values)


@pytest.mark.parametrize("column", [[0.5, v, None] for v in NON_FINITE] + [
    [None, float("nan")],  # None and NaN together: told apart, the NaN refused
    [1, 2**2000, float("inf")],  # an integer past the float range beside a float
    [[{"v": [0, float("nan")]}], []],
    [{"x": float("-inf")}],
])
def test_nan_and_infinity_fail_the_write_and_keep_the_old_file(tmp_path, column):
    path = tmp_path / "v.jsonl"
    path.write_text("old\n")
    with pytest.raises(ValueError, match="not JSON compliant"):
        write_jsonl_columns(path, [{"ok": [1] * len(column), "x": column}])
    assert path.read_text() == "old\n"


@pytest.mark.parametrize("column", [["ok", "\ud800"], [{"\ud800": 1}], [["a", "\udfff"]]])
def test_text_that_is_not_utf8_fails_the_write_and_keeps_the_old_file(tmp_path, column):
    path = tmp_path / "v.jsonl"
    path.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_jsonl_columns(path, [{"x": column}])
    assert path.read_text() == "old\n"


def test_a_column_name_that_is_not_text_writes_the_rows_as_write_jsonl_does(tmp_path):
    columns = {1: ["a", "b"], "x": [0.5, None]}
    write_jsonl_columns(tmp_path / "c.jsonl", [columns])
    write_jsonl(tmp_path / "r.jsonl", rows_of(columns))
    assert (tmp_path / "c.jsonl").read_bytes() == (tmp_path / "r.jsonl").read_bytes() == b'{"1":"a","x":0.5}\n{"1":"b","x":null}\n'


def test_a_column_of_none_and_an_empty_part():
    assert json_texts([None, None])[0].to_pylist() == [b"null", b"null"]
    assert json_texts([])[0].to_pylist() == []


def test_parts_without_rows_write_nothing(tmp_path):
    assert write_jsonl_columns(tmp_path / "v.jsonl", [{}, {"a": []}, {"a": [1], "b": ["x"]}]) == 1
    assert (tmp_path / "v.jsonl").read_bytes() == b'{"a":1,"b":"x"}\n'
