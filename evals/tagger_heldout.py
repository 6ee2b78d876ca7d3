"""live_pick tagger agreement on a held-out labelled set: lines the taggers' vocabularies were not
written from.

The sample's agreement (`tagger_agreement.measure_dir`) is fitted: `lexicon.yaml` and
`topic_lemmas.yaml` were written with the sample chat in view. `heldout/live_pick_tags.jsonl`
holds 251 chat lines of nine of the sample's characters, written for this set, each labelled with
the topics a person reads in it (an empty list when none: greetings, emotes, reactions; two
topics on a few lines; banned topics on some), and never copied into a vocabulary. Each tagger
reads only the body (an `openai` tagger also gets the line's character vocabulary, as in a run);
its answer is scored against the label with the same exact-set match and micro precision and
recall as the sample (`tagger_agreement.measure`). No verdict is judged here: the set has no
viewers or windows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from evals.markdown import md_table
from evals.report import Metric, Report, record_metric
from evals.tagger_agreement import TaggerAgreement, measure

HELDOUT = Path(__file__).with_name("heldout") / "live_pick_tags.jsonl"
SAMPLE_LABEL = "샘플 (어휘를 쓸 때 본 줄)"
HELDOUT_LABEL = "보류 세트 (어휘를 쓸 때 보지 않은 줄)"
NOTE = ("보류 세트는 태거 어휘를 쓴 사람이 그 어휘와 따로 쓴 채팅이고 정답도 같은 사람이 매겼습니다. "
        "실제 방송 채팅에서의 일치율은 실제 로그와 운영자 정답이 있어야 잴 수 있습니다.")


def read_heldout(path: Path = HELDOUT) -> pd.DataFrame:
    """The set as judged lines: msg_id (its id), character_id, body, topic_tags (a list, maybe empty)."""
    rows = [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]
    for r in rows:
        if not (isinstance(r.get("body"), str) and isinstance(r.get("topic_tags"), list) and isinstance(r.get("character_id"), str)):
            raise ValueError(f"{path}: {r.get('id')!r} needs character_id, body and a topic_tags list")
    return pd.DataFrame({"msg_id": [r["id"] for r in rows], "character_id": [r["character_id"] for r in rows],
                         "body": [r["body"] for r in rows], "topic_tags": [list(r["topic_tags"]) for r in rows]})


def sample_sheet() -> pd.DataFrame:
    """The sample's character sheets: the set's characters, whatever folder the run judged."""
    from rules.common.environment import SAMPLE_DIR
    from rules.live_pick.config import load_config
    from rules.live_pick.normalise import load_dir

    return load_dir(SAMPLE_DIR / "live_pick", load_config()).sheet


def measure_heldout(taggers: list[str], path: Path = HELDOUT, sheet: pd.DataFrame | None = None) -> dict[str, TaggerAgreement]:
    """Each tagger's answers on the held-out bodies against their labels. `sheet`: the characters'
    sheets (default: the sample's), whose vocabularies every label must lie in."""
    from rules.live_pick.tags import tag_source, vocabularies

    chat = read_heldout(path)
    sheet = sample_sheet() if sheet is None else sheet
    vocab = vocabularies(chat, sheet)
    outside = [(m, t) for m, tags, v in zip(chat["msg_id"], chat["topic_tags"], vocab) for t in tags if t not in v]
    if outside:
        raise ValueError(f"{path}: labels outside their character's vocabulary: {outside[:5]}")
    out = {}
    for name in taggers:
        proposals = tag_source(name).propose(list(chat["body"]), vocab, [None] * len(chat))
        answers = pd.Series([p.answer for p in proposals], index=chat.index, dtype=object)
        out[name] = measure(chat, chat["topic_tags"], answers, {}, {})
    return out


def metrics(a: TaggerAgreement, tagger: str) -> list[Metric]:
    rests = f"{tagger} 태거 · {HELDOUT_LABEL} {a.exact.denominator}줄"
    return [
        record_metric(f"태거 태그 정확 일치 ({tagger} · 보류 세트)", "태거 태그 집합이 보류 세트 정답과 같은 줄 / 보류 세트 줄", a.exact, rests, NOTE),
        record_metric(f"태거 태그 정밀도 ({tagger} · 보류 세트)", "정답에도 있는 (줄, 태그) / 태거가 단 (줄, 태그)", a.precision, rests),
        record_metric(f"태거 태그 재현율 ({tagger} · 보류 세트)", "태거도 단 (줄, 태그) / 정답 (줄, 태그)", a.recall, rests),
    ]


def section(sample: dict[str, TaggerAgreement], heldout: dict[str, TaggerAgreement]) -> tuple[str, str]:
    rows = [[name, label, a.exact.format(), a.precision.format(), a.recall.format()]
            for name in dict.fromkeys([*sample, *heldout])
            for label, a in ((SAMPLE_LABEL, sample.get(name)), (HELDOUT_LABEL, heldout.get(name))) if a is not None]
    body = [md_table(["태거", "어느 줄", "정확 일치", "정밀도", "재현율"], rows), "",
            "샘플의 수치는 어휘를 그 샘플을 보며 썼으니 맞춘 값입니다. 새 채팅에서 기대할 수 있는 값은 보류 세트 쪽입니다. " + NOTE]
    return "태거 일치: 샘플과 보류 세트", "\n".join(body)


FITTED_NOTE = ("태거 어휘(lexicon.yaml, topic_lemmas.yaml)는 이 샘플 채팅을 보며 썼으니 샘플에서 잰 태그 일치는 맞춘 값입니다. "
               "옆에 어휘를 쓸 때 보지 않은 보류 세트의 값을 함께 적었습니다.")


def add_to_report(report: Report, sample: dict[str, TaggerAgreement], heldout: dict[str, TaggerAgreement]) -> Report:
    """The held-out metrics, the side-by-side section, and each fitted sample figure marked as such
    with its held-out figure beside it (`disclosures.mark_fitted`)."""
    from evals.disclosures import mark_fitted

    for name, a in heldout.items():
        report.metrics.extend(metrics(a, name))
        if name in sample:
            for what, ratio in (("정확 일치", a.exact), ("정밀도", a.precision), ("재현율", a.recall)):
                mark_fitted(report, f"태거 태그 {what} ({name})", FITTED_NOTE, ratio)
    report.extra_sections.append(section(sample, heldout))
    return report
