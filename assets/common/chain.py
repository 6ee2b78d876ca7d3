"""The daily chain every domain shares, built from a domain's pure functions.

raw_<dataset> → <dataset> (normalised) + quarantine → verdicts → agreement_report

Tables live in the warehouse and each write replaces its partition. Normalisation carries
two blocking checks per table (rows reconcile; the Great Expectations suite); the verdicts
carry the seed's checks, the output schema and the re-computation.
"""


import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
from dagster import (
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    AssetsDefinition,
    AutomationCondition,
    MaterializeResult,
    MetadataValue,
    asset,
    multi_asset,
)

from evals.markdown import md_table
from assets.common.partitions import DAILY, judged_partitions
from assets.common.ingest import ingest
from assets.resources.reports import ReportsResource
from rules.common.environment import SAMPLE_DIR
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource
from rules.common.atomic import write_text
from rules.common.checks import CheckResult
from rules.common.collector import collector_held
from rules.common.heap import release_free_memory
from rules.common.units import DayParts
from rules.common.normalised import Normalised
from rules.common.reconcile import empty_reference_warning, empty_references, reconcile_counts
from schemas import is_reference




@dataclass(frozen=True)
class DayWindow:
    """Verdicts of day D that read the normalised partitions D-before ... D+after.

    For rules that look across midnight (a conversation's next room may open the next day).
    The verdicts and report are then partitioned by days whose look-ahead has ended: their
    newest partition trails the raw one by `after` days, so nothing judges a day before the
    day after it exists. A neighbour that is not materialised still lets the day be judged,
    but the `window_complete` check fails and the domain marks what it could not see.
    """

    before: int
    after: int
    combine: Callable[[dict, str, Any], dict]
    """({day: {dataset: frame, "quarantine": frame}} for the days present, day D, config) -> the tables judged"""
    kept: dict[str, dict[str, str]] = field(default_factory=dict)
    """Extra tables (name -> column kinds) made by `keep`, stored with the verdicts, handed to `build_report` by name."""
    keep: Callable[[dict, Any], dict] = field(default=lambda tables, config: {})
    automation_condition: AutomationCondition | None = None
    """When to judge a day on its own (e.g. once its look-ahead partition lands)."""


@dataclass
class DomainChain:
    """What the shared chain needs of a domain (all pure functions from `rules/` and `evals/`)."""

    domain: str
    datasets: tuple[str, ...]
    id_fields: dict[str, str]
    time_fields: dict[str, str]
    """Event datasets split by day on this field; the others are reference snapshots."""
    required: Callable[[str], tuple[str, ...]]
    load_config: Callable[[], Any]
    normalise: Callable[[dict, Any], Normalised]
    stored_columns: Callable[[str], list[str]]
    json_columns: tuple[str, ...]
    restore: Callable[[dict, Any], dict]
    judge: Callable[[dict, Any], pd.DataFrame]
    """(normalised tables, config) → verdict frame in output-schema columns"""
    records: Callable[[pd.DataFrame], list[dict]]
    output_columns: list[str]
    verdict_json_columns: tuple[str, ...]
    verdict_key: str
    """The column holding the verdict ("verdict" or "persona_code")."""
    output_schema: str
    """Name of the output JSON Schema in schemas/<domain>/ (column types of the verdict table)."""
    verdict_order: tuple[str, ...]
    run_checks: Callable[[Normalised, list, Any], list[CheckResult]]
    check_titles: list[tuple[str, str]]
    """(asset check name, title) for every verdict check, in order."""
    blocking_checks: frozenset[str]
    expectations: dict[str, list]
    load_golden: Callable[[Any], list[dict]]
    build_report: Callable[..., Any]
    verdicts_description: str
    preview: Callable[[list[dict]], str] = field(default=lambda rows: "")
    report_columns: tuple[str, ...] = ()
    """The verdict columns a day's report reads of every row (`Domain.report_columns`)."""
    window: DayWindow | None = None
    """None (the default): day D's verdicts read day D only."""
    day_parts: DayParts | None = None
    """How a day is gated and judged in parts (`rules.common.units`)."""
    history: Callable[[dict, Any, Any, str], dict] | None = None
    """(tables, warehouse, config, day) → the tables with a reference snapshot replaced by its stored
    history, when the domain versions one (live_pick: every character-sheet version)."""
    board_spec: Callable[[], Any] = field(default=lambda: None)
    """`Domain.board`: imports and returns the domain's board layout (`evals.board.BoardSpec`)."""
    finish_report: Callable[..., Any] = field(default=lambda report, *args, **kwargs: report)
    """`Domain.finish_report`: pins, disclosures, manual checks and decisions, as every report path adds them."""

    def key(self, name: str) -> AssetKey:
        return AssetKey([self.domain, name])

    def table(self, name: str) -> str:
        return f"{self.domain}_{name}"

    def raw_table(self, dataset: str) -> str:
        return f"{self.domain}_raw_{dataset}"


