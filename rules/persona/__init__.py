"""The persona domain (SPEC §3, seed 000): did a character's reply break its persona profile?"""
