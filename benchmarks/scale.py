"""How far `verdicts judge` is from the cost of just parsing its input, per domain and size.

    .venv/bin/python benchmarks/scale.py [--domains D ...] [--sizes N ...] [--nightly] [--nightly-sample DAY] [--plot PNG]

Input comes from `evals.generate` (seed 1) and is cached under --data. For every (domain, size),
each figure in its own process:

- *parse floor*: read the domain's dataset files line by line with orjson and build one pandas
  DataFrame per dataset (lines that are not JSON objects are skipped): the least any judge must do;
  the fastest of three runs;
- *judge*: `verdicts judge DOMAIN --input DIR --out FILE` as a whole process, start-up, gates,
  rules, evidence, summaries and writing the file included; its CPU seconds (the copy it forks to
  write the later parts on the other core included); *peak MB*, the peak resident memory of the
  largest of its processes; *all MB*, the peak of the memory its processes hold together, shared
  pages counted once (proportional set size, sampled every 0.1 s);
- *ratio* = judge ÷ parse floor; *growth* = judge at this size ÷ judge at the previous size;
- *load* (the gates) and *rules* (the engine with evidence and summaries stubbed out, on the
  loaded input), in-process, to show where the judge's time goes.
- *in MB*, *out MB*: the bytes the judge reads (its dataset files) and writes (its verdict file);
  *out parse s*: the parse floor's own reading applied to the judge's verdict file (the fastest of
  three runs), and *out÷floor* that against the parse floor: what just reading back what the judge
  must write costs, beside what reading its input costs.

The run prints a line at its start and one at its end with the time, the commit and the load
average, to be recorded beside the figures.

--nightly runs the nightly Dagster job in-process on the busiest day of each domain, sized so
that day holds 10⁵ and 10⁶ main rows (`--nightly-sizes`), with its steps, wall seconds and peak
memory (the largest process's, and its processes' together: the suite helper and the forked check
workers included), the judging step's seconds before its first part (*before parts s*: planning the
parts and what every part reads of the whole day), against `verdicts judge --day` on the same folder measured right after it;
handoff's day adds the `handoff_judge` run that makes its verdicts and report (the nightly job only
stores its tables: a day is judged once the next day's tables are in, which are stored first,
untimed). --nightly-sample DAY runs the nightly job on one day of the sample data. --nightly-once
DOMAIN ROWS runs one day of one domain alone (the 10⁷-row day, recorded once).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evals import domains as registry  # noqa: E402

SEED = 1
FLOOR_RUNS = 3
"""The parse floor is the fastest of this many runs: a slow moment of a shared machine would
otherwise lower the ratio."""
DOMAINS = registry.names()


# -- per domain: parse floor, judge process, load and rules (each in its own process) ---------


def stages(domain: str):
    """(load(dir) → judged input, judge(input) → verdict frame)."""
    spec = registry.get(domain).spec
    config = spec.load_config()
    return (lambda d: spec.load(d)[1], lambda n: spec.judge(n.tables, config, "gold"))


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rules_only(domain: str, judge, state) -> float:
    """Seconds to decide the verdicts alone: the engine with evidence and summaries stubbed out,
    which is the work the row-by-row reference does."""
    spec = registry.get(domain).spec
    engine, outputs = spec.engine, spec.explain_outputs
    stubs = {"explain": lambda f, config, *context: tuple([None] * len(f) for _ in range(outputs)),
             "explain_context": lambda f, *matched: {}}  # what explaining a row reads of the others (retry)
    real = {name: getattr(engine, name) for name in stubs if hasattr(engine, name)}
    for name in real:
        setattr(engine, name, stubs[name])
    try:
        t0 = time.perf_counter()
        judge(state)
        return time.perf_counter() - t0
    finally:
        for name, value in real.items():
            setattr(engine, name, value)


def measure(domain: str, folder: Path) -> dict:
    """Run in a child process; prints one JSON line: the gates (load) and the rules alone."""
    load, judge = stages(domain)
    t0 = time.perf_counter()
    state = load(folder)
    out = {"load_s": time.perf_counter() - t0}
    out["rules_s"] = rules_only(domain, judge, state)
    return out


def parse_floor(domain: str, folder: Path) -> dict:
    """Run in a child process: orjson line by line, one DataFrame per dataset, nothing else."""
    return parse_files([folder / f"{name}.jsonl" for name in registry.get(domain).spec.datasets])


def parse_files(paths: list[Path]) -> dict:
    """Seconds to read JSON Lines files with orjson line by line and build one DataFrame per file
    (lines that are not JSON objects skipped), and the rows built."""
    import orjson
    import pandas as pd

    t0 = time.perf_counter()
    rows = 0
    for path in paths:
        parsed = []
        with path.open("rb") as fh:
            for line in fh:
                try:
                    parsed.append(orjson.loads(line))
                except orjson.JSONDecodeError:
                    continue
        frame = pd.DataFrame([r for r in parsed if isinstance(r, dict)])
        rows += len(frame)
    return {"parse_s": time.perf_counter() - t0, "rows": rows}


def tree_pss_mb(pid: int) -> float:
    """The proportional set size of a process and its descendants, in MB: the memory they hold
    between them, each shared page counted once (Linux; 0 where /proc does not tell)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("Pss:"))
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, StopIteration, ValueError):  # gone meanwhile, or not Linux
            continue
    return total / 1024


