"""Vetting a model-written summary with the seed's own checks before it may replace a row's template."""

from __future__ import annotations

import re

from rules.common.checks import column_problem, dataset_columns, hashable
from rules.common.normalised import Normalised
from rules.live_pick.checks import _Context, _evidence_problem
from rules.live_pick.config import LivePickConfig
from schemas.live_pick import DOMAIN, INPUT_DATASETS


WRONG_VERDICT, MISSING_COLUMN, CHANGED_VALUE, IMPOLITE = "wrong_verdict", "missing_column", "changed_value", "impolite"
MISSING_NUMBER, CHANGED_NUMBER = "missing_number", "changed_number"


def summary_checker(norm: Normalised, rows: list[dict], config: LivePickConfig):
    """A function (row, model answer) → None when the model's summary may replace the row's
    template sentence, else the reason code of the first check it fails (seed checks 1, 6, 7, 8,
    and the numbers the template states)."""
    from rules.common.korean import is_polite

    ctx = _Context(norm, rows, config)
    known = dataset_columns(DOMAIN, INPUT_DATASETS)

    def problem(row: dict, answer: dict) -> str | None:
        if answer.get("verdict") != row["verdict"]:
            return WRONG_VERDICT
        cited = answer.get("evidence")
        for e in cited if isinstance(cited, list) else []:
            if not isinstance(e, dict) or column_problem(known, hashable(e.get("dataset")), hashable(e.get("field"))):
                return MISSING_COLUMN
            if _evidence_problem(ctx, row["msg_id"], ctx.expected[row["msg_id"]], e):
                return CHANGED_VALUE
        summary = answer["summary"]
        named = set(re.findall(r"[A-Za-z]+(?:_[A-Za-z]+)+", summary))  # column-like names in the sentence itself
        if named - {c for cols in known.values() for c in cols}:
            return MISSING_COLUMN
        if not is_polite(summary):
            return IMPOLITE
        stated, template = numbers_in(summary), numbers_in(row["summary"])
        evidence_numbers = {_number(e.get("value")) for e in row["evidence"]} - {None}
        if not stated <= template | evidence_numbers:
            return CHANGED_NUMBER
        if not template <= stated:
            return MISSING_NUMBER
        return None

    return problem


def numbers_in(text: str) -> set[str]:
    """The numbers a sentence states, thousands separators dropped ("5,000원" → "5000")."""
    return {m.replace(",", "") for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


def _number(v) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return str(int(v)) if float(v).is_integer() else str(v)
