"""`verdicts`: judge, validate and report from files, and run the nightly demo.

    verdicts judge DOMAIN --input DIR --out VERDICTS.jsonl [--quarantine Q.jsonl] [--tags gold|lexicon|kiwi|openai|model]
                   [--summary template|openai] [--day YYYY-MM-DD]
    verdicts validate DOMAIN --input DIR --verdicts VERDICTS.jsonl [--day YYYY-MM-DD]
    verdicts agree DOMAIN --verdicts VERDICTS.jsonl --golden GOLD.jsonl --out REPORT.{md,html,json} [--input DIR]
    verdicts diff A B [--domain D ...] [--fail-on-regression] [--all] [--out DIFF.{md,json}]
    verdicts compare persona --input DIR --a p12 --b p13 [--character CODE] [--out FILE.{md,json}]
    verdicts review DOMAIN --input DIR [--check KEY] [--out REVIEW.{jsonl,md}] [--decide ID=agree|disagree|note ...] [--note TEXT]
                   [--reviewer NAME] [--export DECISIONS.{csv,json}]
    verdicts board DOMAIN [--input DIR] [--golden GOLD.jsonl] [--live] --out BOARD.html
    verdicts replay FILE (--rate LINES_PER_SEC | --speed X) [--shift-to-now] [--to ws://HOST:PORT/ws/ingest]
    verdicts replay FILE --to ws://HOST:PORT/ws/ingest --pace original [--speed X]
    verdicts listen chzzk|youtube|twitch CHANNEL --character CH-… [--to ws://HOST:PORT/ws/ingest] [--credentials FILE]
                   [--rates RATES.yaml]
    verdicts live-start CHARACTER_ID [--close-previous] [--input DIR]
    verdicts live-close CHARACTER_ID [--input DIR]
    verdicts live-reseed [--input DIR]
    verdicts suggest live_pick [--broadcast ID]
    verdicts apply SUGGESTION_ID [--by NAME]
    verdicts reject SUGGESTION_ID --reason TEXT [--by NAME]
    verdicts sheet-history CHARACTER_ID
    verdicts eval [--domain D ...] [--input ROOT] [--golden FILE|DOMAIN=FILE] [--out DIR] [--baseline PREVIOUS.json] [--margin 0.02]
    verdicts demo [--dagster-home DIR]
    verdicts generate DOMAIN --rows N [--seed S] --out DIR
    verdicts serve [--input DIR] [--host 127.0.0.1] [--port 8765] [--tags NAME] [--grace-ms 200] [--config RULES.yaml] [--late-horizon S]
                   [--summary template|openai] [--allow-open] [--allow-host NAME ...] [--allow-origin ORIGIN ...]
    verdicts worker [--name NAME] [--concurrency N] [--pool prefork|solo]

Exit codes: 0 success (rows may have been quarantined), 1 a check failed, 2 unusable input.
Dagster is imported only by `demo`, so the file commands start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from evals import domains
from orchestration.commands import files, live, review, running, sheets
from orchestration.commands.usage import EXIT_BAD_INPUT, UsageError


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
    j.set_defaults(func=files.cmd_judge)

    v = sub.add_parser("validate", help="run the automatic checks on a verdict file; exit 1 if any fails")
    v.add_argument("domain", choices=domains.names())
    v.add_argument("--input", required=True, type=Path)
    v.add_argument("--verdicts", required=True, type=Path)
    v.add_argument("--day", help="the verdicts cover only this day")
    v.add_argument("--json", action="store_true", help="print the results as JSON")
    v.set_defaults(func=files.cmd_validate)

    a = sub.add_parser("agree", help="golden-agreement report for a verdict file")
    a.add_argument("domain", choices=domains.names())
    a.add_argument("--verdicts", required=True, type=Path)
    a.add_argument("--golden", required=True, type=Path)
    a.add_argument("--out", required=True, type=Path, help="REPORT.md, REPORT.html or REPORT.json")
    a.add_argument("--input", type=Path, help="the judged input folder: adds the automatic checks and quarantine")
    a.add_argument("--day", help="the verdicts cover only this day")
    a.set_defaults(func=files.cmd_agree)

    df = sub.add_parser("diff", help="compare two runs item by item: regressed, improved, changed; exit 1 on a regression with --fail-on-regression")
    df.add_argument("a", type=Path, help="baseline run: a `verdicts eval` folder (or its summary.json), a report.json or a report folder")
    df.add_argument("b", type=Path, help="the run compared with it, in the same forms")
    df.add_argument("--domain", action="append", help="only this domain (repeatable; default: every domain both runs hold)")
    df.add_argument("--out", type=Path, help="also write the diff here (.md or .json)")
    df.add_argument("--all", action="store_true", help="list every item, not only the different ones")
    df.add_argument("--fail-on-regression", action="store_true",
                    help="exit 1 when an item matched its label before and does not now, or a check passed before and fails now")
    df.set_defaults(func=files.cmd_diff)

    c = sub.add_parser("compare", help="compare two prompt versions (persona)")
    c.add_argument("domain", choices=domains.names())
    c.add_argument("--input", required=True, type=Path)
    c.add_argument("--a", required=True, help="prompt version A (before), e.g. p12")
    c.add_argument("--b", required=True, help="prompt version B (after), e.g. p13")
    c.add_argument("--character", help="character code (default: the one character with turns in both versions)")
    c.add_argument("--out", type=Path, help="also write the comparison here (.md or .json)")
    c.set_defaults(func=files.cmd_compare)

    r = sub.add_parser("review", help="manual checks: write a check's sample with the stored decisions, or record decisions")
    r.add_argument("domain", choices=domains.names())
    r.add_argument("--input", required=True, type=Path)
    r.add_argument("--check", help="manual check key, e.g. live_pick.1 (persona without it: the review queue of persona.1)")
    r.add_argument("--out", type=Path, help="REVIEW.jsonl (one item per line, with the stored decisions) or REVIEW.md")
    r.add_argument("--decide", action="append", default=[], metavar="ID=agree|disagree|note",
                   help="record a decision for an item of the check's sample (repeatable); stored in the warehouse")
    r.add_argument("--note", help="note stored with the --decide decisions")
    r.add_argument("--reviewer", default=os.environ.get("USER"), help="who decides (default: $USER); several reviewers decide each item")
    r.add_argument("--export", type=Path, help="every reviewer's decisions on the sample, with each row's ids: DECISIONS.csv or .json")
    r.set_defaults(func=review.cmd_review)

    b = sub.add_parser("board", help="the operator's verdict board: one self-contained HTML page")
    b.add_argument("domain", choices=domains.names())
    b.add_argument("--input", type=Path, help="folder holding <dataset>.jsonl (default: the sample data in seeds/<domain>/)")
    b.add_argument("--golden", type=Path, help="golden labels; without them the self-score stays blank")
    b.add_argument("--out", required=True, type=Path, help="BOARD.html")
    b.add_argument("--live", action="store_true", help="live_pick: the windows judged by the live path, with their latency")
    b.set_defaults(func=review.cmd_board)

    rp = sub.add_parser("replay", help="feed a recorded live_chat.jsonl into the live landing table")
    rp.add_argument("file", type=Path)
    rp.add_argument("--rate", type=float, help="lines per second")
    rp.add_argument("--speed", type=float, help="the recording's own pace, X times faster")
    rp.add_argument("--pace", choices=("original",), help="original: as it happened — the recorded spacing (sped up by --speed X) "
                                                         "and the recorded sent_at, judged in the recording's own time by a "
                                                         "service started with `--clock event` (needs --to)")
    rp.add_argument("--shift-to-now", action="store_true", help="re-time sent_at to when each line is sent")
    rp.add_argument("--to", help="the live service's ingest socket, e.g. ws://127.0.0.1:8765/ws/ingest "
                                 "(default: append to the landing table); the token comes from VERDICTS_LIVE_TOKEN")
    rp.set_defaults(func=live.cmd_replay)

    li = sub.add_parser("listen", help="feed a live broadcast's chat (Chzzk, YouTube Live, Twitch) into the live service")
    li.add_argument("platform", choices=("chzzk", "youtube", "twitch"))
    li.add_argument("channel", help="chzzk: the channel id; youtube: the live video's id or URL; twitch: the channel's login name")
    li.add_argument("--character", required=True, help="the character_id the broadcast's lines are judged for, e.g. CH-0007")
    li.add_argument("--to", default="ws://127.0.0.1:8765/ws/ingest",
                    help="the live service's ingest socket (default ws://127.0.0.1:8765/ws/ingest); the token comes from VERDICTS_LIVE_TOKEN")
    li.add_argument("--credentials", type=Path, help="KEY=VALUE file of the platform's credentials (the environment wins); see docs/feeds.md")
    li.add_argument("--rates", type=Path, help="donation rate table (default: live/feeds/donation_rates.yaml)")
    li.add_argument("--endpoint", help="send the platform client's requests to this address instead (a local stand-in, as the tests do)")
    li.set_defaults(func=live.cmd_listen)

    ls = sub.add_parser("live-start", help="start a character's live broadcast now (its windows from now are the current broadcast)")
    ls.add_argument("character_id")
    ls.add_argument("--close-previous", action="store_true", help="close the character's broadcast still open first (as live-close)")
    ls.add_argument("--input", type=Path, default=None, help="folder of the character sheets the service judges with (default: the sample)")
    ls.set_defaults(func=live.cmd_live_start)

    lc = sub.add_parser("live-close", help="close a live broadcast now: write its answers back to the viewer relations")
    lc.add_argument("character_id")
    lc.add_argument("--input", type=Path, default=None, help="folder of the character sheets the service judges with (default: the sample)")
    lc.set_defaults(func=live.cmd_live_close)

    rs = sub.add_parser("live-reseed", help="replace the live viewer relations with DIR's viewer_relation.jsonl (stop the service first)")
    rs.add_argument("--input", type=Path, default=None, help="folder of viewer_relation.jsonl and character_sheet.jsonl (default: the sample)")
    rs.set_defaults(func=live.cmd_live_reseed)

    sg = sub.add_parser("suggest", help="live_pick: a closed broadcast's figures and sheet tuning suggestions (no --broadcast: list them)")
    sg.add_argument("domain", choices=["live_pick"])
    sg.add_argument("--broadcast", help="broadcast id, e.g. CH-0007-20260908T211400")
    sg.set_defaults(func=sheets.cmd_suggest)

    ap = sub.add_parser("apply", help="apply a sheet tuning suggestion: writes the character's next sheet version")
    ap.add_argument("suggestion_id")
    ap.add_argument("--by", default=os.environ.get("USER"), help="who decides (default: $USER)")
    ap.set_defaults(func=sheets.cmd_apply)

    rj = sub.add_parser("reject", help="reject a sheet tuning suggestion, with a reason")
    rj.add_argument("suggestion_id")
    rj.add_argument("--reason", required=True)
    rj.add_argument("--by", default=os.environ.get("USER"), help="who decides (default: $USER)")
    rj.set_defaults(func=sheets.cmd_reject)

    sh = sub.add_parser("sheet-history", help="every version of a character's sheet, with what changed and from which suggestion")
    sh.add_argument("character_id")
    sh.set_defaults(func=sheets.cmd_sheet_history)

    from evals.runner import add_eval_arguments  # argparse only; the runner's heavy imports wait for the run

    ev = sub.add_parser("eval", help="week-2 evaluation: every domain's report, a summary, a regression gate (exit 1)")
    add_eval_arguments(ev)
    ev.set_defaults(func=running.cmd_eval)

    d = sub.add_parser("demo", help="run the nightly job on the sample data with embedded storage")
    d.add_argument("--dagster-home", type=Path, help="Dagster home (default: $DAGSTER_HOME or ./var/dagster_home)")
    d.set_defaults(func=running.cmd_demo)

    sv = sub.add_parser("serve", help="the web front: live console and admin pages (loopback by default)")
    sv.add_argument("--input", type=Path, help="folder with character_sheet.jsonl and viewer_relation.jsonl (default: the sample)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only); another address needs a token "
                    "(VERDICTS_LIVE_TOKEN) or --allow-open")
    sv.add_argument("--allow-open", action="store_true",
                    help="serve a non-loopback --host without a token: everyone who can reach it may use every page, action and socket")
    sv.add_argument("--allow-host", action="append", metavar="NAME",
                    help="a host name (or address) requests may be addressed to besides loopback and --host; repeat for more "
                         "(also VERDICTS_ALLOWED_HOSTS, comma-separated)")
    sv.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                    help="a browser origin (scheme://host:port, or null) allowed on the sockets and on posts besides the service's own; "
                         "repeat for more (also VERDICTS_ALLOWED_ORIGINS)")
    sv.add_argument("--port", type=int, default=8765)
    sv.add_argument("--tags", default="model", help="live_pick tagger for the live console: lexicon, kiwi, openai, gold, model (= kiwi, default)")
    sv.add_argument("--grace-ms", type=int, default=200, help="wait this long after a window ends before judging it")
    sv.add_argument("--clock", choices=("wall", "event"), default=os.environ.get("VERDICTS_LIVE_CLOCK", "wall"),
                    help="when windows close: wall (default) or event, the recording's own time (for `verdicts replay --pace original`; "
                         "default: VERDICTS_LIVE_CLOCK)")
    sv.add_argument("--summary", help="live_pick summary writer: template or openai (default: VERDICTS_LIVE_SUMMARY, else template)")
    sv.add_argument("--config", type=Path, help="live_pick rules configuration (default: rules/live_pick/config.yaml)")
    sv.add_argument("--late-horizon", type=float, default=600, metavar="SECONDS",
                    help="a chat line whose window ended longer ago than this when it arrived is quarantined (window_out_of_range); "
                         "default 600")
    sv.add_argument("--window-ahead", type=float, default=600, metavar="SECONDS",
                    help="a chat line whose window ends further ahead than this when it arrived is quarantined (window_out_of_range); "
                         "default 600")
    sv.set_defaults(func=running.cmd_serve)

    w = sub.add_parser("worker", help="a Celery worker that runs Dagster steps (VERDICTS_EXECUTOR=celery)")
    w.add_argument("--name", default="verdicts", help="worker name; the host name is appended (default: verdicts)")
    w.add_argument("--concurrency", type=int, default=os.cpu_count() or 1, help="steps at once (default: the cores)")
    w.add_argument("--pool", choices=("prefork", "solo"), default="prefork",
                   help="prefork: one child process per slot; solo: steps run in this process, one at a time")
    w.add_argument("--loglevel", default="INFO")
    w.set_defaults(func=running.cmd_worker)

    g = sub.add_parser("generate", help="write deterministic synthetic input, with 3 malformed rows per dataset")
    g.add_argument("domain", choices=domains.names())
    g.add_argument("--rows", required=True, type=int, help="lines of the main dataset (at least 4)")
    g.add_argument("--seed", type=int, default=1, help="same seed, same bytes (default 1)")
    g.add_argument("--out", required=True, type=Path, help="folder for <dataset>.jsonl and malformed.json")
    g.set_defaults(func=files.cmd_generate)
    return p


if __name__ == "__main__":
    sys.exit(main())
