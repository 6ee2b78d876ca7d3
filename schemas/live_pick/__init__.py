"""Schemas of the live_pick domain (seed 001)."""

DOMAIN = "live_pick"
INPUT_DATASETS = ("live_chat", "character_sheet", "viewer_relation")
OUTPUT = "pick"
