"""Output rows as a frame: a feature frame's output columns with the explanation set beside them."""

from __future__ import annotations

import pandas as pd


def output_frame(f: pd.DataFrame, columns: list[str], **added: list) -> pd.DataFrame:
    """`f.assign(**added)[columns].reset_index(drop=True)`, each added list an object column, without
    copying the feature columns the output leaves out (`assign` copied every one of them: 2–4% of a
    judge at 10⁶ rows)."""
    index = pd.RangeIndex(len(f))
    data = {c: pd.Series(added[c], index=index, dtype=object) if c in added else pd.Series(f[c].array, index=index, name=c)
            for c in columns}
    return pd.DataFrame(data, index=index, columns=columns)
