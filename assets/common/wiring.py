"""A domain's `DomainChain` wired from its packages, which all share one layout.

`rules/<domain>/` holds config, normalise, engine, checks, expectations and verdicts;
`schemas/<domain>/` names the input datasets and the output schema; `evals/<domain>` builds
the report. A domain's asset module passes only what is its own: the judge call, the check
titles, the wording, and any field that departs from the layout.
"""

from __future__ import annotations

from importlib import import_module

from assets.common.chain import DomainChain
from assets.common.lazy import lazy
from schemas import required_columns

BLOCKING_CHECKS = frozenset({"schema", "recompute"})
"""A verdict file that breaks its schema or disagrees with the re-computation must not reach a report."""


def chain_for(domain: str, **fields) -> DomainChain:
    """The domain's chain: `fields` as given, every other field from the domain's packages."""
    schema = import_module(f"schemas.{domain}")
    config, normalise, engine, checks, expectations, verdicts = (
        import_module(f"rules.{domain}.{name}") for name in ("config", "normalise", "engine", "checks", "expectations", "verdicts")
    )
    wired = dict(
        domain=domain,
        datasets=schema.INPUT_DATASETS,
        id_fields=normalise.ID_FIELDS,
        required=lambda dataset: required_columns(domain, dataset),
        load_config=config.load_config,
        normalise=normalise.normalise,
        stored_columns=normalise.stored_columns,
        json_columns=(),
        restore=normalise.restore,
        judge=engine.judge,
        records=engine.records,
        output_columns=engine.OUTPUT_COLUMNS,
        verdict_json_columns=("evidence",),
        verdict_key="verdict",
        output_schema=schema.OUTPUT,
        verdict_order=verdicts.ORDER,
        run_checks=checks.run_checks,
        blocking_checks=BLOCKING_CHECKS,
        expectations=expectations.EXPECTATIONS,
        # Report code (statistics) loads only where a report is made, not in every run.
        load_golden=lazy(f"evals.{domain}", "load_golden"),
        build_report=lazy(f"evals.{domain}", "build_report"),
    )
    if "time_fields" not in fields:  # a domain without TIME_FIELDS names its event datasets itself
        wired["time_fields"] = normalise.TIME_FIELDS
    return DomainChain(**{**wired, **fields})
