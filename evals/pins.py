"""What a report was made from, pinned so that two runs can be told comparable or not.

Each report records the golden file (SHA-256 of its bytes and its label rows), the rules'
configuration (SHA-256 of the configuration as the rules loaded it, so formatting does not
count), the tagger (live_pick; with its vocabulary file's hash) and the code version (the git
commit of the source tree, "+changes" when its code differs from that commit; the package
version where there is no git tree). A run diff on two different pins says so at its top.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from functools import lru_cache
from pathlib import Path

from rules.common.environment import PROJECT_ROOT

CODE_DIRS = ("rules", "evals", "schemas", "assets", "live", "web", "orchestration")
"""The source whose changes make a run's code differ from its commit."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def golden_pin(path: Path | str | None, rows: list[dict] | None) -> dict | None:
    """{file, sha256, rows}: the file's bytes when it is known, else the labels as canonical JSON."""
    if path is not None and Path(path).is_file():
        data = Path(path).read_bytes()
        count = len(rows) if rows is not None else sum(1 for line in data.splitlines() if line.strip())
        return {"file": Path(path).name, "sha256": _sha(data), "rows": count}
    if rows is None:
        return None
    text = "\n".join(json.dumps(r, ensure_ascii=False, sort_keys=True) for r in rows)
    return {"file": None, "sha256": _sha(text.encode()), "rows": len(rows)}


def config_pin(config) -> str:
    """SHA-256 of the rules' configuration as loaded (a pydantic model), keys sorted."""
    data = config.model_dump(mode="json", warnings=False) if hasattr(config, "model_dump") else config
    return _sha(json.dumps(data, ensure_ascii=False, sort_keys=True, default=str).encode())


def file_pin(path: Path) -> str:
    return _sha(Path(path).read_bytes()) if Path(path).is_file() else ""


@lru_cache(maxsize=1)
def code_version() -> str:
    """`git <commit>` (+changes when the code differs from it), else the package version."""
    try:
        commit = subprocess.run(["git", "-C", str(PROJECT_ROOT), "rev-parse", "--short=12", "HEAD"],
                                capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--untracked-files=no", "--", *CODE_DIRS],
                                 capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        return f"git {commit}" + ("+changes" if changed else "")
    except (OSError, subprocess.SubprocessError):
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"chat-verdicts {version('chat-verdicts')}"
        except PackageNotFoundError:
            return "unknown"


def pin_run(config, golden_path: Path | str | None, golden_rows: list[dict] | None, tagger: str | None) -> dict:
    return {
        "golden": golden_pin(golden_path, golden_rows),
        "rules_config": config_pin(config),
        "tagger": tagger,
        "code_version": code_version(),
    }


def short(sha: str | None) -> str:
    return f"sha256:{sha[:12]}" if sha else "—"


def golden_text(g: dict | None) -> str:
    if not g:
        return "없음"
    return f"{g['file'] or '(파일 없이 준 라벨)'} {short(g['sha256'])} · {g['rows']}줄"


def pins_text(pins: dict) -> list[tuple[str, str]]:
    """(what, pinned value) for display."""
    if not pins:
        return []
    return [("골든 라벨", golden_text(pins.get("golden"))), ("규칙 설정", short(pins.get("rules_config"))),
            ("태거", pins.get("tagger") or "해당 없음"), ("코드", pins.get("code_version") or "—")]


def differences(a: dict, b: dict) -> list[str]:
    """What differs between two runs' pins, in sentences; the golden set first (it makes agreement
    figures incomparable). Empty when both pinned the same inputs (or either pinned nothing)."""
    if not a or not b:
        return ["한쪽 실행에 고정 입력 기록이 없어 같은 입력으로 만들었는지 알 수 없습니다."] if (a or b) else []
    out = []
    ga, gb = a.get("golden"), b.get("golden")
    if (ga or {}).get("sha256") != (gb or {}).get("sha256"):
        out.append(f"골든 라벨이 다릅니다 ({golden_text(ga)} → {golden_text(gb)}). 일치율과 항목별 개선·퇴보는 같은 잣대로 잰 것이 아닙니다.")
    if a.get("rules_config") != b.get("rules_config"):
        out.append(f"규칙 설정이 다릅니다 ({short(a.get('rules_config'))} → {short(b.get('rules_config'))}). 판정이 바뀐 이유가 설정일 수 있습니다.")
    if a.get("tagger") != b.get("tagger"):
        out.append(f"태거가 다릅니다 ({a.get('tagger') or '해당 없음'} → {b.get('tagger') or '해당 없음'}).")
    if a.get("code_version") != b.get("code_version"):
        out.append(f"코드 버전이 다릅니다 ({a.get('code_version')} → {b.get('code_version')}).")
    return out
