"""Evidence conversion and output agree with the row-by-row forms they replace, value for value."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from enum import IntEnum
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rules.common import evidence
from rules.common.jsonl import write_jsonl


def reference_records(frame: pd.DataFrame) -> list[dict]:
    """The row-by-row conversion: the frame's records, `plain` on every value but lists and maps."""
    return [{k: v if isinstance(v, (list, dict)) else evidence.plain(v) for k, v in r.items()} for r in frame.to_dict("records")]


def reference_dedupe(rows: list[dict]) -> list[dict]:
    seen, out = set(), []
    for r in rows:
        key = tuple((k, repr(v)) for k, v in sorted(r.items()))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def same(a, b) -> bool:
    """Equal and of the same type (1, 1.0 and True differ); lists and maps must be the very objects."""
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return a is b
    if type(a) is not type(b):
        return False
    if a is pd.NaT:
        return b is pd.NaT
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def assert_same_records(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert list(g) == list(w)
        bad = {k: (g[k], w[k]) for k in w if not same(g[k], w[k])}
        assert not bad


CELLS = st.one_of(
    st.none(), st.just(float("nan")), st.just(pd.NA), st.booleans(), st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False), st.text(max_size=3), st.sampled_from(["노래", ""]),
    st.builds(np.int64, st.integers(-5, 5)), st.builds(np.float64, st.sampled_from([0.5, float("nan"), -0.0])),
    st.builds(np.bool_, st.booleans()), st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(0, 3), max_size=2),
    st.just(pd.Timestamp("2026-09-08 21:14:03")), st.just(np.datetime64("2026-09-08T21:14:03")),
)
"""Cells an object column may hold."""


def column(kind: str, n: int):
    """A strategy for a column of `n` cells of the given kind."""
    maybe = lambda s: st.one_of(st.none(), s)  # noqa: E731
    if kind == "int64":
        return st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="int64"))
    if kind == "uint8":
        return st.lists(st.integers(0, 255), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="uint8"))
    if kind == "float64":
        cells = st.one_of(st.floats(allow_infinity=False), st.just(float("nan")))
        return st.lists(cells, min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="float64"))
    if kind == "float32":
        return st.lists(st.floats(-1e6, 1e6, width=32), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="float32"))
    if kind == "bool":
        return st.lists(st.booleans(), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="bool"))
    if kind in ("Int64", "UInt8"):
        top = 2**63 - 1 if kind == "Int64" else 255
        low = -(2**63) if kind == "Int64" else 0
        return st.lists(maybe(st.integers(low, top)), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=kind))
    if kind == "Float64":
        return st.lists(maybe(st.floats(allow_nan=False)), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="Float64"))
    if kind == "boolean":
        return st.lists(maybe(st.booleans()), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="boolean"))
    if kind == "string":
        return st.lists(maybe(st.text(max_size=3)), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="string"))
    if kind == "datetime":
        stamps = maybe(st.datetimes(min_value=pd.Timestamp("2000-01-01").to_pydatetime(), max_value=pd.Timestamp("2100-01-01").to_pydatetime()))
        return st.lists(stamps, min_size=n, max_size=n).map(lambda v: pd.Series(pd.to_datetime(v)))
    if kind == "datetime_tz":
        return column("datetime", n).map(lambda s: s.dt.tz_localize("Asia/Seoul"))
    if kind == "category":
        return st.lists(maybe(st.sampled_from(["a", "b"])), min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype="category"))
    return st.lists(CELLS, min_size=n, max_size=n).map(lambda v: pd.Series(v, dtype=object))


KINDS = ["int64", "uint8", "float64", "float32", "bool", "Int64", "UInt8", "Float64", "boolean", "string",
         "datetime", "datetime_tz", "category", "object", "object", "object"]


@st.composite
def frames(draw) -> pd.DataFrame:
    n = draw(st.integers(0, 6))
    kinds = draw(st.lists(st.sampled_from(KINDS), max_size=8))
    columns = {f"c{i}_{kind}": draw(column(kind, n)).reset_index(drop=True) for i, kind in enumerate(kinds)}
    frame = pd.DataFrame(columns, index=pd.RangeIndex(n))
    if draw(st.booleans()) and n:  # a frame cut from a larger one, as the engines pass them
        frame = frame.iloc[draw(st.permutations(range(n)))[: draw(st.integers(1, n))]]
    return frame


