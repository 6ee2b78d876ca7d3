"""A `Domain` wired from a domain's rule functions; each domain module passes only its own.

Every domain reads and gates a folder the same way around its rules: judge the gated input,
check verdict rows against it, and build the report with the current config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from orchestration.domains import Domain, Judged

Loader = Callable[[Path, "str | None"], tuple[Any, Any, Any]]
"""(input_dir, day) → (the gated input, what the rules judge and check, config)."""


def day_loader(read_input_dir: Callable, normalise: Callable, load_config: Callable, dataset: str, time_field: str) -> Loader:
    """Read a folder, keep `dataset`'s lines of the day (Asia/Seoul, by `time_field`) when one is given, and gate it."""
    from rules.common.days import line_days

    def load(input_dir: Path, day: str | None):
        config = load_config()
        raw = read_input_dir(input_dir)
        lines = raw[dataset]
        if day and len(lines):
            raw[dataset] = lines[line_days(lines, time_field, config.timezone) == day].reset_index(drop=True)
        norm = normalise(raw, config)
        return norm, norm, config

    return load


def wire(
    name: str,
    load: Loader,
    judge: Callable[[Any, Any, str], Any],
    records: Callable,
    run_checks: Callable,
    load_config: Callable,
    reporting: Callable[[], tuple[Callable, Callable]],
    report_tables: Callable[[], dict] = dict,
    **options,
) -> Domain:
    """The domain for the command line: `judge(judged input, config, tags, **judge_options)` gives the verdict frame
    (live_pick takes `summaries`, the summary writer's name),
    `reporting()` imports and returns the domain's (build_report, load_golden) — only when a report is asked for,
    so judging and validating never load the statistics libraries —
    `report_tables()` any extra tables `build_report` takes; `options` are the optional `Domain` fields."""

    def judge_dir(input_dir: Path, day: str | None = None, tags: str = "gold", **judge_options) -> Judged:
        norm, judged, config = load(input_dir, day)
        return Judged(records(judge(judged, config, tags, **judge_options)), norm.quarantine, norm.reconciliation(), judged)

    def check_dir(input_dir: Path, rows: list, day: str | None = None):
        norm, judged, config = load(input_dir, day)
        return run_checks(judged, rows, config), Judged([], norm.quarantine, norm.reconciliation(), judged)

    def report(rows, golden, checks, quarantine, reconciliation, scope):
        build_report, _ = reporting()
        return build_report(rows, golden, checks=checks, quarantine=quarantine, reconciliation=reconciliation,
                            config=load_config(), scope=scope, **report_tables())

    def load_golden(path: Path) -> list[dict]:
        return reporting()[1](path)

    return Domain(name, judge_dir, check_dir, report, load_golden, **options)
