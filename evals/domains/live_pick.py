"""live_pick in the evaluation layer: its report, board, generator and the taggers' agreement."""

from __future__ import annotations

from pathlib import Path

from evals.domains.domain import Domain
from evals.generate.live_pick import generate
from evals.markdown import md_table
from rules.live_pick import verdicts as V
from rules.live_pick.spec import SPEC


def reporting():
    from evals.live_pick import build_report, load_golden

    return build_report, load_golden


def board():
    from evals.boards.live_pick import BOARD

    return BOARD


def preview(rows: list[dict]) -> str:
    picks = [[r["window_start"], r["character_id"], r["rank_in_window"], r["msg_id"], r["summary"]]
             for r in rows if r["verdict"] == V.PICK][:30]
    return md_table(["window_start", "character_id", "rank", "msg_id", "summary"], picks) if picks else ""


def extras(domain: Domain, input_dir: Path, judged, report) -> dict:
    """The week-2 evaluation's agreement of every tagger with the gold tags: on the judged input
    (the sample, whose chat the vocabularies were written from), and on the held-out labelled set
    (`evals/heldout/live_pick_tags.jsonl`, which they were not), side by side."""
    from evals import tagger_agreement, tagger_heldout

    results = tagger_agreement.measure_dir(domain, input_dir)
    tagger_agreement.add_to_report(report, results)
    heldout = tagger_heldout.measure_heldout(list(results))
    tagger_heldout.add_to_report(report, results, heldout)
    return {"tagger_agreement": {name: a.to_dict() for name, a in results.items()},
            "tagger_agreement_heldout": {name: a.to_dict() for name, a in heldout.items()},
            "tagger_agreement_sets": {"tagger_agreement": "the judged input (the sample: the vocabularies were written from it)",
                                      "tagger_agreement_heldout": f"{tagger_heldout.HELDOUT.name}: lines the vocabularies were not written from"}}


FITTED_VOCABULARIES = {"lexicon": "lexicon.yaml", "kiwi": "topic_lemmas.yaml"}
"""Taggers whose vocabulary (in rules/live_pick/) was written with the sample chat in view."""


def tagger(rows: list[dict]) -> str | None:
    """The tagger(s) the rows were judged with, from their provenance (gold when none says), with
    the vocabulary file's hash for a tagger that reads one."""
    from collections import Counter

    from evals.pins import file_pin

    used = Counter((r.get("provenance") or {}).get("tagger", "gold") if isinstance(r.get("provenance"), dict) else "gold"
                   for r in rows if isinstance(r, dict))
    if not used:
        return None
    folder = Path(SPEC.engine.__file__).parent

    def named(name: str) -> str:
        vocab = FITTED_VOCABULARIES.get(name)
        return f"{name} ({vocab} sha256:{file_pin(folder / vocab)[:12]})" if vocab else name

    return ", ".join(named(t) for t, _ in used.most_common())


def fitted(facts) -> list[str]:
    """Verdicts judged with a tagger fitted to the sample, on that sample, carry figures fitted to it."""
    names = [t for t in FITTED_VOCABULARIES if facts.tagger and facts.tagger.startswith(t)]
    if not (names and facts.sample_data):
        return []
    return [f"이 실행의 태그는 {names[0]} 태거가 본문에서 읽었고, 그 어휘({FITTED_VOCABULARIES[names[0]]})는 이 샘플 채팅을 보며 썼습니다. "
            "이 태그로 낸 판정 수치는 표본에 맞춘 값이라 새 채팅에서 같은 값이 나온다는 뜻이 아닙니다."]


SYNTHETIC_NOTE = "채팅 로그, 캐릭터 설정표, 시청자 관계 기록도 규칙을 쓴 같은 손으로 만들었습니다. 실제 선별 품질은 실제 방송 채팅과 운영자 선택이 있어야 잴 수 있습니다."
"""Shown when the input is synthetic (the sample data, or generated)."""


DOMAIN = Domain(
    SPEC, reporting, board, generate, synthetic_note=SYNTHETIC_NOTE,
    verdicts_description="One verdict per judged chat line: which three lines each character answers per 30-second window, and why the others were left out.",
    preview=preview, extras=extras, tagger=tagger, fitted=fitted,
    report_columns=("msg_id", "verdict", "character_id", "window_start", "sheet_version", "cooldown_elapsed_sec", "provenance"),
)
