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
    """The week-2 evaluation's agreement of every tagger with the gold tags."""
    from evals import tagger_agreement

    results = tagger_agreement.measure_dir(domain, input_dir)
    tagger_agreement.add_to_report(report, results)
    return {"tagger_agreement": {name: a.to_dict() for name, a in results.items()}}


DOMAIN = Domain(
    SPEC, reporting, board, generate,
    verdicts_description="One verdict per judged chat line: which three lines each character answers per 30-second window, and why the others were left out.",
    preview=preview, extras=extras,
)