def build_assets(c: DomainChain) -> list[AssetsDefinition]:
    from assets.common.judging import verdicts_asset

    return [_ingest_asset(c), verdicts_asset(c), _report_asset(c)]


def _ingest_asset(c: DomainChain) -> AssetsDefinition:
    """Raw tables, normalised tables and the quarantine of a day in one step: the asset graph shows each
    table, while a run pays one step's overhead for them. Any subset can be materialised (a raw table
    alone, or the normalisation of stored raw tables). The day goes through a block of lines at a time
    (`assets.common.ingest`)."""
    raw_keys = [c.key(f"raw_{x}") for x in c.datasets]
    references = [d for d in c.datasets if is_reference(c.domain, d)]

    @multi_asset(
        name=f"{c.domain}_normalise",
        specs=[
            *[AssetSpec(c.key(f"raw_{d}"), group_name=c.domain,
                        description=f"Raw lines of `{d}.jsonl` for the day, untouched, with file and line number.") for d in c.datasets],
            *[AssetSpec(c.key(d), deps=raw_keys, group_name=c.domain,
                        description=f"Normalised `{d}`: rows that passed the schema and data-quality gates.") for d in c.datasets],
            AssetSpec(c.key("quarantine"), deps=raw_keys, group_name=c.domain,
                      description="Rows that failed a gate: dataset, file, line, id, reason code, reason and raw text."),
        ],
        check_specs=[
            *[AssetCheckSpec("rows_reconcile", asset=c.key(d), blocking=True,
                             description="raw rows = normalised rows + quarantined rows for this dataset and day") for d in c.datasets],
            *[AssetCheckSpec("expectations", asset=c.key(d), blocking=True,
                             description="Great Expectations suite on the normalised table") for d in c.datasets],
            *[AssetCheckSpec("has_valid_rows", asset=c.key(d), blocking=True,
                             description=f"the reference table {d} has at least one valid row for the day") for d in references],
        ],
        partitions_def=DAILY,
        can_subset=True,
    )
    @collector_held  # a step makes a dict or list per row by the hundred thousand, free of cycles
    def _normalise(context: AssetExecutionContext, raw_files: RawFilesResource, warehouse: WarehouseResource):
        day = context.partition_key
        selected, checks = context.selected_asset_keys, context.selected_asset_check_keys
        raw_selected = {d for d in c.datasets if c.key(f"raw_{d}") in selected}
        normalising = bool(selected - set(raw_keys))
        done = ingest(c, day, raw_selected, normalising, raw_files, warehouse)
        release_free_memory()  # the day's blocks and ids are gone: the steps after start from what is held
        for d in c.datasets:
            if d in raw_selected:
                files = done.raw_files.get(d, [])
                yield MaterializeResult(asset_key=c.key(f"raw_{d}"),
                                        metadata={"rows": done.raw_rows.get(d, 0),
                                                  "files": MetadataValue.md("\n".join(f"- `{f}`" for f in files) or "none")})
        if not normalising:
            return

        # Reconcile what is stored, not what was meant to be stored.
        rec = stored_reconciliation(c, warehouse, day)
        for d in c.datasets:
            if c.key(d) in selected:
                yield MaterializeResult(asset_key=c.key(d), metadata={k: rec[d][k] for k in ("normalised", "quarantined", "raw")})
        q_table = c.table("quarantine")
        by_reason = [list(r) for r in warehouse.query(
            f'SELECT dataset, reason_code, COUNT(*) FROM "{q_table}" WHERE partition_key = :p GROUP BY dataset, reason_code '
            "ORDER BY dataset, reason_code", {"p": day})]
        preview = warehouse.read_rows(q_table, day, where="1 = 1", order_by="dataset, file, line LIMIT 100")
        quarantined = sum(r[2] for r in by_reason)
        quarantine_result = MaterializeResult(
            asset_key=c.key("quarantine"),
            metadata={
                "rows": quarantined,
                "by_reason": MetadataValue.md(md_table(["dataset", "reason_code", "rows"], by_reason) if by_reason else "No row was quarantined."),
                "rows_preview": MetadataValue.md(
                    md_table(["dataset", "line", "id", "reason"], preview[["dataset", "line", "id", "reason"]].values.tolist())
                    if quarantined else "—"
                ),
            },
        )
        if c.key("quarantine") in selected:
            yield quarantine_result
        results = []
        for d in c.datasets:
            r = rec[d]
            results.append(AssetCheckResult(
                asset_key=c.key(d), check_name="rows_reconcile", passed=bool(r["reconciles"]),
                metadata={"raw": r["raw"], "normalised": r["normalised"], "quarantined": r["quarantined"]},
                description=f"{r['raw']} raw = {r['normalised']} normalised + {r['quarantined']} quarantined",
            ))
            if d in references:
                empty = d in empty_references(c.domain, {d: r})
                results.append(AssetCheckResult(
                    asset_key=c.key(d), check_name="has_valid_rows", passed=not empty,
                    metadata={"normalised": r["normalised"], "raw": r["raw"]},
                    description=empty_reference_warning(d, r) if empty else f"{r['normalised']} valid rows",
                ))
            outcomes = done.suites.get(d, [])
            results.append(AssetCheckResult(
                asset_key=c.key(d), check_name="expectations", passed=all(o.success for o in outcomes),
                metadata={
                    "expectations": len(outcomes),
                    "results": MetadataValue.md(
                        md_table(["expectation", "result", "rows"], [[o.label, "pass" if o.success else "FAIL", len(o.unexpected_index)] for o in outcomes])
                        if outcomes else "empty table: nothing to validate"
                    ),
                },
            ))
        yield from (r for r in results if AssetCheckKey(r.asset_key, r.check_name) in checks)

    return _normalise


