"""The handoff domain (SPEC §6, seed 003): which support conversations the AI should have handed
to a human counsellor, with next-day look-ups for re-entry and a held group for broken rooms."""
