"""live_pick as Dagster assets, partitioned by day (Asia/Seoul).

raw_<dataset> → <dataset> (normalised) + quarantine → verdicts → agreement_report.
Tables live in the warehouse; each write replaces its partition.
"""


import json

import pandas as pd
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    MaterializeResult,
    MetadataValue,
    asset,
    multi_asset,
)

from assets.common.metadata import counts_table, md_table
from assets.common.partitions import DAILY
from assets.common.quality import quarantine_failures, run_suite
from assets.common.resources import ReportsResource
from evals.live_pick import build_report, load_golden
from evals.render import render_html, render_markdown
from orchestration.resources.raw_files import RawFilesResource
from orchestration.resources.warehouse import WarehouseResource
from rules.common.gates import QUARANTINE_COLUMNS, reconcile
from rules.live_pick import verdicts as V
from rules.live_pick.checks import run_checks
from rules.live_pick.config import load_config
from rules.live_pick.engine import OUTPUT_COLUMNS, judge, records
from rules.live_pick.expectations import EXPECTATIONS
from rules.live_pick.normalise import ID_FIELDS, JSON_COLUMNS, normalise, restore, stored_columns
from schemas import required_columns
from schemas.live_pick import DOMAIN, INPUT_DATASETS

GROUP = DOMAIN
TIME_FIELDS = {"live_chat": "sent_at"}
"""Event datasets split by day; the others are reference snapshots read whole."""

BLOCKING_VERDICT_CHECKS = {"schema", "recompute"}
"""A verdict file that breaks its schema or disagrees with the re-computation must not reach a report."""


def key(name: str) -> AssetKey:
    return AssetKey([DOMAIN, name])


def raw_table(dataset: str) -> str:
    return f"{DOMAIN}_raw_{dataset}"


def table(name: str) -> str:
    return f"{DOMAIN}_{name}"


# -- raw ---------------------------------------------------------------------------------


def _raw_asset(dataset: str):
    @asset(
        key=key(f"raw_{dataset}"),
        group_name=GROUP,
        partitions_def=DAILY,
        description=f"Raw lines of `{dataset}.jsonl` for the day, untouched, with file and line number.",
        kinds={"python"},
    )
    def _raw(context: AssetExecutionContext, raw_files: RawFilesResource, warehouse: WarehouseResource) -> MaterializeResult:
        day = context.partition_key
        raw = raw_files.read_partition(DOMAIN, dataset, day, TIME_FIELDS.get(dataset), required_columns(DOMAIN, dataset))
        n = warehouse.replace_partition(raw_table(dataset), day, raw)
        files = sorted(raw["file"].unique()) if n else []
        return MaterializeResult(metadata={"rows": n, "files": MetadataValue.md("\n".join(f"- `{f}`" for f in files) or "none")})

    return _raw


raw_assets = [_raw_asset(d) for d in INPUT_DATASETS]


# -- normalised + quarantine ----------------------------------------------------------------


