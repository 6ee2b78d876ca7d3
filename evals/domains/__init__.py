"""The registry: every domain the project judges, one entry each.

A domain is its own folders (`schemas/<d>/`, `rules/<d>/` with its `spec.SPEC`, `evals/<d>.py`,
`evals/boards/<d>.py`, `evals/generate/<d>.py`, `evals/domains/<d>.py` joining them) and an entry
below, with the function that imports it. The command line, the Dagster definitions, the
evaluation runner, the board, the generators and the benchmarks all read this list.
"""

from __future__ import annotations

from typing import Callable, Union

from evals.domains.domain import Domain, Judged

__all__ = ["Domain", "Judged", "REGISTRY", "get", "names", "register"]


# Named imports, one per domain, so that the layer checks see every module imported.
def _persona() -> Domain:
    from evals.domains import persona

    return persona.DOMAIN


def _live_pick() -> Domain:
    from evals.domains import live_pick

    return live_pick.DOMAIN


def _retry() -> Domain:
    from evals.domains import retry

    return retry.DOMAIN


def _handoff() -> Domain:
    from evals.domains import handoff

    return handoff.DOMAIN


REGISTRY: dict[str, Union[Domain, Callable[[], Domain]]] = {
    "persona": _persona,
    "live_pick": _live_pick,
    "retry": _retry,
    "handoff": _handoff,
}
"""name → the domain, or a call that imports it: a built-in domain's modules are imported when it is
first asked for (`get`), so a command about one domain does not import the others' rules."""


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def get(name: str) -> Domain:
    """The domain named `name`; KeyError for any other."""
    entry = REGISTRY[name]
    if not isinstance(entry, Domain):
        entry = REGISTRY[name] = entry()
    return entry


def register(domain: Domain) -> None:
    """Add a domain defined outside this package (a plug-in, or a test's); its schemas may live in
    its own folder (`DomainSpec.schema_dir`)."""
    from schemas import SCHEMA_ROOTS

    if domain.spec.schema_dir is not None:
        SCHEMA_ROOTS[domain.name] = domain.spec.schema_dir
    REGISTRY[domain.name] = domain
