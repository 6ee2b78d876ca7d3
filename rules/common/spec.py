"""What a domain is, in one plain declaration every adapter reads.

Each `rules/<domain>/spec.py` exports `SPEC = DomainSpec(...)`: its datasets and their id and
time fields, the one `judge(tables, config, tags=None, **options)` call, the output columns and
verdict order, the checks, the expectations and the row-by-row reference. The command line, the
Dagster assets, the evaluation runner, the board, the live service and the benchmarks take a
domain's facts from here rather than restating them. Nothing here imports Dagster.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import pandas as pd

from rules.common.collector import cycle_collection_paused
from rules.common.frames import taken
from rules.common.normalised import Normalised

Loader = Callable[["DomainSpec", Path, "str | None"], tuple[Normalised, Normalised, Any]]
"""(spec, input_dir, day) → (the gated input, what the rules judge and check, config)."""


@dataclass(frozen=True)
class DomainSpec:
    name: str
    datasets: tuple[str, ...]
    """Input datasets in the order they are read and gated (schemas/<domain>/INPUT_DATASETS)."""
    id_fields: dict[str, str]
    time_fields: dict[str, str]
    """Event datasets and the field that puts a line in a day; the other datasets are reference snapshots."""
    event_dataset: str
    """The dataset whose lines the verdicts are about; its time field decides a line's day."""
    verdict_key: str
    """The output column holding the verdict ("verdict", or persona's "persona_code")."""
    verdict_order: tuple[str, ...]
    output_schema: str
    """Name of the output JSON Schema in schemas/<domain>/."""
    output_columns: list[str]
    load_config: Callable[[], Any]
    read_input_dir: Callable[[Path], dict[str, pd.DataFrame]]
    normalise: Callable[[dict, Any], Normalised]
    stored_columns: Callable[[str], list[str]]
    restore: Callable[[dict, Any], dict]
    judge: Callable[..., pd.DataFrame]
    """(normalised tables, config, tags=None, **options) → verdict frame in output columns.
    `tags` names the tagger where a domain has several (None: the config's); other domains ignore it."""
    records: Callable[[pd.DataFrame], list[dict]]
    run_checks: Callable[[Normalised, list, Any], list]
    expectations: dict[str, list]
    reference: Callable[[Normalised, Any], Any]
    """(judged input, config) → the row-by-row re-computation of the verdicts."""
    engine: ModuleType
    """The engine module; its `explain` builds evidence and summaries (the scale benchmark stubs it to time the rules alone)."""
    json_columns: tuple[str, ...] = ()
    """Normalised columns stored as JSON text."""
    verdict_json_columns: tuple[str, ...] = ("evidence",)
    verdict_columns: Callable[[pd.DataFrame], dict[str, list]] | None = None
    """`records`' values by output column, made without a dict per row; None: taken from `records`."""
    tag_sources: tuple[str, ...] = ("gold",)
    summary_writers: tuple[str, ...] = ("template",)
    load_dir: Loader | None = None
    """How a folder (and optionally one day of it) is read and gated; None: `day_loader` on the event dataset."""
    schema_dir: Path | None = None
    """Where the domain's JSON Schemas are when they are not in the `schemas` package."""
    explain_outputs: int = 3
    """How many per-row lists `engine.explain` returns (evidence, summary or reason, hedge)."""
    day_parts: Any = None
    """How the nightly chain takes a day in parts (`rules.common.units.DayParts`)."""
    part_makers: Callable[..., list[Callable[[], pd.DataFrame]]] | None = None
    """`judge` (same arguments) in consecutive parts of its rows: every verdict decided when it is
    called, then one call per part, which explains that part's rows, so a caller writing them as they
    come never holds every row's explanation, and the parts can be made in any order or process;
    None: the domain judges in one piece (see `judged_part_makers`)."""

    @property
    def event_time(self) -> str:
        return self.time_fields[self.event_dataset]

    def judged_parts(self, tables: dict, config, tags=None, **options) -> Iterator[pd.DataFrame]:
        """The verdict frame in parts, made as they are asked for. The parts joined are `judge`'s
        frame, row for row."""
        for make in self.judged_part_makers(tables, config, tags, **options):
            yield make()

    def judged_part_makers(self, tables: dict, config, tags=None, **options) -> list[Callable[[], pd.DataFrame]]:
        """One call per part of the verdict frame (`part_makers` where the domain has them, else one
        call of `judge` whole); the rules have run when they are returned, if the domain has parts."""
        if self.part_makers is None:
            return [partial(self.judge, tables, config, tags, **options)]
        return self.part_makers(tables, config, tags, **options)

    def columns(self, frame: pd.DataFrame) -> dict[str, list]:
        """`records(frame)` as columns (name → values, in the rows' key order), for writers that take
        columns (`json_columns`). Without `verdict_columns`, every row of `records` holds the
        frame's output columns, in one order."""
        if self.verdict_columns is not None:
            return self.verdict_columns(frame)
        rows = self.records(frame)
        names = list(rows[0]) if rows else []
        return {name: [r[name] for r in rows] for name in names}

    def load(self, input_dir: Path, day: str | None = None) -> tuple[Normalised, Normalised, Any]:
        """(the gated input, what the rules judge and check, config) of a folder, or of one day of it.

        The cycle collector is held meanwhile: reading makes a list per line for list fields (live_pick's
        tags, then the trimmed copy, then the shared one), and each collection set off by them walks
        every list made before (2.1 s of live_pick's 13 s load at 10⁶ lines)."""
        with cycle_collection_paused():
            return (self.load_dir or day_loader)(self, input_dir, day)


def day_loader(spec: DomainSpec, input_dir: Path, day: str | None):
    """Read a folder, keep the event dataset's lines of the day (in the config's time zone) when one is given, and gate it."""
    from rules.common.days import line_days

    config = spec.load_config()
    raw = spec.read_input_dir(input_dir)
    lines = raw[spec.event_dataset]
    if day and len(lines):
        raw[spec.event_dataset] = taken(lines, line_days(lines, spec.event_time, config.timezone).to_numpy() == day)
    norm = spec.normalise(raw, config)
    return norm, norm, config


def from_layout(schema: ModuleType, normalise: ModuleType, engine: ModuleType, verdicts: ModuleType,
                run_checks: Callable, load_config: Callable, expectations: dict, **fields) -> DomainSpec:
    """A spec whose modules follow the shared layout: `schemas.<d>` (DOMAIN, INPUT_DATASETS, OUTPUT),
    `normalise` (ID_FIELDS, TIME_FIELDS, read_input_dir, normalise, stored_columns, restore),
    `engine` (OUTPUT_COLUMNS, records, verdict_columns) and `verdicts` (ORDER). `fields` are the domain's own facts
    (event dataset, verdict key, judge, reference, …) and any departure from the layout."""
    wired = dict(
        name=schema.DOMAIN,
        datasets=schema.INPUT_DATASETS,
        output_schema=schema.OUTPUT,
        id_fields=normalise.ID_FIELDS,
        read_input_dir=normalise.read_input_dir,
        normalise=normalise.normalise,
        stored_columns=normalise.stored_columns,
        restore=normalise.restore,
        output_columns=engine.OUTPUT_COLUMNS,
        records=engine.records,
        verdict_columns=engine.verdict_columns,
        engine=engine,
        verdict_order=verdicts.ORDER,
        run_checks=run_checks,
        load_config=load_config,
        expectations=expectations,
    )
    if "time_fields" not in fields:
        wired["time_fields"] = normalise.TIME_FIELDS
    return DomainSpec(**{**wired, **fields})
