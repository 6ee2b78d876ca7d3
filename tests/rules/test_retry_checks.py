"""Seed 002's automatic checks, the output schema and the re-computation, on the sample data.

The engine's own output passes every check; each test then injects one fault into a deep copy
of those rows and expects exactly the named checks to fail, naming the faulty event (and no
other).
"""

from __future__ import annotations

import copy
import math
from fractions import Fraction
from types import SimpleNamespace

import pytest

from rules.retry import verdicts as V
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.retry.checks import CHECKS, _Context, run_checks
from tests.rules.faults import Fault, Faults
from tests.rules.helpers import judged_sample

CHECK_IDS = ["schema", "1.verdict_enum", "2.required_fields", "3.surface_key", "4.baseline", "5.max_overlap",
             "6.ranges", "7.evidence_fields", "8.evidence_values", "9.exact_retry", "10.reworded_retry",
             "11.surface_hop", "12.polite", "recompute"]
F = Faults("event_id", run_checks)


@pytest.fixture(scope="module")
def sample():
    return judged_sample("retry")


def test_checks_run_in_seed_order_with_their_ids(sample):
    _, rows, _ = sample
    assert list(F.results(sample, rows)) == CHECK_IDS
    assert len(CHECKS) == len(CHECK_IDS)


def test_every_check_passes_on_the_engine_output(sample):
    _, rows, _ = sample
    assert F.failures(sample, rows) == {}


def test_a_file_rounded_to_two_decimals_as_the_seed_prints_it_passes_too(sample):
    _, rows, _ = sample
    rounded = copy.deepcopy(rows)
    for r in rounded:
        r["surface_baseline"] = round(r["surface_baseline"], 2)
        r["max_overlap"] = None if r["max_overlap"] is None else round(r["max_overlap"], 2)
    assert F.failures(sample, rounded) == {}


def test_the_sample_has_the_rows_the_faults_rely_on(sample):
    _, rows, _ = sample
    r = {k: F.row_of(rows, k) for k in ("EV-0101", "EV-0202", "EV-0402", "EV-0602", "EV-1203", "EV-1302", "EV-1602")}
    assert r["EV-0101"]["max_overlap"] is None and r["EV-0101"]["verdict"] == V.ONE_SHOT
    assert r["EV-0202"]["verdict"] == V.REWORDED_RETRY
    assert (r["EV-0402"]["verdict"], r["EV-0402"]["matched_event_id"]) == (V.EXACT_RETRY, "EV-0401")
    assert (r["EV-0602"]["verdict"], r["EV-0602"]["matched_event_id"]) == (V.ONE_SHOT, "EV-0601")
    assert r["EV-1203"]["verdict"] == V.ONE_SHOT  # three surfaces, nothing shared
    assert r["EV-1302"]["verdict"] == V.ONE_SHOT  # shares a word over two surfaces
    assert r["EV-1602"]["evidence"][-1]["field"] == "default_baseline"


# -- injected faults ---------------------------------------------------------------------------


def _unreadable(rows):
    rows.insert(3, None)
    return ["line 4"]


