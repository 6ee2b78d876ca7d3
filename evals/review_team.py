"""A manual check reviewed by a team: each sampled item's decisions by reviewer, the item's
majority, progress per reviewer, and the agreement between every two reviewers.

Decisions come as item id → reviewer → {decision, note, decided_at, …} (the warehouse table
`review_decisions`, one row per check, item and reviewer). Only agree / disagree are votes; a
note is a remark. An item's outcome is the majority of its votes; a tie is `split`, kept out of
the figure and listed. Between two reviewers, Cohen's kappa is taken over the items both voted
on, with that n beside it (None when undefined: both gave one and the same answer throughout).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from itertools import combinations

import yaml
from pydantic import Field

from evals.stats import cohens_kappa
from rules.common.config import Strict

AGREE, DISAGREE, NOTE = "agree", "disagree", "note"
SPLIT = "split"
VOTES = (AGREE, DISAGREE)


class ReviewConfig(Strict):
    reviewers_per_item: int = Field(2, ge=1, le=20)
    per_check: dict[str, int] = Field(default_factory=dict)

    def per_item(self, key: str) -> int:
        return self.per_check.get(key, self.reviewers_per_item)


@lru_cache(maxsize=1)
def load_config() -> ReviewConfig:
    text = (resources.files("evals") / "review.yaml").read_text(encoding="utf-8")
    return ReviewConfig.model_validate(yaml.safe_load(text) or {})


def outcome(votes: dict[str, dict]) -> str | None:
    """The item's majority of agree / disagree; `split` on a tie; `note` when only notes; None when nobody decided."""
    got = [v.get("decision") for v in votes.values()]
    agree, disagree = got.count(AGREE), got.count(DISAGREE)
    if agree == disagree:
        return SPLIT if agree else (NOTE if NOTE in got else None)
    return AGREE if agree > disagree else DISAGREE


@dataclass
class Pair:
    a: str
    b: str
    n: int
    """Items both voted on."""
    same: int
    kappa: float | None


@dataclass
class TeamReview:
    sampled: int
    per_item: int
    agreed: int = 0
    decided: int = 0
    """Items whose majority is agree or disagree."""
    split: list[str] = field(default_factory=list)
    notes_only: int = 0
    complete: int = 0
    """Items with at least `per_item` votes."""
    reviewers: dict[str, dict[str, int]] = field(default_factory=dict)
    """Reviewer → {votes, notes} over the sample."""
    pairs: list[Pair] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def summarise(sampled: list[str], decisions: dict[str, dict[str, dict]], per_item: int) -> TeamReview:
    """The team's review of one check's sample (`decisions`: item → reviewer → record)."""
    team = TeamReview(len(sampled), per_item)
    votes: dict[str, dict[str, str]] = {}
    for item in sampled:
        by = decisions.get(item, {})
        result = outcome(by)
        team.agreed += result == AGREE
        team.decided += result in VOTES
        team.notes_only += result == NOTE
        if result == SPLIT:
            team.split.append(item)
        cast = {r: v["decision"] for r, v in by.items() if v.get("decision") in VOTES}
        team.complete += len(cast) >= per_item
        for reviewer, record in by.items():
            mine = team.reviewers.setdefault(reviewer, {"votes": 0, "notes": 0})
            mine["votes" if record.get("decision") in VOTES else "notes"] += 1
        for reviewer, decision in cast.items():
            votes.setdefault(reviewer, {})[item] = decision
    for a, b in combinations(sorted(votes), 2):
        shared = [i for i in sampled if i in votes[a] and i in votes[b]]
        if not shared:
            continue
        left, right = [votes[a][i] for i in shared], [votes[b][i] for i in shared]
        team.pairs.append(Pair(a, b, len(shared), sum(x == y for x, y in zip(left, right)),
                               cohens_kappa(left, right, list(VOTES))))
    return team


def pair_text(p: Pair) -> str:
    """"A–B: κ 0.62 (n=14, 같은 판단 12건)"; an undefined kappa says why."""
    kappa = f"κ {p.kappa:.2f}" if p.kappa is not None else "κ 정의되지 않음 (두 사람 모두 한 가지 판단만 함)"
    return f"{p.a}–{p.b}: {kappa} (n={p.n}, 같은 판단 {p.same}건)"
