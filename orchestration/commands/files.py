"""The file commands: judge, validate, agree, diff, compare and generate, each from files to files."""

from __future__ import annotations

import json
import sys
from collections import Counter

from orchestration.commands.usage import (
    EXIT_OK, EXIT_CHECKS_FAILED, UsageError, domain_named, judged_input, warn_empty_references,
    read_verdicts, load_golden, stored_decisions,
)
from rules.common.atomic import write_text
from rules.common.collector import cycle_collection_paused


def cmd_judge(args) -> int:
    # One run makes a dict or list per row by the million, long-lived and free of cycles: every
    # full cycle collection walks them all again (23 of them, 15% of live_pick's 76 s at 10⁶ rows).
    # Held for the run, the peak memory there rose by 25 MB (1,750 → 1,775 MiB).
    with cycle_collection_paused():
        return _judge(args)


def _judge(args) -> int:
    from rules.common.jsonl import write_jsonl
    from rules.common.part_writer import processes, write_parts

    domain = domain_named(args.domain)
    try:
        processes()
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.tags not in domain.tag_sources:
        raise UsageError(f"--tags {args.tags}: not available for {args.domain} (choose from {', '.join(domain.tag_sources)})")
    if args.summary not in domain.summary_writers:
        raise UsageError(f"--summary {args.summary}: not available for {args.domain} (choose from {', '.join(domain.summary_writers)})")
    try:
        parts, judged = judged_input(domain, domain.judge_dir_parts, args.input, day=args.day, tags=args.tags,
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
    warn_empty_references(args.domain, judged.reconciliation)
    return EXIT_OK


def _quarantine_rows(frame) -> list[dict]:
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    for r in rows:
        r["line"] = int(r["line"])
    return rows


def cmd_validate(args) -> int:
    from rules.common.checks import format_results

    domain = domain_named(args.domain)
    rows = read_verdicts(args.verdicts)
    results, judged = judged_input(domain, domain.check_dir, args.input, rows, day=args.day)
    warn_empty_references(args.domain, judged.reconciliation)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=2))
    else:
        print(format_results(results))
    return EXIT_OK if all(r.passed for r in results) else EXIT_CHECKS_FAILED


def cmd_agree(args) -> int:
    from evals.render import render_html, render_markdown

    domain = domain_named(args.domain)
    rows = read_verdicts(args.verdicts)
    golden = load_golden(domain, args.golden)
    checks, quarantine, reconciliation, gated = [], None, {}, None
    if args.input:
        checks, judged = judged_input(domain, domain.check_dir, args.input, rows, day=args.day)
        quarantine, reconciliation, gated = judged.quarantine, judged.reconciliation, judged.normalised
    report = domain.report([r for r in rows if r], golden, checks, quarantine, reconciliation, scope=str(args.verdicts), judged=gated,
                           golden_path=args.golden, input_dir=args.input, decisions=stored_decisions(args.domain))
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


def cmd_diff(args) -> int:
    from evals.diff_files import diff_paths
    from evals.diff_render import render_diff

    try:
        diffs = diff_paths(args.a, args.b, args.domain)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    text = "\n".join(render_diff(d, f"{name} 실행 비교", only_different=not args.all) for name, d in diffs.items())
    print(text)
    if args.out:
        if args.out.suffix.lower() == ".json":
            write_text(args.out, json.dumps({n: d.to_dict() for n, d in diffs.items()}, ensure_ascii=False, indent=2))
        else:
            write_text(args.out, text)
    regressed = {n: [i.id for i in d.regressed] + [f"check {c}" for c in d.checks_broken] for n, d in diffs.items()}
    for name, d in diffs.items():
        t = d.tally()
        print(f"{name}: regressed {t['regressed']}, improved {t['improved']}, changed {t['changed']}, same {t['same']}"
              + (f"; checks now failing: {', '.join(d.checks_broken)}" if d.checks_broken else "")
              + ("; pinned inputs differ" if d.pins else ""), file=sys.stderr)
    if args.fail_on_regression and any(regressed.values()):
        print("verdicts diff: regression: " + "; ".join(f"{n}: {', '.join(ids[:10])}" for n, ids in regressed.items() if ids), file=sys.stderr)
        return EXIT_CHECKS_FAILED
    return EXIT_OK


def cmd_compare(args) -> int:
    from evals.compare import render_comparison

    domain = domain_named(args.domain)
    if domain.compare is None:
        raise UsageError(f"compare is not defined for {args.domain}")
    try:
        result = judged_input(domain, domain.compare, args.input, args.a, args.b, args.character)
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


def cmd_generate(args) -> int:
    from evals.generate import MALFORMED_FILE

    try:
        made = domain_named(args.domain).generate(args.rows, args.seed, args.out)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    for name, lines in made["rows"].items():
        print(f"{args.out / f'{name}.jsonl'}: {lines} lines, {len(made['malformed'][name])} malformed")
    print(f"malformed rows: {args.out / MALFORMED_FILE}")
    return EXIT_OK
