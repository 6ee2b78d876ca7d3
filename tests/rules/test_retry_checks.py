"""Seed 002's automatic checks, the output schema and the re-computation, on the sample data.

The engine's own output passes every check; each test then injects one fault into a deep copy
of those rows and expects exactly the named checks to fail, naming the faulty event (and no
other).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from rules.retry import engine
from rules.retry import verdicts as V
from rules.retry.checks import CHECKS, run_checks
from rules.retry.config import load_config
from rules.retry.normalise import load_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "seeds" / "retry"

CHECK_IDS = ["schema", "1.verdict_enum", "2.required_fields", "3.surface_key", "4.baseline", "5.max_overlap",
             "6.ranges", "7.evidence_fields", "8.evidence_values", "9.exact_retry", "10.reworded_retry",
             "11.surface_hop", "12.polite", "recompute"]


@pytest.fixture(scope="module")
def sample():
    config = load_config()
    norm = load_dir(SAMPLE, config)
    rows = engine.records(engine.judge(norm.tables["interaction_events"], norm.tables["surface_catalog"], config))
    return norm, rows, config


def results(sample, rows) -> dict:
    norm, _, config = sample
    return {r.id: r for r in run_checks(norm, rows, config)}


def row_of(rows: list, event_id: str) -> dict:
    found = [r for r in rows if isinstance(r, dict) and r.get("event_id") == event_id]
    assert len(found) == 1, f"{event_id} should have exactly one row"
    return found[0]


def test_checks_run_in_seed_order_with_their_ids(sample):
    _, rows, _ = sample
    assert list(results(sample, rows)) == CHECK_IDS
    assert len(CHECKS) == len(CHECK_IDS)


def test_every_check_passes_on_the_engine_output(sample):
    _, rows, _ = sample
    failed = {k: r.detail for k, r in results(sample, rows).items() if not r.passed}
    assert failed == {}


def test_a_file_rounded_to_two_decimals_as_the_seed_prints_it_passes_too(sample):
    _, rows, _ = sample
    rounded = copy.deepcopy(rows)
    for r in rounded:
        r["surface_baseline"] = round(r["surface_baseline"], 2)
        r["max_overlap"] = None if r["max_overlap"] is None else round(r["max_overlap"], 2)
    assert {k: r.detail for k, r in results(sample, rounded).items() if not r.passed} == {}


def test_the_sample_has_the_rows_the_faults_rely_on(sample):
    _, rows, _ = sample
    r = {k: row_of(rows, k) for k in ("EV-0101", "EV-0202", "EV-0402", "EV-0602", "EV-1203", "EV-1302", "EV-1602")}
    assert r["EV-0101"]["max_overlap"] is None and r["EV-0101"]["verdict"] == V.ONE_SHOT
    assert r["EV-0202"]["verdict"] == V.REWORDED_RETRY
    assert (r["EV-0402"]["verdict"], r["EV-0402"]["matched_event_id"]) == (V.EXACT_RETRY, "EV-0401")
    assert (r["EV-0602"]["verdict"], r["EV-0602"]["matched_event_id"]) == (V.ONE_SHOT, "EV-0601")
    assert r["EV-1203"]["verdict"] == V.ONE_SHOT  # three surfaces, nothing shared
    assert r["EV-1302"]["verdict"] == V.ONE_SHOT  # shares a word over two surfaces
    assert r["EV-1602"]["evidence"][-1]["field"] == "default_baseline"


# -- injected faults ---------------------------------------------------------------------------


@dataclass
class Fault:
    name: str
    inject: Callable[[list], list[str]]
    """Mutates the rows in place; returns the ids the checks must name."""
    checks: tuple[str, ...]


def _set(event_id: str, **changes):
    def inject(rows):
        row_of(rows, event_id).update(changes)
        return [event_id]
    return inject


def _drop_key(event_id: str, key: str):
    def inject(rows):
        del row_of(rows, event_id)[key]
        return [event_id]
    return inject


def _evidence(event_id: str, i: int, **changes):
    def inject(rows):
        row_of(rows, event_id)["evidence"][i].update(changes)
        return [event_id]
    return inject


def _duplicate(rows):
    rows.append(copy.deepcopy(row_of(rows, "EV-0101")))
    return ["EV-0101"]


def _remove(rows):
    rows.remove(row_of(rows, "EV-0801"))
    return ["EV-0801"]


def _quarantined(rows):
    extra = copy.deepcopy(row_of(rows, "EV-0601"))
    extra["event_id"] = "EV-1806"
    rows.append(extra)
    return ["EV-1806"]


def _unreadable(rows):
    rows.insert(3, None)
    return ["line 4"]


FAULTS = [
    Fault("verdict outside the enum", _set("EV-0101", verdict="retry"), ("schema", "1.verdict_enum", "recompute")),
    Fault("a required field missing", _drop_key("EV-0101", "max_overlap"), ("schema", "2.required_fields")),
    Fault("an empty surface_key", _set("EV-0101", surface_key=""), ("2.required_fields", "3.surface_key", "recompute")),
    Fault("two rows for one event", _duplicate, ("2.required_fields",)),
    Fault("surface_key not lower-cased", _set("EV-0802", surface_key="Summarize"), ("3.surface_key", "recompute")),
    Fault("a wrong baseline", _set("EV-0101", surface_baseline=0.5), ("4.baseline",)),
    Fault("the default used where pairs exist", _set("EV-0101", surface_baseline=0.3), ("4.baseline",)),
    Fault("a wrong max_overlap", _set("EV-0202", max_overlap=0.5), ("5.max_overlap",)),
    Fault("max_overlap without an earlier event", _set("EV-0101", max_overlap=0), ("5.max_overlap",)),
    Fault("max_overlap null with an earlier event", _set("EV-0602", max_overlap=None), ("5.max_overlap",)),
    Fault("a baseline above 1", _set("EV-0701", surface_baseline=1.5), ("4.baseline", "6.ranges")),
    Fault("a boolean overlap", _set("EV-0102", max_overlap=True), ("schema", "5.max_overlap", "6.ranges")),
    Fault("an evidence field that is no column", _evidence("EV-0101", 0, field="text"), ("7.evidence_fields",)),
    Fault("an evidence dataset that is not an input", _evidence("EV-0101", 0, dataset="turns"),
          ("schema", "7.evidence_fields")),
    Fault("an evidence value not as written", _evidence("EV-0402", 1, value="summarize"), ("8.evidence_values",)),
    Fault("an evidence value from another event", _evidence("EV-0202", 2, value="이거 요약해줘"), ("8.evidence_values",)),
    Fault("a changed default_baseline", _evidence("EV-1602", 3, value=0.2), ("8.evidence_values",)),
    Fault("an aggregate nobody can re-compute", _evidence("EV-0101", 0, agg="count", value=3), ("8.evidence_values",)),
    Fault("exact_retry on a reworded text", _set("EV-0202", verdict=V.EXACT_RETRY), ("9.exact_retry", "recompute")),
    Fault("exact_retry matching a different text", _set("EV-0402", matched_event_id="EV-0102"),
          ("8.evidence_values", "9.exact_retry", "recompute")),  # its evidence cites EV-0401's text
    Fault("reworded_retry at the baseline", _set("EV-0602", verdict=V.REWORDED_RETRY), ("10.reworded_retry", "recompute")),
    Fault("surface_hop over two surfaces", _set("EV-1302", verdict=V.SURFACE_HOP, matched_event_id="EV-1301"),
          ("11.surface_hop", "recompute")),
    Fault("surface_hop without a shared word", _set("EV-1203", verdict=V.SURFACE_HOP), ("11.surface_hop", "recompute")),
    Fault("a plain-speech reason", _set("EV-0101", reason="처음 보낸 말임."), ("12.polite",)),
    Fault("no reason", _drop_key("EV-0101", "reason"), ("12.polite",)),
    Fault("a wrong matched event", _set("EV-0602", matched_event_id=None), ("8.evidence_values", "recompute")),
    Fault("a row for a quarantined event", _quarantined, ("recompute",)),
    Fault("a judged event without a row", _remove, ("recompute",)),
    Fault("a line that is not JSON", _unreadable, ("schema",)),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_each_fault_fails_exactly_its_checks_naming_the_event(sample, fault):
    _, rows, _ = sample
    broken = copy.deepcopy(rows)
    ids = fault.inject(broken)
    got = results(sample, broken)
    failed = {k for k, r in got.items() if not r.passed}
    assert failed == set(fault.checks)
    for k in fault.checks:
        assert got[k].failing_ids == ids, (k, got[k].failing_ids, got[k].detail)
        assert got[k].detail
