"""A domain as the command line, the evaluation runner, the board and the Dagster assets use it:
its rules' `DomainSpec` plus what the evaluation layer adds (report, board, generator, wording).

Report and board code load the statistics libraries, so they are reached through functions
that import them when a report or a page is made: judging and validating never pay for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from rules.common.spec import DomainSpec


@dataclass
class Judged:
    rows: list[dict]
    quarantine: pd.DataFrame
    reconciliation: dict
    normalised: object


@dataclass
class Domain:
    spec: DomainSpec
    reporting: Callable[[], tuple[Callable, Callable]]
    """Imports and returns the domain's (build_report, load_golden)."""
    board: Callable[[], Any]
    """Imports and returns the domain's `evals.board.BoardSpec`."""
    generate: Callable[[int, int, Path], Any]
    """(rows, seed, folder) → writes deterministic synthetic input (`verdicts generate`)."""
    verdicts_description: str
    """What one verdict row says, for the Dagster UI."""
    preview: Callable[[list[dict]], str] = lambda rows: ""
    """Markdown shown with a day's verdicts in the Dagster UI."""
    report_tables: Callable[[Any, Any], dict] | None = None
    """(the judged input, config) → extra tables `build_report` takes (handoff: every room of the day)."""
    extras: Callable[..., dict] | None = None
    """(domain, input dir, Judged, report) → extra sections and JSON of the week-2 evaluation."""
    compare: Callable[..., object] | None = None
    """(input_dir, a, b, character=None) → Comparison; for domains with prompt versions."""
    review: Callable[..., object] | None = None
    """(input_dir) → (review queue frame, candidate count, sample size)."""
    synthetic_note: str = ""
    """What a synthetic input means for this domain's figures (shown only when the input is synthetic)."""
    tagger: Callable[[list[dict]], str | None] = lambda rows: None
    """(verdict rows) → the tagger they were judged with, pinned in the report (None: the domain has none)."""
    fitted: Callable[[Any], list[str]] = lambda facts: []
    """(`evals.disclosures.RunFacts`) → disclosures of what was fitted to this run's data."""
    report_columns: tuple[str, ...] = ()
    """The verdict columns the report, its manual checks and its board read of every row (the rest
    only of the rows they explain or show); a stored day's report reads these alone (none: every
    column but the evidence)."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def tag_sources(self) -> tuple[str, ...]:
        return self.spec.tag_sources

    @property
    def summary_writers(self) -> tuple[str, ...]:
        return self.spec.summary_writers

    def check_titles(self) -> list[tuple[str, str]]:
        """The schema check, the seed's numbered checks, and the re-computation: (asset check name, title)."""
        from evals.check_titles import dagster_name, keys, title

        return [(dagster_name(k), title(self.name, k)) for k in ("schema", *keys(self.name), "recompute")]

    def judge_dir(self, input_dir: Path, day: str | None = None, tags: str = "gold", summaries: str = "template") -> Judged:
        """A folder (or one day of it) read, gated and judged as `verdicts judge` does."""
        norm, judged, config = self.spec.load(input_dir, day)
        options = {"summaries": summaries} if len(self.summary_writers) > 1 else {}
        frame = self.spec.judge(judged.tables, config, tags, **options)
        return Judged(self.spec.records(frame), norm.quarantine, norm.reconciliation(), judged)

    def judge_dir_parts(self, input_dir: Path, day: str | None = None, tags: str = "gold",
                        summaries: str = "template") -> tuple[list[Callable[[], dict[str, list]]], Judged]:
        """`judge_dir` with its rows in parts, one call per part that makes its columns (name →
        values), for writing as they come (`json_columns`, `part_writer`; the parts in order are the
        same rows in the same order; `Judged.rows` stays empty, `Judged.normalised` is None). The
        input is read and gated, and the first part judged, before this returns, so their errors are
        raised here."""
        norm, judged, config = self.spec.load(input_dir, day)
        options = {"summaries": summaries} if len(self.summary_writers) > 1 else {}
        makers = self.spec.judged_part_makers(judged.tables, config, tags, **options)
        first = self.spec.columns(makers[0]())
        parts = [lambda: first, *(partial(_columns_of_part, self.spec, make) for make in makers[1:])]
        # The gated tables are not kept (`normalised` is None): the parts hold what they read, and
        # the rest is freed before writing begins (200 MB of live_pick's 1.4 GB at 10⁶ lines).
        return parts, Judged([], norm.quarantine, norm.reconciliation(), None)

    def check_dir(self, input_dir: Path, rows: list, day: str | None = None) -> tuple[list, Judged]:
        """(check results of `rows` against the folder, the gated input), as `verdicts validate` does."""
        norm, judged, config = self.spec.load(input_dir, day)
        return self.spec.run_checks(judged, rows, config), Judged([], norm.quarantine, norm.reconciliation(), judged)

    def report(self, rows, golden, checks, quarantine, reconciliation, scope, judged=None, *, golden_path=None,
               input_dir=None, sample=None, decisions=None):
        """The golden-agreement report; `judged` is the input the rows were checked against (`Judged.normalised`), if any.
        The rest is what `finish_report` records of the run."""
        build_report, _ = self.reporting()
        config = self.spec.load_config()
        tables = self.report_tables(judged, config) if self.report_tables and judged is not None else {}
        report = build_report(rows, golden, checks=checks, quarantine=quarantine, reconciliation=reconciliation,
                              config=config, scope=scope, **tables)
        return self.finish_report(report, rows, golden, config=config, golden_path=golden_path,
                                  tables=dict(judged.tables) if judged is not None else None,
                                  input_dir=input_dir, sample=sample, decisions=decisions)

    def finish_report(self, report, rows, golden, *, config, golden_path=None, tables=None, input_dir=None, sample=None,
                      decisions=None):
        """What every report path adds to a built report, the same way (`verdicts agree`, `verdicts eval`,
        the admin pages, the Dagster report): the pinned inputs, the disclosures that fit the run, the
        manual checks' samples (`tables`: the judged input; None: unknown) and, given, the stored decisions."""
        from evals.disclosures import disclose, facts_of
        from evals.manual_checks import attach, fill_decisions
        from evals.pins import pin_run

        tagger = self.tagger(rows)
        report.pins = pin_run(config, golden_path, golden, tagger)
        facts = facts_of(report, golden, input_dir, tagger, sample)
        disclose(report, facts, self.synthetic_note, self.fitted(facts))
        attach(report, rows, tables)
        if decisions is not None:
            fill_decisions(report, decisions)
        return report

    def load_golden(self, path: Path) -> list[dict]:
        return self.reporting()[1](path)


def _columns_of_part(spec: DomainSpec, make: Callable[[], pd.DataFrame]) -> dict[str, list]:
    return spec.columns(make())
