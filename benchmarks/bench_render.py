"""Time rendering search points to DSL programs (the random and OpenTuner baselines render up to 220 a proposal).

    .venv/bin/python benchmarks/bench_render.py [--app pennant] [--machine 2x4x1] [--points 50] [--rounds 5]

Prints the median over the rounds of the mean milliseconds per `SearchSpace.render` of `--points` random points
(seeded), after one warm-up render that also builds the parser tables, and the programs' mean line count.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl.commands import load_app
from mapperopt.optimizer.space import SearchSpace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", default="pennant")
    ap.add_argument("--machine", default="2x4x1")
    ap.add_argument("--points", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    space = SearchSpace(load_app(args.app), parse_machine_spec(args.machine))
    rng = random.Random(0)
    points = [space.random_point(rng) for _ in range(args.points)]
    lines = sum(space.render(p).count("\n") for p in points) / len(points)
    per_render = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for p in points:
            space.render(p)
        per_render.append((time.perf_counter() - start) / len(points))
    print(f"{args.app} on {args.machine}: {statistics.median(per_render) * 1e3:.1f} ms per render (median of "
          f"{args.rounds} rounds of {args.points} points; {lines:.0f} lines a program)")


if __name__ == "__main__":
    main()
