"""`verdicts`: judge, validate and report from files, and run the nightly demo.

    verdicts judge DOMAIN --input DIR --out VERDICTS.jsonl [--quarantine Q.jsonl] [--tags gold|lexicon|kiwi|openai|model]
                   [--summary template|openai] [--day YYYY-MM-DD]
    verdicts validate DOMAIN --input DIR --verdicts VERDICTS.jsonl [--day YYYY-MM-DD]
    verdicts agree DOMAIN --verdicts VERDICTS.jsonl --golden GOLD.jsonl --out REPORT.{md,html,json} [--input DIR]
    verdicts compare persona --input DIR --a p12 --b p13 [--character CODE] [--out FILE.{md,json}]
    verdicts review DOMAIN --input DIR [--check KEY] [--out REVIEW.{jsonl,md}] [--decide ID=agree|disagree|note ...] [--note TEXT]
    verdicts board DOMAIN [--input DIR] [--golden GOLD.jsonl] [--live] --out BOARD.html
    verdicts replay FILE (--rate LINES_PER_SEC | --speed X) [--shift-to-now] [--to ws://HOST:PORT/ws/ingest]
    verdicts live-close CHARACTER_ID
    verdicts suggest live_pick [--broadcast ID]
    verdicts apply SUGGESTION_ID [--by NAME]
    verdicts reject SUGGESTION_ID --reason TEXT [--by NAME]
    verdicts sheet-history CHARACTER_ID
    verdicts eval [--domain D ...] [--input ROOT] [--golden FILE|DOMAIN=FILE] [--out DIR] [--baseline PREVIOUS.json] [--margin 0.02]
    verdicts demo [--dagster-home DIR]
    verdicts generate DOMAIN --rows N [--seed S] --out DIR
    verdicts serve [--input DIR] [--host 127.0.0.1] [--port 8765] [--tags NAME] [--grace-ms 200] [--config RULES.yaml] [--late-horizon S]
                   [--summary template|openai]
    verdicts worker [--name NAME] [--concurrency N] [--pool prefork|solo]

Exit codes: 0 success (rows may have been quarantined), 1 a check failed, 2 unusable input.
Dagster is imported only by `demo`, so the file commands start fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections import Counter
from pathlib import Path

from evals import domains
from rules.common.atomic import write_text
from rules.common.collector import cycle_collection_paused

EXIT_OK, EXIT_CHECKS_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Input the command cannot work with; the message says which file and why."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"verdicts: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="verdicts", description="Rule verdicts and golden-agreement reports from conversation logs.")
    sub = p.add_subparsers(dest="command", required=True)

    j = sub.add_parser("judge", help="judge a folder of <dataset>.jsonl files")
    j.add_argument("domain", choices=domains.names())
    j.add_argument("--input", required=True, type=Path, help="folder holding <dataset>.jsonl")
    j.add_argument("--out", required=True, type=Path, help="verdicts, one output-schema row per line")
    j.add_argument("--quarantine", type=Path, help="write quarantined rows here (JSON Lines)")
    j.add_argument("--tags", default="gold",
                   help="live_pick tagger: gold (the data's topic_tags, default), lexicon, kiwi, openai, model (= kiwi)")
    j.add_argument("--summary", default="template", help="live_pick summary writer: template (default) or openai")
    j.add_argument("--day", help="judge only this day (YYYY-MM-DD, Asia/Seoul)")
    j.set_defaults(func=cmd_judge)

    v = sub.add_parser("validate", help="run the automatic checks on a verdict file; exit 1 if any fails")
    v.add_argument("domain", choices=domains.names())
    v.add_argument("--input", required=True, type=Path)
    v.add_argument("--verdicts", required=True, type=Path)
    v.add_argument("--day", help="the verdicts cover only this day")
    v.add_argument("--json", action="store_true", help="print the results as JSON")
    v.set_defaults(func=cmd_validate)

    a = sub.add_parser("agree", help="golden-agreement report for a verdict file")
    a.add_argument("domain", choices=domains.names())
    a.add_argument("--verdicts", required=True, type=Path)
    a.add_argument("--golden", required=True, type=Path)
    a.add_argument("--out", required=True, type=Path, help="REPORT.md, REPORT.html or REPORT.json")
    a.add_argument("--input", type=Path, help="the judged input folder: adds the automatic checks and quarantine")
    a.add_argument("--day", help="the verdicts cover only this day")
    a.set_defaults(func=cmd_agree)

    c = sub.add_parser("compare", help="compare two prompt versions (persona)")
    c.add_argument("domain", choices=domains.names())
    c.add_argument("--input", required=True, type=Path)
    c.add_argument("--a", required=True, help="prompt version A (before), e.g. p12")
    c.add_argument("--b", required=True, help="prompt version B (after), e.g. p13")
    c.add_argument("--character", help="character code (default: the one character with turns in both versions)")
    c.add_argument("--out", type=Path, help="also write the comparison here (.md or .json)")
    c.set_defaults(func=cmd_compare)

    r = sub.add_parser("review", help="manual checks: write a check's sample with the stored decisions, or record decisions")
    r.add_argument("domain", choices=domains.names())
    r.add_argument("--input", required=True, type=Path)
    r.add_argument("--check", help="manual check key, e.g. live_pick.1 (persona without it: the review queue of persona.1)")
    r.add_argument("--out", type=Path, help="REVIEW.jsonl (one item per line, with the stored decisions) or REVIEW.md")
    r.add_argument("--decide", action="append", default=[], metavar="ID=agree|disagree|note",
                   help="record a decision for an item of the check's sample (repeatable); stored in the warehouse")
    r.add_argument("--note", help="note stored with the --decide decisions")
    r.set_defaults(func=cmd_review)

    b = sub.add_parser("board", help="the operator's verdict board: one self-contained HTML page")
    b.add_argument("domain", choices=domains.names())
    b.add_argument("--input", type=Path, help="folder holding <dataset>.jsonl (default: the sample data in seeds/<domain>/)")
    b.add_argument("--golden", type=Path, help="golden labels; without them the self-score stays blank")
    b.add_argument("--out", required=True, type=Path, help="BOARD.html")
    b.add_argument("--live", action="store_true", help="live_pick: the windows judged by the live path, with their latency")
    b.set_defaults(func=cmd_board)

    rp = sub.add_parser("replay", help="feed a recorded live_chat.jsonl into the live landing table")
    rp.add_argument("file", type=Path)
    pace = rp.add_mutually_exclusive_group(required=True)
    pace.add_argument("--rate", type=float, help="lines per second")
    pace.add_argument("--speed", type=float, help="the recording's own pace, X times faster")
    rp.add_argument("--shift-to-now", action="store_true", help="re-time sent_at to when each line is sent")
    rp.add_argument("--to", help="the live service's ingest socket, e.g. ws://127.0.0.1:8765/ws/ingest "
                                 "(default: append to the landing table); the token comes from VERDICTS_LIVE_TOKEN")
    rp.set_defaults(func=cmd_replay)

    lc = sub.add_parser("live-close", help="close a live broadcast now: write its answers back to the viewer relations")
    lc.add_argument("character_id")
    lc.set_defaults(func=cmd_live_close)

    sg = sub.add_parser("suggest", help="live_pick: a closed broadcast's figures and sheet tuning suggestions (no --broadcast: list them)")
    sg.add_argument("domain", choices=["live_pick"])
    sg.add_argument("--broadcast", help="broadcast id, e.g. CH-0007-20260908T211400")
    sg.set_defaults(func=cmd_suggest)

    ap = sub.add_parser("apply", help="apply a sheet tuning suggestion: writes the character's next sheet version")
    ap.add_argument("suggestion_id")
    ap.add_argument("--by", default=os.environ.get("USER"), help="who decides (default: $USER)")
    ap.set_defaults(func=cmd_apply)

    rj = sub.add_parser("reject", help="reject a sheet tuning suggestion, with a reason")
    rj.add_argument("suggestion_id")
    rj.add_argument("--reason", required=True)
    rj.add_argument("--by", default=os.environ.get("USER"), help="who decides (default: $USER)")
    rj.set_defaults(func=cmd_reject)

    sh = sub.add_parser("sheet-history", help="every version of a character's sheet, with what changed and from which suggestion")
    sh.add_argument("character_id")
    sh.set_defaults(func=cmd_sheet_history)

    from evals.runner import add_eval_arguments  # argparse only; the runner's heavy imports wait for the run

    ev = sub.add_parser("eval", help="week-2 evaluation: every domain's report, a summary, a regression gate (exit 1)")
    add_eval_arguments(ev)
    ev.set_defaults(func=cmd_eval)

    d = sub.add_parser("demo", help="run the nightly job on the sample data with embedded storage")
    d.add_argument("--dagster-home", type=Path, help="Dagster home (default: $DAGSTER_HOME or ./var/dagster_home)")
    d.set_defaults(func=cmd_demo)

    sv = sub.add_parser("serve", help="the web front: live console and admin pages (loopback by default)")
    sv.add_argument("--input", type=Path, help="folder with character_sheet.jsonl and viewer_relation.jsonl (default: the sample)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8765)
    sv.add_argument("--tags", default="model", help="live_pick tagger for the live console: lexicon, kiwi, openai, gold, model (= kiwi, default)")
    sv.add_argument("--grace-ms", type=int, default=200, help="wait this long after a window ends before judging it")
    sv.add_argument("--summary", help="live_pick summary writer: template or openai (default: VERDICTS_LIVE_SUMMARY, else template)")
    sv.add_argument("--config", type=Path, help="live_pick rules configuration (default: rules/live_pick/config.yaml)")
    sv.add_argument("--late-horizon", type=float, default=600, metavar="SECONDS",
                    help="a chat line whose window ended longer ago than this when it arrived is quarantined (window_out_of_range); "
                         "default 600")
    sv.add_argument("--window-ahead", type=float, default=600, metavar="SECONDS",
                    help="a chat line whose window ends further ahead than this when it arrived is quarantined (window_out_of_range); "
                         "default 600")
    sv.set_defaults(func=cmd_serve)

    w = sub.add_parser("worker", help="a Celery worker that runs Dagster steps (VERDICTS_EXECUTOR=celery)")
    w.add_argument("--name", default="verdicts", help="worker name; the host name is appended (default: verdicts)")
    w.add_argument("--concurrency", type=int, default=os.cpu_count() or 1, help="steps at once (default: the cores)")
    w.add_argument("--pool", choices=("prefork", "solo"), default="prefork",
                   help="prefork: one child process per slot; solo: steps run in this process, one at a time")
    w.add_argument("--loglevel", default="INFO")
    w.set_defaults(func=cmd_worker)

    g = sub.add_parser("generate", help="write deterministic synthetic input, with 3 malformed rows per dataset")
    g.add_argument("domain", choices=domains.names())
    g.add_argument("--rows", required=True, type=int, help="lines of the main dataset (at least 4)")
    g.add_argument("--seed", type=int, default=1, help="same seed, same bytes (default 1)")
    g.add_argument("--out", required=True, type=Path, help="folder for <dataset>.jsonl and malformed.json")
    g.set_defaults(func=cmd_generate)
    return p


def _domain(name: str) -> domains.Domain:
    try:
        return domains.get(name)
    except KeyError:
        raise UsageError(f"domain '{name}' is not registered (registered: {', '.join(domains.names())})") from None


def _judge_input(domain: domains.Domain, run, *args, **kwargs):
    from rules.common.jsonl import DatasetError

    try:
        return run(*args, **kwargs)
    except DatasetError as exc:
        raise UsageError(str(exc)) from exc


def cmd_judge(args) -> int:
    # One run makes a dict or list per row by the million, long-lived and free of cycles: every
    # full cycle collection walks them all again (23 of them, 15% of live_pick's 76 s at 10⁶ rows).
    # Held for the run, the peak memory there rose by 25 MB (1,750 → 1,775 MiB).
    with cycle_collection_paused():
        return _judge(args)


def _judge(args) -> int:
    from rules.common.jsonl import write_jsonl
    from rules.common.part_writer import processes, write_parts

    domain = _domain(args.domain)
    try:
        processes()
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.tags not in domain.tag_sources:
        raise UsageError(f"--tags {args.tags}: not available for {args.domain} (choose from {', '.join(domain.tag_sources)})")
    if args.summary not in domain.summary_writers:
        raise UsageError(f"--summary {args.summary}: not available for {args.domain} (choose from {', '.join(domain.summary_writers)})")
    try:
        parts, judged = _judge_input(domain, domain.judge_dir_parts, args.input, day=args.day, tags=args.tags,
                                     summaries=args.summary)
    except ValueError as exc:  # e.g. the openai adapters without their endpoint settings
        raise UsageError(str(exc)) from exc

    def tally(columns) -> dict:  # each part counted as it is written (in whichever process writes it)
        counted = {"verdicts": Counter(columns.get(domain.spec.verdict_key, ()))}
        if args.domain == "live_pick":
            from rules.live_pick.summaries import provenance_counts

            c = provenance_counts(columns["provenance"])
            counted["summaries"] = Counter(kept=c["kept"], fallback=c["fallback"])
            counted["reasons"] = Counter(c["reasons"])
        return counted

    n, totals = write_parts(args.out, parts, tally)
    counts, written, reasons = (totals.get(name, Counter()) for name in ("verdicts", "summaries", "reasons"))
    if args.quarantine:
        write_jsonl(args.quarantine, _quarantine_rows(judged.quarantine))
    print(f"judged {n} rows → {args.out}", file=sys.stderr)
    for verdict, k in counts.most_common():
        print(f"  {k:6d}  {verdict}", file=sys.stderr)
    for name, r in judged.reconciliation.items():
        print(f"  {name}: {r['raw']} raw = {r['normalised']} normalised + {r['quarantined']} quarantined", file=sys.stderr)
    if args.domain == "live_pick":
        why = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
        print(f"  tags: {args.tags} · summaries: {args.summary}, {written['kept']} model sentences kept, "
              f"{written['fallback']} fell back to the template" + (f" ({why})" if why else ""), file=sys.stderr)
    _warn_empty_references(args.domain, judged.reconciliation)
    return EXIT_OK


def _warn_empty_references(domain: str, reconciliation: dict) -> None:
    from rules.common.gates import empty_reference_warning, empty_references

    for name in empty_references(domain, reconciliation):
        print(f"verdicts: warning: {empty_reference_warning(name, reconciliation[name])}", file=sys.stderr)


def _quarantine_rows(frame) -> list[dict]:
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    for r in rows:
        r["line"] = int(r["line"])
    return rows


def _read_verdicts(path: Path) -> list:
    from rules.common.jsonl import read_jsonl_objects

    if not path.is_file():
        raise UsageError(f"{path}: verdict file not found")
    try:
        return read_jsonl_objects(path)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text") from exc


def _load_golden(domain: domains.Domain, path: Path) -> list[dict]:
    """The golden labels at `path`; a missing or malformed file is a usage error."""
    if not path.is_file():
        raise UsageError(f"{path}: golden file not found")
    try:
        return domain.load_golden(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def cmd_validate(args) -> int:
    from rules.common.checks import format_results

    domain = _domain(args.domain)
    rows = _read_verdicts(args.verdicts)
    results, judged = _judge_input(domain, domain.check_dir, args.input, rows, day=args.day)
    _warn_empty_references(args.domain, judged.reconciliation)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=2))
    else:
        print(format_results(results))
    return EXIT_OK if all(r.passed for r in results) else EXIT_CHECKS_FAILED


def cmd_agree(args) -> int:
    from evals.render import render_html, render_markdown

    domain = _domain(args.domain)
    rows = _read_verdicts(args.verdicts)
    golden = _load_golden(domain, args.golden)
    checks, quarantine, reconciliation, gated = [], None, {}, None
    if args.input:
        checks, judged = _judge_input(domain, domain.check_dir, args.input, rows, day=args.day)
        quarantine, reconciliation, gated = judged.quarantine, judged.reconciliation, judged.normalised
    report = domain.report([r for r in rows if r], golden, checks, quarantine, reconciliation, scope=str(args.verdicts), judged=gated)
    if not args.input:
        report.honesty.append("입력 폴더 없이 만든 리포트라 자동 검증과 격리 행을 싣지 않았습니다 (--input 으로 더할 수 있습니다).")
    suffix = args.out.suffix.lower()
    if suffix == ".md":
        text = render_markdown(report)
    elif suffix in (".html", ".htm"):
        text = render_html(report)
    elif suffix == ".json":
        text = json.dumps(report.to_dict(), ensure_ascii=False, indent=2)
    else:
        raise UsageError(f"{args.out}: choose a .md, .html or .json file name")
    write_text(args.out, text)
    agreement = next((m for m in report.metrics if m.name == "판정 일치"), None)
    print(f"report → {args.out}", file=sys.stderr)
    if agreement and agreement.ratio:
        print(f"  verdict agreement: {agreement.ratio.format()} ({agreement.status})", file=sys.stderr)
    return EXIT_OK


def cmd_compare(args) -> int:
    from evals.compare import render_comparison

    domain = _domain(args.domain)
    if domain.compare is None:
        raise UsageError(f"compare is not defined for {args.domain}")
    try:
        result = _judge_input(domain, domain.compare, args.input, args.a, args.b, args.character)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    text = render_comparison(result)
    print(text)
    if args.out:
        if args.out.suffix.lower() == ".json":
            write_text(args.out, json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        else:
            write_text(args.out, text)
    return EXIT_OK


def cmd_review(args) -> int:
    """The same samples and decision store as the admin pages' manual checks."""
    from evals.manual_checks import DECISIONS, check_by_key, checks_of, sample, tally
    from assets.resources import decisions
    from rules.common.jsonl import write_jsonl

    domain = _domain(args.domain)
    keys = [c.key for c in checks_of(args.domain)]
    key = args.check or ("persona.1" if args.domain == "persona" else None)
    if key is None or key not in keys:
        raise UsageError(f"--check: choose one of {', '.join(keys) or '(none: this domain lists no manual check)'}")
    check = check_by_key(key)
    engine = _live_engine()
    if args.decide:
        judged = _judge_input(domain, domain.judge_dir, args.input)
        sampled = set(sample(check, judged.rows, dict(judged.normalised.tables)))
        for item in args.decide:
            item_id, _, decision = item.partition("=")
            if decision not in DECISIONS:
                raise UsageError(f"--decide {item}: write ID=agree, ID=disagree or ID=note")
            if item_id not in sampled:
                raise UsageError(f"--decide {item}: {item_id} is not in the sample of {key}")
            decisions.record(engine, domain=args.domain, check_key=key, item_id=item_id, decision=decision, note=args.note,
                             scope=f"{args.domain} · {args.input}", reviewer="verdicts review")
    stored = decisions.read(engine, args.domain).get(key, {})
    if args.domain == "persona" and key == "persona.1":
        queue, candidates, size = _judge_input(domain, domain.review, args.input)
        queue["reviewer_decision"] = queue["turn_no"].map(lambda t: stored.get(t, {}).get("decision"))
        queue["reviewer_note"] = queue["turn_no"].map(lambda t: stored.get(t, {}).get("note"))
        ids = list(queue["turn_no"])
        rows = queue.to_dict("records")
    else:
        judged = _judge_input(domain, domain.judge_dir, args.input)
        ids = sample(check, judged.rows, dict(judged.normalised.tables))
        from evals.board import board_spec

        spec = board_spec(args.domain)
        by_id = {r[spec.id_field]: r for r in judged.rows if isinstance(r.get(spec.id_field), str)}
        candidates, size = len(set(check.candidates(judged.rows, dict(judged.normalised.tables)))), check.size
        rows = [{"check": key, spec.id_field: i, spec.verdict_key: by_id[i].get(spec.verdict_key),
                 "summary": by_id[i].get(spec.summary_field), "reviewer_decision": stored.get(i, {}).get("decision"),
                 "reviewer_note": stored.get(i, {}).get("note")} for i in ids]
    if args.out:
        if args.out.suffix.lower() == ".md":
            from evals.markdown import md_table

            if args.domain == "persona" and key == "persona.1":
                from evals.persona import render_review_queue

                text = render_review_queue(queue, candidates, size)
            else:
                text = f"# {key} {check.title}\n\n" + md_table(list(rows[0]) if rows else ["id"], [list(r.values()) for r in rows])
            write_text(args.out, text)
        else:
            write_jsonl(args.out, rows)
    agreed, decided, notes = tally(ids, stored)
    print(f"{key}: {len(ids)} of {candidates} candidate items"
          + (f" → {args.out}" if args.out else "") + f"; decided {decided}, agreed {agreed}, notes only {notes}", file=sys.stderr)
    return EXIT_OK


