"""A day's verdicts and their checks, a part at a time, fanned out over steps.

The verdicts asset is a graph of three kinds of step:

- `<domain>_judge_day` plans the day's parts (`day_plan`), works out once what every part reads of the
  whole day (retry's baselines), then judges part after part and writes the verdict rows in one
  transaction; with one check step (the default, `VERDICTS_CHECK_STEPS`), it checks each part right
  after judging it, from the rows it holds;
- `<domain>_check_parts`, one step per run of parts when there are more check steps: reads each
  part's input and verdict rows back from the warehouse and checks them (the row-by-row
  re-computation included), and gathers what the board shows of the part;
- `<domain>_checks` merges the parts' results (`rules.common.check_parts`), counts what looks
  across parts in the database, stores the check table and reports every asset check (the schema
  and the re-computation are blocking: the report does not run on verdicts that fail them).

On the Celery executor every step is a task, so the check steps of one day run on as many workers
as there are. The values between steps go through the warehouse (`step_values`).
"""

import os
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta

import pandas as pd
from dagster import (
    AssetCheckResult,
    AssetIn,
    AssetKey,
    BetaWarning,
    DynamicOut,
    DynamicOutput,
    In,
    MetadataValue,
    Nothing,
    OpExecutionContext,
    Out,
    Output,
    TimeWindowPartitionMapping,
    graph_asset,
    op,
)

from assets.common.day_plan import DayPlan, Part, PartReader, bucketed, plan_day
from assets.common.partitions import DAILY, judged_partitions
from assets.resources.step_values import step_values
from assets.resources.warehouse import BUCKET_COLUMN, WarehouseResource
from evals.markdown import md_table
from rules.common.check_parts import merged
from rules.common.checks import CheckResult
from rules.common.collector import collector_held
from rules.common.heap import release_free_memory
from rules.common.normalised import Normalised
from schemas import column_kinds

STEPS_ENV = "VERDICTS_CHECK_STEPS"
SAMPLE = 100
"""Rows kept of each verdict per part (the first by id) for the preview and the board."""
WINDOW_CHECK = ("window_complete", "every neighbouring day the verdicts read is materialised (look-ahead complete)")


def check_steps() -> int:
    """Steps a day's checks run in: 1 (the default) checks in the judging step; more fan out."""
    raw = os.environ.get(STEPS_ENV, "").strip() or "1"
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"{STEPS_ENV}={raw!r}: expected a whole number of steps") from None
    if n < 1:
        raise ValueError(f"{STEPS_ENV}={raw!r}: at least one step")
    return n


@dataclass
class PartResult:
    """What the checks of one part found, and what the board and the preview show of it."""

    part: int
    checks: list[CheckResult]
    counts: dict[str, int]
    sample: list[dict] = field(default_factory=list)


@dataclass
class Judged:
    plan: DayPlan
    window: CheckResult | None
    checked: list[PartResult]
    checks_options: dict


def check_part(c, part: Part, tables: dict, rows: list[dict], config, options: dict) -> PartResult:
    from evals.check_titles import in_korean
    from evals.report import label

    results = in_korean(c.domain, c.run_checks(Normalised(tables=tables, quarantine=pd.DataFrame()), rows, config, **options))
    labels = [label(r.get(c.verdict_key)) if isinstance(r, dict) else label(None) for r in rows]
    key = c.day_parts.verdict_key or c.output_columns[0]
    kept: dict[str, list[dict]] = {}
    for row, verdict in sorted(zip(rows, labels), key=lambda x: str(x[0].get(key)) if isinstance(x[0], dict) else ""):
        if isinstance(row, dict) and len(kept.setdefault(verdict, [])) < SAMPLE:
            kept[verdict].append(row)
    return PartResult(part.number, results, dict(Counter(labels)), [r for rows_ in kept.values() for r in rows_])


