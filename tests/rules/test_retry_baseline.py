"""surface_baseline at scale: the fast pair counter, the naive O(n²) loop and the literal median.

Three readings of "the median overlap over every unordered cross-session pair" must agree
exactly: the counter (inverted indexes with binomial moments), the naive loop of the benchmark,
and the reference's list of every pair's Fraction passed to statistics.median.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules.retry.baseline import (DEFAULT, FALLBACK, PAIRS, as_overlaps, cross_session_pairs, median, naive_overlaps,
                                  pairs_by_overlap, surface_baselines)
from rules.retry.config import exact_decimal
from rules.retry.display import as_fraction, show, show_pair
from rules.retry.wordsets import index_word_sets, shared_counts


def literal_median(words, sessions) -> Fraction | None:
    values = [Fraction(len(a & b), len(a | b))
              for i, a in enumerate(words) for b, sb in zip(words[i + 1:], sessions[i + 1:]) if sessions[i] != sb]
    return statistics.median(values) if values else None


def fast(words, sessions, **kw) -> Counter:
    ids, ws = index_word_sets(words)
    return as_overlaps(cross_session_pairs(ids, np.asarray(sessions, dtype=np.int64), ws, **kw))


def brute_by_size(sets: list[frozenset], mult: list[int]) -> Counter:
    """Pairs of items by (a, b, k), item by item."""
    items = [s for s, m in zip(sets, mult) for _ in range(m)]
    out: Counter = Counter()
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            out[(min(len(a), len(b)), max(len(a), len(b)), len(a & b))] += 1
    return out


# -- the median ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("values", "want"), [
    ([], None),
    ([Fraction(1, 3)], Fraction(1, 3)),
    ([0, Fraction(1, 4), Fraction(1, 3)], Fraction(1, 4)),
    ([Fraction(1, 4)] * 3 + [Fraction(1, 3)] * 3, Fraction(7, 24)),  # even: the mean of the middle two
    ([0, 0, 1, 1], Fraction(1, 2)),
])
def test_median_of_a_counted_multiset(values, want):
    assert median(Counter(values)) == want
    if values:
        assert statistics.median(sorted(values)) == want


# -- agreement on random inputs --------------------------------------------------------------

VOCAB = ("요약해줘", "보고서", "회의록", "다시", "짧게", "더", "pdf", "논문", "가", "나", "다", "라")


@st.composite
def surfaces(draw):
    n = draw(st.integers(0, 45))
    heavy = draw(st.booleans())  # a word in nearly every set, as "요약해줘" is
    words, sessions = [], []
    for _ in range(n):
        w = set(draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=7)))
        if heavy:
            w.add("요약해줘")
        words.append(frozenset(w))
        sessions.append(draw(st.integers(0, draw(st.sampled_from([0, 2, 8, 40])))))
    return words, sessions


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(surfaces(), st.sampled_from([0, 1, 7, 10**9]), st.sampled_from([0, 1, 3, 64]), st.sampled_from([0, 8]))
def test_fast_counter_equals_the_naive_loop_and_the_literal_median(sc, budget, small, per_occurrence):
    words, sessions = sc
    counted = fast(words, sessions, pair_budget=budget, small_session=small, per_occurrence=per_occurrence)
    assert counted == +naive_overlaps(words, sessions)
    assert median(counted) == literal_median(words, sessions)


@PROPERTY
@given(st.lists(st.tuples(st.frozensets(st.sampled_from(VOCAB), min_size=1, max_size=8), st.integers(1, 4)),
                min_size=0, max_size=25, unique_by=lambda t: t[0]),
       st.sampled_from([0, 1, 5, 10**9]), st.sampled_from([0, 3, 10**9]))
def test_pairs_by_size_and_shared_words_with_multiplicities(sets, budget, level_budget):
    ids, ws = index_word_sets([s for s, _ in sets])
    mult = np.array([m for _, m in sets], dtype=np.int64)
    got = pairs_by_overlap(ws, mult, pair_budget=budget, level_budget=level_budget, per_occurrence=0)
    assert +got == brute_by_size([s for s, _ in sets], [m for _, m in sets])


def test_deep_levels_on_near_duplicate_requests_stay_exact():
    # Long requests that share most words force the index down several levels of word subsets.
    rng = random.Random(7)
    base = [f"w{i}" for i in range(9)]
    words, sessions = [], []
    for i in range(300):
        w = set(rng.sample(base, 7)) | {"요약해줘", rng.choice(["다시", "좀", "빨리", f"x{i % 13}"])}
        words.append(frozenset(w))
        sessions.append(i // 3)
    counted = fast(words, sessions, pair_budget=50, per_occurrence=0)
    assert counted == +naive_overlaps(words, sessions)


def test_one_giant_session_is_counted_not_listed():
    rng = random.Random(3)
    words = [frozenset(rng.sample(VOCAB, rng.randint(1, 5))) for _ in range(150)]
    sessions = [0] * 120 + list(range(1, 31))
    assert fast(words, sessions, small_session=10) == +naive_overlaps(words, sessions)


def test_shared_counts_of_pairs_of_sets():
    ids, ws = index_word_sets([frozenset("ab"), frozenset("bc"), frozenset("xyz"), frozenset("abc")])
    got = shared_counts(ws, np.array([0, 0, 1, 2, 3]), np.array([1, 3, 3, 0, 3]))
    assert list(got) == [1, 2, 2, 0, 3]


# -- one baseline per surface -------------------------------------------------------------------


def test_surface_baselines_come_from_pairs_then_the_default_then_the_fallback():
    words = [frozenset({"가", "나"}), frozenset({"가", "다"}), frozenset({"라"}), frozenset({"라", "마"}), frozenset({"바"})]
    surfaces_ = np.array(["a", "a", "b", "b", "c"], dtype=object)
    sessions = np.array([0, 1, 2, 2, 3])
    ids, ws = index_word_sets(words)
    got = surface_baselines(surfaces_, sessions, ids, ws, {"a": 0.9, "b": 0.3, "c": None}, Fraction(0))
    assert (got["a"].value, got["a"].source, got["a"].pairs) == (Fraction(1, 3), PAIRS, 1)
    assert (got["b"].value, got["b"].source, got["b"].default) == (Fraction(3, 10), DEFAULT, 0.3)
    assert (got["c"].value, got["c"].source) == (Fraction(0), FALLBACK)


def test_sample_surfaces_by_all_three_methods():
    from rules.retry.config import load_config
    from rules.retry.normalise import load_dir

    events = load_dir("seeds/retry", load_config()).tables["interaction_events"]
    want = {"summarize": Fraction(1, 3), "translate": Fraction(1, 4), "upload": Fraction(7, 24), "chat": Fraction(0)}
    for key, value in want.items():
        on = events[events["surface_key"] == key]
        words, sessions = list(on["words"]), list(on["session_id"])
        codes = list(on["session_id"].factorize()[0])
        assert median(fast(words, codes)) == median(naive_overlaps(words, sessions)) == literal_median(words, sessions) == value


# -- exact decimals and display ---------------------------------------------------------------


def test_defaults_are_read_as_the_decimal_written():
    assert exact_decimal(0.3) == Fraction(3, 10) != Fraction(0.3)
    assert exact_decimal(1) == 1 and exact_decimal(0.125) == Fraction(1, 8)


@pytest.mark.parametrize(("value", "shown"), [
    (Fraction(1, 3), "0.33"), (Fraction(2, 3), "0.67"), (Fraction(1, 8), "0.13"), (Fraction(1, 2), "0.5"),
    (Fraction(1), "1"), (Fraction(0), "0"), (Fraction(7, 24), "0.29"), (Fraction(199, 200), "1"),
])
def test_display_rounds_half_up_and_drops_trailing_zeros(value, shown):
    assert show(value) == shown


def test_values_that_differ_never_print_alike():
    assert show_pair(Fraction(1, 3), Fraction(33, 100)) == ("0.333", "0.33")
    assert show_pair(Fraction(1, 3), Fraction(1, 3)) == ("0.33", "0.33")
    a, b = Fraction(10**9 + 1, 3 * 10**9), Fraction(1, 3)
    assert show_pair(a, b) == (f"{a.numerator}/{a.denominator}", "1/3")


def test_verdict_numbers_turn_back_into_their_fractions():
    rng = random.Random(11)
    for _ in range(2000):
        q = rng.randint(1, 5000)
        p = rng.randint(0, q)
        assert as_fraction(float(Fraction(p, q))) == Fraction(p, q)
    mean = (Fraction(3, 997) + Fraction(5, 1999)) / 2  # an even median: a larger denominator
    assert as_fraction(float(mean)) == mean
    assert as_fraction(0.33) == Fraction(33, 100) and as_fraction(1) == 1
    assert as_fraction(True) is None and as_fraction("0.5") is None and as_fraction(None) is None


def test_long_pasted_texts_sharing_a_few_words_stay_exact():
    # Sets of ~150 words; the shared words are few, so the index may go deep while sets stay long.
    rng = random.Random(5)
    common = [f"c{i}" for i in range(14)]
    words, sessions = [], []
    for i in range(40):
        own = {f"u{i}-{j}" for j in range(rng.randint(120, 160))}
        words.append(frozenset(own | set(rng.sample(common, rng.randint(10, 14)))))
        sessions.append(i % 7)
    for budget in (0, 10**9):
        assert fast(words, sessions, pair_budget=budget, per_occurrence=0) == +naive_overlaps(words, sessions)
