"""`verdicts judge` and `validate` pay only for the rules: no report or statistics library is loaded.

Each command runs in a fresh interpreter (a test process has long imported everything), which
then lists the modules it holds."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import SEEDS

HEAVY = ("scipy", "statsmodels", "evals.report", "evals.stats", "evals.compare", "dagster")

PROBE = """
import sys
from orchestration.cli import main
code = main(sys.argv[1:])
print("\\n" + __import__("json").dumps(sorted(m for m in sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def loaded(*argv) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return set(json.loads(proc.stderr.rstrip().splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("domain", ["persona", "live_pick", "retry", "handoff"])
def test_judge_and_validate_load_no_report_or_statistics_library(tmp_path, domain):
    out = tmp_path / "v.jsonl"
    assert heavy(loaded("judge", domain, "--input", SEEDS / domain, "--out", out)) == []
    assert heavy(loaded("validate", domain, "--input", SEEDS / domain, "--verdicts", out)) == []


def test_agree_still_loads_them(tmp_path):
    """The probe sees imports: the agreement report, which needs the statistics, shows them."""
    out = tmp_path / "v.jsonl"
    loaded("judge", "retry", "--input", SEEDS / "retry", "--out", out)
    mods = loaded("agree", "retry", "--input", SEEDS / "retry", "--verdicts", out,
                  "--golden", SEEDS / "retry" / "golden.jsonl", "--out", tmp_path / "r.md")
    assert "evals.stats" in mods
