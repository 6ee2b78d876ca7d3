"""A domain's `DomainChain` wired from its registry entry.

Everything the shared chain needs is in the domain's `DomainSpec` (rules) and `Domain`
(evaluation: report, check titles, wording); a domain's asset module passes only what is
Dagster's own, such as a day window or a history of a reference table.
"""

from __future__ import annotations

from functools import partial

from assets.common.chain import DomainChain
from evals.domains import Domain
from rules.common.units import whole_day
from schemas import required_columns

BLOCKING_CHECKS = frozenset({"schema", "recompute"})
"""A verdict file that breaks its schema or disagrees with the re-computation must not reach a report."""


SPEC_FIELDS = ("datasets", "id_fields", "time_fields", "load_config", "normalise", "stored_columns", "json_columns", "restore",
               "records", "output_columns", "verdict_json_columns", "verdict_key", "output_schema", "verdict_order",
               "run_checks", "expectations")
"""Chain fields that are the spec's own, under the same names."""


def _report_call(domain: Domain, which: int, *args, **kwargs):
    # Report code (statistics) loads only where a report is made, not in every run.
    return domain.reporting()[which](*args, **kwargs)


def chain_for(domain: Domain, **fields) -> DomainChain:
    """The domain's chain: `fields` as given, every other field from its registry entry."""
    spec = domain.spec
    wired = {name: getattr(spec, name) for name in SPEC_FIELDS}
    wired.update(
        domain=spec.name,
        required=partial(required_columns, spec.name),
        # The daily chain judges with the tagger and summary writer of the domain's config.
        judge=lambda tables, config, **options: spec.judge(tables, config, **options),
        check_titles=domain.check_titles(),
        blocking_checks=BLOCKING_CHECKS,
        load_golden=partial(_report_call, domain, 1),
        build_report=partial(_report_call, domain, 0),
        finish_report=domain.finish_report,
        board_spec=domain.board,
        verdicts_description=domain.verdicts_description,
        preview=domain.preview,
        report_columns=domain.report_columns,
        day_parts=spec.day_parts or whole_day(spec.datasets, spec.normalise),
    )
    return DomainChain(**{**wired, **fields})
