"""Times of Stencil's traced timestep loop with and without an InstanceLimit, with Legion's physical tracing on and off.

A limited task is never memoized (a replayed trace would skip the mapper, where the limit is enforced). With physical
tracing on, Legion then records the loop's trace again in every step, and the run's time grows with the square of
its steps; the harness runs such a mapper with `-lg:no_physical_tracing` (`harness.no_replay_flags`), where every
step is mapped and the time stays linear. Columns (seconds of timed steps, the application's own `time_s`):

    no limit       the mapper without the limit, trace replayed (what the harness runs)
    limit, traced  with `InstanceLimit increment 4;`, physical tracing on (the harness before the fix)
    limit, off     the same with `-lg:no_physical_tracing` (what the harness runs)

    python -m mapperopt.benchmarks.trace_limit [--steps 250 500 1000] [--size ci] [--timeout 300]
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import tempfile
from pathlib import Path

from mapperopt import toolchain
from mapperopt.benchmarks.harness import parse_output, run_benchmark

FLAG = "-lg:no_physical_tracing"
MAPPER = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\n"
LIMIT = "InstanceLimit increment 4;\n"


def harness_time(dsl: str, steps: int, size: str, timeout_s: float, folder: Path) -> tuple[str, list[str]]:
    """(time_s as text, or why none, and the command the harness ran) of one harness execution without
    calibration."""
    result = run_benchmark("stencil", dsl, size=size, min_time_s=0, timeout_s=timeout_s, retries=0, out_dir=folder,
                           extra_args=["-tsteps", str(steps)])
    cmd = shlex.split(result.settings["command"])
    return (f"{result.attempts[-1].result['time_s']:.2f}" if result.ok else result.stage), cmd


def command_time(cmd: list[str], timeout_s: float) -> str:
    """time_s of one execution of `cmd` (text), or 'timeout'/'failed'."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=toolchain.runtime_env(), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f">{timeout_s:.0f} (timeout)"
    results, _ = parse_output(proc.stdout)
    return f"{results[-1]['time_s']:.2f}" if proc.returncode == 0 and results and results[-1] else "failed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--size", default="ci", help="Stencil's size (default ci)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per execution (default 300)")
    args = parser.parse_args()
    print(f"{'steps':>6} {'no limit':>10} {'limit, traced':>16} {'limit, off':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for steps in args.steps:
            plain, _ = harness_time(MAPPER, steps, args.size, args.timeout, Path(tmp) / f"plain-{steps}")
            off, cmd = harness_time(MAPPER + LIMIT, steps, args.size, args.timeout, Path(tmp) / f"limit-{steps}")
            if FLAG not in cmd:
                raise SystemExit(f"the harness ran the limited mapper without {FLAG}: {shlex.join(cmd)}")
            traced = command_time([a for a in cmd if a != FLAG], args.timeout)
            print(f"{steps:>6} {plain:>10} {traced:>16} {off:>11}", flush=True)


if __name__ == "__main__":
    main()