def stored_checks(frame: pd.DataFrame) -> list[CheckResult]:
    return [CheckResult(r["id"], r["title"], bool(r["passed"]), list(r["failing_ids"] or []), r["detail"] or "")
            for r in frame.to_dict("records")]


def stored_reconciliation(c: DomainChain, warehouse: WarehouseResource, day: str) -> dict:
    """raw = normalised + quarantined per dataset, as the day's stored tables count them."""
    q_table = c.table("quarantine")
    quarantined = dict(warehouse.query(f'SELECT dataset, COUNT(*) FROM "{q_table}" WHERE partition_key = :p GROUP BY dataset',
                                       {"p": day})) if warehouse.has_table(q_table) else {}
    return reconcile_counts({d: warehouse.count_partition(c.raw_table(d), day) for d in c.datasets},
                            {d: warehouse.count_partition(c.table(d), day) for d in c.datasets}, quarantined)


def write_report(reports: ReportsResource, domain: str, day: str, report) -> tuple[str, Any]:
    # Report code (statistics, rendering) loads here, not with the code location: every run
    # process loads the code location, and most runs (live windows) make no report.
    from evals.render import render_html, render_markdown

    folder = reports.folder(domain, day)
    md = render_markdown(report)
    write_text(folder / "report.md", md)
    write_text(folder / "report.html", render_html(report))
    write_text(folder / "report.json", json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    return md, folder


def _manual_check_tables(c: DomainChain, warehouse: WarehouseResource, day: str) -> dict[str, pd.DataFrame]:
    """The day's input tables the domain's manual checks read to find their candidates (only those,
    with the columns they read: persona's turns whole were 1.2 KB a turn held through the report)."""
    from evals.manual_checks import checks_of

    needed: dict[str, set | None] = {}
    for check in checks_of(c.domain):
        for d in check.datasets:
            wanted = needed.get(d, set())
            needed[d] = None if wanted is None or not check.columns else wanted | set(check.columns)
    tables = {}
    for d, wanted in sorted(needed.items()):
        table = c.table(d)
        columns = None if wanted is None or not warehouse.has_table(table) else [col for col in warehouse.columns(table) if col in wanted]
        tables[d] = warehouse.read_rows(table, day, c.json_columns, columns=columns)
    return tables


def item_list(domain: str, day: str, admin_url: str):
    """Where the served admin pages list every item of the day page by page: a link when their
    address is configured, else the path to open on `verdicts serve`."""
    from evals.board import Rest

    path = f"/admin/{domain}/runs/day-{day}/items"
    return Rest(admin_url.rstrip("/") + path) if admin_url else Rest(path, link=False)


def report_links(domain: str, day: str, admin_url: str, board: Path) -> dict:
    """Links to the served admin pages of the day when their address is configured; else how to get them.

    A browser will not open a `file://` link from the Dagster UI, so the file stays a path."""
    if admin_url:
        base = f"{admin_url.rstrip('/')}/admin/{domain}/runs/day-{day}"
        return {"board": MetadataValue.url(f"{base}/board"), "report_page": MetadataValue.url(f"{base}/report")}
    return {"board": MetadataValue.md(
        f"Set `VERDICTS_ADMIN_URL` to the address of `verdicts serve` (e.g. `http://127.0.0.1:8765`) to link this day's "
        f"board and report pages here (`/admin/{domain}/runs/day-{day}/board`). The board file is `{board}`.")}


def _report_asset(c: DomainChain) -> AssetsDefinition:
    w = c.window

    @asset(
        key=c.key("agreement_report"),
        group_name=c.domain,
        partitions_def=judged_partitions(w.after) if w else DAILY,
        deps=[c.key("verdicts"), c.key("quarantine")],
        automation_condition=w.automation_condition if w else None,
        description="Golden-agreement report: n/d with Wilson intervals, kappa, confusion matrix, wrong cases, checks, quarantine, honesty notes.",
    )
    @collector_held
    def _report(context: AssetExecutionContext, warehouse: WarehouseResource, raw_files: RawFilesResource,
                reports: ReportsResource) -> MaterializeResult:
        from assets.common.day_report import fill_whole, golden_rows, store_report, verdict_rows
        from assets.resources import decisions

        day = context.partition_key
        rows = verdict_rows(c, warehouse, day)  # the columns read of every row: the rest filled in for the rows explained or shown
        quarantine = warehouse.read_partition(c.table("quarantine"), day)
        golden_path = raw_files.golden_path(c.domain)
        golden = c.load_golden(golden_path) if golden_path.is_file() else None
        fill_whole(c, warehouse, day, golden_rows(rows, golden, c.board_spec().id_field))
        config = c.load_config()
        report = c.build_report(
            rows,
            golden,
            checks=stored_checks(warehouse.read_partition(c.table("checks"), day, ("failing_ids",))),
            quarantine=quarantine,
            reconciliation=stored_reconciliation(c, warehouse, day),
            config=config,
            scope=f"{c.domain} · {day}",
            **({name: warehouse.read_partition(c.table(name), day) for name in w.kept} if w else {}),
        )
        sample = Path(raw_files.root).resolve() == SAMPLE_DIR.resolve()
        # The same completion as every other report path: pins, disclosures, manual checks and stored decisions.
        c.finish_report(report, rows, golden, config=config, golden_path=golden_path, tables=_manual_check_tables(c, warehouse, day),
                        input_dir=raw_files.domain_dir(c.domain), sample=sample, decisions=decisions.read(warehouse.engine, c.domain))
        md, folder = write_report(reports, c.domain, day, report)
        store_report(warehouse, c.domain, day, report)  # what the admin pages show of the day, raw folder or not
        from evals.board import Board, render_board

        board = folder / "board.html"
        write_text(board, render_board(Board(c.domain, rows, report, c.board_spec(), sample=sample, rest=item_list(c.domain, day, reports.admin_url),
                                             evidence=lambda shown: fill_whole(c, warehouse, day, shown))))
        agreement = next((m.ratio for m in report.metrics if m.name == "판정 일치"), None)
        return MaterializeResult(
            metadata={
                "report": MetadataValue.md(md),
                "report_path": MetadataValue.path(str(folder / "report.md")),
                "html_path": MetadataValue.path(str(folder / "report.html")),
                "board_path": MetadataValue.path(str(board)),
                **report_links(c.domain, day, reports.admin_url, board),
                "verdict_agreement": agreement.format() if agreement else "no golden labels for this day",
                "judged": report.judged_count,
                "checks_passed": report.checks_passed,
            }
        )

    return _report
