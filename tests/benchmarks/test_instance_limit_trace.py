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


SUMMA_CYCLIC = """Task * CPU;
Region * * CPU SYSMEM;
Layout * * * SOA C_order;
mcpu = Machine(CPU);
def cyc(Task task) {
    lin = task.ipoint[0] * task.ispace[1] + task.ipoint[1];
    return mcpu[0, lin % mcpu.size[1]];
}
IndexTaskMap taco_fill,task_1,task_2,task_3,task_4 cyc;
InstanceLimit task_4 4;
"""


def test_a_slow_loop_under_an_instance_limit_names_the_limit_not_only_the_runtime(tmp_path):
    """SUMMA (which traces no loop) under a mapper with `InstanceLimit task_4 4;` measured 2.6x slower than without
    the limit, with most of each iteration outside its tasks; AutoGuide blamed the runtime's overhead and suggested a
    larger --size. The limit holds every further task_4 back until one finishes, so Legion cannot map ahead of the
    tasks: the feedback names the statement and says to measure without it. Its edits and category stay as they were
    (texts only)."""
    import dataclasses

    from mapperopt.autoguide import explain
    from mapperopt.autoguide.explain import task_profile

    result = run_benchmark("summa", SUMMA_CYCLIC, profile=True, min_time_s=0, out_dir=tmp_path)
    assert result.ok, result.reason
    assert FLAG in shlex.split(result.settings["command"])
    # The loop's tasks fill a quarter of each iteration (the user's run: 28 %), whatever this machine's load.
    p = result.profile
    busy = sum(r["total_s"] for r in task_profile(result) if r["timed"]) / (p["warmup"] + p["timed"] + p["after"])
    dominated = dataclasses.replace(result, time_s=4 * busy * result.attempts[-1].result["iterations"])
    fb = explain(dominated)
    assert "the runtime's own work" in fb.explanation, fb.explanation
    statement = "`InstanceLimit task_4 4;` (line 10 of the mapper)"
    assert (f"The mapper's {statement} lets at most that many of the limited task's points be mapped and unfinished "
            "per processor: each further one waits until one of them finishes, so Legion cannot map them ahead") \
        in fb.explanation, fb.explanation
    assert "traces" not in fb.explanation  # SUMMA traces no loop: no word of trace replay
    assert f"measure the mapper without {statement}" in fb.suggestion, fb.suggestion
    assert fb.category == "performance" and fb.edits == ()
    # Without the limit the same profile gets no word of it.
    plain = dataclasses.replace(dominated, dsl=SUMMA_CYCLIC.replace("InstanceLimit task_4 4;\n", ""))
    fb = explain(plain)
    assert "InstanceLimit" not in fb.explanation + fb.suggestion, fb