@settings(max_examples=300, deadline=None)
@given(frames())
def test_plain_records_matches_the_row_by_row_conversion(frame):
    assert_same_records(evidence.plain_records(frame), reference_records(frame))


def test_plain_records_on_mixed_columns():
    tags = ["노래"]
    frame = pd.DataFrame({
        "n": pd.Series([1, 2], dtype="int64"),
        "x": [0.5, float("nan")],
        "flag": [True, False],
        "obj": pd.Series([np.int64(3), float("nan")], dtype=object),
        "tags": pd.Series([tags, None], dtype=object),
        "opt": pd.Series([7, None], dtype="Int64"),
    })
    got = evidence.plain_records(frame)
    assert got == [{"n": 1, "x": 0.5, "flag": True, "obj": 3, "tags": tags, "opt": 7},
                   {"n": 2, "x": None, "flag": False, "obj": None, "tags": None, "opt": None}]
    assert type(got[0]["obj"]) is int and got[0]["tags"] is tags
    assert_same_records(got, reference_records(frame))


def test_plain_records_without_columns_is_empty_like_the_records():
    assert evidence.plain_records(pd.DataFrame(index=range(2))) == [] == reference_records(pd.DataFrame(index=range(2)))


EVIDENCE_VALUES = st.one_of(
    st.sampled_from([1, 1.0, True, 0, 0.0, -0.0, False, "1", "True", None, float("nan")]),
    st.lists(st.sampled_from([1, 1.0, True]), max_size=2), st.dictionaries(st.sampled_from("ab"), st.sampled_from([1, True]), max_size=2),
)


@st.composite
def evidence_rows(draw) -> dict:
    names = st.sampled_from(["body", "n", "n", 1, 1.0, True, None, float("nan"), ("x",)]).map(lambda v: list(v) if isinstance(v, tuple) else v)
    items = [(draw(st.sampled_from(["dataset", "source"])), draw(st.sampled_from(["live_chat", "viewer_relation", 1]))),
             ("field", draw(names)), ("value", draw(EVIDENCE_VALUES))]
    if draw(st.booleans()):
        items.append(("agg", draw(st.sampled_from(["count", None, 0, False]))))
    return dict(draw(st.permutations(items)))


@settings(max_examples=300, deadline=None)
@given(st.lists(evidence_rows(), max_size=8))
def test_dedupe_matches_the_repr_key(rows):
    got, want = evidence.dedupe(rows), reference_dedupe(rows)
    assert len(got) == len(want) and all(g is w for g, w in zip(got, want))


def test_dedupe_keeps_one_and_true_apart():
    rows = [evidence.row("dataset", "d", "f", v) for v in (1, 1.0, True, 1)] + [{"value": 1, "field": "f", "dataset": "d"}]
    assert [r["value"] for r in evidence.dedupe(rows)] == [1, 1.0, True]


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
              st.text(), st.sampled_from(["노래", "줄\n바꿈", "\u2028", '"\\'])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=8,
)


def compact(row) -> bytes:
    return json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def holds_float(value) -> bool:
    """Whether a float stands anywhere in a value (keys are text)."""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(map(holds_float, value.values()))
    return isinstance(value, list) and any(map(holds_float, value))


