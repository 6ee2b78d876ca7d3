"""Many-to-one left joins by looking rows up, without copying the left table.

`left.merge(right, on=..., how="left", validate="many_to_one")` builds a new frame of every left
column as well as the looked-up ones: with live_pick's 10⁶ chat lines and their 20-odd feature
columns, two such merges took 5% of the judge. `add_looked_up` finds each left row's match once and
adds only the right table's columns to `left`, taken the way the merge takes them (a row without a
match gets NaN, NA or None as the merge gives it, integers becoming floats alike).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionDtype, take
from pandas.errors import MergeError

from rules.common.distinct import exact_factorize


def add_looked_up(left: pd.DataFrame, right: pd.DataFrame, on: list[str], columns: list[str]) -> None:
    """Add `columns` of the one `right` row matching each `left` row on `on` (NaN keys match NaN
    keys, as in a merge) to `left`, in place. Raises MergeError when `right` repeats a key."""
    clash = set(columns) & set(left.columns)
    if clash:
        raise ValueError(f"columns already in the left table: {sorted(clash)}")
    if len(on) == 1:
        keys, wanted = pd.Index(_matchable(right[on[0]])), pd.Index(_matchable(left[on[0]]))
    else:
        # Each key column as exact codes shared by both sides: a MultiIndex of the values themselves
        # would factorise text the way that stops at a NUL ("a\x00b" matching "a\x00c").
        pairs = [_joint_codes(right[c], left[c]) for c in on]
        keys = pd.MultiIndex.from_arrays([r for r, _ in pairs])
        wanted = pd.MultiIndex.from_arrays([w for _, w in pairs])
    if not keys.is_unique:
        raise MergeError("Merge keys are not unique in right dataset; not a many-to-one merge")
    at = keys.get_indexer(wanted)
    for column in columns:
        values = right[column]
        values = values.array if isinstance(values.dtype, ExtensionDtype) else values.to_numpy()
        left[column] = take(values, at, allow_fill=True)


_MISSING = object()
"""What every missing key (None, NaN, NA) becomes: a merge matches them all to one another."""


def _joint_codes(right: pd.Series, left: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of one key column on both sides, equal where the values are equal, every missing
    value (None, NaN, NA) one code, as a merge matches them."""
    both = np.concatenate([right.to_numpy(dtype=object), left.to_numpy(dtype=object)])
    codes = exact_factorize(both)[0]
    return codes[:len(right)], codes[len(right):]


def _matchable(keys: pd.Series) -> pd.Series:
    if not keys.hasnans:
        return keys
    return keys.astype(object).where(keys.notna(), _MISSING)
