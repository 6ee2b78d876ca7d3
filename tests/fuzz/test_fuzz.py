"""Hostile input through `judge` and `validate`, in-process, for every domain.

Each example writes a folder of `<dataset>.jsonl` files mixing some of the domain's sample lines,
rows generated from the dataset's JSON Schema (valid, or made hostile: wrong types, extreme and
non-finite numbers, out-of-range timestamps and odd offsets, odd Unicode, lone surrogates,
missing and extra fields, padded and repeated ids) and malformed lines (broken JSON, bytes that
are not UTF-8, deep nesting), sometimes with CRLF line ends. Properties of every example:

- no exception escapes `judge` or `validate` (exit 0, or exit 2 with a message for a file that
  cannot be read at all);
- raw = normalised + quarantined per dataset, raw counted here from the file's non-blank lines,
  and the quarantine file holds exactly the quarantined rows;
- every line `judge` writes is strict JSON (no NaN/Infinity) and passes the output JSON Schema;
- `validate` passes on `judge`'s output;
- judging the same folder again writes identical bytes.

Budget: derandomized (fixed seed, no example database), 25 examples per domain by default,
100 in all. Measured: 19 s of CPU for the four tests; 1 min 45 s of wall time on a 2-core
machine at load average 12–16 (seven test suites at once), so well under a minute on a CI
machine with only itself running. Its last run (`VERDICTS_FUZZ_EXAMPLES=25`, seed 0) found
nothing. A longer run is one command:

    VERDICTS_FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest tests/fuzz -q

(`VERDICTS_FUZZ_SEED=N` draws other examples; a failure prints the lines of every file it wrote).
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings, seed
from hypothesis import strategies as st

from schemas import validator
from tests.cli.helpers import run
from tests.conftest import SEEDS
from tests.fuzz.strategies import dataset_lines, write_dataset

EXAMPLES = int(os.environ.get("VERDICTS_FUZZ_EXAMPLES", "25"))
SEED = int(os.environ.get("VERDICTS_FUZZ_SEED", "0"))
SAMPLE_LINES = 12
"""Sample lines per dataset an example may start from (enough to join, small enough to be quick)."""

DOMAINS = {
    "persona": ({"profiles": "profile_no", "turns": "turn_no"}, "verdict"),
    "live_pick": ({"live_chat": "msg_id", "character_sheet": "character_id", "viewer_relation": "viewer_id"}, "pick"),
    "retry": ({"interaction_events": "event_id", "surface_catalog": "surface_key"}, "verdict"),
    "handoff": ({"chat_messages": "message_id", "rooms": "room_id", "handoff_phrases": "trigger_phrase",
                 "help_articles": "article_id"}, "verdict"),
}


@lru_cache(maxsize=None)
def sample(domain: str, dataset: str) -> tuple[bytes, ...]:
    lines = (SEEDS / domain / f"{dataset}.jsonl").read_bytes().split(b"\n")
    return tuple(b for b in lines if b.strip())[:SAMPLE_LINES]


def folders(domain: str) -> st.SearchStrategy:
    ids, _ = DOMAINS[domain]
    return st.fixed_dictionaries({name: dataset_lines(domain, name, list(sample(domain, name)), id_field)
                                  for name, id_field in ids.items()}), st.booleans()


def strict(line: str):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=refuse)


def check_example(domain: str, files: dict[str, list[bytes]], crlf: bool) -> None:
    ids, output = DOMAINS[domain]
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{domain}-") as tmp:
        tmp = Path(tmp)
        folder = tmp / "in"
        folder.mkdir()
        for name, lines in files.items():
            write_dataset(folder, name, lines, crlf)
        _properties(domain, folder, tmp, ids, output)


def _properties(domain: str, folder: Path, tmp: Path, ids: dict, output: str) -> None:
    out, q = tmp / "verdicts.jsonl", tmp / "quarantine.jsonl"
    code, _, err = run("judge", domain, "--input", folder, "--out", out, "--quarantine", q)
    if code == 2:  # a file unusable as a whole: a clear message, nothing written
        assert err.startswith("verdicts: ") and "Traceback" not in err, err
        assert not out.exists()
        return
    assert code == 0, err

    quarantined = [strict(line) for line in q.read_text(encoding="utf-8").split("\n") if line]
    for name in ids:
        raw = sum(1 for b in (folder / f"{name}.jsonl").read_bytes().split(b"\n") if b.strip() and b.strip(b"\r").strip())
        mine = sum(1 for r in quarantined if r["dataset"] == name)
        line = f"  {name}: {raw} raw = "
        counted = next(text for text in err.splitlines() if text.startswith(line))
        normalised, rest = counted[len(line):].split(" normalised + ")
        assert int(rest.split()[0]) == mine, (counted, mine)
        assert int(normalised) + mine == raw, counted

    schema = validator(domain, output)
    for text in out.read_text(encoding="utf-8").split("\n")[:-1]:
        row = strict(text)
        errors = sorted(schema.iter_errors(row), key=str)
        assert not errors, (row, errors[0].message)

    vcode, vout, verr = run("validate", domain, "--input", folder, "--verdicts", out)
    assert vcode == 0, vout + verr

    again, q2 = tmp / "again.jsonl", tmp / "again_q.jsonl"
    assert run("judge", domain, "--input", folder, "--out", again, "--quarantine", q2)[0] == 0
    assert again.read_bytes() == out.read_bytes() and q2.read_bytes() == q.read_bytes()


def _fuzz(domain: str):
    @seed(SEED)
    @settings(max_examples=EXAMPLES, derandomize=SEED == 0, database=None, deadline=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
    @given(*folders(domain))
    def test(files, crlf):
        check_example(domain, files, crlf)

    test.__name__ = f"test_fuzz_{domain}"
    return test


test_fuzz_persona = _fuzz("persona")
test_fuzz_live_pick = _fuzz("live_pick")
test_fuzz_retry = _fuzz("retry")
test_fuzz_handoff = _fuzz("handoff")
