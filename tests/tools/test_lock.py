"""requirements.lock: it matches pyproject.toml's dependency declarations, pins every declared
package exactly, and the check CI runs fails when the declarations change without a refresh."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import lock  # noqa: E402

PINNED = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)")


def _pins() -> dict[str, str]:
    pins = {}
    for line in lock.LOCK.read_text(encoding="utf-8").splitlines():
        m = PINNED.match(line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return pins


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]).lower()


def test_the_lock_matches_pyproject_and_pins_every_declared_package():
    assert subprocess.run([sys.executable, str(ROOT / "tools" / "lock.py"), "--check"], capture_output=True).returncode == 0
    project = tomllib.loads(lock.PYPROJECT.read_text(encoding="utf-8"))["project"]
    declared = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    pins = _pins()
    assert {_name(r) for r in declared} <= set(pins), {_name(r) for r in declared} - set(pins)
    # Nothing the project does not need: no GPU stacks pulled in by a loose requirement.
    assert not {p for p in pins if p.startswith(("torch", "nvidia-", "triton"))}


def test_a_changed_dependency_without_a_refresh_fails_the_check(tmp_path):
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    shutil.copyfile(lock.LOCK, tmp_path / "requirements.lock")
    text = lock.PYPROJECT.read_text(encoding="utf-8")
    check = [sys.executable, str(tmp_path / "tools" / "lock.py"), "--check"]
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    assert subprocess.run(check, capture_output=True).returncode == 0
    # A comment or a reformatting is not a change of dependencies; a new package is.
    (tmp_path / "pyproject.toml").write_text(text.replace("[project]", "# a note\n[project]"), encoding="utf-8")
    assert subprocess.run(check, capture_output=True).returncode == 0
    (tmp_path / "pyproject.toml").write_text(text.replace('dependencies = [\n', 'dependencies = [\n    "httpx>=0.27",\n', 1),
                                             encoding="utf-8")
    out = subprocess.run(check, capture_output=True, text=True)
    assert out.returncode == 1 and "make lock" in out.stderr
    (tmp_path / "requirements.lock").unlink()
    assert subprocess.run(check, capture_output=True).returncode == 1


def test_a_refresh_starts_from_the_current_pins_and_an_upgrade_from_none(tmp_path, monkeypatch):
    """uv keeps what an existing output file pins: the refresh hands it the lock's pins, so a new
    declaration moves only what it must; `--upgrade` hands it nothing and asks for the newest."""
    old = "# header\n# pyproject-dependencies-sha256: x\naiohttp==3.14.5\nzipp==3.23.0 ; python_full_version < '3.12'\n"
    monkeypatch.setattr(lock, "LOCK", tmp_path / "requirements.lock")
    monkeypatch.setattr(lock, "_uv", lambda: "uv")
    seen = []

    def compile_(args, **_):
        out = Path(args[args.index("--output-file") + 1])
        seen.append((out.read_text(encoding="utf-8"), "--upgrade" in args))
        out.write_text("aiohttp==3.14.5\nhttpx2==2.17.0\n", encoding="utf-8")

    monkeypatch.setattr(lock.subprocess, "run", compile_)
    (tmp_path / "requirements.lock").write_text(old, encoding="utf-8")
    lock.write()
    lock.write(upgrade=True)
    assert seen == [("aiohttp==3.14.5\nzipp==3.23.0 ; python_full_version < '3.12'\n", False), ("", True)]
    assert lock.LOCK.read_text(encoding="utf-8").endswith("aiohttp==3.14.5\nhttpx2==2.17.0\n")