def same_json(a, b) -> bool:
    """Equal values of the same kinds at every depth (1, 1.0 and True told apart; NaN equal to NaN)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same_json, a, b))
    return a == b


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=4), max_size=12), batch=st.integers(1, 5))
@example(rows=[{"": 6.103515625e-05}], batch=1)  # json.dumps writes 6.103515625e-05, orjson 0.00006103515625
def test_write_jsonl_writes_each_row_as_compact_json_that_reads_back_as_the_row(tmp_path_factory, rows, batch):
    path = tmp_path_factory.mktemp("out") / "v.jsonl"
    with pytest.MonkeyPatch.context() as mp:  # small batches: rows fall on both sides of a batch's end
        mp.setattr("rules.common.jsonl.WRITE_BATCH", batch)
        assert write_jsonl(path, iter(rows)) == len(rows)
    lines = path.read_bytes().split(b"\n")
    assert lines.pop() == b"" and len(lines) == len(rows)
    for line, row in zip(lines, rows):
        assert same_json(json.loads(line), row)
        if not holds_float(row):  # orjson spells some floats otherwise (1e-05 as 0.00001); the rest is json.dumps' compact form
            assert line == compact(row)


LENIENT_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=3)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3),
                            st.dictionaries(st.integers(0, 3), inner, max_size=2)),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(LENIENT_VALUES, max_size=12), batch=st.integers(1, 5))
def test_compact_texts_read_back_as_json_dumps_text_does(values, batch):
    """NaN and ±Infinity at any depth, integers past 64 bits and integer keys included."""
    from rules.common.jsonl import compact_texts, parse_json

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("rules.common.jsonl.WRITE_BATCH", batch)
        texts = compact_texts(values)
    assert len(texts) == len(values)
    for value, text in zip(values, texts):
        if value is None:
            assert text is None
            continue
        expected = json.loads(json.dumps(value, ensure_ascii=False))
        assert repr(parse_json(text)) == repr(expected) and same_json(parse_json(text), expected)


def test_write_jsonl_writes_what_orjson_refuses_in_the_same_compact_form(tmp_path):
    rows = [{"big": 2**70, "k": "값"}, {"ok": [1, {"x": None}]}, {1: "int key"}, {"f": np.float64(0.5)}]
    path = tmp_path / "v.jsonl"
    assert write_jsonl(path, rows) == 4
    assert path.read_bytes() == b"".join(compact(r) + b"\n" for r in rows)


NON_FINITE = [float("nan"), float("inf"), -float("inf"), np.float64("nan")]


@pytest.mark.parametrize("row", [{"x": v} for v in NON_FINITE] + [{"x": "\ud800"}, {"\ud800": 1}, {"e": [{"v": [0, float("nan")]}]}])
def test_write_jsonl_rejects_what_is_not_strict_json_and_keeps_the_old_file(tmp_path, row):
    path = tmp_path / "v.jsonl"
    path.write_text("old\n")
    with pytest.raises((ValueError, UnicodeEncodeError)):
        write_jsonl(path, [{"ok": 1}] * 5 + [row])
    assert path.read_text() == "old\n"


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=4), min_size=1, max_size=8),
       bad=st.sampled_from(NON_FINITE[:3]), where=st.integers(0, 7), depth=st.integers(0, 3))
def test_the_quick_screen_never_misses_a_non_finite_number(rows, bad, where, depth):
    """The marshal-bytes screen may say yes wrongly (the exact walk then decides), never no wrongly."""
    from rules.common.jsonl import may_hold_non_finite

    value = bad
    for _ in range(depth):
        value = [value] if depth % 2 else {"v": value}
    rows[where % len(rows)]["bad"] = value
    assert may_hold_non_finite(rows)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=4), max_size=8))
def test_finite_rows_pass_the_screen_or_the_walk(rows):
    from rules.common.jsonl import may_hold_non_finite, refuse_non_finite

    if may_hold_non_finite(rows):
        refuse_non_finite(rows)  # raises only on a non-finite number, which these rows do not hold


@pytest.mark.parametrize("enabled", [True, False])
def test_cycle_collection_is_paused_for_the_block_and_restored_after(enabled):
    import gc

    from rules.common.collector import cycle_collection_paused

    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.raises(KeyError):
            with cycle_collection_paused():
                assert not gc.isenabled()
                raise KeyError("a builder fails")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_a_function_held_keeps_its_signature_and_kind_and_restores_the_collector():
    import gc
    import inspect

    from rules.common.collector import collector_held

    @collector_held
    def steps(context, warehouse, n=2):
        for i in range(n):
            yield i, gc.isenabled()

    @collector_held
    def step(context, *, fail=False):
        if fail:
            raise ValueError("a step fails")
        return gc.isenabled()

    gc.enable()
    try:
        assert inspect.isgeneratorfunction(steps) and not inspect.isgeneratorfunction(step)
        assert list(inspect.signature(steps).parameters) == ["context", "warehouse", "n"]
        assert list(inspect.signature(step).parameters) == ["context", "fail"]
        running = steps(None, None)
        assert next(running) == (0, False)
        assert not gc.isenabled()  # held while the generator is suspended inside
        assert list(running) == [(1, False)] and gc.isenabled()
        abandoned = steps(None, None)
        next(abandoned)
        abandoned.close()
        assert gc.isenabled()
        assert step(None) is False and gc.isenabled()
        with pytest.raises(ValueError):
            step(None, fail=True)
        assert gc.isenabled()
    finally:
        gc.enable()


# -- a frame's records, column by column -----------------------------------------------------------


class _Code(IntEnum):
    ONE = 1


_CELLS = [None, np.nan, pd.NA, 0, 1, -(2**62), 1.5, -0.0, True, False, "", "한글", [1, "a"], {"k": 1}, np.int64(7),
          np.float64(2.5), np.bool_(True), pd.Timestamp("2026-09-08T21:14:03", tz="UTC"), pd.NaT, Fraction(1, 3),
          Decimal("1.50"), _Code.ONE, np.str_("np"), np.datetime64("2026-09-08T01:02:03"), np.timedelta64(5, "s"), (1, 2)]
_COLUMNS = {
    "int64": lambda n, draw: pd.Series(draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n)), dtype="int64"),
    "float64": lambda n, draw: pd.Series(draw(st.lists(st.floats(), min_size=n, max_size=n)), dtype="float64"),
    "bool": lambda n, draw: pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool),
    "object": lambda n, draw: pd.Series(draw(st.lists(st.sampled_from(_CELLS), min_size=n, max_size=n)), dtype=object),
    "Int64": lambda n, draw: pd.Series(draw(st.lists(st.one_of(st.none(), st.integers(-100, 100)), min_size=n, max_size=n)), dtype="Int64"),
    "boolean": lambda n, draw: pd.Series(draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n)), dtype="boolean"),
    "string": lambda n, draw: pd.Series(draw(st.lists(st.one_of(st.none(), st.text(max_size=3)), min_size=n, max_size=n)),
                                        dtype="string[pyarrow]"),
    "datetime": lambda n, draw: pd.Series(pd.to_datetime(draw(st.lists(st.sampled_from(["2026-09-08T01:02:03Z", None]),
                                                                         min_size=n, max_size=n)), utc=True)),
    "category": lambda n, draw: pd.Series(draw(st.lists(st.sampled_from(["a", "b", None]), min_size=n, max_size=n)), dtype="category"),
}


@st.composite
def _frames(draw):
    n = draw(st.integers(0, 5))
    kinds = draw(st.lists(st.sampled_from(sorted(_COLUMNS)), min_size=1, max_size=6))
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=len(kinds), max_size=len(kinds)))
    frame = pd.concat([_COLUMNS[k](n, draw).rename(name) for k, name in zip(kinds, names)], axis=1)
    return frame


@settings(max_examples=300, deadline=None)
@given(_frames())
def test_a_frames_records_made_column_by_column_are_its_to_dict_records(frame):
    """The same dicts as pandas' `to_dict("records")`: keys (a repeated column name keeps its last
    value), values and their types (NaN, NA, NaT, NumPy scalars inside object cells boxed or not)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pandas warns of repeated column names
        want = frame.to_dict("records")
    assert repr(evidence.frame_records(frame)) == repr(want)


@pytest.mark.parametrize("domain", ["persona", "live_pick", "retry", "handoff"])
def test_the_normalised_sample_tables_read_as_their_to_dict_records(domain):
    from evals import domains
    from rules.common.environment import SAMPLE_DIR

    _, norm, _ = domains.get(domain).spec.load(SAMPLE_DIR / domain)
    for name, table in [*norm.tables.items(), ("quarantine", norm.quarantine)]:
        assert repr(evidence.frame_records(table)) == repr(table.to_dict("records")), name
