"""The live_pick domain for the command line."""

from __future__ import annotations

from orchestration.domains import Domain
from orchestration.domains.wiring import day_loader, wire


def reporting():
    """The report builder and golden loader, imported when a report is made (they load the statistics libraries)."""
    from evals.live_pick import build_report, load_golden

    return build_report, load_golden


def domain() -> Domain:
    from rules.live_pick.checks import run_checks
    from rules.live_pick.config import load_config
    from rules.live_pick.engine import judge, records
    from rules.live_pick.normalise import normalise, read_input_dir
    from rules.live_pick.summaries import WRITERS, write_summaries
    from rules.live_pick.tags import NAMES

    def judge_tables(norm, config, tags, summaries="template"):
        verdicts = judge(norm.chat, norm.sheet, norm.relation, config, tags)
        return write_summaries(verdicts, norm, config, summaries)

    return wire(
        "live_pick",
        day_loader(read_input_dir, normalise, load_config, "live_chat", "sent_at"),
        judge_tables,
        records, run_checks, load_config, reporting,
        tag_sources=NAMES, summary_writers=WRITERS,
    )