def timed_process(args: list[str], env: dict | None = None, keep_stdout: bool = False) -> dict:
    """Wall seconds, CPU seconds (its own and its children's), the peak resident MB of the
    largest of its processes, and the peak MB of all of them together (`tree_pss_mb`, sampled
    every 0.1 s) of one command run to its end (it must succeed); `keep_stdout`: what it printed too."""
    t0 = time.perf_counter()
    out = tempfile.TemporaryFile() if keep_stdout else subprocess.DEVNULL
    errors = tempfile.TemporaryFile()  # a file, not a pipe: a long log never stalls the process
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=errors)
    peak, done = [0.0], threading.Event()

    def sample():
        while not done.wait(0.1):
            peak[0] = max(peak[0], tree_pss_mb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    done.set()
    sampler.join()
    errors.seek(0)
    err = errors.read().decode(errors="replace")
    errors.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err[-2000:]}")
    found = {"seconds": seconds, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
             "all_mb": peak[0]}
    if keep_stdout:
        out.seek(0)
        found["stdout"] = out.read().decode(errors="replace")
        out.close()
    return found


def judge_process(domain: str, folder: Path, day: str | None = None, env: dict | None = None,
                  out: Path | None = None) -> dict:
    """`verdicts judge` end to end, writing its verdicts to `out` (else to a file thrown away afterwards)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [str(Path(sys.executable).parent / "verdicts"), "judge", domain, "--input", str(folder),
                "--out", str(out or Path(tmp) / "verdicts.jsonl")] + (["--day", day] if day else [])
        return timed_process(args, env)


def child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def dataset(data: Path, domain: str, rows: int) -> Path:
    folder = data / domain / str(rows)
    if not (folder / "malformed.json").is_file():
        registry.get(domain).generate(rows, SEED, folder)
    return folder


# -- nightly ---------------------------------------------------------------------------------


def busiest_day(domain: str) -> tuple[str, float]:
    """The seed sample's busiest day for the domain's main dataset and its share of the rows."""
    import pandas as pd

    from evals.generate import dumps, handoff, live_pick, persona, retry, seed_rows
    from rules.common.days import line_days

    spec = registry.get(domain).spec
    plan = {"persona": persona.PLAN, "live_pick": live_pick.PLAN, "retry": retry.PLAN, "handoff": handoff.PLAN}[domain]
    raw = pd.DataFrame({"text": [dumps(r) for r in seed_rows(plan)[spec.event_dataset]]})
    counts = line_days(raw, spec.event_time, "Asia/Seoul").value_counts()
    return str(counts.index[0]), float(counts.iloc[0] / counts.sum())


def nightly(raw_dir: Path, day: str, handoff_judge: bool = False) -> dict:
    """Run in a child process with VERDICTS_* set: the nightly job on one day. With `handoff_judge`,
    also what judges that day's handoff rooms, which the nightly job leaves out (their verdicts wait
    for the next day's tables): the nightly job on the next day, untimed (it is that day's own
    work), then the `handoff_judge` job on this day, timed and counted with the nightly run."""
    from dagster import DagsterInstance

    from orchestration.definitions import defs
    from orchestration.demo import QUIET

    def run(job: str, partition: str) -> tuple[float, object]:
        t = time.perf_counter()
        result = defs.resolve_job_def(job).execute_in_process(
            partition_key=partition, instance=DagsterInstance.get(), raise_on_error=False, run_config=QUIET)
        return time.perf_counter() - t, result

    seconds, result = run("nightly", day)
    results = [result]
    if handoff_judge:
        from orchestration.demo import next_day

        run("nightly", next_day(day))
        judged_s, judged = run("handoff_judge", day)
        seconds, results = seconds + judged_s, [result, judged]
    failed = [e.step_key for r in results for e in r.all_events if e.is_failure and e.step_key]
    steps = sum(len({e.step_key for e in r.all_events if e.is_step_success}) for r in results)
    return {"ok": all(r.success for r in results) or failed, "seconds": seconds, "peak_mb": peak_mb(), "steps": steps,
            "before_parts_s": before_parts(DagsterInstance.get(), [r.run_id for r in results])}


def before_parts(instance, run_ids: list[str]) -> float | None:
    """Seconds from the start of the day's judging step (`<domain>_judge_day`, the largest if several
    domains judged rows) to its first part's log line: planning the parts and what every part reads
    of the whole day, before any part is judged."""
    found = []
    for run_id in run_ids:
        started: dict[str, float] = {}
        for record in instance.all_logs(run_id):
            step = record.step_key or ""
            if not step.endswith("_judge_day"):
                continue
            event = record.dagster_event
            if event is not None and event.event_type_value == "STEP_START":
                started[step] = record.timestamp
            elif event is None and record.user_message.startswith("part 1 of") and step in started:
                found.append(record.timestamp - started.pop(step))
    return max(found) if found else None


def nightly_env(tmp: str, raw: Path) -> dict:
    """A fresh Dagster home holding the embedded default's dagster.yaml, as `verdicts demo` and `make dev` use."""
    from orchestration.instance import prepare_home

    home = prepare_home(Path(tmp) / "dagster")
    return {**os.environ, "VERDICTS_RAW_DIR": str(raw), "VERDICTS_HOME": str(Path(tmp) / "home"),
            "DAGSTER_HOME": str(home), "WAREHOUSE_URL": f"sqlite:///{tmp}/warehouse.sqlite"}


