"""The retry domain for the command line."""

from __future__ import annotations

from orchestration.domains import Domain
from orchestration.domains.wiring import day_loader, wire


def reporting():
    """The report builder and golden loader, imported when a report is made (they load the statistics libraries)."""
    from evals.retry import build_report, load_golden

    return build_report, load_golden


def domain() -> Domain:
    from rules.retry.checks import run_checks
    from rules.retry.config import load_config
    from rules.retry.engine import judge, records
    from rules.retry.normalise import normalise, read_input_dir

    return wire(
        "retry",
        day_loader(read_input_dir, normalise, load_config, "interaction_events", "sent_at"),
        lambda norm, config, tags: judge(norm.tables["interaction_events"], norm.tables["surface_catalog"], config),
        records, run_checks, load_config, reporting,
    )
