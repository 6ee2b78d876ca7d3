"""The live_pick domain (SPEC §4, seed 001): which three chat lines a live character answers
in each 30-second window, and why each other line was left out."""
