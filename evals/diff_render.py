"""A run diff as Markdown (the command line, docs, CI logs): pinned inputs first when they differ,
then the tally, the "different only" items with regressions first, the metrics and checks that moved."""

from __future__ import annotations

from evals.diff import KIND_WORDS, RunDiff
from evals.markdown import md_cell, md_table

SHOWN = 200
"""Items listed in the "different only" table; the rest are counted."""


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:+.1f}%p"


def tally_text(d: RunDiff) -> str:
    t = d.tally()
    scope = "라벨이 있는 항목" if d.labelled_only else "모든 항목"
    return (f"비교한 항목 {len(d.items)}건 ({scope}) · " + " · ".join(f"{KIND_WORDS[k]} {n}" for k, n in t.items()))


def render_diff(d: RunDiff, title: str = "", only_different: bool = True) -> str:
    out = [f"# {md_cell(title or '실행 비교')}: {md_cell(d.before)} → {md_cell(d.after)}", ""]
    if d.pins:
        out += ["> ⚠️ **두 실행의 고정 입력이 다릅니다.** 아래 비교는 같은 잣대로 잰 것이 아닐 수 있습니다.", ">"]
        out += [f"> - {md_cell(p)}" for p in d.pins] + [""]
    else:
        out += ["고정 입력(골든 라벨, 규칙 설정, 태거, 코드)이 같습니다.", ""] if d.items or d.metrics else []
    out += [tally_text(d), ""]
    if d.labelled_only:
        out += ["리포트 파일에는 라벨이 있는 항목만 있어 그 항목만 비교했습니다. 라벨 없는 항목의 판정 변화는 판정 분포에 있습니다.", ""]
    items = d.different() if only_different else sorted(d.items, key=lambda i: i.id)
    out += [f"## {'다른 것만 (퇴보 먼저)' if only_different else '모든 항목'} · {len(items)}건", ""]
    if items:
        rows = [[KIND_WORDS[i.kind], i.id, (i.gold or "—") + (" (라벨 바뀜)" if i.label_changed else ""), i.before or "—", i.after or "—",
                 i.summary] for i in items[:SHOWN]]
        out += [md_table(["구분", "id", "정답", "이전", "이후", "이후 요약"], rows)]
        if len(items) > SHOWN:
            out += ["", f"그 밖 {len(items) - SHOWN}건은 JSON 출력에 있습니다."]
    else:
        out += ["달라진 항목이 없습니다."]
    out.append("")
    out += agreement_lines(d)
    moved = [m for m in d.metrics if m.moved]
    out += ["## 지표의 움직임", ""]
    if moved:
        rows = [[m.name, m.before.format() if m.before else "—", m.after.format() if m.after else "—", pct(m.difference),
                 "표본 아님 (전수)" if m.census else (f"[{pct(m.interval[0])}, {pct(m.interval[1])}]" if m.interval else "—")] for m in moved]
        out += [md_table(["지표", "이전", "이후", "차이", "차이의 95% Newcombe 구간 (독립 표본)"], rows)]
    else:
        out += ["움직인 지표가 없습니다."]
    out.append("")
    counts = [[v, a, b, f"{b - a:+d}"] for v, a, b in d.counts if a != b]
    out += ["## 판정 분포가 바뀐 판정", "", md_table(["판정", "이전", "이후", "차이"], counts) if counts else "같습니다.", ""]
    word = {True: "통과", False: "실패", None: "—"}
    checks = [[f"{c} {t}", word[a], word[b]] for c, t, a, b in d.checks if a != b]
    out += ["## 결과가 바뀐 자동 검증", "", md_table(["검증", "이전", "이후"], checks) if checks else "같습니다.", ""]
    return "\n".join(out)


def agreement_lines(d: RunDiff) -> list[str]:
    """The agreement's change over the same labelled items, as the paired difference it is."""
    a = d.agreement
    if a is None:
        return []
    return ["## 판정 일치의 변화 (같은 라벨 항목을 짝지어)", "",
            f"짝 {a.pairs}건: 판정 일치 {a.both + a.only_a} → {a.both + a.only_b} · 퇴보 {a.only_a} · 개선 {a.only_b} · "
            f"차이 {pct(a.difference)}, 95% 구간 [{pct(a.interval[0])}, {pct(a.interval[1])}]", "",
            f"구간: {a.method}. 두 실행이 같은 항목을 판정했으므로 독립 표본의 구간(아래 표)보다 이 구간이 맞습니다.", ""]