class DayReader(PartReader):
    """A part's tables as the rules read them: restored, with the domain's history and day window."""

    def tables(self, part: Part) -> tuple[dict, dict]:
        c, config = self.c, self.config
        if c.window:
            per_day, buckets = {}, {}
            for d in self.plan.days:
                raw, found = self.raw_tables(part, d)
                per_day[d] = {**c.restore(raw, config), "quarantine": self.quarantine(part, d)}
                buckets.update(found)
            tables = c.window.combine(per_day, self.plan.day, config)
        else:
            raw, buckets = self.raw_tables(part, self.plan.day)
            tables = c.restore(raw, config)
        if c.history:
            tables = c.history(tables, self.warehouse, config, self.plan.day)
        return tables, buckets

    def events(self):
        """The day's event rows a part at a time, restored (for what a day's parts read of the whole day):
        the rows the parts read, each part's in one read through the index over the partition and the
        bucket. Blocks in line order would each sort the day's rows again (no index holds that order),
        which grows with the square of the day: an hour before the first part of a 10⁷-row retry day."""
        c, day = self.c, self.plan.day
        whole = {d: self._whole_table(d) for d in c.day_parts.whole}
        for d in bucketed(c):
            if d in c.time_fields and self.warehouse.has_table(c.table(d)):
                for part in self.plan.parts:
                    block = self.warehouse.read_buckets(c.table(d), day, part.buckets, c.json_columns)
                    if len(block):
                        yield c.restore({**whole, **_empty_others(c, d, whole), d: block}, self.config)[d]

    def whole_tables(self) -> dict:
        return c_restore_whole(self.c, {d: self._whole_table(d) for d in self.c.day_parts.whole}, self.config)

    def _whole_table(self, d: str) -> pd.DataFrame:
        if (self.plan.day, d) not in self._whole:
            self._whole[(self.plan.day, d)] = self.warehouse.read_rows(self.c.table(d), self.plan.day, self.c.json_columns)
        return self._whole[(self.plan.day, d)]


def _empty_others(c, d: str, whole: dict) -> dict:
    """Empty frames of the chunked datasets other than `d` (what a domain's `restore` expects to find)."""
    return {x: pd.DataFrame(columns=c.stored_columns(x)) for x in c.day_parts.chunked if x != d and x not in whole}


def c_restore_whole(c, whole: dict, config) -> dict:
    tables = c.restore({**whole, **{x: pd.DataFrame(columns=c.stored_columns(x)) for x in c.day_parts.chunked}}, config)
    return {d: tables[d] for d in whole}


