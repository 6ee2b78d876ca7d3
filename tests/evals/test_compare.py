"""Prompt-version comparison (SPEC §3 evaluation): inconsistency rate of A vs B with Wilson
intervals, McNemar's exact test on scenario pairs, Fisher's exact test otherwise.

Figures are checked against scipy / statsmodels computed here, and against the sample's
hand-worked numbers in seeds/persona/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from evals.compare import compare_versions, render_comparison
from evals import domains
from rules.persona import verdicts as V

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "seeds" / "persona"


def wilson(k: int, n: int) -> tuple[float, float]:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(low), float(high)


@pytest.fixture(scope="module")
def sample():
    return domains.get("persona").compare(SAMPLE, "p12", "p13")


# -- the sample: CH-002, p12 vs p13 ------------------------------------------------------------


def test_sample_rates(sample):
    assert (sample.rate_a.numerator, sample.rate_a.denominator) == (27, 196)
    assert (sample.rate_b.numerator, sample.rate_b.denominator) == (12, 197)
    assert sample.rate_a.format() == "27 / 196 (13.8%)"
    assert sample.rate_b.format() == "12 / 197 (6.1%)"


def test_sample_wilson_intervals_come_from_statsmodels(sample):
    assert sample.rate_a.wilson == pytest.approx(wilson(27, 196), abs=1e-12)
    assert sample.rate_b.wilson == pytest.approx(wilson(12, 197), abs=1e-12)
    d = sample.to_dict()
    assert (d["rate_a"]["wilson_low"], d["rate_a"]["wilson_high"]) == pytest.approx(wilson(27, 196), abs=1e-12)


def test_sample_difference_and_its_newcombe_interval(sample):
    assert sample.difference == pytest.approx(12 / 197 - 27 / 196)
    low, high = confint_proportions_2indep(12, 197, 27, 196, method="newcomb", compare="diff")
    assert sample.difference_interval == pytest.approx((float(low), float(high)))
    assert sample.difference_interval[0] < sample.difference < sample.difference_interval[1] < 0


def test_sample_pairs_by_scenario_and_uses_mcnemar(sample):
    assert sample.pairs == 194
    assert sample.table == [[4, 22], [7, 161]]
    assert "McNemar" in sample.test
    expected = mcnemar([[4, 22], [7, 161]], exact=True).pvalue
    assert sample.p_value == pytest.approx(expected, rel=1e-12)
    assert sample.p_value == pytest.approx(0.0081, abs=5e-5)


def test_sample_moved_codes(sample):
    assert sample.moved == {
        f"{V.JOB_CONFLICT} → {V.CONSISTENT}": 9,
        f"{V.FORBIDDEN_TOPIC} → {V.CONSISTENT}": 8,
        f"{V.AGE_CONFLICT} → {V.CONSISTENT}": 5,
        f"{V.CONSISTENT} → {V.JOB_CONFLICT}": 3,
        f"{V.CONSISTENT} → {V.AGE_CONFLICT}": 2,
        f"{V.CONSISTENT} → {V.FORBIDDEN_TOPIC}": 2,
        f"{V.AGE_CONFLICT} → {V.JOB_CONFLICT}": 1,
    }
    assert sum(sample.moved.values()) == 30


def test_sample_code_counts_and_exclusions(sample):
    assert sample.codes_a == {V.CONSISTENT: 169, V.AGE_CONFLICT: 8, V.JOB_CONFLICT: 10, V.FORBIDDEN_TOPIC: 9, V.REPLY_EMPTY: 4}
    assert sample.codes_b == {V.CONSISTENT: 185, V.AGE_CONFLICT: 3, V.JOB_CONFLICT: 6, V.FORBIDDEN_TOPIC: 3, V.REPLY_EMPTY: 3}
    assert sample.excluded == {"p12": 4, "p13": 3}
    assert "CH-002" in sample.scope


def test_sample_to_dict_is_json(sample):
    d = json.loads(json.dumps(sample.to_dict(), ensure_ascii=False))
    assert d["rate_a"]["numerator"] == 27 and d["rate_b"]["denominator"] == 197
    assert d["table"] == [[4, 22], [7, 161]] and d["pairs"] == 194
    assert d["moved"][f"{V.JOB_CONFLICT} → {V.CONSISTENT}"] == 9


def test_sample_rendering_shows_the_figures(sample):
    md = render_comparison(sample)
    for text in ("27 / 196 (13.8%)", "12 / 197 (6.1%)", sample.rate_a.format_interval(), sample.rate_b.format_interval(),
                 "McNemar", f"{sample.p_value:.4g}", f"{V.JOB_CONFLICT} → {V.CONSISTENT}: 9", "p12", "p13"):
        assert text in md, text


def test_a_version_with_no_turns_raises(sample):
    d = domains.get("persona")
    with pytest.raises(ValueError):
        d.compare(SAMPLE, "p12", "p99")
    with pytest.raises(ValueError):
        d.compare(SAMPLE, "p12", "p13", "CH-001")  # CH-001 has no p12 turns


def test_the_character_can_be_named(sample):
    named = domains.get("persona").compare(SAMPLE, "p12", "p13", "CH-002")
    assert named.to_dict() == sample.to_dict()


def test_unpaired_versions_on_the_sample_use_fisher():
    """p11 turns (CH-002's hard cases) have no scenario_id."""
    c = domains.get("persona").compare(SAMPLE, "p11", "p13")
    assert c.pairs == 0 and "Fisher" in c.test
    assert (c.rate_a.denominator, c.rate_b.denominator) == (4, 197)
    table = [[c.rate_a.numerator, 4 - c.rate_a.numerator], [12, 185]]
    assert c.table == table
    assert c.p_value == pytest.approx(fisher_exact(table).pvalue, rel=1e-12)


# -- hand-made frames --------------------------------------------------------------------------


def frame(rows: list[tuple]) -> pd.DataFrame:
    """rows: (prompt_ver, scenario_id, persona_code); turn_no and time follow the list order."""
    return pd.DataFrame(
        [{"turn_no": f"T-{i:03d}", "prompt_ver": v, "scenario_id": s, "created_at_ns": 1_000 * i, "persona_code": c}
         for i, (v, s, c) in enumerate(rows)]
    )


def compare(f: pd.DataFrame, a="A", b="B", **kw):
    kw.setdefault("inconsistent", V.INCONSISTENT)
    kw.setdefault("excluded", V.EXCLUDED)
    return compare_versions(f, a, b, **kw)


UNPAIRED = frame(
    [("A", None, V.AGE_CONFLICT)] * 2 + [("A", None, V.FORBIDDEN_TOPIC)] + [("A", None, V.CONSISTENT)] * 7
    + [("A", None, V.REPLY_EMPTY)] * 2 + [("A", None, V.PROFILE_UNMAPPED)]
    + [("B", None, V.JOB_CONFLICT)] + [("B", None, V.CONSISTENT)] * 11 + [("B", None, V.REPLY_EMPTY)] * 3
)


def test_no_scenario_id_uses_fishers_exact_test():
    c = compare(UNPAIRED)
    assert (c.rate_a.numerator, c.rate_a.denominator) == (3, 10)
    assert (c.rate_b.numerator, c.rate_b.denominator) == (1, 12)
    assert c.pairs == 0 and "Fisher" in c.test and "McNemar" not in c.test
    assert c.table == [[3, 7], [1, 11]]
    assert c.p_value == pytest.approx(fisher_exact([[3, 7], [1, 11]]).pvalue, rel=1e-12)
    assert c.moved == {}
    assert c.rate_a.wilson == pytest.approx(wilson(3, 10))
    assert c.rate_b.wilson == pytest.approx(wilson(1, 12))
    assert c.difference == pytest.approx(1 / 12 - 3 / 10)


def test_excluded_codes_are_out_of_the_denominators():
    c = compare(UNPAIRED)
    assert c.excluded == {"A": 3, "B": 3}
    assert c.codes_a[V.REPLY_EMPTY] == 2 and c.codes_a[V.PROFILE_UNMAPPED] == 1
    # Counting them in would change both rates: the exclusion is what the figures rest on.
    counted = compare(UNPAIRED, excluded=())
    assert (counted.rate_a.denominator, counted.rate_b.denominator) == (13, 15)


def test_only_the_inconsistent_codes_count_as_bad():
    c = compare(UNPAIRED, inconsistent=(V.AGE_CONFLICT,))
    assert c.rate_a.numerator == 2 and c.rate_b.numerator == 0


PAIRED = frame(
    # scenario, A code, B code
    [("A", f"S-{i}", code) for i, code in enumerate(
        [V.AGE_CONFLICT] * 6 + [V.JOB_CONFLICT] * 2 + [V.CONSISTENT] * 10 + [V.REPLY_EMPTY] + [V.FORBIDDEN_TOPIC])]
    + [("B", f"S-{i}", code) for i, code in enumerate(
        [V.CONSISTENT] * 5 + [V.AGE_CONFLICT] + [V.CONSISTENT] * 2 + [V.CONSISTENT] * 9 + [V.FORBIDDEN_TOPIC]
        + [V.JOB_CONFLICT] + [V.REPLY_EMPTY])]
)


def test_scenario_pairs_use_mcnemars_exact_test():
    c = compare(PAIRED)
    # S-19 (A forbidden, B empty) and S-18 (A empty, B job) have an excluded side: 18 pairs.
    assert c.pairs == 18
    table = [[1, 7], [1, 9]]
    assert c.table == table
    assert "McNemar" in c.test
    assert c.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert c.moved == {f"{V.AGE_CONFLICT} → {V.CONSISTENT}": 5, f"{V.JOB_CONFLICT} → {V.CONSISTENT}": 2,
                       f"{V.CONSISTENT} → {V.FORBIDDEN_TOPIC}": 1}
    # Rates still count every judged turn, paired or not.
    assert (c.rate_a.numerator, c.rate_a.denominator) == (9, 19)
    assert (c.rate_b.numerator, c.rate_b.denominator) == (3, 19)


def test_a_scenario_with_several_turns_pairs_them_turn_by_turn_in_one_cluster():
    f = frame([("A", "S-1", V.AGE_CONFLICT), ("A", "S-1", V.CONSISTENT), ("B", "S-1", V.CONSISTENT), ("B", "S-1", V.JOB_CONFLICT)])
    c = compare(f)
    assert c.pairs == 2 and c.paired.clusters == 1 and c.paired.clustered
    assert c.table == [[0, 1], [1, 0]]
    assert c.moved == {f"{V.AGE_CONFLICT} → {V.CONSISTENT}": 1, f"{V.CONSISTENT} → {V.JOB_CONFLICT}": 1}
    assert (c.rate_a.denominator, c.rate_b.denominator) == (2, 2)
    assert "Durkalski" in c.test and c.p_value is None  # the cluster's discordant pairs cancel out


def test_first_means_earliest_in_time_not_in_the_frame():
    f = frame([("A", "S-1", V.CONSISTENT), ("A", "S-1", V.AGE_CONFLICT), ("B", "S-1", V.CONSISTENT)])
    f.loc[1, "created_at_ns"] = -5  # the age_conflict turn came first
    c = compare(f)
    assert c.table == [[0, 1], [0, 0]]


def test_missing_version_raises_value_error():
    with pytest.raises(ValueError, match="Z"):
        compare(UNPAIRED, "A", "Z")
    with pytest.raises(ValueError, match="Y"):
        compare(UNPAIRED, "Y", "B")


def test_a_version_with_only_excluded_turns_has_no_rate_and_no_test():
    f = frame([("A", None, V.CONSISTENT), ("A", None, V.AGE_CONFLICT), ("B", None, V.REPLY_EMPTY)])
    c = compare(f)
    assert (c.rate_b.numerator, c.rate_b.denominator) == (0, 0)
    assert c.difference is None and c.difference_interval is None and c.p_value is None
    md = render_comparison(c)
    assert "p = —" in md


def test_rendering_an_unpaired_comparison_names_fisher():
    md = render_comparison(compare(UNPAIRED))
    assert "Fisher" in md and "3 / 10" in md and "1 / 12" in md
    assert f"{fisher_exact([[3, 7], [1, 11]]).pvalue:.4g}" in md
