"""Great Expectations 1.x suites run on normalised tables.

GX is imported inside the function: it costs seconds to import, and only the normalisation
step needs it. Failing rows come back by index so they can join the quarantine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from rules.common.reconcile import QUARANTINE_COLUMNS

_CONTEXT = None


@dataclass
class Outcome:
    expectation: str
    column: str | None
    success: bool
    unexpected_index: list = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.expectation}({self.column})" if self.column else self.expectation


def _context():
    global _CONTEXT
    if _CONTEXT is None:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        _CONTEXT = gx.get_context(mode="ephemeral")
        _CONTEXT.variables.progress_bars = ProgressBarsConfig(globally=False)
    return _CONTEXT


def suite_columns(expectations: list[tuple[str, dict]]) -> list[str]:
    """The columns a suite reads."""
    return sorted({kw["column"] for _, kw in expectations if "column" in kw})


def warm() -> None:
    """Import GX and build its context now, ahead of the first suite."""
    _context()


def run_suite(name: str, frame: pd.DataFrame, expectations: list[tuple[str, dict]]) -> list[Outcome]:
    """Validate `frame` (its index identifies rows) against the expectations."""
    import great_expectations as gx

    ctx = _context()
    suite = gx.ExpectationSuite(name=name)
    for type_name, kwargs in expectations:
        cls = getattr(gx.expectations, "".join(p.title() for p in type_name.split("_")))
        suite.add_expectation(cls(**kwargs))
    data = frame[suite_columns(expectations)].copy()
    # GX is handed a range index (row positions) unless the frame has one; its rows are named
    # back by the frame's own labels, which `quarantine_failures` looks up.
    positional = not isinstance(frame.index, pd.RangeIndex)
    data.index = pd.RangeIndex(len(data)) if positional else frame.index
    try:
        source = ctx.data_sources.get("frames")
    except (KeyError, ValueError):
        source = ctx.data_sources.add_pandas("frames")
    asset_name = f"{name}_{id(frame)}"
    asset = source.add_dataframe_asset(asset_name)
    try:
        batch = asset.add_batch_definition_whole_dataframe("whole").get_batch(batch_parameters={"dataframe": data})
        result = batch.validate(suite, result_format="COMPLETE")
    finally:
        source.delete_asset(asset_name)
    outcomes = []
    for r in result.results:
        cfg = r.expectation_config
        index = [int(i) if hasattr(i, "__int__") else i for i in (r.result or {}).get("unexpected_index_list") or []]
        if positional:
            index = frame.index[index].tolist()
        outcomes.append(Outcome(cfg.type, cfg.kwargs.get("column"), bool(r.success), index))
    return outcomes


def quarantine_failures(dataset: str, frame: pd.DataFrame, outcomes: list[Outcome], id_field: str):
    """Split off rows any expectation flagged: (kept rows, quarantine rows)."""
    reasons: dict = {}
    for o in outcomes:
        for i in o.unexpected_index:
            reasons.setdefault(i, f"failed {o.label}")
    if not reasons:
        return frame, pd.DataFrame(columns=QUARANTINE_COLUMNS)
    bad = frame.index.isin(list(reasons))
    rows = frame[bad]
    q = pd.DataFrame(
        {
            "dataset": dataset,
            "file": rows["file"],
            "line": rows["line"],
            "id": rows[id_field],
            "reason_code": "expectation",
            "reason": [reasons[i] for i in rows.index],
            "raw": rows.drop(columns=["file", "line"]).apply(lambda r: r.to_json(force_ascii=False), axis=1),
        },
        columns=QUARANTINE_COLUMNS,
    )
    return frame[~bad], q
