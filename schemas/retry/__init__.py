"""Schemas of the retry domain (seed 002)."""

DOMAIN = "retry"
INPUT_DATASETS = ("interaction_events", "surface_catalog")
OUTPUT = "verdict"