def run_nightly_sample(day: str) -> None:
    """The nightly job on one day of the sample data (every domain), in a fresh instance."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, __file__, "--nightly-child", str(ROOT / "seeds"), day], capture_output=True,
                              text=True, cwd=ROOT, env=nightly_env(tmp, ROOT / "seeds"))
    if done.returncode:
        print(f"nightly on the sample day {day} failed: {done.stderr[-500:]}")
        return
    r = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"\nnightly job in-process on the sample day {day}: {r['seconds']:.2f} s wall, {r['steps']} steps, "
          f"{r['peak_mb']:.0f} MB peak, ok {r['ok']}")


NIGHTLY_SIZES = (100_000, 1_000_000)


def nightly_folder(data: Path, domain: str, rows: int) -> tuple[Path, str, int]:
    """(raw folder, day, rows that day): the domain generated so that its busiest sample day holds
    `rows` main rows, beside the other domains' samples (the job reads every domain); cached."""
    day, share = busiest_day(domain)
    total = int(rows / share) + 1
    raw = data / "nightly" / domain / str(rows)
    if not (raw / domain / "malformed.json").is_file():
        for other in DOMAINS:
            if other != domain and not (raw / other).exists():
                shutil.copytree(ROOT / "seeds" / other, raw / other)
        registry.get(domain).generate(total, SEED, raw / domain)
    return raw, day, int(total * share)


def nightly_process(raw: Path, day: str, domain: str) -> dict:
    """The nightly job on one day in a process of its own, a fresh Dagster home and SQLite warehouse:
    the job's seconds and steps (printed by the child) with the process's wall, CPU and memory."""
    with tempfile.TemporaryDirectory(dir=os.environ.get("VERDICTS_BENCH_TMP")) as tmp:
        env = nightly_env(tmp, raw)
        args = [sys.executable, __file__, "--nightly-child", str(raw), day] + (["--with-handoff-judge"] if domain == "handoff" else [])
        measured = timed_process(args, env, keep_stdout=True)
    inner = json.loads(measured.pop("stdout").strip().splitlines()[-1])
    return {**measured, **inner}


