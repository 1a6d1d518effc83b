"""Wall and CPU time of the test suite: the README's test command (`.venv/bin/pytest -q`, run by .ci/run), pinned to
a few cores.

    python3 benchmarks/suite_time.py                 # cores 0,1; warm build cache; prints the figures
    python3 benchmarks/suite_time.py --cold          # an empty build cache (a fresh clone's first run)
    python3 benchmarks/suite_time.py --cores 0-3 --no-warmup -- tests/optimizer   # more cores; extra pytest args

Warm (the default): the build cache (`MAPPEROPT_CACHE`, default ~/.cache/mapperopt) holds the Legion support
library, the applications and every mapper the tests compile. The script makes it so by running the suite once
before the measured run (its figures are printed too, as the warm-up); `--no-warmup` skips that when a run has
just filled the cache with builds of the same code (after a change of the compiler's code generator, a runtime or an
application, the cache is not warm for it). Builds are content-addressed, so the measured run compiles nothing that
the warm-up did; the figures say how many objects the build cache gained during the measured run (from any process
sharing the cache): a warm run still compiles about 15, those that tests build on purpose or whose C++ names a
temporary file; many more say that the cache was not warm.
`--cold`: the one measured run uses a new empty cache in a temporary folder (removed afterwards).

Printed: wall seconds, CPU seconds (user + system of pytest and everything it started, from the children's
rusage), the test count from pytest's summary line, the objects compiled into the build cache, the five files that took
longest (setup, call and teardown of their tests summed over workers, from `--durations=0`), and the load average
before and after (`os.getloadavg`), without which figures from a shared machine mean little; Legion's processors
wait busily, so a loaded machine raises the CPU seconds too. Run from the repository root with the venv of the
README installed. Exit status: pytest's.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTEST = REPO / ".venv" / "bin" / "pytest"
DURATION = re.compile(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+?)::")
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|error|errors|xfailed|xpassed)\b")


def compiled(env: dict[str, str]) -> int:
    """Objects and test harnesses in the build cache (toolchain.cache_dir(): MAPPEROPT_CACHE or ~/.cache/mapperopt)."""
    cache = Path(env.get("MAPPEROPT_CACHE") or Path.home() / ".cache" / "mapperopt")
    return sum(1 for _ in cache.glob("*/obj/*.o")) + sum(1 for _ in cache.glob("dsl-harness/harness-*"))


def run_suite(cores: str, env: dict[str, str], extra: list[str], log: Path | None = None) -> dict:
    """One run of the test command under `taskset -c cores`: wall and CPU seconds, counts, slowest files. pytest's
    output is also appended to `log` as it comes (to follow a long run)."""
    cmd = ["taskset", "-c", cores, str(PYTEST), "-q", "--durations=0", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    objects = compiled(env)
    load_before = os.getloadavg()
    start = time.monotonic()
    lines = []
    with open(log or os.devnull, "a") as copy, subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            lines.append(line)
            copy.write(line)
            copy.flush()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    output = "".join(lines)
    files: dict[str, float] = defaultdict(float)
    for line in output.splitlines():
        m = DURATION.match(line)
        if m:
            files[m.group(2)] += float(m.group(1))
    last = output.strip().splitlines()[-1] if output.strip() else ""
    counts = {kind: int(n) for n, kind in SUMMARY.findall(last)}
    return {"status": proc.returncode, "wall": wall, "cpu": cpu, "counts": counts, "summary": last,
            "slowest": sorted(files.items(), key=lambda kv: -kv[1])[:5], "load": (load_before, os.getloadavg()),
            "compiled": compiled(env) - objects, "output": output}


def report(name: str, r: dict, cores: str) -> None:
    n = len(os.sched_getaffinity(0) & set(_cpu_list(cores)))
    load = " to ".join(f"{a[0]:.2f}" for a in r["load"])
    print(f"{name}: {r['wall']:.0f} s wall, {r['cpu']:.0f} CPU s ({r['cpu'] / max(r['wall'], 1e-9):.2f} cores busy "
          f"of {n}), {sum(r['counts'].get(k, 0) for k in ('passed', 'failed'))} tests ({r['summary']}), "
          f"1-minute load average {load}, {r['compiled']} objects compiled into the build cache")
    for path, seconds in r["slowest"]:
        print(f"    {seconds:7.1f} s  {path}")


def _cpu_list(spec: str) -> list[int]:
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", default="0,1", help="CPU list for taskset (default 0,1)")
    parser.add_argument("--cold", action="store_true", help="measure with a new empty build cache")
    parser.add_argument("--no-warmup", action="store_true", help="the cache is warm already: measure at once")
    parser.add_argument("--log", type=Path, help="also append pytest's output to this file as it comes")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    if not PYTEST.exists():
        print(f"{PYTEST} not found: install the README's venv first", file=sys.stderr)
        return 2
    if shutil.which("taskset") is None:
        print("taskset (util-linux) not found", file=sys.stderr)
        return 2
    env = dict(os.environ)
    tmp = None
    if args.cold:
        tmp = tempfile.mkdtemp(prefix="mapperopt-cold-cache-")
        env["MAPPEROPT_CACHE"] = tmp
    try:
        if not args.cold and not args.no_warmup:
            warmup = run_suite(args.cores, env, args.pytest_args, args.log)
            report("warm-up (fills the build cache)", warmup, args.cores)
        r = run_suite(args.cores, env, args.pytest_args, args.log)
        report("cold (empty build cache)" if args.cold else "measured (warm build cache)", r, args.cores)
        if r["status"] != 0:
            print("\n".join(r["output"].splitlines()[-40:]))
        return r["status"]
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
