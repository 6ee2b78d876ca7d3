"""Schemas of the handoff domain (seed 003)."""

DOMAIN = "handoff"
INPUT_DATASETS = ("chat_messages", "rooms", "handoff_phrases", "help_articles")
OUTPUT = "verdict"
