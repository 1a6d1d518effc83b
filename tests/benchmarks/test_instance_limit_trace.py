"""An InstanceLimit on a task of a traced loop (Stencil's timesteps run inside begin_trace/end_trace): the limited
task is never memoized, so with Legion's physical tracing on the loop was recorded again in every step and the
run's time grew with the square of its steps (stencil at `ci`, InstanceLimit increment 4: 2.3 s for 250 steps, 9.1 s
for 500, `benchmarks/trace_limit.py`). mapperopt's runs turn physical tracing off for such a mapper; a run without
that flag is told once how to get it."""

from __future__ import annotations

import json
import shlex
import subprocess

from mapperopt import toolchain
from mapperopt.benchmarks import run_benchmark

FLAG = "-lg:no_physical_tracing"
LIMITED = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\nInstanceLimit increment 4;\n"


def test_a_limited_task_in_a_traced_loop_runs_in_linear_time(tmp_path):
    # 1500 steps: ~7 s with physical tracing off on 2 loaded cores; with the trace recorded again each step, more
    # than 60 s (500 steps alone took 9 s, and each step costs more than the one before).
    result = run_benchmark("stencil", LIMITED, min_time_s=0, timeout_s=60, retries=0, out_dir=tmp_path,
                           extra_args=["-tsteps", "1500"])
    assert result.ok, result.reason
    assert FLAG in shlex.split(result.settings["command"])
    assert "R458" not in (tmp_path / result.attempts[-1].stderr).read_text()
    # The run's feedback says what the limit cost: trace replay (no note told the user).
    feedback = json.loads((tmp_path / "feedback.json").read_text())
    assert ("Because of `InstanceLimit increment 4;` (line 4 of the mapper), mapperopt ran the program with Legion's "
            f"{FLAG}: a loop the program traces is mapped again in every iteration") in feedback["explanation"]
    assert feedback["suggestion"].endswith("To see what the limit costs, measure the mapper without `InstanceLimit "
                                           "increment 4;` (line 4 of the mapper).")


def by_hand(dsl: str, folder, *flags: str) -> str:
    """The stderr of the recorded command of a short run, without the flag, as a user would run it by hand."""
    result = run_benchmark("stencil", dsl, min_time_s=0, out_dir=folder, extra_args=["-tsteps", "20"])
    assert result.ok, result.reason
    cmd = [a for a in shlex.split(result.settings["command"]) if a != FLAG] + list(flags)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=toolchain.runtime_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stderr


def test_a_run_with_physical_tracing_is_told_once(tmp_path):
    [note] = [ln for ln in by_hand(LIMITED, tmp_path / "limit").splitlines() if "R458" in ln]
    assert note.startswith("[mapperopt] note R458: task 'increment' has an InstanceLimit and runs in a traced loop")
    assert note.endswith(f"run with {FLAG}")
    unlimited = LIMITED.replace("InstanceLimit increment 4;\n", "")
    assert "R458" not in by_hand(unlimited, tmp_path / "plain")
    assert "InstanceLimit" not in (tmp_path / "plain" / "feedback.json").read_text()  # nor in its feedback
    [note] = [ln for ln in by_hand(unlimited, tmp_path / "profiled", "-mapper-profile").splitlines() if "R458" in ln]
    assert note.startswith("[mapperopt] note R458: the run is profiled and has a task in a traced loop")


def test_a_profiled_run_with_a_limit_names_both_reasons(tmp_path):
    [note] = [ln for ln in by_hand(LIMITED, tmp_path / "both", "-mapper-profile").splitlines() if "R458" in ln]
    assert note.startswith("[mapperopt] note R458: the run is profiled, task 'increment' has an InstanceLimit, and a "
                           "task runs in a traced loop")
    assert note.endswith(f"run with {FLAG}")
