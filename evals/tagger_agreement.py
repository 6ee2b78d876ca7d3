"""live_pick tagger agreement: the offline tagger's tags from `body` against the gold `topic_tags`.

Measured on every judged chat line (quarantined lines have no trustworthy gold tags). A line
the tagger leaves untagged (nothing matched, or the answer left the vocabulary) counts as the
empty set. Besides tag agreement, the lines are judged twice — gold tags, tagger tags — and
the verdicts that change are counted and listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from evals.markdown import md_table
from evals.report import Metric, Report, record_metric
from evals.stats import Ratio

NOTE = "태그가 달라도 판정이 그대로일 수 있고, 같은 창의 순위가 바뀌면 태그가 같은 줄의 판정도 바뀔 수 있습니다."


@dataclass
class TaggerAgreement:
    exact: Ratio
    """Lines whose tagger tag set equals the gold set / judged lines."""
    precision: Ratio
    """Micro: (line, tag) pairs both agree on / pairs the tagger gave."""
    recall: Ratio
    """Micro: (line, tag) pairs both agree on / pairs in gold."""
    per_tag: dict[str, dict[str, Ratio]]
    verdicts_changed: Ratio
    changed: list[dict] = field(default_factory=list)
    """{id, gold_tags, model_tags, gold_verdict, model_verdict} per line whose verdict moved."""

    def to_dict(self) -> dict:
        return {
            "exact": self.exact.to_dict(),
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "per_tag": {t: {k: r.to_dict() for k, r in pr.items()} for t, pr in self.per_tag.items()},
            "verdicts_changed": self.verdicts_changed.to_dict(),
            "changed": self.changed,
        }


def _tag_set(value) -> frozenset[str]:
    return frozenset(value) if isinstance(value, (list, tuple)) else frozenset()


def measure(chat: pd.DataFrame, gold_tags: pd.Series, model_tags: pd.Series,
            gold_verdicts: dict[str, str], model_verdicts: dict[str, str]) -> TaggerAgreement:
    """`chat`: the judged lines (msg_id); tags index-aligned with it; verdicts by msg_id."""
    gold = [_tag_set(v) for v in gold_tags.reindex(chat.index)]
    model = [_tag_set(v) for v in model_tags.reindex(chat.index)]
    ids = list(chat["msg_id"])
    tags = sorted(set().union(*gold, *model)) if ids else []
    per_tag = {}
    for t in tags:
        both = sum(t in g and t in m for g, m in zip(gold, model))
        per_tag[t] = {"precision": Ratio(both, sum(t in m for m in model)), "recall": Ratio(both, sum(t in g for g in gold))}
    hits = sum(len(g & m) for g, m in zip(gold, model))
    changed = [
        {"id": i, "gold_tags": sorted(g), "model_tags": sorted(m), "gold_verdict": gold_verdicts[i], "model_verdict": model_verdicts.get(i)}
        for i, g, m in zip(ids, gold, model) if i in gold_verdicts and model_verdicts.get(i) != gold_verdicts[i]
    ]
    return TaggerAgreement(
        exact=Ratio(sum(g == m for g, m in zip(gold, model)), len(ids)),
        precision=Ratio(hits, sum(len(m) for m in model)),
        recall=Ratio(hits, sum(len(g) for g in gold)),
        per_tag=per_tag,
        verdicts_changed=Ratio(len(changed), sum(i in gold_verdicts for i in ids)),
        changed=changed,
    )


def measure_dir(domain, input_dir) -> TaggerAgreement:
    """Judge a live_pick folder with gold and with tagger tags (the `judge --tags` paths) and compare."""
    from rules.live_pick.tags import tag_source

    gold_run = domain.judge_dir(input_dir, tags="gold")
    model_run = domain.judge_dir(input_dir, tags="model")
    norm = gold_run.normalised
    verdicts = lambda rows: {r["msg_id"]: r["verdict"] for r in rows}  # noqa: E731
    return measure(norm.chat, norm.chat["topic_tags"], tag_source("model").tags(norm.chat, norm.sheet),
                   verdicts(gold_run.rows), verdicts(model_run.rows))


def metrics(a: TaggerAgreement) -> list[Metric]:
    rests = "오프라인 태거 · 합성 태그"
    return [
        record_metric("태거 태그 정확 일치", "태거 태그 집합이 정답 topic_tags와 같은 줄 / 판정한 줄", a.exact, rests),
        record_metric("태거 태그 정밀도", "정답에도 있는 (줄, 태그) / 태거가 단 (줄, 태그)", a.precision, rests),
        record_metric("태거 태그 재현율", "태거도 단 (줄, 태그) / 정답 (줄, 태그)", a.recall, rests),
        record_metric("태거 태그로 바뀐 판정", "태거 태그로 판정이 달라진 줄 / 판정한 줄", a.verdicts_changed, rests, NOTE),
    ]


def section(a: TaggerAgreement) -> tuple[str, str]:
    rows = [[t, pr["precision"].format(), pr["recall"].format()] for t, pr in a.per_tag.items()]
    body = [f"정확 일치 {a.exact.format()} · 바뀐 판정 {a.verdicts_changed.format()}", "",
            md_table(["태그", "정밀도 (맞은 / 태거)", "재현율 (맞은 / 정답)"], rows)]
    if a.changed:
        body += ["", "판정이 바뀐 줄:", "", md_table(
            ["msg_id", "정답 태그", "태거 태그", "정답 태그 판정", "태거 태그 판정"],
            [[c["id"], ", ".join(c["gold_tags"]) or "—", ", ".join(c["model_tags"]) or "—", c["gold_verdict"], c["model_verdict"] or "—"]
             for c in a.changed])]
    return "태거 일치 (본문 태거 vs 정답 topic_tags)", "\n".join(body)


def add_to_report(report: Report, a: TaggerAgreement) -> Report:
    """The tagger figures join the live_pick report's metrics and sections."""
    report.metrics.extend(metrics(a))
    report.extra_sections.append(section(a))
    return report
