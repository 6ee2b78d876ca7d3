"""Machinery shared by every domain: reading JSON Lines, gates, timestamps, Korean text."""
