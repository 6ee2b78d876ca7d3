"""The week-2 evaluation runner: every domain's golden-agreement report, a summary, a regression gate.

    run_eval(domains, input_root, golden, out_dir) writes, per domain, `<out>/<domain>/report.{md,json}`
    and `board.html`, then `<out>/summary.{md,json}` across domains.
    compare_to_baseline(current, previous, margin) lists the metrics that moved and the failures.

Input: `input_root/<domain>/` holds `<dataset>.jsonl` and, by default, `golden.jsonl`; with one
domain, `input_root` may be that domain's folder itself. Domain extras join the report:
persona the prompt-version comparison (two newest versions), live_pick the tagger agreement;
retry (mismatches per verdict, baseline sweep) and handoff (rooms to review) carry theirs.

Gate (decision): only metrics with a threshold criterion can fail — when the status becomes
"기준 미달"/"측정 불가" from anything else, when the value drops by more than `margin`, or when
the metric disappears from a domain run both times. Record-only metrics are listed when they move
but never fail: which direction is worse (e.g. the quarantined share) is not defined for them.
Heavy imports are deferred so the CLI parser stays light.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from rules.common.atomic import write_text

DEFAULT_MARGIN = 0.02
EXIT_OK, EXIT_GATE_FAILED, EXIT_BAD_INPUT = 0, 1, 2
MET, NOT_MET, NO_DATA, EMPTY = "기준 충족", "기준 미달", "측정 불가", "판정한 항목 없음"  # evals.report's, unimported to stay light
CENSUS = "표본 아님 (전수)"
GATED = (MET, NOT_MET, NO_DATA, EMPTY)
"""Statuses only a threshold metric has (EMPTY: a scope with nothing judged, which gives no verdict)."""


# ---- running -------------------------------------------------------------------------------

def domain_input(input_root: Path, name: str, single: bool) -> Path:
    """`input_root/<domain>`, or `input_root` itself when it is the one domain's folder."""
    sub = Path(input_root) / name
    if sub.is_dir():
        return sub
    if single and Path(input_root).is_dir():
        return Path(input_root)
    raise FileNotFoundError(f"{sub}: no input folder for {name}")


def parse_golden(values: list[str] | None, names: list[str]) -> dict[str, Path]:
    """`--golden FILE` (one domain) or `--golden DOMAIN=FILE` (any number)."""
    out: dict[str, Path] = {}
    for v in values or []:
        name, sep, path = v.partition("=")
        if sep and name in names:
            out[name] = Path(path)
        elif len(names) == 1:
            out[names[0]] = Path(v)
        else:
            raise ValueError(f"--golden {v}: with several domains write DOMAIN=FILE (domains: {', '.join(names)})")
    return out


Decisions = Callable[[str], dict]
"""domain → the stored manual-check decisions (the warehouse table every report path reads)."""


def evaluate_domain(name: str, input_dir: Path, golden_path: Path | None, tags: str = "gold",
                    decisions: Decisions | None = None) -> tuple[object, dict]:
    """(Report, extra JSON) for one domain folder, judged and checked as `verdicts judge`/`validate` do
    (`tags`: the live_pick tagger the verdicts are judged with; other domains have only gold)."""
    from evals import domains

    domain = domains.get(name)
    golden = domain.load_golden(golden_path) if golden_path else None
    judged = domain.judge_dir(input_dir, tags=tags if tags in domain.tag_sources else "gold")
    checks, gated = domain.check_dir(input_dir, judged.rows)
    report = domain.report(judged.rows, golden, checks, gated.quarantine, gated.reconciliation, scope=f"{name} · {input_dir}",
                           judged=gated.normalised, golden_path=golden_path, input_dir=input_dir,
                           decisions=decisions(name) if decisions else None)
    extra = domain.extras(domain, input_dir, judged, report) if domain.extras else {}
    if golden is None:
        report.honesty.append("골든 라벨 파일이 없어 일치율을 재지 않았습니다.")
    return report, {"golden": str(golden_path) if golden_path else None, "golden_size": len(golden or []), **extra}


def write_domain(name: str, report, extra: dict, input_dir: Path, golden_path: Path | None, out: Path,
                 decisions: Decisions | None = None) -> dict[str, str]:
    """report.md, report.json and the board page; returns the file names written."""
    from evals import domains
    from evals.board import board_from_dir
    from evals.render import render_markdown

    out.mkdir(parents=True, exist_ok=True)
    data = report.to_dict()
    data.setdefault("sections", [{"heading": h, "markdown": b} for h, b in report.extra_sections])
    data.update(input=str(input_dir), **extra)
    write_text(out / "report.md", render_markdown(report))
    write_text(out / "report.json", json.dumps(data, ensure_ascii=False, indent=2))
    files = {"markdown": f"{name}/report.md", "json": f"{name}/report.json"}
    domain = domains.get(name)
    golden = domain.load_golden(golden_path) if golden_path else None
    write_text(out / "board.html", board_from_dir(domain, input_dir, golden, golden_path=golden_path,
                                                  decisions=decisions(name) if decisions else None))
    files["board"] = f"{name}/board.html"
    return files


