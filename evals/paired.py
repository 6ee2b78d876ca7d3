"""The difference of two paired proportions (the same items under A and under B) with a 95%
interval made for paired data, clustered when pairs share a conversation.

Interval: Newcombe's hybrid score interval for the difference of paired proportions (Newcombe
1998, "Improved confidence intervals for the difference between binomial proportions based on
paired data", method 10): each version's rate gets its Wilson score interval, and the two are
combined with the correlation of the pairs (φ, with Newcombe's continuity adjustment of its
numerator). Checked against the published worked example (Cavo et al. 2012, 2×2 [[59, 6],
[16, 80]]: −0.0621, 95% CI −0.1186 to −0.0046).

Clusters: pairs of the same conversation (persona: the same scenario replayed under both prompt
versions) are not independent. The variance of the mean paired difference is then estimated
between clusters (the ratio estimator's cluster-robust variance, as in Obuchowski 1998), its
ratio to the variance for independent pairs is the design effect d (never taken below 1), and the
interval is Newcombe's on the effective table, every cell divided by d (Rao & Scott 1992). The
test beside it is then Durkalski et al.'s (2003) clustered McNemar statistic instead of
McNemar's exact test. With one pair per cluster nothing changes (d = 1).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from scipy.stats import chi2

Z95 = 1.959963984540054
METHOD = "Newcombe 하이브리드 점수 구간 (짝지은 비율의 차이, Newcombe 1998 방법 10)"


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval; counts may be fractional (an effective sample)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe_paired(a: float, b: float, c: float, d: float, z: float = Z95) -> tuple[float, float, float]:
    """(p1 − p2, low, high) for the table [[a, b], [c, d]]: rows the first rating (yes, no), columns
    the second; p1 = (a + b) / n, p2 = (a + c) / n."""
    n = a + b + c + d
    if n <= 0:
        raise ValueError("no pairs")
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, z)
    l2, u2 = wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if margins > 0:
        cross = a * d - b * c
        adjusted = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
        phi = adjusted / math.sqrt(margins)
    low = p1 - p2 - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = p1 - p2 + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return p1 - p2, max(-1.0, low), min(1.0, high)


@dataclass
class PairedDifference:
    pairs: int
    clusters: int
    both: int
    """Pairs where A and B both say yes."""
    only_a: int
    """Discordant: yes under A, no under B."""
    only_b: int
    """Discordant: no under A, yes under B."""
    neither: int
    difference: float
    """B − A over the pairs."""
    interval: tuple[float, float]
    design_effect: float
    method: str = METHOD

    @property
    def clustered(self) -> bool:
        return self.clusters < self.pairs

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "clusters": self.clusters, "both": self.both, "only_a": self.only_a, "only_b": self.only_b,
                "neither": self.neither, "difference_b_minus_a": self.difference, "interval_95": list(self.interval),
                "design_effect": self.design_effect, "method": self.method, "clustered": self.clustered}

    def how(self) -> str:
        """The method in words, with what the clustering did."""
        if not self.clustered:
            return f"{self.method}. 짝마다 대화(시나리오)가 달라 묶음 보정은 없습니다 (설계효과 1)."
        return (f"{self.method}. 같은 대화(시나리오)의 짝 {self.pairs}쌍이 {self.clusters}개 묶음을 이루어, 묶음 사이 분산으로 잰 설계효과 "
                f"{self.design_effect:.2f}로 각 칸을 나눈 유효 표본(Rao–Scott)에 구간을 적용했습니다.")


def paired_difference(a_yes: list[bool], b_yes: list[bool], clusters: list[str] | None = None) -> PairedDifference:
    """B − A over pairs (each pair: the same item under A and B), with its 95% interval, clustered by `clusters`."""
    if len(a_yes) != len(b_yes) or not a_yes:
        raise ValueError("paired_difference needs the same number (> 0) of A and B ratings")
    clusters = clusters or [str(i) for i in range(len(a_yes))]
    both = sum(x and y for x, y in zip(a_yes, b_yes))
    only_a = sum(x and not y for x, y in zip(a_yes, b_yes))
    only_b = sum(y and not x for x, y in zip(a_yes, b_yes))
    neither = len(a_yes) - both - only_a - only_b
    deff = design_effect(a_yes, b_yes, clusters)
    # Newcombe's p1 − p2 with p1 = B, p2 = A: rows of the table are B, columns A.
    difference, low, high = newcombe_paired(*(x / deff for x in (both, only_b, only_a, neither)))
    return PairedDifference(len(a_yes), len(set(clusters)), both, only_a, only_b, neither, difference, (low, high), deff)


def design_effect(a_yes: list[bool], b_yes: list[bool], clusters: list[str]) -> float:
    """Between-cluster variance of the mean paired difference over its variance for independent pairs (≥ 1)."""
    n = len(a_yes)
    sizes = Counter(clusters)
    k = len(sizes)
    if k == n or k < 2:
        return 1.0
    diffs = [int(y) - int(x) for x, y in zip(a_yes, b_yes)]
    mean = sum(diffs) / n
    independent = (sum(d != 0 for d in diffs) / n - mean * mean) / n
    if independent <= 0:
        return 1.0
    totals = Counter()
    for cluster, d in zip(clusters, diffs):
        totals[cluster] += d
    between = k / (k - 1) * sum((totals[c] - sizes[c] * mean) ** 2 for c in sizes) / (n * n)
    return max(1.0, between / independent)


def clustered_mcnemar(a_yes: list[bool], b_yes: list[bool], clusters: list[str]) -> float | None:
    """Durkalski et al.'s McNemar statistic for clustered pairs: p-value (χ², 1 df); None without discordant pairs."""
    per = Counter()
    for cluster, x, y in zip(clusters, a_yes, b_yes):
        per[cluster] += int(x and not y) - int(y and not x)
    denominator = sum(v * v for v in per.values())
    if denominator == 0:
        return None
    return float(chi2.sf(sum(per.values()) ** 2 / denominator, 1))
