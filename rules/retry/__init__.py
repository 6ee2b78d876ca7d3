"""The retry domain (SPEC §5, seed 002): where did a user fail to finish in one go and try again?"""
