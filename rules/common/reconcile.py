"""Counts that reconcile: per dataset, raw rows = normalised rows + quarantined rows."""

from __future__ import annotations

import pandas as pd

from schemas import is_reference

QUARANTINE_COLUMNS = ["dataset", "file", "line", "id", "reason_code", "reason", "raw"]


def empty_quarantine() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="int64" if c == "line" else object) for c in QUARANTINE_COLUMNS})


def reconcile(raw_counts: dict[str, int], normalised: dict[str, pd.DataFrame], quarantine: pd.DataFrame) -> dict:
    """Per dataset: raw, normalised, quarantined and whether they add up."""
    q = quarantine["dataset"].value_counts().to_dict() if not quarantine.empty else {}
    return reconcile_counts(raw_counts, {name: len(normalised.get(name, ())) for name in raw_counts}, q)


def reconcile_counts(raw_counts: dict[str, int], normalised: dict[str, int], quarantined: dict[str, int]) -> dict:
    """`reconcile` from counts alone (a stored day's, counted by the database)."""
    out = {}
    for name, raw in raw_counts.items():
        n, k = int(normalised.get(name, 0)), int(quarantined.get(name, 0))
        out[name] = {"raw": int(raw), "normalised": n, "quarantined": k, "reconciles": raw == n + k}
    return out


def empty_references(domain: str, reconciliation: dict) -> list[str]:
    """The reference datasets (see `schemas.is_reference`) left with no valid row, in input order."""
    return [name for name, r in reconciliation.items() if is_reference(domain, name) and r["normalised"] == 0]


def empty_reference_warning(name: str, counts: dict) -> str:
    """One sentence for people: which reference table is empty, and what that does to the verdicts."""
    return (f"{name} has no valid rows ({counts['raw']} raw, {counts['quarantined']} quarantined): "
            f"every look-up in it finds nothing, so verdicts that depend on it are not meaningful")
