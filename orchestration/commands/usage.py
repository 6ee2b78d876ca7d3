"""What every command shares: exit codes, the usage error, and reading a domain's input, verdicts and golden labels."""

from __future__ import annotations

import sys
from pathlib import Path

from evals import domains

EXIT_OK, EXIT_CHECKS_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Input the command cannot work with; the message says which file and why."""


def domain_named(name: str) -> domains.Domain:
    try:
        return domains.get(name)
    except KeyError:
        raise UsageError(f"domain '{name}' is not registered (registered: {', '.join(domains.names())})") from None


def judged_input(domain: domains.Domain, run, *args, **kwargs):
    from rules.common.jsonl import DatasetError

    try:
        return run(*args, **kwargs)
    except DatasetError as exc:
        raise UsageError(str(exc)) from exc


def warn_empty_references(domain: str, reconciliation: dict) -> None:
    from rules.common.reconcile import empty_reference_warning, empty_references

    for name in empty_references(domain, reconciliation):
        print(f"verdicts: warning: {empty_reference_warning(name, reconciliation[name])}", file=sys.stderr)


def read_verdicts(path: Path) -> list:
    from rules.common.jsonl import read_jsonl_objects

    if not path.is_file():
        raise UsageError(f"{path}: verdict file not found")
    try:
        return read_jsonl_objects(path)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text") from exc


def load_golden(domain: domains.Domain, path: Path) -> list[dict]:
    """The golden labels at `path`; a missing or malformed file is a usage error."""
    if not path.is_file():
        raise UsageError(f"{path}: golden file not found")
    try:
        return domain.load_golden(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def stored_decisions(domain: str) -> dict:
    """The manual-check decisions of the warehouse (`WAREHOUSE_URL`), the one store every report reads."""
    from assets.resources import decisions
    from rules.common import environment

    return decisions.read_if_stored(environment.warehouse_url(), domain)


def live_engine():
    from rules.common import environment
    from assets.resources.warehouse import _engine

    return _engine(environment.warehouse_url())
