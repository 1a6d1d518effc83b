"""The timed-out evaluations of a one-GPU evaluation on the traced benchmarks (Circuit, Stencil, Pennant), against
the finished ones, counted by two traits of their mappers:

    python3 benchmarks/gpu/timeouts.py --results reports/h200-eval

An evaluation is a file `work/<benchmark>/compare-*/evaluations/*.json` under --results (`mapperopt compare`'s
cache: `status`, `stage`, `dsl`, `settings.size`). Timed out: stage `timeout` (killed at the harness's limit);
finished: status `ok`; the other failures (check, run) are not counted. One line per benchmark, size and group:

    limit      evaluations with an InstanceLimit on a task of the timed loop: a limited task is never memoized, so
               the traced loop is mapped again in every iteration
    cpu-first  evaluations placing a loop task that has a GPU variant CPU-first: the task's effective processor-kind
               list (a `Task` statement naming it, else `Task *`) starts with CPU
    always     (timed-out line) the loop tasks placed CPU-first by every timed-out evaluation and by no finished one

Run it from the repository root, as a script (the installed package is imported, not the source folder).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

try:
    from mapperopt.benchmarks.evaluate import TIMED_LOOP
    from mapperopt.dsl import Evaluator, parse
    from mapperopt.dsl import ast as A
    from mapperopt.dsl.commands import load_app
except ModuleNotFoundError as error:  # a Python without mapperopt: say which one to use
    from installed import missing

    sys.exit(missing(error))

LOOP = TIMED_LOOP  # the tasks of each application's timed loop (benchmarks/evaluate.py)


def traits(program: A.Program, loop: tuple[str, ...], gpu_loop: set[str]) -> tuple[bool, set[str]]:
    """(whether an InstanceLimit of `program` names a task of `loop`, the tasks of `gpu_loop` (the loop tasks with
    a GPU variant) that it places CPU-first)."""
    limited = {n.name for s in program.statements if isinstance(s, A.InstanceLimitStmt) for n in s.tasks.names or ()}
    kinds = Evaluator(program, None)
    return bool(limited & set(loop)), {t for t in gpu_loop if kinds.task_kinds(t)[:1] == ["CPU"]}


def tally(results: Path) -> dict[tuple[str, str, str], list[tuple[bool, set[str]]]]:
    """(benchmark, size, "timed out" | "finished") -> the traits of each such evaluation under `results`. Raises
    DslSyntaxError for a mapper that does not parse."""
    groups = defaultdict(list)
    for bench, loop in LOOP.items():
        app = load_app(bench)
        gpu_loop = {t for t in loop if "GPU" in app.task(t).variants}
        for path in sorted(results.glob(f"work/{bench}/compare-*/evaluations/*.json")):
            e = json.loads(path.read_text())
            group = "timed out" if e["stage"] == "timeout" else "finished" if e["status"] == "ok" else None
            if group:
                groups[bench, e["settings"]["size"], group].append(traits(parse(e["dsl"]), loop, gpu_loop))
    return groups


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, required=True, help="the evaluation's results folder")
    args = parser.parse_args()
    groups = tally(args.results)
    if not groups:
        print(f"no evaluation of {', '.join(LOOP)} under {args.results / 'work'}", file=sys.stderr)
        return 1
    print(f"{'benchmark':9} {'size':6} {'group':9} {'count':>5} {'limit':>5} {'cpu-first':>9}  always")
    for bench, size in sorted({k[:2] for k in groups}, key=lambda k: (list(LOOP).index(k[0]), k[1])):
        timed_out, finished = groups.get((bench, size, "timed out"), []), groups.get((bench, size, "finished"), [])
        always = set.intersection(*(c for _, c in timed_out)) if timed_out else set()
        always -= set().union(*(c for _, c in finished))
        for group, rows in (("timed out", timed_out), ("finished", finished)):
            tail = "  " + (", ".join(sorted(always)) or "-") if group == "timed out" else ""
            print(f"{bench:9} {size:6} {group:9} {len(rows):5} {sum(lim for lim, _ in rows):5} "
                  f"{sum(bool(c) for _, c in rows):9}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