def verdicts_asset(c):
    """The verdicts asset of a domain's chain (see the module's docstring)."""
    w = c.window
    key = c.key("verdicts")
    check_titles = [*c.check_titles, WINDOW_CHECK] if w else c.check_titles
    specs = [_spec(key, name, title, name in c.blocking_checks) for name, title in check_titles]
    outputs = {s.name: s.get_python_identifier() for s in specs}
    if w:
        with warnings.catch_warnings():  # the flag is beta; it lets the first day map to the day before it
            warnings.simplefilter("ignore", BetaWarning)
            mapping = TimeWindowPartitionMapping(start_offset=-w.before, end_offset=w.after, allow_nonexistent_upstream_partitions=True)
        upstream = {f"after_{d}": AssetIn(key=c.key(d), dagster_type=Nothing, partition_mapping=mapping)
                    for d in (*c.datasets, "quarantine")}
    else:
        upstream = {f"after_{d}": AssetIn(key=c.key(d), dagster_type=Nothing) for d in c.datasets}

    @op(name=f"{c.domain}_judge_day", ins={name: In(Nothing) for name in upstream},
        out={"parts": DynamicOut(io_manager_key="step_values"), "judged": Out(io_manager_key="step_values")})
    @collector_held
    def judge(context: OpExecutionContext, warehouse: WarehouseResource):
        day = context.partition_key
        config = c.load_config()
        days, window = _days(c, context, day)
        started = time.perf_counter()
        plan = plan_day(c, warehouse, day, days)
        planned = time.perf_counter()
        reader = DayReader(c, warehouse, plan, config)
        options = _day_options(c, reader, config)
        # What comes before the first part is read once a day: its time is logged, since it is what grows
        # with the whole day rather than with a part.
        context.log.info(f"{len(plan.parts)} parts of {plan.rows} rows planned in {planned - started:.1f} s; "
                         f"what every part reads of the day in {time.perf_counter() - planned:.1f} s")
        steps = check_steps()
        checked = []
        kinds = {**column_kinds(c.domain, c.output_schema), **({BUCKET_COLUMN: "integer"} if c.day_parts.bucketed else {})}
        with warehouse.writes() as writes:
            out = writes.table(c.table("verdicts"), day, json_columns=c.verdict_json_columns, kinds=kinds,
                               index_columns=(c.output_columns[0], *((("partition_key", BUCKET_COLUMN),) if c.day_parts.bucketed else ())))
            kept = {name: writes.table(c.table(name), day, kinds=w.kept[name]) for name in (w.kept if w else ())}
            for part in plan.parts:
                tables, buckets = reader.tables(part)
                verdicts = c.judge(tables, config, **options["judge"])
                stored = verdicts[c.output_columns]
                if c.day_parts.bucketed:
                    stored = stored.assign(**{BUCKET_COLUMN: pd.array(
                        [buckets.get(k) for k in verdicts[c.day_parts.verdict_key].tolist()], dtype="Int64")})
                out.append(stored)
                for name, frame in (w.keep(tables, config).items() if w else ()):
                    kept[name].append(frame)
                del stored
                if steps == 1:
                    checked.append(check_part(c, part, tables, c.records(verdicts), config, options["checks"]))
                context.log.debug(f"part {part.number + 1} of {len(plan.parts)}: {len(verdicts)} verdict rows")
                # A part's tables and verdicts go before the next is read, and the heap's free pages with
                # them: a unit is never split (a generated 10⁶-row live_pick day has a window of 176,472
                # lines), so parts differ several-fold, and what a large part freed stays resident otherwise.
                del tables, buckets, verdicts
                release_free_memory()
        if steps > 1:
            for n, group in enumerate(plan.groups(steps)):
                yield DynamicOutput(group, output_name="parts", mapping_key=f"parts_{n}")
        yield Output(Judged(plan, window, checked, options["checks"]), "judged",
                     metadata={"parts": len(plan.parts), "rows_read": plan.rows, "check_steps": steps})

    @op(name=f"{c.domain}_check_parts", out=Out(io_manager_key="step_values"))
    @collector_held
    def check_parts(context: OpExecutionContext, judged: Judged, parts: tuple, warehouse: WarehouseResource):
        config = c.load_config()
        reader = DayReader(c, warehouse, judged.plan, config)
        found = []
        for part in parts:
            tables, _ = reader.tables(part)
            rows = c.records(warehouse.read_buckets(c.table("verdicts"), judged.plan.day, part.buckets, c.verdict_json_columns,
                                                    unbucketed=part.first) if c.day_parts.bucketed
                             else warehouse.read_rows(c.table("verdicts"), judged.plan.day, c.verdict_json_columns))
            found.append(check_part(c, part, tables, rows, config, judged.checks_options))
        return found

    @op(name=f"{c.domain}_checks", out={"result": Out(), **{name: Out(is_required=False) for name in outputs.values()}})
    def collect(context: OpExecutionContext, judged: Judged, found: list, warehouse: WarehouseResource):
        day = judged.plan.day
        parts = sorted([*judged.checked, *(r for group in found for r in group)], key=lambda r: r.part)
        results = merged([p.checks for p in parts], _repeated(c, warehouse, day))
        if judged.window is not None:
            results.append(judged.window)
        warehouse.replace_partition(c.table("checks"), day, pd.DataFrame([r.to_dict() for r in results]), ("failing_ids",),
                                    kinds={"passed": "boolean"})
        counts = Counter()
        for p in parts:
            counts.update(p.counts)
        sample = [r for p in parts for r in p.sample]
        rows = sum(counts.values())
        yield Output(None, "result", metadata={
            "rows": rows,
            "verdicts": MetadataValue.md(md_table(["verdict", "rows"], [[v, counts.get(v, 0)] for v in c.verdict_order])),
            "preview": MetadataValue.md(c.preview(sample) or "—"),
            "parts": len(judged.plan.parts),
        })
        for r in results:
            yield AssetCheckResult(
                asset_key=key, check_name=_dagster_name(r.id), passed=r.passed, description=r.detail or r.title,
                metadata={"check": r.title, "failing": len(r.failing_ids), "failing_ids": MetadataValue.json(r.failing_ids[:200])},
            )

    def compose(**after):
        parts, judged = judge(**after)
        found = parts.map(lambda group: check_parts(judged, group)).collect()
        done = collect(judged, found)
        return {"result": done.result, **{name: getattr(done, name) for name in outputs.values()}}

    with warnings.catch_warnings():  # the asset's own IO manager is a beta parameter of graph assets
        warnings.simplefilter("ignore", BetaWarning)
        verdicts = graph_asset(
            compose,
            key=key,
            group_name=c.domain,
            ins=upstream,
            partitions_def=judged_partitions(w.after) if w else DAILY,
            description=c.verdicts_description,
            check_specs=specs,
            automation_condition=w.automation_condition if w else None,
            resource_defs={"step_values": step_values},
        )
    return verdicts