def run_nightly(domains: list[str], sizes: list[int], data: Path) -> None:
    print("\nnightly job in-process on one day per domain (handoff's with the `handoff_judge` run that judges it), and "
          "`verdicts judge --day` on the same folder right after it")
    print(f"{'domain':<10} {'day':<11} {'rows that day':>13} {'nightly s':>9} {'before parts s':>14} {'steps':>5} {'peak MB':>8} "
          f"{'all MB':>7} {'judge s':>8} {'judge MB':>8} {'nightly/judge':>13} {'growth':>7}  load  ok")
    for domain in domains:
        before = None
        for rows in sorted(sizes):
            raw, day, that_day = nightly_folder(data, domain, rows)
            r = nightly_process(raw, day, domain)
            judged = judge_process(domain, raw / domain, day)
            grown = f"×{r['seconds'] / before:.1f}" if before else "—"
            before = r["seconds"]
            load = os.getloadavg()[0]
            print(f"{domain:<10} {day:<11} {that_day:>13,} {r['seconds']:>9.1f} {_seconds(r['before_parts_s']):>14} {r['steps']:>5} "
                  f"{r['peak_mb']:>8.0f} {r['all_mb']:>7.0f} {judged['seconds']:>8.1f} {judged['peak_mb']:>8.0f} "
                  f"{r['seconds'] / judged['seconds']:>12.1f}× {grown:>7} {load:5.1f}  {r['ok']}", flush=True)


def run_nightly_once(domain: str, rows: int, data: Path) -> None:
    """One domain's day of `rows` main rows, alone (the 10⁷-row day): nightly and judge, each once."""
    raw, day, that_day = nightly_folder(data, domain, rows)
    r = nightly_process(raw, day, domain)
    print(f"\none {domain} day of {that_day:,} main rows ({day}): nightly {r['seconds']:.1f} s (judging step before its "
          f"first part {_seconds(r['before_parts_s'])} s), {r['steps']} steps, "
          f"peak {r['peak_mb']:.0f} MB (largest process), {r['all_mb']:.0f} MB (its processes together), ok {r['ok']}", flush=True)
    judged = judge_process(domain, raw / domain, day)
    print(f"  judge --day: {judged['seconds']:.1f} s, peak {judged['peak_mb']:.0f} MB, all {judged['all_mb']:.0f} MB; "
          f"nightly/judge {r['seconds'] / judged['seconds']:.1f}×; load average {os.getloadavg()[0]:.1f}", flush=True)


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