def cmd_board(args) -> int:
    from evals.board import board_from_dir
    from rules.common.environment import SAMPLE_DIR

    domain = _domain(args.domain)
    if args.out.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"{args.out}: the board is an HTML page; choose a .html file name")
    if args.live:
        if args.domain != "live_pick":
            raise UsageError("--live is for live_pick")
        from orchestration.live import store
        from orchestration.live.view import live_board_html

        engine = _live_engine()
        store.ensure_tables(engine)
        write_text(args.out, live_board_html(engine))
        print(f"live board → {args.out}", file=sys.stderr)
        return EXIT_OK
    sample = args.input is None
    input_dir = SAMPLE_DIR / args.domain if sample else args.input
    golden = None if args.golden is None else _load_golden(domain, args.golden)
    page = _judge_input(domain, board_from_dir, domain, input_dir, golden, sample=sample)
    write_text(args.out, page)
    print(f"board → {args.out}" + (f" (sample data: {input_dir})" if sample else ""), file=sys.stderr)
    return EXIT_OK


def _live_engine():
    from rules.common import environment
    from assets.resources.warehouse import _engine

    return _engine(environment.warehouse_url())


def cmd_replay(args) -> int:
    from orchestration.live.replay import replay
    from rules.live_pick.config import load_config

    if not args.file.is_file():
        raise UsageError(f"{args.file}: file not found")
    if (args.rate is not None and args.rate <= 0) or (args.speed is not None and args.speed <= 0):
        raise UsageError("--rate and --speed must be positive")
    if args.to:
        from orchestration.live.ingest_client import IngestClient, figures_line, service_status
        from orchestration.web.config import TOKEN_ENV

        if not args.to.startswith(("ws://", "wss://")):
            raise UsageError(f"--to {args.to}: expected ws://HOST:PORT/ws/ingest")
        try:
            client = IngestClient(args.to, os.environ.get(TOKEN_ENV) or None)
        except Exception as exc:  # noqa: BLE001 - refused or unreachable: say which and why
            raise UsageError(f"--to {args.to}: cannot connect ({exc})") from exc
        try:
            replay(None, args.file, load_config(), rate=args.rate, speed=args.speed, shift_to_now=args.shift_to_now,
                   send=client.send)
            durable = client.wait_acked()
        finally:
            client.close()
        c = client.summary()
        print(f"replay: {c['sent']} lines sent, {c['acknowledged']} acknowledged stored "
              f"({'all' if durable and c['acknowledged'] == c['sent'] else 'NOT all'}), {c['quarantined']} quarantined, "
              f"{c['resent']} sent again ({c['errors']} frames not stored, {c['reconnects']} reconnects)")
        status = service_status(args.to, os.environ.get(TOKEN_ENV) or None)
        if status is not None:  # the store's own figures, as the console and /live/status show them
            for character in sorted(_characters_in(args.file) & set(status.get("broadcasts", {}))):
                print("replay: the store, " + figures_line(f"{character}'s broadcast", status["broadcasts"][character]))
            print("replay: the store, " + figures_line("in total", status))
        return EXIT_OK if durable and c["acknowledged"] == c["sent"] else EXIT_CHECKS_FAILED
    replay(_live_engine(), args.file, load_config(), rate=args.rate, speed=args.speed, shift_to_now=args.shift_to_now)
    return EXIT_OK


