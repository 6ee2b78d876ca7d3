"""Assigning raw lines of a flat dataset file to daily partitions.

A line belongs to the day (in the configured timezone) of its time field. A line whose time
cannot be read (broken JSON, a bad timestamp) goes with the line before it in the file, since
logs are appended in time order; lines before the first readable one go with that one. Every
line thus lands in exactly one partition, where the gates quarantine it with its reason.
"""

from __future__ import annotations

import json

import pandas as pd

from rules.common import timestamps
from rules.common.jsonl import DatasetError


def line_days(raw: pd.DataFrame, time_field: str, tz: str) -> pd.Series:
    """ISO day (YYYY-MM-DD) of every raw line, index aligned with `raw`."""
    days: list[str | None] = []
    for text in raw["text"].tolist():
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            obj = None
        stamp = timestamps.parse(obj.get(time_field), tz) if isinstance(obj, dict) else None
        days.append(timestamps.local_day(stamp.ns, tz).isoformat() if stamp else None)
    s = pd.Series(days, index=raw.index, dtype=object)
    if len(s) and s.isna().all():
        file = raw["file"].iloc[0]
        raise DatasetError(raw["dataset"].iloc[0], file, "no line has a readable timestamp to assign days", column=time_field)
    return s.ffill().bfill()