# -- main ------------------------------------------------------------------------------------


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--domains", nargs="+", choices=DOMAINS, default=list(DOMAINS))
    p.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000, 1_000_000], help="none: skip the table")
    p.add_argument("--data", type=Path, default=ROOT / "var" / "bench", help="generated input is cached here")
    p.add_argument("--nightly", action="store_true", help="also run the nightly job on a day of 10⁵ and 10⁶ rows per domain")
    p.add_argument("--nightly-sizes", nargs="+", type=int, default=list(NIGHTLY_SIZES), help="main rows of the nightly days")
    p.add_argument("--nightly-once", nargs=2, metavar=("DOMAIN", "ROWS"), help="one domain's day of ROWS main rows, alone")
    p.add_argument("--nightly-sample", metavar="DAY", help="also run the nightly job on one day of the sample data (e.g. 2026-10-01)")
    p.add_argument("--plot", type=Path, help="write the growth plot (judge seconds against rows) to this PNG (needs matplotlib)")
    p.add_argument("--measure", nargs=2, metavar=("DOMAIN", "DIR"), help=argparse.SUPPRESS)
    p.add_argument("--parse-floor", nargs=2, metavar=("DOMAIN", "DIR"), help=argparse.SUPPRESS)
    p.add_argument("--parse-file", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--nightly-child", nargs=2, metavar=("RAW", "DAY"), help=argparse.SUPPRESS)
    p.add_argument("--with-handoff-judge", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.measure:
        print(json.dumps(measure(a.measure[0], Path(a.measure[1]))))
        return
    if a.parse_floor:
        print(json.dumps(parse_floor(a.parse_floor[0], Path(a.parse_floor[1]))))
        return
    if a.parse_file:
        print(json.dumps(parse_files([Path(a.parse_file)])))
        return
    if a.nightly_child:
        print(json.dumps(nightly(Path(a.nightly_child[0]), a.nightly_child[1], a.with_handoff_judge)))
        return

    print(conditions("start"), flush=True)
    if a.sizes:
        growth = table(a)
        if a.plot:
            plot_growth(growth, a.plot)
    if a.nightly_sample:
        run_nightly_sample(a.nightly_sample)
    if a.nightly:
        run_nightly(a.domains, a.nightly_sizes, a.data)
    if a.nightly_once:
        run_nightly_once(a.nightly_once[0], int(a.nightly_once[1]), a.data)
    print(f"\n{conditions('end')}")


def conditions(when: str) -> str:
    """The time, the code and how busy the machine was: what a figure of a shared machine needs
    beside it to be read."""
    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    code = (f"commit {commit}" + (" with uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else "")
            if commit else f"code at {ROOT} (not a git checkout)")
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    return f"{when}: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {code}, {os.cpu_count()} cores, load average {load}"


def plot_growth(growth: dict[str, list[tuple[int, float]]], path: Path) -> None:
    """Judge seconds against rows per domain, log-log, with a linear guide (matplotlib, optional)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for domain, points in growth.items():
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, marker="o", label=domain)
    xs = sorted({x for points in growth.values() for x, _ in points})
    if xs:
        top = max(y for points in growth.values() for _, y in points)
        ax.plot(xs, [top * x / xs[-1] for x in xs], linestyle=":", color="grey", label="linear")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows of the main dataset")
    ax.set_ylabel("judge seconds")
    ax.set_title("Judge time against rows (2 cores)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def table(a) -> dict[str, list[tuple[int, float]]]:
    growth: dict[str, list[tuple[int, float]]] = {}
    print(f"{'domain':<10} {'rows':>10} {'parse floor s':>13} {'judge s':>8} {'ratio':>6} {'cpu s':>6} {'peak MB':>8} "
          f"{'all MB':>7} {'growth':>7} {'load s':>7} {'rules s':>8} {'in MB':>6} {'out MB':>6} {'out parse s':>11} "
          f"{'out÷floor':>9}")
    for domain in a.domains:
        before = None
        for n in sorted(a.sizes):
            folder = dataset(a.data, domain, n)
            floor = min((child("--parse-floor", domain, str(folder)) for _ in range(FLOOR_RUNS)), key=lambda r: r["parse_s"])
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "verdicts.jsonl"
                judged = judge_process(domain, folder, out=out)
                read_back = min((child("--parse-file", str(out)) for _ in range(FLOOR_RUNS)), key=lambda r: r["parse_s"])
                out_mb = out.stat().st_size / 1e6
            inner = child("--measure", domain, str(folder))
            in_mb = sum((folder / f"{name}.jsonl").stat().st_size for name in registry.get(domain).spec.datasets) / 1e6
            grown = f"{judged['seconds'] / before[1]:.1f}×" if before else "—"
            growth.setdefault(domain, []).append((n, judged["seconds"]))
            before = (n, judged["seconds"])
            print(f"{domain:<10} {n:>10,} {floor['parse_s']:>13.2f} {judged['seconds']:>8.2f} "
                  f"{judged['seconds'] / floor['parse_s']:>5.1f}× {judged['cpu_s']:>6.1f} {judged['peak_mb']:>8.0f} "
                  f"{judged['all_mb']:>7.0f} {grown:>7} {inner['load_s']:>7.2f} {inner['rules_s']:>8.2f} "
                  f"{in_mb:>6.0f} {out_mb:>6.0f} {read_back['parse_s']:>11.2f} {read_back['parse_s'] / floor['parse_s']:>8.1f}×",
                  flush=True)
    return growth


if __name__ == "__main__":
    main()
