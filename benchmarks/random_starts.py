"""The paper's setting: tune from random starts and see how close each seed gets to the best mapper known.

    python3 -P benchmarks/random_starts.py --bench circuit stencil --seeds 0 1 2 3 4 --keep runs/rs \
        --jobs 5 --cpus-per-job 2 -- --size small

For each benchmark and seed, `mapperopt tune BENCH --optimizer guided --start random --seed S --iters N --gpus 0`
runs (arguments after `--` go to every tune, e.g. `--size small --min-time 1`; `--app-args BENCH=ARGS` adds
application arguments for one benchmark, e.g. `--app-args "circuit=-l 2"`). Up to `--jobs` tunes run at once,
each pinned to its own `--cpus-per-job` cores (sched_setaffinity; tune then gives Legion one CPU processor per core
less one for the utility processor), on CPUs only even where a GPU exists. Then, per benchmark, every seed's final
best, Legion's default mapper and the expert mapper are measured together (interleaved rounds, the protocol of
`mapperopt compare`), pinned to one core group likewise; the benchmarks' comparisons run side by side. "Best known"
is the best of all of them in that same comparison, so no figure is compared with one measured under another load.
A seed *reaches* it when its best is at least `--target` (0.95) of the best known; "iterations" is the iteration
that found that best. The table also gives the first iteration whose own measurement during tuning was at least
the target (noisier: taken at another time, beside other tunes).

Resumable: everything lives under `--keep`; a killed call, run again the same way, skips finished tunes and
comparisons and continues unfinished tunes where their journals stop (the current iteration is run again).
`--report` prints the tables from what exists, running nothing. Records the load average before and after.
`--remeasure` measures the bests, the default and the expert together again where a joint measurement exists (e.g.
with more `--rounds` and a longer `--min-time`, on quieter cores): the earlier one is kept as together-N.json and
together-N/.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path


def load() -> str:
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "?"


def core_groups(jobs: int, per_job: int) -> list[list[int]]:
    """`jobs` disjoint groups of `per_job` cores from those this process may use (lowest first).

    Raises:
        SystemExit: fewer than jobs * per_job cores are available.
    """
    cores = sorted(os.sched_getaffinity(0))
    if jobs * per_job > len(cores):
        sys.exit(f"--jobs {jobs} x --cpus-per-job {per_job} needs {jobs * per_job} cores; this process may use "
                 f"{len(cores)} ({cores})")
    return [cores[i * per_job:(i + 1) * per_job] for i in range(jobs)]


def tune_folder(keep: Path, bench: str, seed: int) -> Path | None:
    """The tuning folder of one seed (the latest), or None before tune created one."""
    folders = sorted((keep / bench / f"seed-{seed}" / bench).glob("tune-*"))
    return folders[-1] if folders else None


def finished(keep: Path, bench: str, seed: int) -> bool:
    folder = tune_folder(keep, bench, seed)
    return folder is not None and (folder / "summary.json").exists()


def exhausted(keep: Path, bench: str, seed: int, iters: int) -> bool:
    """Finished, or all `iters` iterations journaled (a tune where nothing worked ends without a summary)."""
    folder = tune_folder(keep, bench, seed)
    journal = folder / "state.jsonl" if folder is not None else None
    return finished(keep, bench, seed) or (journal is not None and journal.exists() and sum(
        1 for line in journal.read_text().splitlines() if line.strip()) >= iters)


def tune_command(bench: str, seed: int, iters: int, keep: Path, extra: list[str]) -> list[str]:
    # -P: the source tree's ./mapperopt folder must not shadow the installed package. Without --new, tune continues
    # the latest unfinished folder of the same request (resume after a kill).
    return [sys.executable, "-P", "-m", "mapperopt.cli", "tune", bench, "--optimizer", "guided", "--start", "random",
            "--seed", str(seed), "--iters", str(iters), "--gpus", "0", "--runs-dir",
            str(keep / bench / f"seed-{seed}"), *extra]


def pinned(cores: list[int]):
    return lambda: os.sched_setaffinity(0, cores)


def run_pool(commands: list[tuple[str, list[str], Path]], groups: list[list[int]]) -> dict[str, int]:
    """Runs `commands` ((name, argv, log file)) with at most one per core group at a time, each pinned to its
    group; returns each one's exit status. A Ctrl-C or SIGTERM stops them all (their journals keep what finished)."""
    todo, running, status = list(commands), {}, {}
    free = list(range(len(groups)))
    try:
        while todo or running:
            while todo and free:
                name, argv, log = todo.pop(0)
                slot = free.pop(0)
                with open(log, "a") as out:
                    out.write(f"\n$ {shlex.join(argv)}  # cores {groups[slot]}, load average {load()}\n")
                    out.flush()
                    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, preexec_fn=pinned(groups[slot]),
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
                running[name] = (proc, slot, time.monotonic())
                print(f"  started {name} on cores {groups[slot]}", flush=True)
            time.sleep(1)
            for name, (proc, slot, began) in list(running.items()):
                if proc.poll() is not None:
                    status[name] = proc.returncode
                    free.append(slot)
                    del running[name]
                    print(f"  {name}: {'done' if proc.returncode == 0 else f'exit {proc.returncode}'} in "
                          f"{time.monotonic() - began:.0f} s (load average {load()})", flush=True)
    finally:
        for proc, _, _ in running.values():  # interrupted: stop the children, which keep their journals
            proc.terminate()
        for proc, _, _ in running.values():
            proc.wait()
    return status


