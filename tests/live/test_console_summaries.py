"""The live console's summary writer: `verdicts serve` with a model writer (set by
VERDICTS_LIVE_SUMMARY, as the batch live path is) streams the sentences `verdicts judge
--summary openai` writes, against the same small OpenAI-format server on loopback."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from evals import domains
from orchestration.cli import main
from tests.conftest import SEEDS
from tests.live.console import Service, as_frames, ingest, sample_lines, window_frames, windows
from tests.rules.fake_chat_endpoint import FakeEndpoint
from tests.rules.test_live_pick_model import FALLBACKS, POLITE_LEAD, summary_answer

OPENAI = {"VERDICTS_OPENAI_MODEL": "test-model", "VERDICTS_OPENAI_TIMEOUT": "0.3", "VERDICTS_OPENAI_RETRIES": "1"}


@pytest.mark.slow
def test_the_service_writes_the_batch_paths_model_sentences_and_checks_them(tmp_path, monkeypatch):
    with FakeEndpoint(summary_answer) as server:
        env = {**OPENAI, "VERDICTS_OPENAI_URL": server.url}
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        expected = {r["msg_id"]: r for r in domains.get("live_pick").judge_dir(SEEDS / "live_pick", tags="model",
                                                                                summaries="openai").rows}
        service = Service(tmp_path)
        service.env.update(env, VERDICTS_LIVE_SUMMARY="openai")
        service.start()
        try:
            told = asyncio.run(ingest(service.ws, as_frames(sample_lines())))
            assert told["acked"]
            n = len({(r["character_id"], r["window_start"]) for r in expected.values()})
            frames = window_frames(asyncio.run(windows(service.ws, lambda fs: len(window_frames(fs)) >= n, after="x/y",
                                                       timeout=90)))
        finally:
            service.stop()
    streamed = [r for f in frames for r in f["verdicts"]]
    assert Counter(r["msg_id"] for r in streamed) == Counter(list(expected))
    for r in streamed:
        assert r == {**expected[r["msg_id"]], "sheet_version": 1}, r["msg_id"]
    kept = [r["msg_id"] for r in streamed if r["provenance"]["summary"] == "openai"]
    assert len(kept) == len(streamed) - len(FALLBACKS) and all(r["summary"].startswith(POLITE_LEAD) for r in streamed
                                                               if r["msg_id"] in kept)
    assert {r["msg_id"]: r["provenance"]["summary_fallback"] for r in streamed if r["msg_id"] in FALLBACKS} == FALLBACKS
    for f in frames:  # the checks saw the sentences kept, and pass on them
        assert f["checks"] and all(c["passed"] for c in f["checks"]), f["checks"]


def test_serve_refuses_an_unknown_writer_or_a_model_writer_without_its_endpoint(monkeypatch, capsys):
    for var in ("VERDICTS_OPENAI_URL", "VERDICTS_OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    assert main(["serve", "--summary", "poet"]) == 2
    assert "unknown summary writer 'poet'" in capsys.readouterr().err
    monkeypatch.setenv("VERDICTS_LIVE_SUMMARY", "openai")
    assert main(["serve"]) == 2, "the live setting is honoured when --summary is not given"
    assert "VERDICTS_OPENAI_URL" in capsys.readouterr().err
