"""The handoff domain for the command line.

Without --day every room in the input is judged and look-ups reach the whole input. With
--day D the input's messages are split into days (Asia/Seoul) and days D−1, D and D+1 are
gated separately and combined, exactly as the Dagster partitions are; the quarantine and
counts reported are day D's.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from orchestration.domains import Domain
from orchestration.domains.wiring import wire


def reporting():
    """The report builder and golden loader, imported when a report is made (they load the statistics libraries)."""
    from evals.handoff import build_report, load_golden

    return build_report, load_golden


def domain() -> Domain:
    from rules.common.gates import Normalised
    from rules.common.jsonl import DatasetError
    from rules.handoff.checks import run_checks
    from rules.handoff.config import load_config
    from rules.handoff.engine import day_tables, judge, records
    from rules.handoff.normalise import read_input_dir
    from rules.handoff.view import from_raw

    last: dict = {}
    """The view of the latest judge/validate call, so `agree --input` can count every room of the day."""

    def load(input_dir: Path, day: str | None):
        config = load_config()
        if day is not None:
            try:
                date.fromisoformat(day)
            except ValueError:
                raise DatasetError("chat_messages", str(input_dir), f"--day {day!r} is not a date (YYYY-MM-DD)") from None
        norm, view = from_raw(read_input_dir(input_dir), day, config)
        last.update(view=view, config=config)
        return norm, Normalised(view, norm.quarantine), config

    def side_tables() -> dict:
        """Every room of the latest day judged or checked, and the rows that held rooms back, for the report."""
        return day_tables(last["view"], last["config"]) if "view" in last else {}

    return wire("handoff", load, lambda judged, config, tags: judge(judged.tables, config),
                records, run_checks, load_config, reporting, report_tables=side_tables)
