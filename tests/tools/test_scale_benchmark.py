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
