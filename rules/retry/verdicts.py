"""The verdict keys, used verbatim in code, schema, reports and UI."""

ONE_SHOT = "one_shot"
EXACT_RETRY = "exact_retry"
REWORDED_RETRY = "reworded_retry"
SURFACE_HOP = "surface_hop"

ORDER = (ONE_SHOT, EXACT_RETRY, REWORDED_RETRY, SURFACE_HOP)
"""Display order, as the seed lists them."""

RULE_ORDER = (EXACT_RETRY, REWORDED_RETRY, SURFACE_HOP, ONE_SHOT)
"""First match wins, in this order."""

RETRIES = (EXACT_RETRY, REWORDED_RETRY)
"""Verdicts that count as trying again on the same surface (the baseline sweep counts these)."""