def _characters_in(path: Path) -> set[str]:
    """The character ids a recorded chat file's readable lines name."""
    from rules.common.jsonl import parse_object

    out = set()
    for text in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        obj = parse_object(text) if text.strip() else None
        if obj is not None and isinstance(obj.get("character_id"), str):
            out.add(obj["character_id"].strip())
    return out


def cmd_live_close(args) -> int:
    import time

    from orchestration.live import store
    from orchestration.live.judge import close_broadcast
    from rules.live_pick.config import load_config

    engine = _live_engine()
    store.ensure_tables(engine)
    done = close_broadcast(engine, args.character_id, load_config(), time.time_ns)
    print(f"{args.character_id}: {'closed' if done['closed'] else 'nothing judged since the last close'}, "
          f"{done['answered']} answered lines written back", file=sys.stderr)
    if done["closed"]:
        print(f"broadcast {done['broadcast_id']}: {len(done['suggestions'])} sheet tuning suggestions"
              + (" (too thin to suggest)" if done["thin"] else "")
              + f"; see `verdicts suggest live_pick --broadcast {done['broadcast_id']}`", file=sys.stderr)
    return EXIT_OK


def cmd_suggest(args) -> int:
    import time

    from orchestration.live import sheets
    from orchestration.live.view import suggestions_markdown
    from rules.live_pick.config import load_config

    engine, config = _live_engine(), load_config()
    known = sheets.closed_broadcasts(engine, config.timezone)
    if not args.broadcast:
        if not known:
            print("no closed broadcast yet (close one with `verdicts live-close CHARACTER_ID`)", file=sys.stderr)
        for b in known:
            n = len(sheets.list_suggestions(engine, b["broadcast_id"]))
            print(f"{b['broadcast_id']}  {b['answered']} answered  {n} suggestions")
        return EXIT_OK
    broadcast = next((b for b in known if b["broadcast_id"] == args.broadcast), None)
    if broadcast is None:
        listed = ", ".join(b["broadcast_id"] for b in known[:10]) or "none yet"
        raise UsageError(f"no closed broadcast '{args.broadcast}' (closed: {listed})")
    sheets.suggest_broadcast(engine, broadcast, config, time.time_ns())
    print(suggestions_markdown(engine, args.broadcast))
    return EXIT_OK


