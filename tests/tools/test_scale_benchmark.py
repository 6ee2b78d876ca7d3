"""benchmarks/scale.py's in-process figures run against the engines as they are: the gates (load)
and the rules with evidence and summaries stubbed out, for every domain, on a small generated
folder; the stubs are put back afterwards."""

from __future__ import annotations

import sys

import pytest

from evals import domains
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import scale  # noqa: E402


@pytest.mark.parametrize("domain", domains.names())
def test_load_and_rules_alone_are_measured_with_the_explanation_stubbed_and_put_back(domain, tmp_path):
    domains.get(domain).generate(300, 1, tmp_path)
    engine = domains.get(domain).spec.engine
    before = {name: getattr(engine, name) for name in ("explain", "explain_context") if hasattr(engine, name)}
    figures = scale.measure(domain, tmp_path)
    assert figures["load_s"] > 0 and figures["rules_s"] > 0
    assert {name: getattr(engine, name) for name in before} == before


def test_the_nightly_figure_of_a_handoff_day_includes_the_run_that_judges_it(tmp_path):
    """The nightly job stores a handoff day's tables but judges it only once the next day's are in:
    the benchmark's handoff day runs the next day's nightly job too, then times `handoff_judge`."""
    import json
    import subprocess

    from rules.common.environment import SAMPLE_DIR

    day = "2026-10-04"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--nightly-child", str(SAMPLE_DIR), day,
                           "--with-handoff-judge"], capture_output=True, text=True, cwd=ROOT,
                          env=scale.nightly_env(str(tmp_path), SAMPLE_DIR), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["ok"] is True
    # the nightly job's steps (per domain: the day's tables; judging, the checks; the report, but handoff's),
    # then handoff's judging, checks and report
    assert figures["steps"] == 4 + 3 * 2 + 3 + 3
    from sqlalchemy import create_engine, text

    with create_engine(f"sqlite:///{tmp_path}/warehouse.sqlite").connect() as conn:
        judged = conn.execute(text("SELECT count(*) FROM handoff_verdicts WHERE partition_key = :d"), {"d": day}).scalar()
    assert judged > 0


def test_the_verdict_file_is_kept_where_asked_and_read_back_by_the_floors_own_reading(tmp_path):
    """The read-back figure parses every verdict row the judge wrote, as the parse floor parses input:
    orjson line by line, lines that are not JSON objects skipped."""
    folder, out = tmp_path / "in", tmp_path / "verdicts.jsonl"
    domains.get("retry").generate(300, 1, folder)
    figures = scale.judge_process("retry", folder, out=out)
    assert figures["seconds"] > 0
    lines = out.read_bytes().splitlines()
    assert len(lines) > 0
    assert scale.parse_files([out])["rows"] == len(lines)
    with out.open("ab") as fh:
        fh.write(b"not json\n[1, 2]\n")
    assert scale.parse_files([out])["rows"] == len(lines)
    datasets = [folder / f"{name}.jsonl" for name in domains.get("retry").spec.datasets]
    assert scale.parse_floor("retry", folder)["rows"] == scale.parse_files(datasets)["rows"]
