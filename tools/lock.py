"""requirements.lock: every dependency of pyproject.toml (every extra), pinned.

    python tools/lock.py            write it again from pyproject.toml, keeping every pin that still fits (`make lock`)
    python tools/lock.py --upgrade  re-resolve every pin to the newest release pyproject.toml allows
    python tools/lock.py --check    exit 1 if pyproject.toml's dependencies changed since

`make demo`, `make test`, `.ci/run` and the Dockerfile install with `-c requirements.lock`, so
two machines a month apart get the same packages. The header records a hash of the
dependency declarations (requires-python, dependencies, optional-dependencies); `--check`
compares it, so CI fails when someone changed them without refreshing the lock. The check
needs only the standard library; writing needs uv (the `tools` extra, or on PATH).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "requirements.lock"
PYTHON = "3.11"
HASH_LINE = "# pyproject-dependencies-sha256: "


def declarations_hash(pyproject: Path = PYPROJECT) -> str:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    declared = {key: project.get(key) for key in ("requires-python", "dependencies", "optional-dependencies")}
    return hashlib.sha256(json.dumps(declared, sort_keys=True).encode()).hexdigest()


def recorded_hash(lock: Path = LOCK) -> str | None:
    if not lock.is_file():
        return None
    for line in lock.read_text(encoding="utf-8").splitlines():
        if line.startswith(HASH_LINE):
            return line[len(HASH_LINE):].strip()
    return None


def tool_requirement() -> str:
    extras = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return next(r for r in extras["tools"] if r.split("=")[0].strip() == "uv")


def _uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.is_file() else shutil.which("uv")
    if not found:
        sys.exit(f"uv not found beside {sys.executable} or on PATH: pip install '{tool_requirement()}'")
    return found


def pinned_body(lock: Path | None = None) -> str:
    """The lock's pins without its header (empty when there is no lock)."""
    lock = LOCK if lock is None else lock
    if not lock.is_file():
        return ""
    return "".join(line for line in lock.read_text(encoding="utf-8").splitlines(keepends=True) if not line.startswith("#"))


def write(upgrade: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "requirements.txt"
        # uv keeps the versions an existing output file pins wherever they still satisfy
        # pyproject.toml: a changed declaration moves only the packages it has to.
        out.write_text("" if upgrade else pinned_body(), encoding="utf-8")
        # Universal: one lock for every platform, markers where a platform needs another package.
        subprocess.run([_uv(), "pip", "compile", str(PYPROJECT), "--all-extras", "--universal",
                        "--python-version", PYTHON, "--no-header", "--no-annotate", "--quiet",
                        *(["--upgrade"] if upgrade else []),
                        "--output-file", str(out)], check=True, cwd=ROOT, env={**os.environ, "UV_NO_CONFIG": "1"})
        body = out.read_text(encoding="utf-8")
    header = (
        "# Every dependency of chat-verdicts, every extra included, pinned (Python 3.11, any platform).\n"
        "# Generated from pyproject.toml by `make lock` (python tools/lock.py); do not edit by hand.\n"
        "# Install with: pip install -c requirements.lock -e '.[dev]'\n"
        f"{HASH_LINE}{declarations_hash()}\n"
    )
    LOCK.write_text(header + body, encoding="utf-8")
    print(f"{LOCK.name}: {sum(1 for l in body.splitlines() if l and not l.startswith('#'))} packages pinned")


def check() -> int:
    recorded, current = recorded_hash(), declarations_hash()
    if recorded == current:
        print(f"{LOCK.name} matches pyproject.toml")
        return 0
    why = "is missing" if recorded is None and not LOCK.is_file() else "is out of date with pyproject.toml's dependencies"
    print(f"{LOCK.name} {why}: run `make lock` (python tools/lock.py) and commit it", file=sys.stderr)
    return 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if the lock does not match pyproject.toml")
    p.add_argument("--tool", action="store_true", help="print the uv requirement of the tools extra")
    p.add_argument("--upgrade", action="store_true", help="re-resolve every pin to the newest allowed release")
    args = p.parse_args()
    if args.check:
        return check()
    if args.tool:
        print(tool_requirement())
        return 0
    write(upgrade=args.upgrade)
    return 0


if __name__ == "__main__":
    sys.exit(main())