def _decision(run, *args):
    from orchestration.live.sheets import SuggestionError

    try:
        return run(*args)
    except SuggestionError as exc:
        raise UsageError(str(exc)) from exc


def cmd_apply(args) -> int:
    import time

    from orchestration.live import sheets

    done = _decision(sheets.apply_suggestion, _live_engine(), args.suggestion_id.strip(), time.time_ns(), args.by)
    print(done.message)
    return EXIT_OK


def cmd_reject(args) -> int:
    import time

    from orchestration.live import sheets

    s = _decision(sheets.reject_suggestion, _live_engine(), args.suggestion_id.strip(), args.reason, time.time_ns(), args.by)
    print(f"{s['suggestion_id']} rejected: {s['reason']}" + ("" if s["changed"] else " (it was rejected already)"))
    return EXIT_OK


def cmd_sheet_history(args) -> int:
    import time

    from rules.common import environment
    from orchestration.live import sheets
    from orchestration.live.view import history_markdown
    from rules.live_pick.normalise import load_dir
    from rules.live_pick.config import load_config

    engine = _live_engine()
    if not sheets.history(engine, args.character_id):  # nothing judged yet: the sheet file is version 1
        folder = environment.raw_dir() / "live_pick"
        sheet = _judge_input(None, load_dir, folder, load_config()).sheet
        sheets.seed_versions(engine, sheet, folder / "character_sheet.jsonl", time.time_ns())
    if not sheets.history(engine, args.character_id):
        raise UsageError(f"no character '{args.character_id}' in the sheet versions or the sheet file")
    print(history_markdown(engine, args.character_id))
    return EXIT_OK


