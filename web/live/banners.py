"""Settings that would silently change every verdict, said loudly: a banner on the console (through
`/live/status`'s `warnings`) and a WARNING log line, each once.

- the viewer relations in use (the warehouse's viewer state, seeded from `--input` the first time and
  updated at every broadcast close) are not the ones in `--input`'s `viewer_relation.jsonl`;
- arriving lines' `sent_at` is far from the wall clock (a recorded chat not re-timed to now: every
  line late or out of range);
- the tagger's vocabulary has no entry for a topic of a character's sheet (such lines get no tag and
  all go out of world).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import orjson

from live import store
from live.judge import seed_relations
from rules.common import timestamps
from rules.common.jsonl import dataset_path, read_raw
from rules.common.korean import duration

log = logging.getLogger("verdicts.live")

FAR_S = 120
"""A line sent this far (seconds) before or after it arrived is far from the wall clock."""
RESEED = "verdicts live-reseed --input DIR"


def _plain(row: dict) -> bytes:
    """A viewer state row as stored JSON, for comparing (numpy values as JSON numbers, keys sorted)."""
    return orjson.dumps(row, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_SORT_KEYS, default=str)


def relations_differ(input_dir: Path, engine, config) -> dict | None:
    """How the viewer state in use differs from what `input_dir`'s viewer_relation.jsonl seeds (through
    the same gates), or None when it does not."""
    path = dataset_path(input_dir, "viewer_relation")
    if not Path(path).is_file() or store.viewer_state_empty(engine):
        return None
    sheet = read_raw(dataset_path(input_dir, "character_sheet"), "character_sheet")
    in_file = {r["viewer_id"]: _plain(r) for r in store.state_rows(seed_relations(input_dir, sheet, config))}
    in_use = {}
    for text in store.viewer_lines(engine)["text"]:
        r = orjson.loads(text)
        in_use[r["viewer_id"]] = _plain(r)
    differ = sorted(v for v in in_file.keys() | in_use.keys() if in_file.get(v) != in_use.get(v))
    if not differ:
        return None
    return {"code": "relations_differ", "viewers": len(differ), "in_file": len(in_file), "in_use": len(in_use),
            "message": f"판정에 쓰는 시청자 관계 기록(창고, 방송을 닫을 때마다 갱신)이 --input 의 viewer_relation.jsonl 과 "
                       f"{len(differ):,}명 다릅니다 (파일 {len(in_file):,}명, 쓰는 기록 {len(in_use):,}명). "
                       f"파일의 기록으로 판정하려면 서비스를 멈추고 `{RESEED}` 로 다시 채우세요.",
            "log": f"the viewer relations in use differ from {path} for {len(differ)} viewers; reseed with `{RESEED}`"}


def vocabulary_gaps(tagger, sheet) -> dict | None:
    """A character's topics the tagger has no vocabulary entry for (None when it tags from a
    vocabulary that covers them, or has no fixed vocabulary: gold tags, a model)."""
    known = getattr(tagger, "vocabulary", None) or getattr(tagger, "lexicon", None)
    if not known or sheet is None or "world_topic_tags" not in sheet:
        return None
    gaps = {}
    for c, topics in zip(sheet["character_id"], sheet["world_topic_tags"]):
        missing = [t for t in (topics if isinstance(topics, (list, tuple)) else []) if t not in known]
        if missing:
            gaps[str(c)] = missing
    if not gaps:
        return None
    said = "; ".join(f"{c}: {', '.join(m)}" for c, m in sorted(gaps.items()))
    return {"code": "vocabulary_gaps", "characters": gaps,
            "message": f"태거 `{tagger.name}` 의 어휘에 없는 캐릭터 주제가 있습니다 ({said}). 이 주제의 줄은 태그가 붙지 않아 "
                       f"모두 세계관 밖으로 갑니다. 태거 어휘에 더하거나 --tags 를 바꾸세요.",
            "log": f"tagger {tagger.name} has no vocabulary entry for {said}"}


class ClockSkew:
    """How far arriving lines' `sent_at` is from the wall clock (fed by the absorber, read by the page)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.far = 0
        self.lines = 0
        self.worst_s = 0.0

    def see(self, sent_ns, arrived_ns) -> None:
        far, worst = 0, 0.0
        for s, a in zip(sent_ns, arrived_ns):
            gap = (int(a) - int(s)) / timestamps.NS_PER_SEC
            if abs(gap) > FAR_S:
                far += 1
                worst = gap if abs(gap) > abs(worst) else worst
        with self.lock:
            first = far and not self.far
            self.lines += len(sent_ns)
            self.far += far
            if abs(worst) > abs(self.worst_s):
                self.worst_s = worst
        if first:
            log.warning(self.warning()["log"])

    def warning(self) -> dict | None:
        with self.lock:
            far, lines, worst = self.far, self.lines, self.worst_s
        if not far:
            return None
        when = "앞서" if worst > 0 else "뒤에"
        return {"code": "clock_far", "lines": far,
                "message": f"들어온 줄 {lines:,}개 가운데 {far:,}개의 보낸 시각(sent_at)이 지금 시각보다 최대 {duration(abs(worst))} "
                           f"{when} 있습니다. 이런 줄은 늦게 온 줄이거나 구간 밖으로 격리됩니다. 녹화한 채팅은 "
                           f"`verdicts replay --shift-to-now` 로 지금 시각에 맞춰 보내세요.",
                "log": f"{far} of {lines} arriving lines were sent more than {FAR_S} s from the wall clock "
                       f"(up to {abs(worst):.0f} s); replay recorded chat with --shift-to-now"}


class Banners:
    """The warnings in force, each logged once when it is found."""

    def __init__(self) -> None:
        self.fixed: list[dict] = []
        self.skew = ClockSkew()

    def set_fixed(self, *warnings: dict | None) -> None:
        """The warnings found at start: logged now, shown until the service stops."""
        self.fixed = [w for w in warnings if w]
        for w in self.fixed:
            log.warning(w["log"])

    def shown(self) -> list[dict]:
        out = [*self.fixed, *filter(None, [self.skew.warning()])]
        return [{"code": w["code"], "message": w["message"]} for w in out]
