"""Cost of a task mapping by a DSL mapper against Legion's default mapper, on a program of many small tasks.

Runs Stencil on a small grid cut into many tiles (`--tiles` x `--tiles`: two index launches of that many point tasks
per step) with Legion's physical tracing off (`-lg:no_physical_tracing`), so that every step's tasks are mapped
(a replayed trace skips the mapper), on one CPU and one utility processor. Each round runs Legion's default mapper
(no `-mapper`) and every DSL mapper once, in an order that rotates from round to round. Default DSL mappers: the
empty program (every decision is Legion's default mapper's) and tune's start program (`Task * CPU; Region * * CPU
SYSMEM;`, Legion's default mapping on CPUs written in the DSL). Both map every task as Legion's default mapper does,
so a difference in time is the cost of the DSL mapper's own mapping calls.

    python -m mapperopt.benchmarks.mapping_overhead [--steps 300] [--tiles 4] [--rounds 7] [--mapper my.dsl ...]

Printed per mapper: the median of the timed steps' time (Stencil's own `time_s`) over the rounds, its spread
(min-max), the process's CPU time (user + system, median), and, against Legion's default mapper, the median of the
per-round differences with their spread and that difference divided by the task mappings of the timed steps (steps x 2
x tiles^2): the cost per task mapping; and that divided by the region requirements of a task (5 for Stencil's
`stencil` and `increment`), since a DSL mapper's cost grows with the requirements it maps. The load average before and
after says how busy the machine was: on a busy machine the executions wait for a core and the spread grows. Takes
about a minute with the defaults (the first run also builds Stencil and the mappers). Exit status 1 when an execution
fails.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from mapperopt import toolchain
from mapperopt.benchmarks.apps import build_app, load_config
from mapperopt.benchmarks.harness import parse_output
from mapperopt.compiler.build import compile_program

DEFAULT_MAPPERS = {"empty.dsl": "", "start.dsl": "Task * CPU;\nRegion * * CPU SYSMEM;\n"}
TILE = 17  # points per tile side: small tasks (Stencil needs at least its radius, 2)
# What `main` measured a DSL mapper to cost per task mapping more than Legion's default mapper (an idle 2-core x86
# machine; Stencil's tasks of five requirements): 11 to 18 µs, about 3.6 µs per region requirement.
MAPPING_COST_US, REQUIREMENT_COST_US = (11, 18), 3.6
# Tasks are "short" below a millisecond on average: at 18 µs a mapping, a task of a millisecond pays under 2 %; one of
# 140 µs pays 8 to 13 %. Their mappings matter where they cost 2 % of an execution or more (at the low end, 11 µs
# each): a smaller difference is one that a tune's final comparison does not tell apart from the noise.
SHORT_TASK_S, MIN_SHARE = 1e-3, 0.02


def short_task_cost(rows: list[dict], execution_s: float | None) -> str | None:
    """Words on the DSL mapper's cost per task mapping where a run's profile (`rows`:
    `autoguide.explain.task_profile`'s, for one execution of the program) shows tasks short enough and many enough for
    it to matter (`SHORT_TASK_S`, `MIN_SHARE` of `execution_s`, an execution's wall time, which the profile covers,
    unlike a program's metric of one step): their executions and average time, the cost and its share of such a task
    and of an execution's wall time, where the docs explain it and how to measure it here. None otherwise, without a
    wall time, or with a GPU task (its profiled time is its host code's, not its kernels')."""
    timed = [r for r in rows if r["timed"]]
    count = sum(r["count"] for r in timed)
    if not count or not execution_s or any(r["kind"] == "GPU" for r in timed):
        return None
    mean_s = sum(r["total_s"] for r in timed) / count
    low, high = (us * 1e-6 for us in MAPPING_COST_US)
    if mean_s >= SHORT_TASK_S or count * low < MIN_SHARE * execution_s:
        return None
    shares = " to ".join(f"{100 * min(1.0, c):.0f}" for c in (low / mean_s, high / mean_s))
    of_run = " to ".join(f"{100 * min(1.0, count * c / execution_s):.0f}" for c in (low, high))
    return (f"its tasks are short ({count:,} executions of {mean_s * 1e6:.0f} µs on average in an execution of "
            f"{execution_s:,.2f} s of wall time, Legion's start-up included): a DSL mapper spends about "
            f"{MAPPING_COST_US[0]} to {MAPPING_COST_US[1]} µs more than Legion's default mapper on each task mapping "
            f"(about {REQUIREMENT_COST_US} µs per region requirement), {shares} % of such a task and {of_run} % of an "
            "execution's wall time, whatever it maps (\"Many small tasks\" in docs/own-app.md; "
            "`python -m mapperopt.benchmarks.mapping_overhead` measures it on this machine)")


def execute(cmd: list[str], env: dict[str, str], timeout_s: float) -> tuple[float, float]:
    """(time_s that Stencil printed, CPU seconds of the process) of one execution; SystemExit when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        sys.exit(f"timed out after {timeout_s:.0f} s: {' '.join(cmd)}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    results, _ = parse_output(done.stdout)
    if done.returncode != 0 or not results or not results[-1]:
        sys.exit(f"failed (exit status {done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return float(results[-1]["time_s"]), cpu


def spread(values: list[float], scale: float, unit: str, digits: int = 0) -> str:
    return f"{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f} {unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="timed steps per execution (default 300)")
    parser.add_argument("--tiles", type=int, default=4, help="tiles per side (default 4: 16 point tasks per launch)")
    parser.add_argument("--rounds", type=int, default=7, help="executions of each mapper (default 7)")
    parser.add_argument("--mapper", type=Path, action="append", default=[],
                        help="a DSL file to measure instead of the empty and start programs (repeatable)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per execution (default 120)")
    args = parser.parse_args()
    if args.steps < 1 or args.tiles < 1 or args.rounds < 1:
        parser.error("--steps, --tiles and --rounds must be at least 1")
    texts = {p.name: p.read_text() for p in args.mapper} or DEFAULT_MAPPERS
    exe = build_app("stencil")
    mappers: dict[str, list[str]] = {"default": []}
    for name, text in texts.items():
        mappers[name] = ["-mapper", str(compile_program(text, name).so_path)]
    side = TILE * args.tiles
    cmd = [str(exe), "-nx", str(side), "-ny", str(side), "-ntx", str(args.tiles), "-nty", str(args.tiles),
           "-tsteps", str(args.steps), "-tprune", "0", "-ll:cpu", "1", "-ll:util", "1", "-ll:csize", "256",
           "-lg:no_physical_tracing", "-logfile", "stderr"]
    env = toolchain.runtime_env()
    mappings = args.steps * 2 * args.tiles ** 2
    # The region requirements of the timed loop's tasks, from Stencil's stored description.
    counts = {len(t["regions"]) for t in load_config("stencil").stored_description()["tasks"]
              if t["name"] in ("stencil", "increment")}
    if len(counts) != 1:
        sys.exit(f"Stencil's stencil and increment tasks have different requirement counts: {sorted(counts)}")
    requirements = counts.pop()
    load_before = os.getloadavg()[0]
    names = list(mappers)
    for name in names:  # one unmeasured execution each: page cache, lazy binding
        execute([*cmd, *mappers[name]], env, args.timeout)
    times: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            time_s, cpu = execute([*cmd, *mappers[name]], env, args.timeout)
            times[name].append(time_s)
            cpus[name].append(cpu)
    load_after = os.getloadavg()[0]
    print(f"Stencil {side}x{side} in {args.tiles}x{args.tiles} tiles, {args.steps} timed steps, "
          f"-lg:no_physical_tracing, 1 CPU + 1 utility processor: {mappings} task mappings timed per execution, "
          f"{requirements} region requirements each; {args.rounds} rounds; load average {load_before:.2f} before, "
          f"{load_after:.2f} after")
    print(f"{'mapper':<12} {'median':>9} {'spread':>15} {'CPU':>8}  {'vs default (spread)':<28} "
          f"{'per task mapping (spread)':<28} per requirement")
    for name in names:
        med = statistics.median(times[name])
        row = (f"{name:<12} {med * 1e3:7.1f} ms {spread(times[name], 1e3, 'ms'):>15} "
               f"{statistics.median(cpus[name]):6.2f} s")
        if name == "default":
            print(f"{row}  {'-':<28} {'-':<28} -")
            continue
        diffs = [t - d for t, d in zip(times[name], times["default"])]
        diff = statistics.median(diffs)
        versus = f"{diff * 1e3:+.1f} ms ({spread(diffs, 1e3, 'ms')})"
        per_task = f"{diff * 1e6 / mappings:+.1f} us ({spread(diffs, 1e6 / mappings, 'us', 1)})"
        print(f"{row}  {versus:<28} {per_task:<28} {diff * 1e6 / mappings / requirements:+.1f} us")


if __name__ == "__main__":
    main()