@multi_asset(
    name=f"{DOMAIN}_normalise",
    specs=[
        *[
            AssetSpec(
                key(d),
                deps=[key(f"raw_{x}") for x in INPUT_DATASETS],
                group_name=GROUP,
                description=f"Normalised `{d}`: rows that passed the schema and data-quality gates.",
            )
            for d in INPUT_DATASETS
        ],
        AssetSpec(
            key("quarantine"),
            deps=[key(f"raw_{x}") for x in INPUT_DATASETS],
            group_name=GROUP,
            description="Rows that failed a gate: dataset, file, line, id, reason code, reason and raw text.",
        ),
    ],
    check_specs=[
        *[AssetCheckSpec("rows_reconcile", asset=key(d), blocking=True,
                         description="raw rows = normalised rows + quarantined rows for this dataset and day") for d in INPUT_DATASETS],
        *[AssetCheckSpec("expectations", asset=key(d), blocking=True,
                         description="Great Expectations suite on the normalised table") for d in INPUT_DATASETS],
    ],
    partitions_def=DAILY,
)
def live_pick_normalise(context: AssetExecutionContext, warehouse: WarehouseResource):
    day = context.partition_key
    config = load_config()
    raw = {d: warehouse.read_partition(raw_table(d), day) for d in INPUT_DATASETS}
    norm = normalise(raw, config)

    quarantine = [norm.quarantine]
    suites = {}
    for d in INPUT_DATASETS:
        frame = norm.tables[d]
        outcomes = run_suite(f"{DOMAIN}.{d}", frame, EXPECTATIONS[d]) if len(frame) else []
        kept, q = quarantine_failures(d, frame, outcomes, ID_FIELDS[d])
        norm.tables[d] = kept
        quarantine.append(q)
        suites[d] = outcomes
    quarantine_frame = pd.concat([q for q in quarantine if not q.empty] or [norm.quarantine], ignore_index=True)

    for d in INPUT_DATASETS:
        warehouse.replace_partition(table(d), day, norm.tables[d][stored_columns(d)], JSON_COLUMNS)
    warehouse.replace_partition(table("quarantine"), day, quarantine_frame[QUARANTINE_COLUMNS])

    stored = {d: warehouse.read_partition(table(d), day) for d in INPUT_DATASETS}
    stored_q = warehouse.read_partition(table("quarantine"), day)
    raw_counts = {d: warehouse.count_partition(raw_table(d), day) for d in INPUT_DATASETS}
    rec = reconcile(raw_counts, stored, stored_q)

    for d in INPUT_DATASETS:
        r = rec[d]
        yield MaterializeResult(
            asset_key=key(d),
            metadata={"rows": r["normalised"], "quarantined": r["quarantined"], "raw": r["raw"]},
        )
    by_reason = stored_q.groupby(["dataset", "reason_code"]).size().reset_index(name="rows").values.tolist() if len(stored_q) else []
    yield MaterializeResult(
        asset_key=key("quarantine"),
        metadata={
            "rows": len(stored_q),
            "by_reason": MetadataValue.md(md_table(["dataset", "reason_code", "rows"], by_reason) if by_reason else "No row was quarantined."),
            "rows_preview": MetadataValue.md(
                md_table(["dataset", "line", "id", "reason"], stored_q[["dataset", "line", "id", "reason"]].values.tolist())
                if len(stored_q) else "—"
            ),
        },
    )
    for d in INPUT_DATASETS:
        r = rec[d]
        yield AssetCheckResult(
            asset_key=key(d),
            check_name="rows_reconcile",
            passed=bool(r["reconciles"]),
            metadata={"raw": r["raw"], "normalised": r["normalised"], "quarantined": r["quarantined"]},
            description=f"{r['raw']} raw = {r['normalised']} normalised + {r['quarantined']} quarantined",
        )
        failed = [o for o in suites[d] if not o.success]
        yield AssetCheckResult(
            asset_key=key(d),
            check_name="expectations",
            passed=not failed,
            severity=AssetCheckSeverity.ERROR,
            metadata={
                "expectations": len(suites[d]),
                "results": MetadataValue.md(
                    md_table(["expectation", "result", "rows"], [[o.label, "pass" if o.success else "FAIL", len(o.unexpected_index)] for o in suites[d]])
                    if suites[d] else "empty table: nothing to validate"
                ),
            },
        )


# -- verdicts ------------------------------------------------------------------------------


