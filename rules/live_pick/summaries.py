"""Who writes each verdict's summary sentence: the rule's template, or a model.

The verdict and its evidence are the rules'; only the sentence may come from a model, and it is
kept only when it passes the seed's checks on that row (check 1: the model names the rule's
verdict; 6: every field it cites is a real column; 7: every value it cites equals the row; 8:
polite endings) and states the numbers the template states, with no number the evidence does
not hold. Otherwise the template sentence stays and `provenance.summary_fallback` says why.

    template  the rule's own sentence (default; no model involved)
    openai    an OpenAI-compatible chat-completions endpoint (rules.live_pick.model.summary)
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

import pandas as pd
import pyarrow as pa

from rules.common.arrow_json import fields_texts
from rules.common.json_columns import Encoded
from rules.live_pick.names import WRITERS



def writer(name: str):
    if name == "template":
        return None
    if name == "openai":
        from rules.live_pick.model.summary import OpenAISummaryWriter

        return OpenAISummaryWriter.from_env()
    raise ValueError(f"unknown summary writer '{name}'; available: {', '.join(WRITERS)}")


def write_summaries(verdicts: pd.DataFrame, norm, config, summaries="template") -> pd.DataFrame:
    """The verdict frame with model sentences where they pass the checks (a writer or its name)."""
    source = writer(summaries) if isinstance(summaries, str) else summaries
    if source is None or verdicts.empty:
        return verdicts
    from rules.live_pick.summary_vetting import summary_checker
    from rules.live_pick.engine import records

    rows = records(verdicts)
    answers = source.write(rows)
    problem = summary_checker(norm, rows, config)
    summaries_out, provenance = [], []
    for row, (answer, failure) in zip(rows, answers):
        reason = failure
        if reason is None:
            reason = problem(row, answer)
        keep = reason is None
        summaries_out.append(answer["summary"] if keep else row["summary"])
        provenance.append({**row["provenance"], "summary": source.name if keep else "template",
                           "summary_fallback": None if keep else reason})
    out = verdicts.copy()
    out["summary"] = summaries_out
    out["provenance"] = provenance
    return out


def summary_counts(rows: list[dict]) -> dict:
    """Per run: which writer was asked, how many model sentences were kept, how many fell back and why."""
    return provenance_counts(r.get("provenance") for r in rows)


def provenance_counts(provenances: Iterable[dict | None] | Encoded) -> dict:
    """`summary_counts` of rows' provenance values; given as JSON texts (`Encoded`), only the two
    fields counted are read, by Arrow's reader (where it can: else each text is read whole)."""
    if isinstance(provenances, Encoded):
        lines = provenances.texts.cast(pa.large_string())
        found = fields_texts(lines, ("summary", "summary_fallback"))
        if found is not None:
            summary, fallback = found
            reasons = Counter(fallback.tolist())
            reasons.pop(None, None)
            kept = Counter(summary.tolist())
            return {"kept": len(summary) - kept[None] - kept["template"], "fallback": sum(reasons.values()),
                    "reasons": dict(reasons)}
    provenances = [p or {} for p in provenances]
    kept = sum(1 for p in provenances if p.get("summary") not in (None, "template"))
    reasons = Counter(p.get("summary_fallback") for p in provenances)
    reasons.pop(None, None)
    return {"kept": kept, "fallback": sum(reasons.values()), "reasons": dict(reasons)}