def run_eval(names: list[str], input_root: Path, golden: dict[str, Path] | None, out_dir: Path, tags: str = "gold",
             decisions: Decisions | None = None) -> dict:
    """Every named domain's report files, then summary.{md,json}; returns the summary."""
    golden = golden or {}
    out_dir = Path(out_dir)
    summary: dict = {"domains": {}}
    for name in names:
        input_dir = domain_input(Path(input_root), name, len(names) == 1)
        golden_path = golden.get(name) or (input_dir / "golden.jsonl" if (input_dir / "golden.jsonl").is_file() else None)
        report, extra = evaluate_domain(name, input_dir, golden_path, tags, decisions)
        files = write_domain(name, report, extra, input_dir, golden_path, out_dir / name, decisions)
        summary["domains"][name] = {
            "input": str(input_dir),
            "golden": extra["golden"],
            "golden_size": extra["golden_size"],
            "labelled_and_judged": len(report.gold),
            "kappa": report.kappa,
            "checks_passed": report.checks_passed,
            "judged": report.judged_count,
            "pins": report.pins,
            "metrics": [m.to_dict() for m in report.metrics],
            "files": files,
        }
    write_summary(summary, out_dir)
    return summary


def write_summary(summary: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text(out_dir / "summary.json", json.dumps(summary, ensure_ascii=False, indent=2))
    write_text(out_dir / "summary.md", render_summary(summary))


def _ratio(m: dict | None):
    from evals.stats import Ratio

    r = (m or {}).get("ratio")
    return Ratio(r["numerator"], r["denominator"]) if r else None


def render_summary(summary: dict) -> str:
    from evals.markdown import md_table

    over, detail = [], []
    for name, d in summary["domains"].items():
        agreement = next((m for m in d["metrics"] if m["name"] == "판정 일치"), None)
        below = sum(m["status"] in (NOT_MET, NO_DATA) for m in d["metrics"])
        kappa = "—" if d["kappa"] is None else f"{d['kappa']:.3f}"
        over.append([name, d["golden_size"], d["labelled_and_judged"], _ratio(agreement).format() if _ratio(agreement) else "—", kappa,
                     "✅ 통과" if d["checks_passed"] else "❌ 실패", below, " · ".join(d["files"].values())])
        detail += [[name, m["name"], _ratio(m).format(), CENSUS if m.get("census") else _ratio(m).format_interval(),
                    m["criterion"], m["status"], m["rests_on"]]
                   for m in d["metrics"] if m.get("ratio")]
    return "\n".join([
        "# 2주차 평가 요약 (합성 데이터 기준)", "",
        "골든 라벨은 규칙을 쓴 같은 팀이 만든 합성 라벨입니다. 일치율은 동작을 보일 뿐 품질을 증명하지 않습니다. "
        "분모가 10보다 작으면 퍼센트를 적지 않습니다.", "",
        md_table(["도메인", "골든 라벨 수", "라벨·판정 모두 있는 항목", "판정 일치", "Cohen's kappa", "자동 검증", "기준 미달 지표", "파일"], over), "",
        "## 지표 전체", "",
        md_table(["도메인", "지표", "값 (분자 / 분모)", "95% Wilson 구간", "기준", "판정", "근거"], detail), "",
    ])


# ---- regression gate -----------------------------------------------------------------------

@dataclass
class Move:
    domain: str
    metric: str
    before: float | None
    after: float | None
    status_before: str | None
    status_after: str | None
    reason: str = ""
    """Why the gate fails on this metric; empty when it only moved."""


@dataclass
class Gate:
    margin: float
    moved: list[Move] = field(default_factory=list)
    failures: list[Move] = field(default_factory=list)
    skipped_domains: list[str] = field(default_factory=list)
    """Domains in only one of the two runs: not compared."""

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict:
        return {"margin": self.margin, "passed": self.passed, "moved": [asdict(m) for m in self.moved],
                "failures": [asdict(m) for m in self.failures], "skipped_domains": self.skipped_domains}


def _metrics(domain: dict) -> dict[str, tuple[float | None, str]]:
    return {m["name"]: ((m.get("ratio") or {}).get("value"), m["status"]) for m in domain.get("metrics", [])}


def _failure(before: float | None, after: float | None, sb: str | None, sa: str | None, margin: float) -> str:
    if sa is None:
        return "이번 실행에 없는 지표입니다" if sb in (MET, NOT_MET) else ""
    if sa not in GATED:
        return ""
    if sa == EMPTY and sb != EMPTY:
        return "이번 실행에는 판정한 항목이 없습니다"
    if sa in (NOT_MET, NO_DATA) and sb not in (NOT_MET, NO_DATA):
        return f"기준 아래로 내려갔습니다 ({sb or '새 지표'} → {sa})"
    if before is not None and after is not None and before - after > margin + 1e-12:
        return f"{(before - after) * 100:.1f}%p 떨어졌습니다 (허용 {margin * 100:.1f}%p)"
    return ""


def compare_to_baseline(current: dict, previous: dict, margin: float = DEFAULT_MARGIN) -> Gate:
    """Every metric of the domains both summaries hold, compared by (domain, metric name)."""
    gate = Gate(margin)
    cur, prev = current.get("domains", {}), previous.get("domains", {})
    gate.skipped_domains = sorted(set(cur) ^ set(prev))
    for name in [n for n in cur if n in prev]:
        now, then = _metrics(cur[name]), _metrics(prev[name])
        for metric in [*now, *[k for k in then if k not in now]]:
            before, sb = then.get(metric, (None, None))
            after, sa = now.get(metric, (None, None))
            if before == after and sb == sa:
                continue
            move = Move(name, metric, before, after, sb, sa, _failure(before, after, sb, sa, margin))
            gate.moved.append(move)
            if move.reason:
                gate.failures.append(move)
    return gate


def render_gate(gate: Gate) -> str:
    from evals.markdown import md_table

    pct = lambda v: "—" if v is None else f"{v * 100:.1f}%"  # noqa: E731
    rows = [[m.domain, m.metric, pct(m.before), pct(m.after), m.status_before or "—", m.status_after or "—", m.reason or "—"]
            for m in gate.moved]
    head = f"# 회귀 게이트: {'통과' if gate.passed else '실패'} (허용 하락 {gate.margin * 100:.1f}%p)"
    out = [head, "", md_table(["도메인", "지표", "이전", "이번", "이전 판정", "이번 판정", "실패 사유"], rows) if rows else "움직인 지표가 없습니다."]
    if gate.failures:
        out += ["", "실패한 지표: " + ", ".join(f"{m.domain} · {m.metric}" for m in gate.failures)]
    if gate.skipped_domains:
        out += ["", f"한쪽 실행에만 있어 비교하지 않은 도메인: {', '.join(gate.skipped_domains)}"]
    return "\n".join(out) + "\n"


def load_summary(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable summary.json ({exc.__class__.__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("domains"), dict):
        raise ValueError(f"{path}: not a summary.json of `verdicts eval` (no 'domains' object)")
    return data


# ---- one entry point for the CLI and the Dagster job ---------------------------------------

def evaluate(names: list[str], input_root: Path, golden: list[str] | None, out_dir: Path,
             baseline: Path | None = None, margin: float = DEFAULT_MARGIN, tags: str = "gold",
             decisions: Decisions | None = None) -> tuple[dict, Gate | None]:
    """run_eval, then (with a baseline) the gate, written to `<out>/gate.{md,json}`."""
    from evals import domains
    from rules.live_pick.names import canonical

    canonical(tags)  # an unknown tagger name is a usage error before anything runs
    registered = domains.names()
    names = list(dict.fromkeys(names or registered))
    unknown = [n for n in names if n not in registered]
    if unknown:
        raise ValueError(f"unknown domain(s) {', '.join(unknown)}; choose from {', '.join(registered)}")
    if margin < 0:
        raise ValueError("--margin must not be negative")
    previous = load_summary(baseline) if baseline else None  # read before the run may overwrite it
    summary = run_eval(names, input_root, parse_golden(golden, names), out_dir, tags, decisions)
    if previous is None:
        return summary, None
    gate = compare_to_baseline(summary, previous, margin)
    write_text(Path(out_dir) / "gate.json", json.dumps(gate.to_dict(), ensure_ascii=False, indent=2))
    write_text(Path(out_dir) / "gate.md", render_gate(gate))
    return summary, gate


def add_eval_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--domain", action="append", help="a domain to evaluate (repeatable; default: all four)")
    p.add_argument("--input", type=Path, help="folder with one sub-folder per domain (default: the sample data in seeds/)")
    p.add_argument("--golden", action="append", help="golden labels: FILE (one domain) or DOMAIN=FILE; default <input>/golden.jsonl")
    p.add_argument("--out", type=Path, help="output folder (default: <VERDICTS_HOME>/reports/eval)")
    p.add_argument("--baseline", type=Path, help="a previous run's summary.json: list what moved; exit 1 on a regression")
    p.add_argument("--margin", type=float, default=DEFAULT_MARGIN, help="largest allowed drop of a gated metric (default 0.02)")
    p.add_argument("--tags", default="gold", help="live_pick: the tagger its verdicts are judged with (default gold); "
                   "tagger agreement is measured for every tagger either way")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    return add_eval_arguments(argparse.ArgumentParser(prog="verdicts eval")).parse_args(argv)


def main_eval(args: argparse.Namespace, decisions: Decisions | None = None) -> int:
    """`verdicts eval`: 0 done, 1 the gate failed, 2 unusable input."""
    from rules.common.environment import SAMPLE_DIR, reports_dir
    from rules.common.jsonl import DatasetError

    out = args.out or reports_dir() / "eval"
    try:
        summary, gate = evaluate(args.domain, args.input or SAMPLE_DIR, args.golden, out, args.baseline, args.margin, args.tags,
                                 decisions)
    except (DatasetError, ValueError, FileNotFoundError) as exc:
        print(f"verdicts eval: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"summary → {out / 'summary.md'} ({', '.join(summary['domains'])})", file=sys.stderr)
    if gate is None:
        return EXIT_OK
    print(render_gate(gate))
    return EXIT_OK if gate.passed else EXIT_GATE_FAILED