def _spec(key: AssetKey, name: str, title: str, blocking: bool):
    from dagster import AssetCheckSpec

    return AssetCheckSpec(name, asset=key, blocking=blocking, description=title)


def _dagster_name(result_id: str) -> str:
    from evals.check_titles import dagster_name

    return dagster_name(result_id)


def _days(c, context: OpExecutionContext, day: str) -> tuple[list[str], CheckResult | None]:
    """The partitions a day's verdicts read (a window's materialised neighbours), and the window check."""
    w = c.window
    if not w:
        return [day], None
    done = context.instance.get_materialized_partitions(c.key(c.datasets[0]))
    days, missing = [], []
    for k in range(-w.before, w.after + 1):
        d = date.fromisoformat(day) + timedelta(days=k)
        if d.isoformat() == day or d.isoformat() in done:
            days.append(d.isoformat())
        elif d >= DAILY.start.date():  # days before the first partition hold no data by definition
            missing.append(d.isoformat())
    result = CheckResult(
        WINDOW_CHECK[0], WINDOW_CHECK[1], not missing, missing,
        f"not materialised: {', '.join(missing)}; what depends on them is provisional" if missing else "",
    )
    return days, result


def _day_options(c, reader: DayReader, config) -> dict:
    """What judging and checking a part read of the whole day (`DayParts.day_context`)."""
    found = c.day_parts.day_context
    if found is None:
        return {"judge": {}, "checks": {}}
    return found(reader.events, reader.whole_tables(), config)


def _repeated(c, warehouse: WarehouseResource, day: str) -> dict[str, dict[str, str]]:
    """Per check, the rows stating a value another row of the day states too (`DayParts.repeats`)."""
    out: dict[str, dict[str, str]] = {}
    table, key = c.table("verdicts"), c.day_parts.verdict_key
    if not c.day_parts.repeats or not warehouse.has_table(table):
        return out
    for r in c.day_parts.repeats:
        found = warehouse.query(f'SELECT "{r.column}", COUNT(*) FROM "{table}" WHERE partition_key = :p AND "{r.column}" IS NOT NULL '
                                f'GROUP BY "{r.column}" HAVING COUNT(*) > 1', {"p": day})
        if not found:
            continue
        times = dict(found)
        rows = warehouse.read_in(table, day, r.column, list(times))
        for id_, value in zip(rows[key].tolist(), rows[r.column].tolist()):
            out.setdefault(r.check, {}).setdefault(id_, r.reason(value, int(times[value])))
    return out