@asset(
    key=key("verdicts"),
    group_name=GROUP,
    partitions_def=DAILY,
    deps=[key(d) for d in INPUT_DATASETS],
    description="One verdict per judged chat line: which three lines each character answers per 30-second window, and why the others were left out.",
    check_specs=[
        AssetCheckSpec(name, asset=key("verdicts"), blocking=name in BLOCKING_VERDICT_CHECKS, description=title)
        for name, title in (
            ("schema", "output JSON Schema"),
            *[(f"check_{i:02d}", t) for i, t in enumerate((
                "verdict enum", "required fields filled", "ranges", "cooldown re-computed", "rank re-computed",
                "evidence fields are columns", "evidence values equal rows", "polite Korean summary",
                "empty tags are out of world", "rule order", "closeness per character", "tag vocabulary",
                "cooldown and rank filled when due"), start=1)],
            ("recompute", "every verdict re-computed from the input rows"),
        )
    ],
)
def live_pick_verdicts(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    day = context.partition_key
    config = load_config()
    tables = restore({d: warehouse.read_partition(table(d), day, JSON_COLUMNS) for d in INPUT_DATASETS}, config)
    verdicts = judge(tables["live_chat"], tables["character_sheet"], tables["viewer_relation"], config)
    rows = records(verdicts)
    warehouse.replace_partition(table("verdicts"), day, verdicts[OUTPUT_COLUMNS], ("evidence",))

    from rules.live_pick.normalise import Normalised

    results = run_checks(Normalised(tables=tables, quarantine=pd.DataFrame()), rows, config)
    warehouse.replace_partition(table("checks"), day, pd.DataFrame([r.to_dict() for r in results]), ("failing_ids",))
    counts = {v: int((verdicts["verdict"] == v).sum()) for v in V.ORDER}
    windows = verdicts.groupby(["character_id", "window_start"]).ngroups if len(verdicts) else 0
    return MaterializeResult(
        metadata={
            "rows": len(rows),
            "windows": windows,
            "verdicts": MetadataValue.md(counts_table(counts)),
            "picks_preview": MetadataValue.md(
                md_table(["window_start", "character_id", "rank", "msg_id", "summary"],
                         [[r["window_start"], r["character_id"], r["rank_in_window"], r["msg_id"], r["summary"]]
                          for r in rows if r["verdict"] == V.PICK][:30]) if counts[V.PICK] else "no picks"
            ),
        },
        check_results=[
            AssetCheckResult(
                check_name=_check_name(r.id),
                passed=r.passed,
                metadata={"check": r.title, "failing": len(r.failing_ids), "failing_ids": MetadataValue.json(r.failing_ids[:200])},
                description=r.detail or r.title,
            )
            for r in results
        ],
    )


def _check_name(result_id: str) -> str:
    """Map a check id (`4.cooldown`, `schema`) to its asset-check name."""
    head = result_id.split(".", 1)[0]
    return f"check_{int(head):02d}" if head.isdigit() else head


# -- report ----------------------------------------------------------------------------------


@asset(
    key=key("agreement_report"),
    group_name=GROUP,
    partitions_def=DAILY,
    deps=[key("verdicts"), key("quarantine")],
    description="Golden-agreement report: n/d with Wilson intervals, kappa, confusion matrix, wrong cases, checks, quarantine, honesty notes.",
)
def live_pick_agreement_report(
    context: AssetExecutionContext, warehouse: WarehouseResource, raw_files: RawFilesResource, reports: ReportsResource
) -> MaterializeResult:
    day = context.partition_key
    config = load_config()
    rows = records(warehouse.read_partition(table("verdicts"), day, ("evidence",)))
    checks = warehouse.read_partition(table("checks"), day, ("failing_ids",))
    quarantine = warehouse.read_partition(table("quarantine"), day)
    raw_counts = {d: warehouse.count_partition(raw_table(d), day) for d in INPUT_DATASETS}
    normalised = {d: warehouse.read_partition(table(d), day) for d in INPUT_DATASETS}
    golden_path = raw_files.golden_path(DOMAIN)
    golden = load_golden(golden_path) if golden_path.is_file() else None
    report = build_report(
        rows,
        golden,
        checks=_check_results(checks),
        quarantine=quarantine,
        reconciliation=reconcile(raw_counts, normalised, quarantine),
        config=config,
        scope=f"{DOMAIN} · {day}",
    )
    folder = reports.folder(DOMAIN, day)
    md = render_markdown(report)
    (folder / "report.md").write_text(md, encoding="utf-8")
    (folder / "report.html").write_text(render_html(report), encoding="utf-8")
    (folder / "report.json").write_text(json.dumps(report.to_dict(), ensure_ascii=False, indent=2), encoding="utf-8")
    agreement = next((m.ratio for m in report.metrics if m.name == "판정 일치"), None)
    return MaterializeResult(
        metadata={
            "report": MetadataValue.md(md),
            "report_path": MetadataValue.path(str(folder / "report.md")),
            "html_path": MetadataValue.path(str(folder / "report.html")),
            "verdict_agreement": agreement.format() if agreement else "no golden labels",
            "checks_passed": report.checks_passed,
        }
    )


def _check_results(frame: pd.DataFrame):
    from rules.common.checks import CheckResult

    return [
        CheckResult(r["id"], r["title"], bool(r["passed"]), list(r["failing_ids"] or []), r["detail"] or "")
        for r in frame.to_dict("records")
    ]


assets = [*raw_assets, live_pick_normalise, live_pick_verdicts, live_pick_agreement_report]
