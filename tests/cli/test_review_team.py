"""Manual checks reviewed as a team, through the one decision store every report reads: two
reviewers' decisions recorded with `verdicts review`, read back by `verdicts agree`, `verdicts eval`
(its report.json and Markdown), with progress per reviewer, Cohen's kappa with its n between them,
and the decisions exported as CSV and JSON with each row's ids."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import sqlalchemy as sa
from statsmodels.stats.inter_rater import cohens_kappa

from assets.resources import decisions
from assets.resources.warehouse import _engine
from evals.manual_checks import check_by_key, sample
from evals import domains
from tests.cli.helpers import domain_paths, run

SAMPLE, GOLDEN, _ = domain_paths("live_pick")
VOTES = {  # item index → (kim, lee)
    0: ("agree", "agree"), 1: ("agree", "disagree"), 2: ("disagree", "disagree"), 3: ("agree", "agree"), 4: ("agree", "agree"),
    5: ("disagree", "agree"), 6: ("agree", "agree"),
}


@pytest.fixture
def store(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}"
    monkeypatch.setenv("WAREHOUSE_URL", url)
    judged = domains.get("live_pick").judge_dir(SAMPLE)
    ids = sample(check_by_key("live_pick.1"), judged.rows, judged.normalised.tables)
    for reviewer, side in (("kim", 0), ("lee", 1)):
        for verdict in ("agree", "disagree"):
            items = [f"{ids[i]}={verdict}" for i, v in VOTES.items() if v[side] == verdict]
            argv = [x for item in items for x in ("--decide", item)]
            code, _, err = run("review", "live_pick", "--input", SAMPLE, "--check", "live_pick.1", "--reviewer", reviewer, *argv,
                               "--note", "=HYPERLINK(\"x\")" if reviewer == "kim" else "")
            assert code == 0, err
    return url, ids


def _expected_kappa() -> float:
    table = np.zeros((2, 2))
    for kim, lee in VOTES.values():
        table[int(kim == "disagree"), int(lee == "disagree")] += 1
    return float(cohens_kappa(table, return_results=False))


def test_agree_and_eval_read_the_same_decisions_as_the_admin_pages_and_the_nightly_report(store, tmp_path):
    url, ids = store
    code, _, err = run("judge", "live_pick", "--input", SAMPLE, "--out", tmp_path / "v.jsonl")
    assert code == 0, err
    outs = {}
    for suffix in ("json", "md"):
        code, _, err = run("agree", "live_pick", "--verdicts", tmp_path / "v.jsonl", "--golden", GOLDEN, "--input", SAMPLE,
                           "--out", tmp_path / f"agree.{suffix}")
        assert code == 0, err
        outs[suffix] = (tmp_path / f"agree.{suffix}").read_text(encoding="utf-8")
    code, _, err = run("eval", "--domain", "live_pick", "--out", tmp_path / "eval")
    assert code == 0, err
    evaluated = json.loads((tmp_path / "eval" / "live_pick" / "report.json").read_text(encoding="utf-8"))
    # Majorities: agree on 0, 3, 4, 6; disagree on 2; split on 1 and 5 (left out and listed).
    for data in (json.loads(outs["json"]), evaluated):
        m = next(x for x in data["metrics"] if x["key"] == "live_pick.1")
        assert (m["ratio"]["numerator"], m["ratio"]["denominator"]) == (4, 5), m
        team = data["reviewers"]["live_pick.1"]
        assert sorted(team["split"]) == sorted([ids[1], ids[5]])
        assert team["reviewers"] == {"kim": {"votes": 7, "notes": 0}, "lee": {"votes": 7, "notes": 0}}
        (pair,) = team["pairs"]
        assert (pair["a"], pair["b"], pair["n"], pair["same"]) == ("kim", "lee", 7, 5)
        assert pair["kappa"] == pytest.approx(_expected_kappa())
    assert f"kim–lee: κ {_expected_kappa():.2f} (n=7, 같은 판단 5건)" in outs["md"]
    assert "검토자별 진행: kim 7 / 20건, lee 7 / 20건" in outs["md"]
    # The same store is what `decisions.read` gives the admin pages and the Dagster report.
    assert len(decisions.read(_engine(url), "live_pick")["live_pick.1"][ids[1]]) == 2


def test_decisions_export_as_csv_and_json_with_each_rows_ids(store, tmp_path):
    _, ids = store
    for suffix in ("csv", "json"):
        code, _, err = run("review", "live_pick", "--input", SAMPLE, "--check", "live_pick.1", "--export", tmp_path / f"d.{suffix}")
        assert code == 0, err
        assert "kim: 7 decided, 0 notes" in err and "kim–lee: κ" in err
    rows = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert len(rows) == 14 and {r["reviewer"] for r in rows} == {"kim", "lee"}
    first = next(r for r in rows if r["item_id"] == ids[0] and r["reviewer"] == "kim")
    assert first["decision"] == "agree" and first["verdict"] == "지금 답변할 질문"
    assert first["item"]["msg_id"] == ids[0] and first["item"]["pick_id"].startswith("PICK-")
    assert {"character_id", "viewer_id", "window_start"} <= set(first["item"])
    table = list(csv.DictReader(io.StringIO((tmp_path / "d.csv").read_text(encoding="utf-8"))))
    assert len(table) == 14 and {"msg_id", "pick_id", "character_id", "window_start"} <= set(table[0])
    kim = next(r for r in table if r["reviewer"] == "kim")
    assert kim["note"] == "'=HYPERLINK(\"x\")"  # a spreadsheet must not run a note as a formula


def test_a_decision_needs_a_reviewer(tmp_path, monkeypatch):
    monkeypatch.setenv("WAREHOUSE_URL", f"sqlite:///{tmp_path / 'wh.sqlite'}")
    monkeypatch.delenv("USER", raising=False)
    judged = domains.get("live_pick").judge_dir(SAMPLE)
    item = sample(check_by_key("live_pick.1"), judged.rows, judged.normalised.tables)[0]
    code, _, err = run("review", "live_pick", "--input", SAMPLE, "--check", "live_pick.1", "--reviewer", " ", "--decide", f"{item}=agree")
    assert code == 2 and "--reviewer" in err


def test_retry_lists_no_manual_check_so_review_refuses():
    code, _, err = run("review", "retry", "--input", domain_paths("retry")[0])
    assert code == 2 and "lists no manual check" in err


@pytest.mark.parametrize("url_kind", ["sqlite", "postgres"])
def test_a_table_from_before_reviewers_moves_to_the_reviewer_key(url_kind, tmp_path, request):
    url = f"sqlite:///{tmp_path / 'wh.sqlite'}" if url_kind == "sqlite" else request.getfixturevalue("postgres_url")
    engine = _engine(url)
    old = sa.Table(decisions.TABLE, sa.MetaData(), sa.Column("check_key", sa.Text, primary_key=True),
                   sa.Column("item_id", sa.Text, primary_key=True), sa.Column("domain", sa.Text), sa.Column("decision", sa.Text),
                   sa.Column("note", sa.Text), sa.Column("scope", sa.Text), sa.Column("reviewer", sa.Text), sa.Column("decided_at", sa.Text))
    old.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(old.insert(), [{"check_key": "handoff.2", "item_id": "R-1", "domain": "handoff", "decision": "agree", "note": None,
                                     "scope": "s", "reviewer": "admin page", "decided_at": "2026-12-01T00:00:00+00:00"},
                                    {"check_key": "handoff.2", "item_id": "R-2", "domain": "handoff", "decision": "note", "note": "n",
                                     "scope": "s", "reviewer": None, "decided_at": "2026-12-01T00:00:00+00:00"}])
    decisions.record(engine, domain="handoff", check_key="handoff.2", item_id="R-1", decision="disagree", reviewer="kim")
    got = decisions.read(engine, "handoff")["handoff.2"]
    assert got["R-1"]["admin page"]["decision"] == "agree" and got["R-1"]["kim"]["decision"] == "disagree"
    assert got["R-2"][decisions.UNNAMED]["note"] == "n"
    assert sa.inspect(engine).get_pk_constraint(decisions.TABLE)["constrained_columns"] == ["check_key", "item_id", "reviewer"]
