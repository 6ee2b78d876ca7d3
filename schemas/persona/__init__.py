"""Schemas of the persona domain (seed 000)."""

DOMAIN = "persona"
INPUT_DATASETS = ("profiles", "turns")
OUTPUT = "verdict"
