"""The week-2 evaluation as a Dagster job `eval`: `verdicts eval` with its options as run config.

Reads files (not the warehouse), like the command, so a UI run and a CI run of the same folder
give the same reports. A failed regression gate fails the run and names the metrics.
"""

# No `from __future__ import annotations`: Dagster reads the op's config and resource types at definition time.

from pathlib import Path

from dagster import Config, Failure, MetadataValue, Output, in_process_executor, job, op
from pydantic import Field

from assets.resources.reports import ReportsResource
from evals import domains
from assets.resources.raw_files import RawFilesResource
from assets.resources.warehouse import WarehouseResource


class EvalConfig(Config):
    domains: list[str] = Field(default_factory=lambda: list(domains.names()), description="--domain: domains to evaluate")
    input_root: str = Field("", description="--input: one sub-folder per domain (default: the raw files root)")
    golden: list[str] = Field(default_factory=list, description="--golden: DOMAIN=FILE (default: <input>/golden.jsonl)")
    out_dir: str = Field("", description="--out: output folder (default: <reports root>/eval)")
    baseline: str = Field("", description="--baseline: a previous run's summary.json; empty: no gate")
    margin: float = Field(0.02, ge=0, description="--margin: largest allowed drop of a gated metric")
    tags: str = Field("gold", description="--tags: the live_pick tagger its verdicts are judged with (gold, lexicon, kiwi, openai, model)")


@op
def run_evaluation(config: EvalConfig, raw_files: RawFilesResource, reports: ReportsResource, warehouse: WarehouseResource) -> Output[str]:
    from assets.resources import decisions
    from evals.runner import evaluate, render_gate, render_summary

    out = Path(config.out_dir or Path(reports.root) / "eval")
    # The manual-check decisions people stored: the same table the command, the admin pages and the nightly reports read.
    summary, gate = evaluate(config.domains, Path(config.input_root or raw_files.root), config.golden,
                             out, Path(config.baseline) if config.baseline else None, config.margin, config.tags,
                             lambda domain: decisions.read(warehouse.engine, domain))
    metadata = {"summary": MetadataValue.md(render_summary(summary)), "out_dir": MetadataValue.path(str(out))}
    if gate is not None:
        metadata["gate"] = MetadataValue.md(render_gate(gate))
    if gate is not None and not gate.passed:
        names = ", ".join(f"{m.domain} · {m.metric}" for m in gate.failures)
        raise Failure(description=f"regression gate failed: {names}", metadata=metadata)
    return Output(str(out), metadata=metadata)


@job(name="eval", executor_def=in_process_executor,
     description="Week-2 evaluation: per-domain golden-agreement reports and boards, a summary, and the regression gate.")
def eval_job():
    run_evaluation()
