"""Pure rule engines: no Dagster, file or database code.

The same functions serve the Dagster assets, the `verdicts` command and the evaluation runner.
"""
