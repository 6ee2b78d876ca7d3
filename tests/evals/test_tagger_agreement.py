"""Tagger agreement for live_pick: hand-counted figures on a small table, then the sample folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evals import tagger_agreement as TA
from evals.report import Report
from evals import domains
from rules.live_pick import verdicts as V
from rules.live_pick.tagger_kiwi import shared_tagger
from rules.live_pick.tagger_lexicon import LexiconTagger

SAMPLE = Path(__file__).resolve().parents[2] / "seeds" / "live_pick"


def small():
    chat = pd.DataFrame({"msg_id": ["m1", "m2", "m3", "m4"]}, index=[10, 11, 12, 13])
    gold = pd.Series([["노래"], ["노래", "작곡"], ["게임"], None], index=chat.index, dtype=object)
    model = pd.Series([["노래"], ["노래"], ["패션"], ["게임"]], index=chat.index, dtype=object)
    gold_v = {"m1": V.PICK, "m2": V.PICK, "m3": V.OUT_OF_WORLD, "m4": V.OUT_OF_WORLD}
    model_v = {"m1": V.PICK, "m2": V.PICK, "m3": V.OUT_OF_WORLD, "m4": V.PICK}
    return TA.measure(chat, gold, model, gold_v, model_v)


def test_exact_set_match_counts_none_as_empty_and_requires_the_whole_set():
    a = small()
    # m1 equal; m2 misses 작곡; m3 wrong tag; m4 gold None vs tagger 게임.
    assert (a.exact.numerator, a.exact.denominator) == (1, 4)


def test_per_tag_and_micro_precision_recall():
    a = small()
    assert {k: (r.numerator, r.denominator) for k, r in a.per_tag["노래"].items()} == {"precision": (2, 2), "recall": (2, 2)}
    assert {k: (r.numerator, r.denominator) for k, r in a.per_tag["작곡"].items()} == {"precision": (0, 0), "recall": (0, 1)}
    assert {k: (r.numerator, r.denominator) for k, r in a.per_tag["게임"].items()} == {"precision": (0, 1), "recall": (0, 1)}
    assert (a.precision.numerator, a.precision.denominator) == (2, 4)  # tagger pairs: 노래, 노래, 패션, 게임
    assert (a.recall.numerator, a.recall.denominator) == (2, 4)  # gold pairs: 노래, 노래, 작곡, 게임


def test_verdict_changes_are_counted_and_listed():
    a = small()
    assert (a.verdicts_changed.numerator, a.verdicts_changed.denominator) == (1, 4)
    assert a.changed == [{"id": "m4", "gold_tags": [], "model_tags": ["게임"],
                          "gold_verdict": V.OUT_OF_WORLD, "model_verdict": V.PICK}]


def test_sample_agrees_with_an_independent_count_for_each_tagger():
    domain = domains.get("live_pick")
    results = TA.measure_dir(domain, SAMPLE, ["lexicon", "kiwi"])
    norm = domain.judge_dir(SAMPLE).normalised
    gold_v = {r["msg_id"]: r["verdict"] for r in domain.judge_dir(SAMPLE, tags="gold").rows}
    for name, tagger in (("lexicon", LexiconTagger()), ("kiwi", shared_tagger())):
        a = results[name]
        answers = [p.answer for p in tagger.propose(list(norm.chat["body"]))]
        same = sum(set(g or []) == set(m or []) for g, m in zip(norm.chat["topic_tags"], answers))
        assert (a.exact.numerator, a.exact.denominator) == (same, len(norm.chat)), name
        model_v = {r["msg_id"]: r["verdict"] for r in domain.judge_dir(SAMPLE, tags=name).rows}
        assert a.verdicts_changed.numerator == sum(gold_v[k] != model_v[k] for k in gold_v), name
    lexicon, kiwi = results["lexicon"], results["kiwi"]
    assert lexicon.exact.numerator < kiwi.exact.numerator < kiwi.exact.denominator  # misses left to show
    assert kiwi.exact.numerator >= 0.95 * kiwi.exact.denominator  # the target in docs/evaluation.md
    for tag, pr in lexicon.per_tag.items():  # no tag's precision below the lexicon's
        k = kiwi.per_tag.get(tag, {}).get("precision")
        if pr["precision"].denominator and k is not None and k.denominator:
            assert k.value >= pr["precision"].value, tag


def test_report_gains_metrics_and_a_section_with_escaped_cells():
    report = Report("live_pick", "s", "t", metrics=[], labels=list(V.ORDER))
    a = small()
    a.changed[0]["id"] = "m|<4>"
    TA.add_to_report(report, {"lexicon": a, "kiwi": small()})
    names = [m.name for m in report.metrics]
    assert names[:4] == ["태거 태그 정확 일치 (lexicon)", "태거 태그 정밀도 (lexicon)", "태거 태그 재현율 (lexicon)",
                         "태거 태그로 바뀐 판정 (lexicon)"]
    assert names[4] == "태거 태그 정확 일치 (kiwi)" and len(names) == 8
    assert report.metrics[0].ratio is a.exact
    heading, body = report.extra_sections[0]
    assert "태거" in heading and "| 작곡 | 0 / 0 | 0 / 1 | 0 / 0 | 0 / 1 |" in body  # side by side
    assert "m\\|&lt;4&gt;" in body


# -- the held-out set: lines the vocabularies were not written from ------------------------------

def test_heldout_figures_agree_with_an_independent_count_and_the_report_says_which_set_is_which():
    from evals import tagger_heldout as TH
    from rules.live_pick.tagger_kiwi import VOCABULARY_PATH

    chat = TH.read_heldout()
    assert len(chat) >= 200 and chat["msg_id"].is_unique and chat["body"].is_unique
    assert sum(not t for t in chat["topic_tags"]) >= 30 and sum(len(t) > 1 for t in chat["topic_tags"]) >= 10
    # the held-out lines are not written into either vocabulary
    vocab_text = VOCABULARY_PATH.read_text(encoding="utf-8") + (VOCABULARY_PATH.parent / "lexicon.yaml").read_text(encoding="utf-8")
    assert not [b for b in chat["body"] if len(b) >= 5 and b in vocab_text]
    heldout = TH.measure_heldout(["lexicon", "kiwi"])
    for name, tagger in (("lexicon", LexiconTagger()), ("kiwi", shared_tagger())):
        answers = [set(p.answer or []) for p in tagger.propose(list(chat["body"]))]
        gold = [set(t) for t in chat["topic_tags"]]
        a = heldout[name]
        assert (a.exact.numerator, a.exact.denominator) == (sum(g == m for g, m in zip(gold, answers)), len(chat)), name
        assert (a.precision.numerator, a.precision.denominator) == (sum(len(g & m) for g, m in zip(gold, answers)), sum(map(len, answers)))
        assert (a.recall.numerator, a.recall.denominator) == (sum(len(g & m) for g, m in zip(gold, answers)), sum(map(len, gold)))
    sample = TA.measure_dir(domains.get("live_pick"), SAMPLE, ["lexicon", "kiwi"])
    assert heldout["kiwi"].exact.value < sample["kiwi"].exact.value  # the sample's figure is fitted
    report = Report("live_pick", "s", "t", metrics=[], labels=list(V.ORDER))
    TA.add_to_report(report, sample)
    TH.add_to_report(report, sample, heldout)
    fitted = next(m for m in report.metrics if m.name == "태거 태그 정확 일치 (kiwi)")
    assert fitted.held_out is heldout["kiwi"].exact and TH.FITTED_NOTE in fitted.note and report.honesty[0] == TH.FITTED_NOTE
    names = [m.name for m in report.metrics][8:]
    assert names[:3] == ["태거 태그 정확 일치 (lexicon · 보류 세트)", "태거 태그 정밀도 (lexicon · 보류 세트)", "태거 태그 재현율 (lexicon · 보류 세트)"]
    title, body = report.extra_sections[-1]
    assert title == "태거 일치: 샘플과 보류 세트"
    assert f"| kiwi | {TH.SAMPLE_LABEL} | {sample['kiwi'].exact.format()} |" in body
    assert f"| kiwi | {TH.HELDOUT_LABEL} | {heldout['kiwi'].exact.format()} |" in body


def test_a_heldout_label_outside_its_characters_vocabulary_is_refused(tmp_path):
    import json

    import pytest

    from evals import tagger_heldout as TH

    bad = tmp_path / "set.jsonl"
    bad.write_text(json.dumps({"id": "X-1", "character_id": "CH-0008", "body": "노래 불러 줘", "topic_tags": ["노래"]}, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    with pytest.raises(ValueError, match="outside their character's vocabulary"):
        TH.measure_heldout(["lexicon"], bad)
