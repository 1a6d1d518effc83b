"""Measures what `mapperopt tune` claims, on this machine: run a tune command (by default `tune circuit --iters
10`, size ci) with several seeds and print each run's wall time, its final best against the start, the default and
the expert mapper (measured together, with 90 % intervals), and how far the seeds' best throughputs are apart:
as each run measured it, and with the seeds' best mappers measured together in interleaved rounds (the load of a
shared machine changes between runs; measured together, the mappers see the same load). Speed claims live here,
not in the tests.

    python benchmarks/tune_agreement.py                          # tune circuit --iters 10, seeds 0 and 1
    python benchmarks/tune_agreement.py --start poor --iters 4   # a deliberately poor start: is the gain real?
    python benchmarks/tune_agreement.py --bench stencil -- --size ci
    python benchmarks/tune_agreement.py --keep runs/agree --reuse   # measure again the bests of kept runs

Arguments after `--` go to `mapperopt tune`. Records `uptime`'s load average before and after: the figures depend
on what else the machine runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POOR = """\
# Deliberately poor: every point of every index launch on the first CPU.
Task * CPU;
mcpu = Machine(CPU);
def first_cpu(Task task) {
    return mcpu[0, 0];
}
IndexTaskMap * first_cpu;
"""


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def one_run(bench: str, seed: int, iters: int, start: str, runs: Path, extra: list[str], reuse: bool) -> dict:
    done = sorted((runs / f"seed-{seed}" / bench).glob("tune-*/summary.json"))
    if reuse and done:
        return {"seed": seed, "wall_s": float("nan"), "cpu_s": float("nan"),
                "summary": json.loads(done[-1].read_text()), "folder": str(done[-1].parent)}
    cmd = [sys.executable, "-m", "mapperopt.cli", "tune", bench, "--iters", str(iters), "--seed", str(seed),
           "--start", start, "--new", "--runs-dir", str(runs / f"seed-{seed}"), *extra]
    began, cpu = time.monotonic(), _children_cpu_s()
    # Not from the source tree: its ./mapperopt folder would shadow an installed (non-editable) mapperopt.
    runs.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=runs)
    wall, cpu = time.monotonic() - began, _children_cpu_s() - cpu
    if proc.returncode != 0:
        sys.exit(f"seed {seed}: `{' '.join(cmd)}` failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    (summary_path,) = (runs / f"seed-{seed}" / bench).glob("tune-*/summary.json")
    summary = json.loads(summary_path.read_text())
    return {"seed": seed, "wall_s": wall, "cpu_s": cpu, "summary": summary, "folder": str(summary_path.parent)}


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of finished child processes and theirs: the work, whatever the load."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_bests(bench: str, results: list[dict], out_dir: Path, rounds: int) -> list[float]:
    """The runs' best.dsl measured together under the runs' own settings; their trimmed means, in run order."""
    from mapperopt.benchmarks.protocol import measure_together

    settings = json.loads((Path(results[0]["folder"]) / "settings.json").read_text())
    mappers = {f"seed-{r['seed']}": (Path(r["folder"]) / "best.dsl").read_text() for r in results}
    measured = measure_together(bench, mappers, rounds, out_dir, min_time_s=settings["min_time_s"],
                                size=settings["size"], cpus=settings["cpus"], gpus=settings["gpus"],
                                extra_args=settings["app_args"], **settings["memory"])
    for m in measured.values():
        if not m.ok:
            sys.exit(f"{m.name}: its best mapper failed when measured again: {m.reason}")
    return [m.estimate.value for m in measured.values()]


def _apart(values: list[float]) -> str:
    gap = (max(values) - min(values)) / max(values)
    return (f"{', '.join(f'{v:.4g}' for v in values)}; apart by {gap:.1%} "
            f"({'within' if gap <= 0.10 else 'NOT within'} 10 %)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="circuit")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--start", default="default", help="default, random, poor (built in) or a DSL file")
    parser.add_argument("--reuse", action="store_true",
                        help="a seed whose finished run is in the --keep folder is not run again (its wall time: nan)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds when measuring the bests together")
    parser.add_argument("--keep", type=Path, default=None, help="keep the tuning folders here")
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    runs = args.keep or Path(tempfile.mkdtemp(prefix="tune-agreement-"))
    start = args.start
    if start == "poor":
        start = str(runs / "poor.dsl")
        runs.mkdir(parents=True, exist_ok=True)
        Path(start).write_text(POOR)
    print(f"cores: {len(os.sched_getaffinity(0))}; load average before: {load()}")
    results = []
    for seed in args.seeds:
        r = one_run(args.bench, seed, args.iters, start, runs, extra, args.reuse)
        s = r["summary"]
        best = s["measured"][s["best"]]["estimate"]
        print(f"seed {seed}: {r['wall_s']:.0f} s ({r['cpu_s']:.0f} CPU s); best {s['best']} {best['value']:.4g} "
              f"{s['unit']} (90 % interval {best['low']:.4g}-{best['high']:.4g}, spread {best['spread']:.0%}); "
              f"{r['folder']}")
        for name, vs in s["vs"].items():
            if vs is None:
                print(f"    vs {name}: not compared ({s['measured'][name]['reason']})")
                continue
            verdict = "significant" if vs["significant"] else "NOT significant"
            print(f"    vs {name}: {vs['ratio']:.2f}x (90 % interval {vs['low']:.2f}-{vs['high']:.2f}x, {verdict})")
        results.append({**r, "best": best["value"]})
    if len(results) > 1:
        print(f"best throughputs of the seeds, as each run measured them: {_apart([r['best'] for r in results])}")
        together = measure_bests(args.bench, results, runs / "together", args.rounds)
        print(f"the seeds' best mappers measured together ({args.rounds} interleaved rounds): {_apart(together)}")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
