"""Speed of the DSL tools through the command line: wall time of `mapperopt compile` (cold and cached, and cached
with --bench) and of `mapperopt check` on a 50-line mapper, each a fresh process as a user runs it.

    python benchmarks/bench_compile.py [--repeats 5] [--mappers 12] [--json]

Mappers: configs/circuit.dsl, configs/stencil.dsl, configs/pennant.dsl and the expert mappers
(tests/dsl/examples/e*.dsl). A cold compile
is of a text never compiled before (a fresh comment: parse, check, generate, C++ compile and link); a cached compile
finds the library in the cache; a cached compile with --bench (the benchmarks' own mappers, configs/<bench>.dsl, with
--bench <bench>) also reads the benchmark's configuration and this machine's probe from the cache, which are part of
its record's key; `check` runs on a 50-line mapper (the Cannon expert mapper plus Region statements).
The support library is built (or found) and one compile and one check are run before timing, so that
Python's bytecode of the package exists, as in any installation (PYTHONDONTWRITEBYTECODE is unset for the timed
commands: with it every call would compile mapperopt's modules from source). Targets (on 2 cores, support library
built): cached compile <= 150 ms with or without --bench, check <= 300 ms, cold compile <= 1.5 s (medians); the exit
status is 1 when a median misses its target.
Timings on a machine shared with other work are noisy: report the spread (min..max) with the median. The CPU time
of each call (user + system, the command and the compilers it runs) is printed too: on a loaded machine it shows
the work a call does when the wall time mostly shows the waiting.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from mapperopt.compiler import support_library

ROOT = Path(__file__).resolve().parents[1]
MAPPERS = [ROOT / "configs" / "circuit.dsl", ROOT / "configs" / "stencil.dsl", ROOT / "configs" / "pennant.dsl",
           *sorted((ROOT / "tests" / "dsl" / "examples").glob("e*.dsl"))]
TARGETS = {"cached_compile_s": 0.150, "cached_compile_bench_s": 0.150, "check_50_lines_s": 0.300,
           "cold_compile_s": 1.5}


def cli() -> list[str]:
    script = shutil.which("mapperopt", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "mapperopt.cli"]


CPU: dict[str, list[float]] = {}  # kind -> CPU seconds of each call timed under that kind


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(args: list[str], kind: str | None = None) -> float:
    """Wall seconds of `mapperopt ARGS`; its CPU seconds go to CPU[kind]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cli() + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if kind:
        CPU.setdefault(kind, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def fifty_lines() -> str:
    text = (ROOT / "tests" / "dsl" / "examples" / "e4_cannon.dsl").read_text().rstrip("\n").splitlines()
    text += [f"Region task_{k % 7 + 1} {k % 3} GPU FBMEM,ZCMEM;" for k in range(50 - len(text))]
    return "\n".join(text) + "\n"


def spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="measurements per mapper and kind")
    parser.add_argument("--mappers", type=int, default=len(MAPPERS), help="time only the first N mappers")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args(argv)
    support_library()
    cold, cached, cached_bench, checks = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        mapper = folder / "fifty.dsl"
        mapper.write_text(fifty_lines())
        timed(["check", str(mapper)])
        (folder / "warm.dsl").write_text(f"# warm-up {uuid.uuid4().hex}\n{MAPPERS[0].read_text()}")
        timed(["compile", str(folder / "warm.dsl")])
        for path in MAPPERS[:args.mappers]:
            target = folder / path.name
            for _ in range(max(1, args.repeats // 2)):
                target.write_text(f"# cold {uuid.uuid4().hex}\n{path.read_text()}")
                cold.append(timed(["compile", str(target)], "cold_compile_s"))
            timed(["compile", str(target)])
            cached += [timed(["compile", str(target)], "cached_compile_s") for _ in range(args.repeats)]
            if path.parent.name == "configs":  # a benchmark's own mapper: also compiled with --bench
                bench = ["compile", "--bench", path.stem, str(target)]
                timed(bench)
                cached_bench += [timed(bench, "cached_compile_bench_s") for _ in range(args.repeats)]
        checks = [timed(["check", str(mapper)], "check_50_lines_s") for _ in range(args.repeats * 3)]
    result = {"cached_compile_s": spread(cached), "cached_compile_bench_s": spread(cached_bench),
              "check_50_lines_s": spread(checks), "cold_compile_s": spread(cold),
              "cpu": {k: spread(v) for k, v in CPU.items()}, "targets": TARGETS,
              "load_average": os.getloadavg()}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, target in TARGETS.items():
            r = result[key]
            c = result["cpu"][key]
            print(f"{key:<22} median {r['median'] * 1000:7.0f} ms  (min {r['min'] * 1000:.0f}, max "
                  f"{r['max'] * 1000:.0f}, n={r['n']})  target {target * 1000:.0f} ms;  CPU median "
                  f"{c['median'] * 1000:.0f} ms (min {c['min'] * 1000:.0f}, max {c['max'] * 1000:.0f})")
        print("load average at the end: " + ", ".join(f"{x:.2f}" for x in result["load_average"]))
    return 0 if all(result[k]["median"] <= t for k, t in TARGETS.items()) else 1


if __name__ == "__main__":
    sys.exit(main())