def cmd_eval(args) -> int:
    from evals.runner import main_eval

    return main_eval(args)


def cmd_demo(args) -> int:
    from orchestration.demo import run_demo

    home = args.dagster_home or (Path(os.environ["DAGSTER_HOME"]) if os.environ.get("DAGSTER_HOME") else None)
    return run_demo(home)


def cmd_serve(args) -> int:
    # The live tagger's analyser takes seconds to load, mostly outside the interpreter lock:
    # loaded beside the rest of start-up, a restart after a crash is back seconds sooner.
    threading.Thread(target=_preload_tagger, args=(args.tags,), name="tagger-preload", daemon=True).start()
    import uvicorn

    from orchestration.web.app import create_app
    from orchestration.web.config import WebConfig
    from rules.live_pick.summaries import writer

    settings = {"host": args.host, "port": args.port, "tags": args.tags, "grace_ms": args.grace_ms,
                "late_horizon_s": args.late_horizon, "window_ahead_s": args.window_ahead}
    if args.input:
        settings["input_dir"] = args.input.resolve()
    if args.config:
        settings["rules_config"] = args.config.resolve()
    if args.summary:
        settings["summaries"] = args.summary
    config = WebConfig(**settings)
    try:  # an unknown writer or a model endpoint without its settings: say so before serving
        writer(config.summaries)
    except ValueError as exc:
        raise UsageError(f"--summary {config.summaries}: {exc}") from None
    # The frame size limit is the protocol layer's: a frame over it is refused from its header, before its
    # payload is buffered (a console's messages are small; a window frame goes the other way).
    uvicorn.run(create_app(config), host=config.host, port=config.port, log_level="warning", ws="websockets-sansio",
                ws_per_message_deflate=config.compress_frames, ws_max_size=config.max_frame_bytes)
    return EXIT_OK


