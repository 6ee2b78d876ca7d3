"""A domain's `DomainChain` wired from its registry entry.

Everything the shared chain needs is in the domain's `DomainSpec` (rules) and `Domain`
(evaluation: report, check titles, wording); a domain's asset module passes only what is
Dagster's own, such as a day window or a history of a reference table.
"""

from __future__ import annotations

from functools import partial

from assets.common.chain import DomainChain
from evals.domains import Domain
from schemas import required_columns

BLOCKING_CHECKS = frozenset({"schema", "recompute"})
"""A verdict file that breaks its schema or disagrees with the re-computation must not reach a report."""


def _report_call(domain: Domain, which: int, *args, **kwargs):
    # Report code (statistics) loads only where a report is made, not in every run.
    return domain.reporting()[which](*args, **kwargs)


def chain_for(domain: Domain, **fields) -> DomainChain:
    """The domain's chain: `fields` as given, every other field from its registry entry."""
    spec = domain.spec
    wired = dict(
        domain=spec.name,
        datasets=spec.datasets,
        id_fields=spec.id_fields,
        time_fields=spec.time_fields,
        required=partial(required_columns, spec.name),
        load_config=spec.load_config,
        normalise=spec.normalise,
        stored_columns=spec.stored_columns,
        json_columns=spec.json_columns,
        restore=spec.restore,
        # The daily chain judges with the tagger and summary writer of the domain's config.
        judge=lambda tables, config: spec.judge(tables, config),
        records=spec.records,
        output_columns=spec.output_columns,
        verdict_json_columns=spec.verdict_json_columns,
        verdict_key=spec.verdict_key,
        output_schema=spec.output_schema,
        verdict_order=spec.verdict_order,
        run_checks=spec.run_checks,
        check_titles=domain.check_titles(),
        blocking_checks=BLOCKING_CHECKS,
        expectations=spec.expectations,
        load_golden=partial(_report_call, domain, 1),
        build_report=partial(_report_call, domain, 0),
        verdicts_description=domain.verdicts_description,
        preview=domain.preview,
    )
    return DomainChain(**{**wired, **fields})
