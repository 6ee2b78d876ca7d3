"""Normalised tables through storage: which columns are kept, and missing values on the way back."""

from __future__ import annotations

import pandas as pd

from schemas import columns


def stored_columns(domain: str, dataset: str) -> list[str]:
    """The columns kept when a normalised table is stored: where each row came from, and the schema's columns."""
    return ["file", "line", *columns(domain, dataset)]


def nulls_as_none(frame: pd.DataFrame, floats: bool = False) -> pd.DataFrame:
    """None for missing values in object columns (and in float ones, which then hold objects), in place."""
    for col in frame.columns:
        if frame[col].dtype == object or (floats and frame[col].dtype == float):
            frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return frame
