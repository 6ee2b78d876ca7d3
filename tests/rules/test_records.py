"""Each engine's verdict records, made column by column, against the row-by-row way they were
made before: the same dicts, the same value types, the same key order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evals import domains
from rules.common.environment import SAMPLE_DIR
from rules.common.evidence import rows_of
from rules.handoff.engine import INT_COLUMNS, NULLABLE_INT_COLUMNS, NUMBER_COLUMNS


def _persona(frame: pd.DataFrame) -> list[dict]:
    out = []
    for r in frame.to_dict("records"):
        r["profile_no"] = None if pd.isna(r["profile_no"]) else r["profile_no"]
        r["hedge"] = None if r["hedge"] is None or (isinstance(r["hedge"], float) and pd.isna(r["hedge"])) else r["hedge"]
        out.append(r)
    return out


def _number(v):
    if v is None or (isinstance(v, float) and v != v):
        return None
    v = float(v)
    return int(v) if v in (0.0, 1.0) else v


def _retry(frame: pd.DataFrame) -> list[dict]:
    out = []
    for row in frame.to_dict("records"):
        row["surface_baseline"] = _number(row["surface_baseline"])
        row["max_overlap"] = _number(row["max_overlap"])
        m = row["matched_event_id"]
        row["matched_event_id"] = None if m is None or (isinstance(m, float) and m != m) else m
        out.append(row)
    return out


def _handoff(frame: pd.DataFrame) -> list[dict]:
    out = []
    for r in frame.to_dict("records"):
        for k in frame.columns:
            v = r[k]
            if not isinstance(v, (list, dict)) and (v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v))):
                r[k] = None
        for k in INT_COLUMNS:
            r[k] = int(r[k])
        for k in NULLABLE_INT_COLUMNS:
            r[k] = None if r[k] is None else int(r[k])
        for k in NUMBER_COLUMNS:
            if r[k] is not None:
                v = float(r[k])
                r[k] = int(v) if v.is_integer() else v
        r["uncited_message_ids"] = list(r["uncited_message_ids"] or [])
        out.append(r)
    return out


def _live_pick(frame: pd.DataFrame) -> list[dict]:
    out = []
    for row in frame.itertuples(index=False):
        d = row._asdict()
        for k in ("rank_in_window", "cooldown_elapsed_sec", "sheet_version"):
            d[k] = None if pd.isna(d[k]) else int(d[k])
        out.append(d)
    return out


BY_ROW = {"persona": _persona, "retry": _retry, "handoff": _handoff, "live_pick": _live_pick}


def _same_records(domain: str, folder) -> int:
    spec = domains.get(domain).spec
    frame = spec.judge(spec.load(folder)[1].tables, spec.load_config(), "gold")
    made = spec.records(frame)
    expected = BY_ROW[domain](frame[spec.output_columns])
    assert [list(r) for r in made] == [list(r) for r in expected]
    assert repr(made) == repr(expected)  # 1, 1.0 and True stay apart
    columns = spec.columns(frame)  # what `verdicts judge` writes, by column
    assert list(columns) == spec.output_columns and repr(rows_of(columns)) == repr(made)
    return len(made)


@pytest.mark.parametrize("domain", sorted(BY_ROW))
def test_sample_records_as_row_by_row(domain):
    assert _same_records(domain, SAMPLE_DIR / domain) > 0


@pytest.mark.parametrize("seed", (1, 2))
@pytest.mark.parametrize("domain", sorted(BY_ROW))
def test_generated_records_as_row_by_row(domain, seed, tmp_path):
    domains.get(domain).generate(3_000, seed, tmp_path)
    assert _same_records(domain, tmp_path) > 0


def test_a_domain_without_verdict_columns_gives_its_records_by_column():
    from tests.fixtures.tiny_domain import domain as tiny

    frame = pd.DataFrame({"note_id": ["n1", "n2"], "verdict": ["long", "short"], "length": [12, 3]})
    assert tiny.SPEC.verdict_columns is None
    assert tiny.SPEC.columns(frame) == {"note_id": ["n1", "n2"], "verdict": ["long", "short"], "length": [12, 3]}
    assert tiny.SPEC.columns(frame.iloc[:0]) == {}


@pytest.mark.parametrize("values", [
    [float("nan"), -0.0, 0.0, 1.0, 0.5, float("inf"), -1.0, 2.0, 1e-300],
    [None, 0.25, 1.0], [None, None], [0, 1, 2], [True, 0.5, None], [],
])
def test_retry_numbers_column_wise_as_one_by_one(values):
    from rules.common.evidence import plain_values
    from rules.retry.engine import _number, _numbers

    column = pd.Series(values, dtype=np.float64 if all(isinstance(v, float) for v in values) and values else object)
    plain = plain_values(column)
    assert repr(_numbers(column, plain)) == repr([_number(v) for v in plain])