def set_aside(keep: Path, bench: str) -> None:
    """Renames an earlier joint measurement of `bench` (together.json, together/) to the first free together-N."""
    base = keep / bench
    n = 1
    while (base / f"together-{n}.json").exists() or (base / f"together-{n}").exists():
        n += 1
    for old, new in ((base / "together.json", base / f"together-{n}.json"),
                     (base / "together", base / f"together-{n}")):
        if old.exists():
            old.rename(new)


def measure_together(bench: str, seeds: list[int], keep: Path, rounds: int, min_time_s: float | None) -> None:
    """Every finished seed's best, the default and the expert mapper measured together, each execution at least
    `min_time_s` measured seconds (None: the tunes' own minimum); writes keep/BENCH/together.json ({name:
    Measured.to_json()}, with the rounds, the minimum, the cores, the load average before and after, and each
    mapper's calibrated iteration count) and leaves the run folders in keep/BENCH/together/ (an earlier joint
    measurement set aside first)."""
    from mapperopt.benchmarks import protocol
    from mapperopt.optimizer.commands import _evaluator
    from mapperopt.optimizer.store import TuneStore

    folders = {s: tune_folder(keep, bench, s) for s in seeds if finished(keep, bench, s)}
    mappers = {f"seed-{s}": json.loads((f / "summary.json").read_text())["best_dsl"] for s, f in folders.items()}
    mappers.update(default="default", expert="expert")
    settings = TuneStore.open(next(iter(folders.values()))).settings
    evaluator = _evaluator(settings["app"], settings)
    min_time = (evaluator.min_time_s or 0) if min_time_s is None else min_time_s
    set_aside(keep, bench)
    before = load()
    measured = protocol.measure_together(bench, mappers, rounds, keep / bench / "together", min_time_s=min_time,
                                         **evaluator.run_options())
    out = {name: {**m.to_json(), "iterations": iterations(m)} for name, m in measured.items()}
    (keep / bench / "together.json").write_text(json.dumps(
        {"rounds": rounds, "min_time_s": min_time, "cores": sorted(os.sched_getaffinity(0)), "load_before": before,
         "load_after": load(), "measured": out}, indent=1) + "\n")


def iterations(measured) -> int | None:
    """The iteration count (the benchmark's iterations flag) of a mapper's last round, None if it never ran."""
    path = Path(measured.run_dirs[-1]) / "result.json" if measured.run_dirs else None
    return json.loads(path.read_text())["settings"].get("iterations") if path and path.exists() else None


