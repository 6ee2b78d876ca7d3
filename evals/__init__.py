"""Evaluation helpers for golden-agreement reports."""
