"""The compiled per-row check agrees with jsonschema, the authority, on any JSON value."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas import row_checker, validator

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 1_000), st.floats(-5, 1_000, allow_nan=False),
    st.sampled_from([0.0, 3.0, 180.0, 2.5]), st.text(max_size=4), st.sampled_from(["노래", "2026-09-08T21:14:03", ""]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)), max_leaves=6)


VALID = {
    "live_chat": {"msg_id": "M-1", "character_id": "C", "viewer_id": "V", "sent_at": "2026-09-08T21:14:03", "body": "b",
                  "topic_tags": ["노래"], "donation_amount": 0, "is_question": True, "note": None},
    "character_sheet": {"character_id": "C", "character_name": "n", "world_topic_tags": ["노래"], "banned_tags": [],
                        "min_closeness_by_topic": {"노래": 1}, "reply_cooldown_sec": 180, "note": None},
    "viewer_relation": {"viewer_id": "V", "nickname": "n", "closeness_level": 3, "answered_topics": [], "last_replied_at": None},
    "pick": {"pick_id": "P", "msg_id": "M", "verdict": "다음 차례로 미룸", "summary": "s", "rank_in_window": 4,
             "cooldown_elapsed_sec": None, "hedge": None,
             "evidence": [{"dataset": "live_chat", "field": "body", "value": "b", "agg": None}]},
}


def mutated(data, row: dict) -> dict:
    """A valid row with a few fields replaced, added or dropped (nested ones too: an element of a
    list of objects, an entry of a map, the first element of a list)."""
    row = dict(row)
    for _ in range(data.draw(st.integers(0, 3))):
        field = data.draw(st.sampled_from(sorted(row) + ["extra"]))
        action = data.draw(st.sampled_from(["replace", "drop", "nested"]))
        inner = row.get(field)
        if action == "drop":
            row.pop(field, None)
        elif action == "nested" and isinstance(inner, list) and inner and isinstance(inner[0], dict) and inner[0]:
            item = dict(inner[0])
            item[data.draw(st.sampled_from(sorted(item)))] = data.draw(VALUES)
            row[field] = [item, *inner[1:]]
        elif action == "nested" and isinstance(inner, dict) and inner:
            row[field] = {**inner, data.draw(st.sampled_from(sorted(inner))): data.draw(VALUES)}
        elif action == "nested" and isinstance(inner, list) and inner:
            row[field] = [data.draw(VALUES), *inner[1:]]
        else:
            row[field] = data.draw(VALUES)
    return row


@settings(max_examples=400, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(VALID)))
def test_fast_check_accepts_exactly_what_jsonschema_accepts(data, name):
    """Start from a valid row, then replace, add or drop a few fields (nested ones too)."""
    row = mutated(data, VALID[name])
    assert (row_checker("live_pick", name)(row) is None) == validator("live_pick", name).is_valid(row), (name, row)


def test_a_rejection_names_the_field():
    problem = row_checker("live_pick", "live_chat")({"msg_id": "M", "character_id": "C", "viewer_id": "V", "sent_at": "x",
                                                      "body": "b", "donation_amount": -1, "is_question": True})
    assert problem is not None and problem.startswith("donation_amount:")


def _starting_rows() -> dict[tuple[str, str], dict]:
    """A valid row of every schema of every domain: the sample's first valid line of each input
    dataset, and the first verdict row `judge` writes on the sample."""
    import orjson

    from evals import domains as registry

    out = {}
    for domain in registry.names():
        spec = registry.get(domain).spec
        folder = Path(__file__).resolve().parents[2] / "seeds" / domain
        for name in spec.datasets:
            for text in (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
                try:
                    row = orjson.loads(text)
                except orjson.JSONDecodeError:
                    continue
                if validator(domain, name).is_valid(row):
                    out[domain, name] = row
                    break
        out[domain, spec.output_schema] = orjson.loads(orjson.dumps(registry.get(domain).judge_dir(folder).rows[0]))
    return out


STARTING = _starting_rows()


@settings(max_examples=600, deadline=None)
@given(data=st.data(), key=st.sampled_from(sorted(STARTING)))
def test_every_schema_s_fast_check_accepts_exactly_what_jsonschema_accepts(data, key):
    """The same, from a valid row of every input and output schema of every domain."""
    domain, name = key
    row = mutated(data, STARTING[key])
    assert (row_checker(domain, name)(row) is None) == validator(domain, name).is_valid(row), (key, row)


def test_values_with_no_json_form_are_judged_by_jsonschema():
    """A NumPy integer or a key that is not text cannot reach the compiled check; jsonschema decides."""
    import numpy as np

    row = dict(VALID["live_chat"], donation_amount=np.int64(5))
    assert (row_checker("live_pick", "live_chat")(row) is None) == validator("live_pick", "live_chat").is_valid(row)
    assert row_checker("live_pick", "live_chat")({**VALID["live_chat"], 1: 2}) is None
    assert row_checker("live_pick", "live_chat")(dict(VALID["live_chat"], donation_amount=np.int64(-1))).startswith("donation_amount:")


# -- the column-wise check: never passes a row the schema rejects ------------------------------


def _passing(domain: str, name: str, rows: list) -> list[bool]:
    import pandas as pd

    columns = row_checker(domain, name).columns
    return columns.passing(pd.DataFrame(rows, columns=list(columns.names), dtype=object).to_numpy()).tolist()


@settings(max_examples=600, deadline=None)
@given(data=st.data(), key=st.sampled_from(sorted(STARTING)))
def test_the_column_check_passes_only_rows_jsonschema_accepts(data, key):
    """Several mutated rows laid out in columns at once: a row the column check passes is valid."""
    domain, name = key
    rows = [mutated(data, STARTING[key]) for _ in range(data.draw(st.integers(1, 6)))]
    for row, passed in zip(rows, _passing(domain, name, rows)):
        assert not passed or validator(domain, name).is_valid(row), (key, row)


def test_the_column_check_passes_every_valid_row_of_a_flat_schema():
    """Valid rows pass column-wise, so only bad ones are asked one by one; the schemas it does not
    read whole (a map of numbers, lists of objects) leave every row to the row check."""
    passed = {key: _passing(*key, [row])[0] for key, row in STARTING.items()}
    assert {key for key, ok in passed.items() if not ok} == {
        ("live_pick", "character_sheet"), ("persona", "verdict"), ("live_pick", "pick"), ("retry", "verdict"),
        ("handoff", "verdict")}


def test_hard_cases_of_the_column_check():
    chat = VALID["live_chat"]
    cases = {
        "valid": (dict(chat), True),
        "an integral float is left to the row check": (dict(chat, donation_amount=5.0), False),
        "a boolean is not an integer": (dict(chat, donation_amount=True), False),
        "below the minimum": (dict(chat, donation_amount=-1), False),
        "at the maximum": (dict(chat, donation_amount=2**53 - 1), True),
        "past the maximum": (dict(chat, donation_amount=2**53), False),
        "past 64 bits": (dict(chat, donation_amount=2**64), False),
        "a required field absent": ({k: v for k, v in chat.items() if k != "body"}, False),
        "a required field null": (dict(chat, body=None), False),
        "an optional field absent": ({k: v for k, v in chat.items() if k != "note"}, True),
        "a list of texts": (dict(chat, topic_tags=["a", "b"]), True),
        "a list holding a number": (dict(chat, topic_tags=["a", 1]), False),
        "a list holding null": (dict(chat, topic_tags=[None]), False),
        "a text where a list belongs": (dict(chat, topic_tags="a"), False),
        "an unknown field": (dict(chat, extra=[1, {"x": None}]), True),
    }
    rows = [row for row, _ in cases.values()]
    for (what, (row, expected)), passed in zip(cases.items(), _passing("live_pick", "live_chat", rows)):
        assert passed is expected, what
        assert not passed or validator("live_pick", "live_chat").is_valid(row), what
    # a column of integers alone is compared in int64, the others value by value: both exact at the bounds
    for amounts in ([0, -1, 2**53 - 1, 2**53], [0, -1, 2**53 - 1, 2**53, 2.5], [0, -1, 2**53 - 1, 2**53, 2**64]):
        rows = [dict(chat, donation_amount=a) for a in amounts]
        assert _passing("live_pick", "live_chat", rows)[:4] == [True, False, True, False], amounts
    levels = [{"viewer_id": "V", "nickname": "n", "closeness_level": c, "answered_topics": []} for c in (-1, 0, 5, 6)]
    assert _passing("live_pick", "viewer_relation", levels) == [False, True, True, False]
    rooms = [{"room_id": "R", "customer_id": "C", "closed_by": code} for code in ("ai", None, "ai ", "ai\x00", "AI", 1)]
    assert _passing("handoff", "rooms", rooms) == [True, True, False, False, False, False]


def test_a_schema_with_a_keyword_the_column_check_does_not_read_is_left_to_the_row_check():
    import numpy as np

    from schemas.column_check import ColumnCheck

    flat = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    cells = np.array([["x"]], dtype=object)
    assert ColumnCheck(flat).passing(cells).tolist() == [True]
    for extra in ({"additionalProperties": False}, {"minProperties": 2}, {"allOf": [{}]}):
        assert ColumnCheck({**flat, **extra}).passing(cells).tolist() == [False]
    for spec in ({"type": "string", "pattern": "^y"}, {"type": "string", "maxLength": 0}, {"type": "integer", "enum": [1]},
                 {"type": "array", "items": {"type": "string", "minLength": 3}}):
        assert ColumnCheck({**flat, "properties": {"a": spec}}).passing(cells).tolist() == [False]
