"""The registry: every domain the project judges, one line each.

A domain is its own folders (`schemas/<d>/`, `rules/<d>/` with its `spec.SPEC`, `evals/<d>.py`,
`evals/boards/<d>.py`, `evals/generate/<d>.py`, `evals/domains/<d>.py` joining them) and one line
below. The command line, the Dagster definitions, the evaluation runner, the board, the
generators and the benchmarks all read this list.
"""

from __future__ import annotations

from evals.domains import handoff, live_pick, persona, retry
from evals.domains.domain import Domain, Judged

__all__ = ["Domain", "Judged", "REGISTRY", "get", "names", "register"]

REGISTRY: dict[str, Domain] = {
    d.name: d
    for d in (
        persona.DOMAIN,
        live_pick.DOMAIN,
        retry.DOMAIN,
        handoff.DOMAIN,
    )
}


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def get(name: str) -> Domain:
    """The domain named `name`; KeyError for any other."""
    return REGISTRY[name]


def register(domain: Domain) -> None:
    """Add a domain defined outside this package (a plug-in, or a test's); its schemas may live in
    its own folder (`DomainSpec.schema_dir`)."""
    from schemas import SCHEMA_ROOTS

    if domain.spec.schema_dir is not None:
        SCHEMA_ROOTS[domain.name] = domain.spec.schema_dir
    REGISTRY[domain.name] = domain
