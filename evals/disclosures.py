"""Disclosures that fit the run: each honesty note shown only where it is true of this run.

What a run is made of decides them (`RunFacts`): synthetic input (the project's sample data, or
a folder `verdicts generate` wrote), golden labels written by the rules' authors (the labels'
`labelled_by` says synthetic), and a method fitted to the data it is measured on (a tagger whose
vocabulary was written from this sample). A domain adds its own (`Domain.fitted`). A figure
measured where it was fitted can carry the figure held out beside it: `mark_fitted` sets both.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from evals.report import SYNTHETIC_LABELS_NOTE, Report
from evals.stats import Ratio
from rules.common.environment import SAMPLE_DIR

SYNTHETIC_WORDS = ("synthetic", "합성")
GENERATED_MARK = "malformed.json"
"""`verdicts generate` writes this beside the rows it makes (`evals.generate.MALFORMED_FILE`)."""


@dataclass(frozen=True)
class RunFacts:
    sample_data: bool = False
    """The input is the project's sample data (seeds/)."""
    generated: bool = False
    """The input was written by `verdicts generate`."""
    labels_judged: int = 0
    """Golden labels paired with a judged item."""
    label_authors: tuple[str, ...] = ()
    """The `labelled_by` values of those labels."""
    tagger: str | None = None
    """The tagger the verdicts were judged with (live_pick), None where there is none."""

    @property
    def synthetic_input(self) -> bool:
        return self.sample_data or self.generated

    @property
    def synthetic_labels(self) -> bool:
        return any(w in a.lower() for a in self.label_authors for w in SYNTHETIC_WORDS)


def is_sample(folder: Path | str | None) -> bool:
    if folder is None:
        return False
    folder = Path(folder).resolve()
    return folder == SAMPLE_DIR.resolve() or SAMPLE_DIR.resolve() in folder.parents


def facts_of(report: Report, golden: list[dict] | None, input_dir: Path | str | None, tagger: str | None,
             sample: bool | None = None) -> RunFacts:
    """The run's facts: `sample` overrides the folder test (the Dagster raw root, an admin run).
    Label authors are read from the labels paired with a judged item only."""
    judged_ids = {i for i, _, _ in report.labelled}
    authors = sorted({str(g.get("labelled_by")) for g in golden or [] if g.get("labelled_by")
                      and any(isinstance(v, str) and v in judged_ids for v in g.values())})
    generated = input_dir is not None and (Path(input_dir) / GENERATED_MARK).is_file()
    return RunFacts(sample_data=is_sample(input_dir) if sample is None else sample, generated=generated,
                    labels_judged=len(report.labelled), label_authors=tuple(authors), tagger=tagger)


def disclose(report: Report, facts: RunFacts, synthetic_note: str, domain_notes: list[str]) -> Report:
    """Put the run's disclosures before the domain's standing notes, and title a synthetic run so."""
    notes = []
    if facts.synthetic_input:
        where = "이 저장소의 샘플 데이터(seeds/)" if facts.sample_data else "`verdicts generate`가 만든 합성 데이터"
        notes.append(f"입력은 {where}입니다. " + synthetic_note)
    if facts.labels_judged:
        authors = ", ".join(facts.label_authors)
        if facts.synthetic_labels:
            notes.append(f"{SYNTHETIC_LABELS_NOTE} (labelled_by: {authors})")
        elif authors:
            notes.append(f"골든 라벨을 단 사람: {authors}. 이 리포트는 그 라벨을 정답으로 봅니다.")
        else:
            notes.append("골든 라벨 파일이 라벨을 단 사람(labelled_by)을 적지 않아, 규칙을 쓴 사람과 따로 만든 라벨인지 알 수 없습니다.")
    notes += domain_notes
    report.honesty = [*notes, *[h for h in report.honesty if h not in notes]]
    if facts.synthetic_input or facts.synthetic_labels:
        report.title = f"{report.title} (합성 데이터 기준)"
    return report


def mark_fitted(report: Report, metric: str, note: str, held_out: Ratio | None = None, held_out_label: str = "보류 세트") -> Report:
    """A figure measured on the data it was fitted to: the disclosure beside it and in the honesty
    notes, and the held-out figure beside the fitted one when one was measured."""
    report.metrics = [replace(m, note=(m.note + " · " if m.note else "") + note, held_out=held_out,
                              held_out_label=held_out_label if held_out is not None else "")
                      if m.name == metric else m for m in report.metrics]
    if note not in report.honesty:
        report.honesty.insert(0, note)
    return report
