"""The registry is the one list of domains: a fifth domain registered with one call appears in
the command line, the Dagster definitions and the board, with nothing else edited."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT, modules_after_judging

PROBE = r'''
import contextlib, io, json, sys, tempfile
from pathlib import Path

from evals import domains
from tests.fixtures.tiny_domain import domain as tiny

domains.register(tiny.DOMAIN)

from orchestration.cli import main

out = {}
help_text = io.StringIO()
with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
    main(["judge", "--help"])
out["help"] = help_text.getvalue()

tmp = Path(tempfile.mkdtemp())
out["judge_exit"] = main(["judge", "tiny", "--input", str(tiny.FOLDER), "--out", str(tmp / "v.jsonl"),
                          "--quarantine", str(tmp / "q.jsonl")])
out["verdicts"] = [json.loads(line) for line in (tmp / "v.jsonl").read_text().splitlines()]
out["quarantine"] = [json.loads(line) for line in (tmp / "q.jsonl").read_text().splitlines()]
out["validate_exit"] = main(["validate", "tiny", "--input", str(tiny.FOLDER), "--verdicts", str(tmp / "v.jsonl")])
out["board_exit"] = main(["board", "tiny", "--input", str(tiny.FOLDER), "--out", str(tmp / "board.html")])
out["board"] = (tmp / "board.html").read_text()

from orchestration.definitions import build_definitions

defs = build_definitions("local")
graph = defs.resolve_asset_graph()
out["assets"] = sorted(k.to_user_string() for k in graph.get_all_asset_keys() if k.path[0] == "tiny")
out["checks"] = sorted(f"{c.asset_key.to_user_string()}:{c.name}" for c in graph.asset_check_keys if c.asset_key.path[0] == "tiny")
out["nightly"] = sorted(k.to_user_string() for k in defs.resolve_job_def("nightly").asset_layer.selected_asset_keys if k.path[0] == "tiny")
print(json.dumps(out))
'''


def probe() -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_registered_fifth_domain_appears_in_the_cli_the_definitions_and_the_board():
    out = probe()
    assert "tiny" in out["help"].split("positional arguments")[0]  # among the DOMAIN choices
    assert out["judge_exit"] == 0 and out["validate_exit"] == 0 and out["board_exit"] == 0
    assert [(r["note_id"], r["verdict"]) for r in out["verdicts"]] == [("N-1", "long"), ("N-2", "short")]
    assert [(q["line"], q["reason_code"]) for q in out["quarantine"]] == [(3, "duplicate_id")]
    assert "짧은 메모와 긴 메모를 가릅니다" in out["board"] and "N-1" in out["board"]
    assert out["assets"] == ["tiny/agreement_report", "tiny/notes", "tiny/quarantine", "tiny/raw_notes", "tiny/verdicts"]
    assert {"tiny/verdicts:schema", "tiny/verdicts:recompute"} <= set(out["checks"])
    assert out["nightly"] == out["assets"]


def test_the_registry_lists_the_four_domains_in_their_order():
    from evals import domains

    assert domains.names() == ("persona", "live_pick", "retry", "handoff")
    for name in domains.names():
        d = domains.get(name)
        assert d.spec.name == name and d.board().domain == name and d.board().order == d.spec.verdict_order


def test_judging_one_domain_imports_no_other_domain(tmp_path):
    packages = {m.split(".")[1] for m in modules_after_judging("persona", tmp_path / "v.jsonl") if m.startswith("rules.")}
    assert {"persona", "common"} <= packages and not {"live_pick", "retry", "handoff"} & packages
