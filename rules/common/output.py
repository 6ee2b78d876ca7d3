"""Output rows as a frame: a feature frame's output columns with the explanation set beside them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rules.common.json_columns import Encoded


def output_frame(f: pd.DataFrame, columns: list[str], **added: list) -> pd.DataFrame:
    """`f.assign(**added)[columns].reset_index(drop=True)`, each added list an object column, made
    without copying a column: `assign` copied every feature column, and a frame built of Series
    merged the columns into one block per type, copying them again (together 5% of retry's judge
    at 10⁶ rows). Each column keeps its own array (pandas leaves a frame so built unconsolidated).
    An added `Encoded` column is held as its JSON texts (`Encoded.array`)."""
    data = {c: (added[c].array() if isinstance(added[c], Encoded) else _cells(added[c])) if c in added else f[c]._values
            for c in columns}
    return pd.DataFrame(data, index=pd.RangeIndex(len(f)), columns=columns, copy=False)


def _cells(values: list) -> np.ndarray:
    """A 1-D object array holding the values as they are (a list stays one cell)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
