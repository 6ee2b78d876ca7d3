"""live_pick tagger agreement: every tagger's tags from `body` against the gold `topic_tags`.

Measured on every judged chat line (quarantined lines have no trustworthy gold tags), for each
tagger side by side (lexicon and kiwi always; openai when its endpoint is configured). What is
scored is the tagger's *answer* (what it read from the body, stored in each row's provenance),
before the vocabulary rule discards an answer with an out-of-vocabulary tag; a line the tagger
leaves untagged counts as the empty set. Besides tag agreement, the lines are judged twice —
gold tags, tagger tags — and the verdicts that change are counted and listed.
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


def measured_taggers(env=None) -> list[str]:
    """The taggers the runner scores: the offline ones, and openai when its endpoint is set."""
    import os

    env = os.environ if env is None else env
    return ["lexicon", "kiwi"] + (["openai"] if env.get("VERDICTS_OPENAI_URL") and env.get("VERDICTS_OPENAI_MODEL") else [])


def measure_dir(domain, input_dir, taggers: list[str] | None = None) -> dict[str, TaggerAgreement]:
    """Judge a live_pick folder with gold and with each tagger (the `judge --tags` paths) and compare."""
    gold_run = domain.judge_dir(input_dir, tags="gold")
    chat = gold_run.normalised.chat
    verdicts = lambda rows: {r["msg_id"]: r["verdict"] for r in rows}  # noqa: E731
    out = {}
    for name in taggers or measured_taggers():
        run = domain.judge_dir(input_dir, tags=name)
        answers = {r["msg_id"]: r["provenance"]["answer"] for r in run.rows}
        model = pd.Series([answers.get(m) for m in chat["msg_id"]], index=chat.index, dtype=object)
        out[name] = measure(chat, chat["topic_tags"], model, verdicts(gold_run.rows), verdicts(run.rows))
    return out


def metrics(a: TaggerAgreement, tagger: str) -> list[Metric]:
    rests = f"{tagger} 태거 · 합성 태그 · 샘플 (어휘를 쓸 때 본 줄)"
    return [
        record_metric(f"태거 태그 정확 일치 ({tagger})", "태거 태그 집합이 정답 topic_tags와 같은 줄 / 판정한 줄", a.exact, rests),
        record_metric(f"태거 태그 정밀도 ({tagger})", "정답에도 있는 (줄, 태그) / 태거가 단 (줄, 태그)", a.precision, rests),
        record_metric(f"태거 태그 재현율 ({tagger})", "태거도 단 (줄, 태그) / 정답 (줄, 태그)", a.recall, rests),
        record_metric(f"태거 태그로 바뀐 판정 ({tagger})", "태거 태그로 판정이 달라진 줄 / 판정한 줄", a.verdicts_changed, rests, NOTE),
    ]


def section(results: dict[str, TaggerAgreement]) -> tuple[str, str]:
    names = list(results)
    overview = [[n, a.exact.format(), a.precision.format(), a.recall.format(), a.verdicts_changed.format()] for n, a in results.items()]
    tags = sorted(set().union(*(a.per_tag for a in results.values()))) if results else []
    per_tag = []
    for t in tags:
        row = [t]
        for a in results.values():
            pr = a.per_tag.get(t)
            row += [pr["precision"].format(), pr["recall"].format()] if pr else ["0 / 0", "0 / 0"]
        per_tag.append(row)
    body = [md_table(["태거", "정확 일치", "정밀도", "재현율", "바뀐 판정"], overview), "",
            "태그별 (맞은 수 / 태거가 단 수 · 맞은 수 / 정답 수):", "",
            md_table(["태그", *[f"{n} {k}" for n in names for k in ("정밀도", "재현율")]], per_tag)]
    for n, a in results.items():
        if a.changed:
            body += ["", f"{n} 태그로 판정이 바뀐 줄:", "", md_table(
                ["msg_id", "정답 태그", "태거 태그", "정답 태그 판정", "태거 태그 판정"],
                [[c["id"], ", ".join(c["gold_tags"]) or "—", ", ".join(c["model_tags"]) or "—", c["gold_verdict"], c["model_verdict"] or "—"]
                 for c in a.changed])]
    return "태거 일치 (본문 태거 vs 정답 topic_tags, 샘플: 어휘를 쓸 때 본 줄)", "\n".join(body)


def add_to_report(report: Report, results: dict[str, TaggerAgreement]) -> Report:
    """Every tagger's figures join the live_pick report's metrics, and one side-by-side section."""
    for name, a in results.items():
        report.metrics.extend(metrics(a, name))
    report.extra_sections.append(section(results))
    return report