FAULTS = [
    Fault("verdict outside the enum", F.set("EV-0101", verdict="retry"), ("schema", "1.verdict_enum", "recompute")),
    Fault("a required field missing", F.drop_key("EV-0101", "max_overlap"), ("schema", "2.required_fields")),
    Fault("an empty surface_key", F.set("EV-0101", surface_key=""), ("2.required_fields", "3.surface_key", "recompute")),
    Fault("two rows for one event", F.duplicate("EV-0101"), ("2.required_fields",)),
    Fault("surface_key not lower-cased", F.set("EV-0802", surface_key="Summarize"), ("3.surface_key", "recompute")),
    Fault("a wrong baseline", F.set("EV-0101", surface_baseline=0.5), ("4.baseline",)),
    Fault("the default used where pairs exist", F.set("EV-0101", surface_baseline=0.3), ("4.baseline",)),
    Fault("a wrong max_overlap", F.set("EV-0202", max_overlap=0.5), ("5.max_overlap",)),
    Fault("max_overlap without an earlier event", F.set("EV-0101", max_overlap=0), ("5.max_overlap",)),
    Fault("max_overlap null with an earlier event", F.set("EV-0602", max_overlap=None), ("5.max_overlap",)),
    Fault("a baseline above 1", F.set("EV-0701", surface_baseline=1.5), ("4.baseline", "6.ranges")),
    Fault("a boolean overlap", F.set("EV-0102", max_overlap=True), ("schema", "5.max_overlap", "6.ranges")),
    Fault("an evidence field that is no column", F.evidence_at("EV-0101", 0, {"field": "text"}), ("7.evidence_fields",)),
    Fault("an evidence dataset that is not an input", F.evidence_at("EV-0101", 0, {"dataset": "turns"}),
          ("schema", "7.evidence_fields")),
    Fault("an evidence value not as written", F.evidence_at("EV-0402", 1, {"value": "summarize"}), ("8.evidence_values",)),
    Fault("an evidence value from another event", F.evidence_at("EV-0202", 2, {"value": "이거 요약해줘"}), ("8.evidence_values",)),
    Fault("a changed default_baseline", F.evidence_at("EV-1602", 3, {"value": 0.2}), ("8.evidence_values",)),
    Fault("an aggregate nobody can re-compute", F.evidence_at("EV-0101", 0, {"agg": "count", "value": 3}), ("8.evidence_values",)),
    Fault("exact_retry on a reworded text", F.set("EV-0202", verdict=V.EXACT_RETRY), ("9.exact_retry", "recompute")),
    Fault("exact_retry matching a different text", F.set("EV-0402", matched_event_id="EV-0102"),
          ("8.evidence_values", "9.exact_retry", "recompute")),  # its evidence cites EV-0401's text
    Fault("reworded_retry at the baseline", F.set("EV-0602", verdict=V.REWORDED_RETRY), ("10.reworded_retry", "recompute")),
    Fault("surface_hop over two surfaces", F.set("EV-1302", verdict=V.SURFACE_HOP, matched_event_id="EV-1301"),
          ("11.surface_hop", "recompute")),
    Fault("surface_hop without a shared word", F.set("EV-1203", verdict=V.SURFACE_HOP), ("11.surface_hop", "recompute")),
    Fault("a plain-speech reason", F.set("EV-0101", reason="처음 보낸 말임."), ("12.polite",)),
    Fault("no reason", F.drop_key("EV-0101", "reason"), ("12.polite",)),
    Fault("a wrong matched event", F.set("EV-0602", matched_event_id=None), ("8.evidence_values", "recompute")),
    Fault("a row for a quarantined event", F.copy_as("EV-0601", "EV-1806"), ("recompute",)),
    Fault("a judged event without a row", F.remove("EV-0801"), ("recompute",)),
    Fault("a line that is not JSON", _unreadable, ("schema",)),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_each_fault_fails_exactly_its_checks_naming_the_event(sample, fault):
    F.assert_fails(sample, fault, exact=True)


_EXACTS = st.one_of(
    st.builds(lambda a, b: Fraction(min(a, b), max(a, b, 1)), st.integers(0, 60), st.integers(1, 60)),  # overlaps
    st.fractions(min_value=-3, max_value=3, max_denominator=10**9),
)


@st.composite
def _near(draw):
    """An exact value, a tolerance, and a number at, beside or far from the tolerance's edge."""
    exact, decimals = draw(_EXACTS), draw(st.integers(0, 12))
    tolerance = Fraction(1, 2 * 10**decimals)
    edge = float(exact + draw(st.sampled_from([tolerance, -tolerance])))
    number = draw(st.one_of(
        st.just(edge),
        st.integers(-3, 3).map(lambda k: math.nextafter(edge, math.inf) if k > 0 else math.nextafter(edge, -math.inf) if k < 0 else edge),
        st.floats(-1e-9, 1e-9).map(lambda d: edge + d),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-3, 3), st.integers(-(10**30), 10**30), st.booleans(), st.none(), st.text(max_size=2),
    ))
    return exact, tolerance, number


@settings(max_examples=2000, deadline=None)
@given(_near())
def test_a_number_agrees_exactly_as_within_the_tolerance_in_fractions(case):
    exact, tolerance, number = case
    ctx = SimpleNamespace(tolerance=tolerance, float_tolerance=float(tolerance))
    is_number = isinstance(number, (int, float)) and not isinstance(number, bool) and math.isfinite(number)
    assert _Context.agrees(ctx, number, exact) == (is_number and abs(Fraction(number) - exact) <= tolerance)


@pytest.mark.parametrize("row_id, index, value, passes", [
    ("EV-1602", 3, 0.3, True), ("EV-1602", 3, 0.2, False),  # the surface's catalog row
    ("EV-0402", 2, "PDF 요약해줘", True), ("EV-0402", 2, "pdf 요약해줘!", False),  # the matched event's row
    ("EV-0402", 0, "pdf 요약해줘.", True),  # the event's own row
])
def test_evidence_without_its_dataset_is_held_to_every_row_the_verdict_may_cite(sample, row_id, index, value, passes):
    def change(row):
        item = row["evidence"][index]
        del item["dataset"]
        item["value"] = value

    assert F.results_with(sample, row_id, change)["8.evidence_values"].passed is passes