def table(bench: str, seeds: list[int], keep: Path, iters: int, target: float) -> None:
    """The table of one benchmark from the joint measurement (keep/BENCH/together.json), or, without one, from the
    journals alone (each iteration's own measurement; best known: the best of every seed's iterations and of the
    references measured when each tune started), marked as not measured together."""
    path = keep / bench / "together.json"
    journals = {}
    for seed in seeds:
        folder = tune_folder(keep, bench, seed)
        if folder is not None and (folder / "state.jsonl").exists():
            journals[seed] = (folder, [json.loads(line) for line in (folder / "state.jsonl").read_text().splitlines()
                                       if line.strip()])
    if not journals:
        print(f"{bench}: no tuning folder under {keep / bench} yet")
        return
    best: dict[str, float] = {}
    if path.exists():
        together = json.loads(path.read_text())
        ok = {n: m["estimate"]["value"] for n, m in together["measured"].items() if m.get("estimate")}
        how = (f"measured together, {together['rounds']} interleaved rounds"
               + (f" of >= {together['min_time_s']:g} s executions on cores {together['cores']}, load average "
                  f"{together['load_before']} before, {together['load_after']} after" if "cores" in together else ""))
        best = {n: v for n, v in ok.items()}
    else:
        how = "NOT measured together: journals only, each iteration's own measurement"
        for seed, (folder, records) in journals.items():
            values = [r["throughput"] for r in records if r["status"] == "ok" and r["throughput"] is not None]
            if values:
                best[f"seed-{seed}"] = max(values)
            for name, value in (json.loads((folder / "settings.json").read_text()).get("baselines") or {}).items():
                if value:
                    best[name] = max(best.get(name, 0.0), value)
    if not best:
        print(f"{bench}: nothing succeeded yet")
        return
    known_name = max(best, key=best.get)
    known = best[known_name]
    print(f"{bench}: guided from random starts ({how}); best known: {known_name} {known:.4g}; default "
          f"{best.get('default', float('nan')):.4g}, expert {best.get('expert', float('nan')):.4g}")
    print(f"{'seed':>4}  {'iters':>5}  {'start':>8}  {'best':>8}  {'best/known':>10}  {'reached':>7}  "
          f"{'iteration of best':>17}  {'first own >= target':>19}")
    reached = 0
    for seed in seeds:
        if seed not in journals:
            print(f"{seed:>4}  not started")
            continue
        folder, records = journals[seed]
        done = (folder / "summary.json").exists()
        start = records[0]["throughput"] if records and records[0]["status"] == "ok" else None
        mine = best.get(f"seed-{seed}")
        ratio = (mine or 0.0) / known
        hit = ratio >= target and done
        reached += hit
        best_iter = json.loads((folder / "summary.json").read_text())["best_iter"] if done else "-"
        first = next((r["iter"] for r in records
                      if r["status"] == "ok" and r["throughput"] and r["throughput"] >= target * known), "-")
        print(f"{seed:>4}  {len(records):>4}{'' if done else '*'}  {start if start else float('nan'):>8.4g}  "
              f"{mine if mine else float('nan'):>8.4g}  {ratio:>10.2f}  {'yes' if hit else 'no':>7}  "
              f"{best_iter:>17}  {first:>19}")
    print(f"{reached} of {len(seeds)} seeds reach {target:.2f}x of the best known within {iters} iterations"
          + ("" if path.exists() else " (not a verdict: not measured together)")
          + "; * = tuning not finished; start nan = the random start failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", nargs="+", default=["circuit"])
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the joint measurement")
    parser.add_argument("--min-time", type=float, default=None, metavar="S",
                        help="measured seconds per execution of the joint measurement at least (default: the tunes')")
    parser.add_argument("--remeasure", action="store_true",
                        help="measure together again where a joint measurement exists (the earlier one is kept as "
                             "together-N.json)")
    parser.add_argument("--keep", type=Path, default=Path("runs/random-starts"),
                        help="tuning folders, logs and joint measurements go here (a second call continues)")
    parser.add_argument("--jobs", type=int, default=1, help="tunes at once, each on its own cores")
    parser.add_argument("--cpus-per-job", type=int, default=2, help="cores each tune (and comparison) is pinned to")
    parser.add_argument("--app-args", action="append", default=[], metavar="BENCH=ARGS",
                        help="application arguments for one benchmark's tunes, e.g. 'circuit=-l 2'")
    parser.add_argument("--report", action="store_true", help="run nothing: print the tables of what exists")
    parser.add_argument("--measure", metavar="BENCH", help=argparse.SUPPRESS)  # one joint measurement (internal)
    args, extra = parser.parse_known_args()
    extra = extra[1:] if extra[:1] == ["--"] else extra
    # `timeout` or a job system stops with SIGTERM: unwind, so that the running tunes are stopped with it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    keep = args.keep.resolve()
    if args.measure:
        return measure_together(args.measure, args.seeds, keep, args.rounds, args.min_time)
    if args.report:
        for bench in args.bench:
            table(bench, args.seeds, keep, args.iters, args.target)
        return
    app_args: dict[str, list[str]] = {}
    for item in args.app_args:
        bench, _, text = item.partition("=")
        app_args.setdefault(bench, []).extend(shlex.split(text))
    groups = core_groups(args.jobs, args.cpus_per_job)
    print(f"guided from random starts: {', '.join(args.bench)}, seeds {args.seeds}, {args.iters} iterations, "
          f"tune {shlex.join(extra)}; {args.jobs} jobs on cores {groups}; load average before: {load()}",
          flush=True)
    commands = []
    for seed in args.seeds:  # benchmarks interleaved: a call cut short leaves each some finished seeds
        for bench in args.bench:
            (keep / bench).mkdir(parents=True, exist_ok=True)
            if not finished(keep, bench, seed):
                tail = ["--", *app_args[bench]] if app_args.get(bench) else []
                commands.append((f"{bench} seed {seed}", tune_command(bench, seed, args.iters, keep, [*extra, *tail]),
                                 keep / bench / f"seed-{seed}.log"))
    status = run_pool(commands, groups)
    failed = [name for name, rc in status.items() if rc != 0]
    if failed:
        print(f"failed: {', '.join(failed)} (see the seed-N.log files under {keep}); run again to continue")
    measure = [(bench, [sys.executable, "-P", os.path.abspath(__file__), "--measure", bench, "--keep", str(keep),
                        "--rounds", str(args.rounds), "--seeds", *map(str, args.seeds),
                        *(["--min-time", str(args.min_time)] if args.min_time is not None else [])],
                keep / bench / "together.log")
               for bench in args.bench
               if (args.remeasure or not (keep / bench / "together.json").exists())
               and all(exhausted(keep, bench, s, args.iters) for s in args.seeds)]
    if measure:
        print("measuring each benchmark's bests, default and expert together", flush=True)
        run_pool(measure, groups)
    for bench in args.bench:
        table(bench, args.seeds, keep, args.iters, args.target)
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
