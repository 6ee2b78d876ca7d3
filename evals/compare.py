"""Prompt-version comparison: inconsistency rate of version A against version B.

Rates are non-`consistent` among judged turns (excluded codes left out), each with a 95%
Wilson interval; the difference of the two rates B − A with Newcombe's interval for
independent samples. When turns pair across the versions by `scenario_id` (the k-th turn of a
scenario under A with its k-th turn under B), the paired difference is the headline: the
discordant counts (inconsistent under A only, under B only) and a 95% interval made for paired
proportions, clustered by scenario when a scenario holds several pairs (`evals.paired`); the test
is McNemar's exact test on the pairs (Durkalski's clustered statistic when pairs cluster).
Otherwise Fisher's exact test on the 2×2 table. Pairs also show which codes moved.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd
from scipy.stats import fisher_exact
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep

from evals.markdown import md_cell
from evals.paired import PairedDifference, clustered_mcnemar, paired_difference
from evals.stats import Ratio


@dataclass
class Comparison:
    a: str
    b: str
    scope: str
    rate_a: Ratio
    rate_b: Ratio
    difference: float | None
    difference_interval: tuple[float, float] | None
    test: str
    p_value: float | None
    table: list[list[int]]
    pairs: int
    moved: dict[str, int] = field(default_factory=dict)
    codes_a: dict[str, int] = field(default_factory=dict)
    codes_b: dict[str, int] = field(default_factory=dict)
    excluded: dict[str, int] = field(default_factory=dict)
    paired: PairedDifference | None = None
    """B − A over the scenario pairs, with its discordant counts and paired (clustered) interval."""

    def to_dict(self) -> dict:
        return {
            "a": self.a, "b": self.b, "scope": self.scope,
            "rate_a": self.rate_a.to_dict(), "rate_b": self.rate_b.to_dict(),
            "difference": self.difference, "difference_interval": self.difference_interval,
            "test": self.test, "p_value": self.p_value, "table": self.table, "pairs": self.pairs,
            "moved": self.moved, "codes_a": self.codes_a, "codes_b": self.codes_b, "excluded": self.excluded,
            "paired": self.paired.to_dict() if self.paired else None,
        }


def compare_versions(
    frame: pd.DataFrame, a: str, b: str, *, inconsistent: tuple[str, ...], excluded: tuple[str, ...], scope: str = ""
) -> Comparison:
    """`frame`: one row per judged turn with prompt_ver, scenario_id, created_at_ns, turn_no, persona_code."""
    by_ver = {v: frame[frame["prompt_ver"] == v] for v in (a, b)}
    for v, rows in by_ver.items():
        if rows.empty:
            raise ValueError(f"no turns with prompt_ver '{v}' in {scope or 'the input'}")
    judged = {v: rows[~rows["persona_code"].isin(excluded)] for v, rows in by_ver.items()}
    bad = {v: int(rows["persona_code"].isin(inconsistent).sum()) for v, rows in judged.items()}
    rate_a, rate_b = Ratio(bad[a], len(judged[a])), Ratio(bad[b], len(judged[b]))

    diff = interval = None
    if rate_a.denominator and rate_b.denominator:
        diff = rate_b.value - rate_a.value
        low, high = confint_proportions_2indep(bad[b], len(judged[b]), bad[a], len(judged[a]), method="newcomb", compare="diff")
        interval = (float(low), float(high))

    # The k-th turn of a scenario under A pairs with its k-th turn under B; a scenario is one conversation.
    ordered = {v: rows.dropna(subset=["scenario_id"]).sort_values(["created_at_ns", "turn_no"]) for v, rows in judged.items()}
    ordered = {v: rows.assign(_position=rows.groupby("scenario_id").cumcount()) for v, rows in ordered.items()}
    paired = ordered[a].merge(ordered[b], on=["scenario_id", "_position"], suffixes=("_a", "_b"))
    moved = Counter(f"{x} → {y}" for x, y in zip(paired["persona_code_a"], paired["persona_code_b"]) if x != y)

    paired_diff = None
    if len(paired):
        ia = paired["persona_code_a"].isin(inconsistent)
        ib = paired["persona_code_b"].isin(inconsistent)
        table = [[int((ia & ib).sum()), int((ia & ~ib).sum())], [int((~ia & ib).sum()), int((~ia & ~ib).sum())]]
        paired_diff = paired_difference(list(ia), list(ib), [str(x) for x in paired["scenario_id"]])
        if paired_diff.clustered:
            p = clustered_mcnemar(list(ia), list(ib), [str(x) for x in paired["scenario_id"]])
            test = f"Durkalski 묶음 McNemar (짝 {len(paired)}쌍, 시나리오 {paired_diff.clusters}개)"
        else:
            p = float(mcnemar(table, exact=True).pvalue)
            test = f"McNemar exact (짝지은 시나리오 {len(paired)}개)"
    else:
        table = [[bad[a], len(judged[a]) - bad[a]], [bad[b], len(judged[b]) - bad[b]]]
        p = float(fisher_exact(table).pvalue) if rate_a.denominator and rate_b.denominator else None
        test = "Fisher exact (짝지을 수 있는 scenario_id 없음)"

    def counts(rows):
        return {k: int(v) for k, v in rows["persona_code"].value_counts().sort_index().items()}

    return Comparison(
        a=a, b=b, scope=scope, rate_a=rate_a, rate_b=rate_b, difference=diff, difference_interval=interval,
        test=test, p_value=p, table=table, pairs=len(paired), moved=dict(moved.most_common()),
        codes_a=counts(by_ver[a]), codes_b=counts(by_ver[b]),
        excluded={v: int(rows["persona_code"].isin(excluded).sum()) for v, rows in by_ver.items()},
        paired=paired_diff,
    )


def render_comparison(c: Comparison) -> str:
    def pct(x):
        return "—" if x is None else f"{x * 100:+.1f}%p"

    lines = [
        f"# 프롬프트 버전 비교: {md_cell(c.a)} → {md_cell(c.b)}", "", f"범위: {md_cell(c.scope)}", "",
        "| 버전 | 어긋난 턴 / 판정한 턴 | 95% Wilson 구간 | 판정에서 뺀 턴 |", "|---|---|---|---|",
        f"| {md_cell(c.a)} | {c.rate_a.format()} | {c.rate_a.format_interval()} | {c.excluded.get(c.a, 0)} |",
        f"| {md_cell(c.b)} | {c.rate_b.format()} | {c.rate_b.format_interval()} | {c.excluded.get(c.b, 0)} |",
        "",
    ]
    if c.paired is not None:
        d = c.paired
        lines += [
            f"**짝지은 차이 ({md_cell(c.b)} − {md_cell(c.a)})**: {pct(d.difference)}, 95% 구간 [{pct(d.interval[0])}, {pct(d.interval[1])}] "
            f"(짝 {d.pairs}쌍)", "",
            f"불일치 짝: {md_cell(c.a)}에서만 어긋남 {d.only_a}쌍 · {md_cell(c.b)}에서만 어긋남 {d.only_b}쌍 "
            f"(둘 다 어긋남 {d.both}, 둘 다 일치 {d.neither})", "",
            f"구간: {d.how()}", "",
        ]
    lines += [
        f"두 비율의 차이 ({md_cell(c.b)} − {md_cell(c.a)}, 짝 없는 턴 포함): {pct(c.difference)}"
        + (f", 95% Newcombe 구간 (독립 표본) [{pct(c.difference_interval[0])}, {pct(c.difference_interval[1])}]" if c.difference_interval else "")
        + (" — 짝을 무시한 구간이라 위의 짝지은 구간을 봅니다." if c.paired is not None else ""),
        "",
        f"검정: {c.test}, p = {'—' if c.p_value is None else f'{c.p_value:.4g}'}",
        "",
    ]
    if c.pairs:
        t = c.table
        lines += ["| 짝 (A 행, B 열) | B 어긋남 | B 일치 |", "|---|---|---|",
                  f"| A 어긋남 | {t[0][0]} | {t[0][1]} (A에서만) |", f"| A 일치 | {t[1][0]} (B에서만) | {t[1][1]} |", ""]
    lines += ["## 움직인 판정 코드 (짝지은 시나리오)", ""]
    lines += [f"- {md_cell(k)}: {v}" for k, v in c.moved.items()] or ["- 없음"]
    codes = sorted(set(c.codes_a) | set(c.codes_b))
    lines += ["", "| 코드 | " + md_cell(c.a) + " | " + md_cell(c.b) + " |", "|---|---|---|"]
    lines += [f"| {md_cell(k)} | {c.codes_a.get(k, 0)} | {c.codes_b.get(k, 0)} |" for k in codes]
    lines += ["", "합성 데이터의 두 버전을 같은 팀이 만들었으므로 차이는 비교 절차가 동작함을 보일 뿐 프롬프트 품질을 증명하지 못합니다.", ""]
    return "\n".join(lines)
