"""The Great Expectations suite: a second look that catches what slipped past the gates."""

from __future__ import annotations

import pandas as pd

from assets.common.quality import quarantine_failures, run_suite
from rules.live_pick.expectations import EXPECTATIONS


def _chat(**overrides) -> pd.DataFrame:
    base = {
        "file": ["f", "f", "f"], "line": [1, 2, 3], "msg_id": ["M-1", "M-2", "M-3"], "character_id": ["C"] * 3,
        "viewer_id": ["V"] * 3, "sent_at": ["2026-09-08T21:00:00"] * 3, "sent_at_ns": [1, 2, 3], "body": ["b"] * 3,
        "donation_amount": [0, 10, 20], "is_question": [True, False, True],
    }
    base.update(overrides)
    return pd.DataFrame(base)


def test_a_clean_table_passes_every_expectation():
    outcomes = run_suite("live_pick.live_chat", _chat(), EXPECTATIONS["live_chat"])
    assert outcomes and all(o.success for o in outcomes)


def test_rows_that_slipped_past_the_gates_are_quarantined_with_the_expectation():
    frame = _chat(donation_amount=[0, -5, 20], msg_id=["M-1", "M-1", "M-3"])
    outcomes = run_suite("live_pick.live_chat", frame, EXPECTATIONS["live_chat"])
    failed = {o.label for o in outcomes if not o.success}
    assert failed == {"expect_column_values_to_be_between(donation_amount)", "expect_column_values_to_be_unique(msg_id)"}
    kept, q = quarantine_failures("live_chat", frame, outcomes, "msg_id")
    assert list(kept["line"]) == [3]
    assert list(q["line"]) == [1, 2] and set(q["reason_code"]) == {"expectation"}
    assert len(kept) + len(q) == len(frame)


def test_rows_of_a_frame_indexed_by_labels_are_quarantined_by_their_labels():
    frame = _chat(donation_amount=[0, -5, 20], msg_id=["M-1", "M-1", "M-3"])
    frame.index = [40, 7, 12]  # what is left of a table after rows were dropped
    outcomes = run_suite("live_pick.live_chat", frame, EXPECTATIONS["live_chat"])
    kept, q = quarantine_failures("live_chat", frame, outcomes, "msg_id")
    assert list(kept["line"]) == [3]
    assert list(q["line"]) == [1, 2]