def _preload_tagger(name: str) -> None:
    from rules.live_pick.tags import canonical, tag_source

    try:
        if canonical(name) == "kiwi":
            tag_source(name)
    except Exception:  # noqa: BLE001 - the service builds it again and reports what is wrong
        pass


def worker_command(name: str, concurrency: int, pool: str, loglevel: str = "INFO") -> list[str]:
    """The Celery worker command line: the queue and broker come from the environment."""
    from orchestration.execution import celery_settings

    return [
        sys.executable, "-m", "celery", "-A", "orchestration.celery_worker", "worker",
        "-Q", celery_settings().queue, "-n", f"{name}@%h", "--pool", pool, "--concurrency", str(concurrency),
        # One step at a time per slot: a step is seconds to minutes, so prefetching only hoards.
        "--prefetch-multiplier=1", "--loglevel", loglevel, "--without-mingle", "--without-gossip",
    ]


def cmd_worker(args) -> int:
    cmd = worker_command(args.name, args.concurrency, args.pool, args.loglevel)
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # the worker takes this process's place (and PID)


def cmd_generate(args) -> int:
    from evals.generate import MALFORMED_FILE

    try:
        made = _domain(args.domain).generate(args.rows, args.seed, args.out)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    for name, lines in made["rows"].items():
        print(f"{args.out / f'{name}.jsonl'}: {lines} lines, {len(made['malformed'][name])} malformed")
    print(f"malformed rows: {args.out / MALFORMED_FILE}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
