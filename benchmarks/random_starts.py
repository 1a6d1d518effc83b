"""The paper's setting: tune from random starts and see how close each seed gets to the best mapper known.

    python benchmarks/random_starts.py --bench circuit --seeds 0 1 2 3 4 --keep runs/rs -- --size small

For each seed, `mapperopt tune BENCH --start random --seed S --iters N` runs (arguments after `--` go to tune, e.g.
`--size small --min-time 2 -- -l 2`). Then every seed's final best, Legion's default mapper and the expert mapper
are measured together (interleaved rounds, the measurement protocol of `mapperopt compare`). "Best known" is the
best of all of them, measured in that same comparison, so no figure is compared with one measured under another
load. A seed *reaches* it when its best is at least `--target` (0.95) of the best known; "iterations" is the
iteration that found that best. The table also gives the first iteration whose own measurement during tuning was
at least the target (noisier: taken at another time). Records `uptime`'s load average before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def load() -> str:
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "?"


def tune_seed(bench: str, seed: int, iters: int, runs: Path, extra: list[str]) -> Path:
    """The tuning folder of one seed (reused when a previous call finished it)."""
    import subprocess

    root = runs / f"seed-{seed}"
    done = sorted(root.glob(f"{bench}/tune-*/summary.json"))
    if done:
        return done[-1].parent
    cmd = [sys.executable, "-m", "mapperopt.cli", "tune", bench, "--optimizer", "guided", "--start", "random",
           "--seed", str(seed), "--iters", str(iters), "--new", "--runs-dir", str(root), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    (runs / f"seed-{seed}.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"seed {seed}: `{' '.join(cmd)}` failed; see {runs / f'seed-{seed}.log'}")
    return sorted(root.glob(f"{bench}/tune-*/summary.json"))[-1].parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="circuit")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the joint measurement")
    parser.add_argument("--keep", type=Path, default=None, help="tuning folders go here (reused when finished)")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: the table of the tuning folders under --keep as they are now (finished or "
                             "not), against the best throughput any of them or the references measured")
    args, extra = parser.parse_known_args()
    extra = extra[1:] if extra[:1] == ["--"] else extra  # a second `--` passes on to tune
    if args.report:
        return report(args.bench, args.keep, args.target)
    runs = args.keep or Path(tempfile.mkdtemp(prefix="random-starts-"))
    runs.mkdir(parents=True, exist_ok=True)

    from mapperopt.benchmarks import protocol
    from mapperopt.optimizer.commands import _evaluator
    from mapperopt.optimizer.store import TuneStore

    print(f"{args.bench}: guided from random starts, {args.iters} iterations, tune {' '.join(extra)}; "
          f"load average before: {load()}", flush=True)
    folders = {seed: tune_seed(args.bench, seed, args.iters, runs, extra) for seed in args.seeds}
    stores = {seed: TuneStore.open(folder) for seed, folder in folders.items()}
    summaries = {seed: json.loads((folder / "summary.json").read_text()) for seed, folder in folders.items()}
    mappers = {f"seed-{s}": summaries[s]["best_dsl"] for s in args.seeds}
    mappers.update(default="default", expert="expert")
    settings = stores[args.seeds[0]].settings
    evaluator = _evaluator(settings["app"], settings)
    measured = protocol.measure_together(args.bench, mappers, args.rounds, runs / "together",
                                         min_time_s=evaluator.min_time_s or 0, **evaluator.run_options())
    ok = {n: m.estimate.value for n, m in measured.items() if m.ok}
    if not ok:
        sys.exit("every mapper failed in the joint measurement; see " + str(runs / "together"))
    known_name = max(ok, key=ok.get)
    known = ok[known_name]
    unit = next(m.unit for m in measured.values() if m.ok)
    print(f"best known: {known_name} {known:.4g} {unit} (default {ok.get('default', float('nan')):.4g}, "
          f"expert {ok.get('expert', float('nan')):.4g}; {args.rounds} interleaved rounds)")
    print(f"{'seed':>4}  {'start':>10}  {'best':>10}  {'best/known':>10}  {'reached':>7}  {'iterations':>10}  "
          f"{'first iter >= target (own run)':>30}")
    reached = 0
    for seed in args.seeds:
        records = stores[seed].records
        start = records[0].throughput
        best = ok.get(f"seed-{seed}")
        ratio = best / known if best is not None else 0.0
        hit = ratio >= args.target
        reached += hit
        first = next((r.iter for r in records if r.ok and r.throughput >= args.target * known), None)
        print(f"{seed:>4}  {start if start is not None else float('nan'):>10.4g}  "
              f"{best if best is not None else float('nan'):>10.4g}  {ratio:>10.2f}  {'yes' if hit else 'no':>7}  "
              f"{summaries[seed]['best_iter'] if hit else '-':>10}  {first if first is not None else '-':>30}")
    print(f"{reached} of {len(args.seeds)} seeds reach {args.target:.2f}x of the best known within {args.iters} "
          f"iterations; load average after: {load()}")


def report(bench: str, runs: Path, target: float) -> None:
    """The table from the journals alone (an interrupted measurement): each iteration's own measurement, and as best
    known the best of every seed's iterations and of the reference mappers measured at each run's start. These
    figures were not measured together, so they carry the machine's drift between runs."""
    import json

    rows, known, known_name = [], 0.0, "?"
    for folder in sorted(runs.glob(f"seed-*/{bench}/tune-*")):
        seed = int(folder.parts[-3].split("-")[1])
        records = [json.loads(line) for line in (folder / "state.jsonl").read_text().splitlines() if line.strip()]
        baselines = json.loads((folder / "settings.json").read_text()).get("baselines") or {}
        for name, value in baselines.items():
            if value and value > known:
                known, known_name = value, f"{name} (seed {seed}'s run)"
        ok = [r for r in records if r["status"] == "ok" and r["throughput"] is not None]
        for r in ok:
            if r["throughput"] > known:
                known, known_name = r["throughput"], f"seed {seed}, iteration {r['iter']}"
        rows.append((seed, records, ok, (folder / "summary.json").exists()))
    print(f"{bench}: journals under {runs} (not measured together); best known: {known_name} {known:.4g}; "
          f"load average now: {load()}")
    print(f"{'seed':>4}  {'iters':>5}  {'start':>10}  {'best':>10}  {'best/known':>10}  {'first iter >= target':>20}")
    for seed, records, ok, finished in rows:
        start = records[0]["throughput"] if records and records[0]["status"] == "ok" else None
        best = max((r["throughput"] for r in ok), default=None)
        first = next((r["iter"] for r in ok if r["throughput"] >= target * known), None)
        print(f"{seed:>4}  {len(records):>4}{'' if finished else '*'}  "
              f"{start if start is not None else float('nan'):>10.4g}  {best if best else float('nan'):>10.4g}  "
              f"{(best or 0) / known:>10.2f}  {first if first is not None else '-':>20}")
    print("* = tuning not finished when the table was made; start nan = the random start failed")


if __name__ == "__main__":
    main()
