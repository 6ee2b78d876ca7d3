"""The paired A/B difference: discordant counts and a 95% interval made for paired proportions
(Newcombe's hybrid score interval), clustered by conversation when pairs share one. Checked against
the published worked example and read from the comparison's Markdown, JSON and the board."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evals.board import render_board
from evals.compare import compare_versions, render_comparison
from evals.paired import METHOD, design_effect, newcombe_paired, paired_difference
from evals import domains
from rules.persona import verdicts as V
from tests.board import sample_board
from tests.conftest import SEEDS


def test_newcombes_interval_reproduces_the_published_example():
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8 (Cavo et al. 2012):
    # estimate -0.0621, 95% CI -0.1186 to -0.0046.
    estimate, low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(estimate, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)
    # Swapping the two ratings mirrors the interval.
    e2, l2, h2 = newcombe_paired(59, 16, 6, 80)
    assert (e2, l2, h2) == pytest.approx((-estimate, -high, -low))


def test_one_pair_per_conversation_is_not_adjusted():
    a = [True] * 8 + [False] * 12
    b = [False] * 6 + [True] * 2 + [True] * 3 + [False] * 9
    d = paired_difference(a, b)
    assert (d.both, d.only_a, d.only_b, d.neither) == (2, 6, 3, 9) and d.design_effect == 1 and not d.clustered
    assert (d.difference, *d.interval) == pytest.approx(newcombe_paired(2, 3, 6, 9))  # rows B, columns A


def test_pairs_that_move_together_in_a_conversation_widen_the_interval():
    # Ten conversations of four turns each: in six of them every turn went from inconsistent to consistent.
    a = [True] * 24 + [False] * 16
    b = [False] * 24 + [False] * 16
    clusters = [f"S-{i // 4}" for i in range(40)]
    independent = paired_difference(a, b)
    clustered = paired_difference(a, b, clusters)
    assert clustered.clusters == 10 and clustered.clustered and clustered.design_effect > 1
    assert design_effect(a, b, clusters) == pytest.approx(clustered.design_effect)
    assert clustered.difference == pytest.approx(independent.difference)
    assert clustered.interval[0] < independent.interval[0] and clustered.interval[1] > independent.interval[1]
    assert "Rao–Scott" in clustered.how() and f"{clustered.design_effect:.2f}" in clustered.how()


def test_the_sample_comparison_shows_discordant_pairs_and_the_paired_interval():
    c = domains.get("persona").compare(SEEDS / "persona", "p12", "p13")
    d = c.paired
    assert (d.pairs, d.both, d.only_a, d.only_b, d.neither) == (194, 4, 22, 7, 161)
    assert d.difference == pytest.approx((7 - 22) / 194)
    assert (d.difference, *d.interval) == pytest.approx(newcombe_paired(4, 7, 22, 161))
    assert d.interval[0] < d.difference < d.interval[1] < 0
    md = render_comparison(c)
    pct = lambda x: f"{x * 100:+.1f}%p"  # noqa: E731
    assert f"**짝지은 차이 (p13 − p12)**: {pct(d.difference)}, 95% 구간 [{pct(d.interval[0])}, {pct(d.interval[1])}] (짝 194쌍)" in md
    assert "불일치 짝: p12에서만 어긋남 22쌍 · p13에서만 어긋남 7쌍" in md and METHOD in md and "설계효과 1" in md
    data = json.loads(json.dumps(c.to_dict()))
    assert data["paired"]["only_a"] == 22 and data["paired"]["only_b"] == 7 and data["paired"]["method"] == METHOD
    board = render_board(sample_board("persona"))
    assert "p12에서만 어긋남 22 · p13에서만 어긋남 7" in board and "짝지은 차이 (p13 − p12)" in board


def test_a_multi_turn_scenario_is_one_cluster_and_uses_the_clustered_test():
    rows = []
    for s in range(8):
        for turn in range(3):  # three turns per scenario, the same three under both versions
            a = V.AGE_CONFLICT if s < 5 else V.CONSISTENT
            rows += [("A", f"S-{s}", a, s * 10 + turn), ("B", f"S-{s}", V.CONSISTENT, 100 + s * 10 + turn)]
    f = pd.DataFrame([{"turn_no": f"T-{v}-{t}", "prompt_ver": v, "scenario_id": s, "created_at_ns": t, "persona_code": c}
                      for v, s, c, t in rows])
    c = compare_versions(f, "A", "B", inconsistent=V.INCONSISTENT, excluded=V.EXCLUDED)
    assert c.pairs == 24 and c.paired.clusters == 8 and c.paired.design_effect > 1
    assert "Durkalski" in c.test and c.p_value is not None
    assert "Rao–Scott" in render_comparison(c)
