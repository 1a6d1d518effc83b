"""Advice that fits the machine the run had, and wrong results that are the application's, not the mapper's."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from mapperopt.autoguide import explain, feedback_text
from mapperopt.autoguide.explain import machine_of, task_profile
from mapperopt.benchmarks import run_benchmark
from mapperopt.records import RunResult

CAPTURED = Path(__file__).parent / "captured"


def _profiled(cpus: int, gpus: int, memory: str) -> RunResult:
    """The real profiled run of circuit's expert mapper (one CPU), as if the run had had these processors and
    memories (`memory`: the command line's memory flags)."""
    result = RunResult.from_json(json.loads((CAPTURED / "circuit-expert_profiled.json").read_text())["result"])
    command = f"circuit -ll:cpu {cpus} -ll:gpu {gpus} {memory} -logfile stderr"
    return dataclasses.replace(result, settings={**result.settings, "cpus": cpus, "gpus": gpus, "command": command})


def test_one_cpu_and_system_memory_only_gets_no_placement_or_memory_advice():
    fb = explain(_profiled(1, 0, "-ll:csize 300"))
    assert "IndexTaskMap" not in fb.suggestion and "ZCMEM" not in fb.suggestion and "FBMEM" not in fb.suggestion
    assert "has one CPU processor, and its instances are in SYSMEM (300 MiB), every memory it can use" in fb.suggestion
    assert "`Layout calculate_new_currents * * Align==64;`" in fb.suggestion


def _task_bound(result: RunResult) -> RunResult:
    """`result` with a measured time that its timed loop's tasks fill (the profile's task time per iteration): at
    size ci the runtime's own work takes most of the loop, which gets advice against it instead."""
    p = result.profile
    per_iteration = sum(r["total_s"] for r in task_profile(result) if r["timed"]) / (
        p["warmup"] + p["timed"] + p["after"])
    return dataclasses.replace(result, time_s=per_iteration * result.attempts[-1].result["iterations"])


def test_advice_leaves_out_statements_the_mapper_already_has(tmp_path):
    """On one CPU with one memory only the layout and collection of the heavy task are left to advise: a statement
    that gives what the mapper already gives changes nothing, and with nothing left the advice says so. The mapper's
    own departure from Legion's default layout comes first: the statement to measure in its place."""
    mapper = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * AOS Align==64;\n"
    result = _task_bound(run_benchmark("circuit", mapper, min_time_s=0, profile=True, out_dir=tmp_path / "a"))
    task = task_profile(result)[0]["task"]
    fb = explain(result)
    back = (f"Under the mapper's `Layout * * * AOS Align==64;` (line 3 of the mapper), '{task}' has instances in "
            "another layout than Legion's default mapper gives")
    assert back in fb.suggestion, fb.suggestion
    assert "measure the mapper with `Layout * * * SOA;` in place of `Layout * * * AOS Align==64;` first." \
        in fb.suggestion, fb.suggestion
    generic = fb.suggestion[fb.suggestion.index(" first. ") + len(" first. "):]  # AutoGuide's own options
    assert f"'{task}' has one CPU processor" in generic
    assert "Align==64;`" not in generic and "AOS;`" not in generic
    assert f"`CollectMemory {task} *;`" in generic  # each of circuit's timed tasks reads a region only
    result = _task_bound(run_benchmark("circuit", mapper + "CollectMemory * *;\n", min_time_s=0, profile=True,
                                       out_dir=tmp_path / "b"))
    fb = explain(result)
    generic = fb.suggestion[fb.suggestion.index(" first. ") + len(" first. "):]
    assert "`" not in generic and "AutoGuide has no change left to suggest for it" in generic, fb.suggestion


def test_legion_default_mapper_gets_the_command_that_profiles_a_dsl_mapper(tmp_path):
    fb = explain(run_benchmark("circuit", "default", min_time_s=0, out_dir=tmp_path))
    assert fb.suggestion.endswith("profiled: `mapperopt run circuit --mapper expert`."), fb.suggestion


def test_advice_names_the_processors_and_memories_that_exist_with_their_sizes():
    fb = explain(_profiled(4, 0, "-ll:csize 300"))  # the expert mapper places the task over them already
    assert ("has 4 CPU processors, over which the mapper's IndexTaskMap statement at line" in fb.suggestion
            and "its instances are in SYSMEM (300 MiB), every memory it can use" in fb.suggestion)
    gpu_run = _profiled(2, 1, "-ll:csize 300 -ll:fsize 512 -ll:zsize 64")
    assert machine_of(gpu_run) == {"CPU": {"procs": 2, "memories": {"SYSMEM": 300, "ZCMEM": 64}},
                                   "GPU": {"procs": 1, "memories": {"FBMEM": 512, "ZCMEM": 64}}}
    fb = explain(dataclasses.replace(gpu_run, profile=None, attempts=()))  # no profile: the machine's summary
    assert fb.suggestion.endswith("2 CPU processors with SYSMEM (300 MiB), ZCMEM (64 MiB); 1 GPU processor with "
                                  "FBMEM (512 MiB), ZCMEM (64 MiB).")


def test_a_wrong_result_the_default_mapper_also_gives_is_the_applications(tmp_path):
    # Pennant with a bug of its own (every zone starts with too much energy): no mapper can make it pass its check.
    args = ["-test-corrupt"]
    result = run_benchmark("pennant", "Task * CPU;\n", min_time_s=0, out_dir=tmp_path, extra_args=args)
    assert result.stage == "verify", result.reason
    verdict = result.settings["default_mapper"]
    assert verdict["stage"] == "verify" and "-mapper" not in verdict["command"]
    fb = explain(result)
    assert fb.category == "verification.application" and fb.edits == ()
    assert "default mapper gives a wrong result too" in fb.explanation and "not this mapper" in fb.explanation
    assert "Suggest: Keep the mapper" in feedback_text(fb, result)
    assert json.loads((tmp_path / "feedback.json").read_text())["category"] == "verification.application"
    # The same failure when the default mapper verifies: the mapper's.
    alone = dataclasses.replace(result, settings={**result.settings, "default_mapper": {"stage": None}})
    assert explain(alone).category == "verification"
    # The verdict is kept: a second failing mapper does not run the default mapper again.
    again = run_benchmark("pennant", "Task * CPU;\nLayout * * * SOA F_order;\n", min_time_s=0, out_dir=tmp_path / "b",
                          extra_args=args)
    assert again.settings["default_mapper"] == verdict and not (tmp_path / "b" / "stdout-default.txt").exists()


def test_a_map_statement_with_a_kind_selector_is_found_for_the_heaviest_task():
    """`IndexTaskMap CPU f;` selects the tasks run on CPUs: the advice reads that kind from the profile (the
    evaluator it uses has no machine) and names the statement instead of failing."""
    mapper = ("Task * CPU;\nmcpu = Machine(CPU);\n"
              "def rr(Task task) { return mcpu.merge(0, 1)[task.ipoint[0] % mcpu.volume]; }\nIndexTaskMap CPU rr;\n")
    fb = explain(dataclasses.replace(_profiled(4, 0, "-ll:csize 300"), dsl=mapper))
    assert "has 4 CPU processors, over which the mapper's IndexTaskMap statement at line 4 already places it" \
        in fb.suggestion, fb.suggestion


# Iteration 2 of a real `mapperopt tune --app app.yaml` (a tutorial-style daxpy, 4 pieces, 20 iterations, 2 CPUs):
# init_field writes X, then Y (twice per point), daxpy reads X, Y (read-only) and writes Z 20 times per point.
DAXPY_DSL = """Task * CPU;
Region * * CPU SYSMEM;
Layout * * * SOA F_order;
mcpu = Machine(CPU);
def block_cpu1d(Task task) {  # block over all processors, nodes first
    lin = task.ipoint[0];
    n = task.ispace[0];
    q = lin * mcpu.volume / n;
    return mcpu[q / mcpu.size[1], q % mcpu.size[1]];
}
IndexTaskMap init_field,daxpy block_cpu1d;
"""
DAXPY_PROFILE = {"schema": "mapperopt.profile/1", "tasks": [
    {"task": "check", "kind": "CPU", "count": 1, "points": 1, "total_s": 0.029956579, "max_s": 0.029956579},
    {"task": "daxpy", "kind": "CPU", "count": 80, "points": 4, "total_s": 1.59480361, "max_s": 0.135226763},
    {"task": "init_field", "kind": "CPU", "count": 8, "points": 4, "total_s": 0.030354466, "max_s": 0.006821285},
    {"task": "top_level", "kind": "CPU", "count": 1, "points": 1, "total_s": 1.03982072, "max_s": 1.03982072}]}
_IN = ["input_lp", "ip", "input_lr", "is", "input_fs"]
DAXPY_TASKS = [
    {"name": "top_level", "variants": ["CPU"], "launch": "single", "leaf": False, "regions": []},
    {"name": "init_field", "variants": ["CPU"], "launch": "index", "domain": [4], "regions": [
        {"index": 0, "names": _IN, "privilege": "write_discard", "fields": ["X"], "field_sizes": [8]}]},
    {"name": "daxpy", "variants": ["CPU"], "launch": "index", "domain": [4], "regions": [
        {"index": 0, "names": _IN, "privilege": "read_only", "fields": ["X", "Y"], "field_sizes": [8, 8]},
        {"index": 1, "names": ["output_lp", "ip", "output_lr", "is", "output_fs"], "privilege": "write_discard",
         "fields": ["Z"], "field_sizes": [8]}]},
    {"name": "check", "variants": ["CPU"], "launch": "single", "regions": [
        {"index": 0, "names": ["input_lr", "is", "input_fs"], "privilege": "read_only", "fields": ["X", "Y"]},
        {"index": 1, "names": ["output_lr", "is", "output_fs"], "privilege": "read_only", "fields": ["Z"]}]}]


def daxpy_result(folder):
    """The captured daxpy run (DAXPY_DSL, DAXPY_PROFILE) on 2 CPUs, its description written in `folder`."""
    described = folder / "daxpy.json"
    described.write_text(json.dumps({"schema": "mapperopt.app/1", "app": "daxpy", "discovered": True,
                                     "region_tree": [], "tasks": DAXPY_TASKS}))
    return RunResult("daxpy", "mapper.dsl", "ok", throughput=0.00103, unit="1/ms", time_s=1.494, dsl=DAXPY_DSL,
                     profile=DAXPY_PROFILE, settings={"cpus": 2, "gpus": 0, "app_file": "app.yaml",
                                                      "description": str(described), "command": "daxpy -ll:cpu 2"})


def test_collecting_a_read_only_input_that_every_iteration_reads_again_is_not_suggested(tmp_path):
    """daxpy reads X, Y 20 times per point and nothing writes them as often: collecting them after each task only
    makes them be made again, so CollectMemory is not among the options; where a task as frequent writes them
    (init_field in every iteration), it is."""
    result = daxpy_result(tmp_path)
    fb = explain(result)
    assert "`Layout daxpy * * Align==64;`" in fb.suggestion and "CollectMemory" not in fb.suggestion, fb.suggestion
    every = [dict(e, count=80) if e["task"] == "init_field" else e for e in DAXPY_PROFILE["tasks"]]
    fb = explain(dataclasses.replace(result, profile={**DAXPY_PROFILE, "tasks": every}))
    assert "`CollectMemory daxpy *;`" in fb.suggestion, fb.suggestion


def test_aos_is_not_suggested_where_every_instance_of_several_fields_is_aos_already(tmp_path):
    """The mapper gives daxpy's argument 0 (X, Y) `AOS C_order`; its argument 1 holds Z alone, whose AOS is its SOA:
    `Layout daxpy * * AOS;` changes nothing, yet it was suggested beside Align==64. Under SOA for every argument it
    is suggested (argument 0 holds two fields)."""
    result = daxpy_result(tmp_path)
    assert "`Layout daxpy * * AOS;`" in explain(result).suggestion, explain(result).suggestion
    fb = explain(dataclasses.replace(result, dsl=DAXPY_DSL + "Layout daxpy 0 * AOS C_order;\n"))
    assert "`Layout daxpy * * Align==64;`" in fb.suggestion and "AOS;`" not in fb.suggestion, fb.suggestion


_RAW_POINTERS = ("AOS suits only kernels that reach the fields through accessors: one that takes a raw pointer into a "
                 "field and steps through it as SOA lays it out reads other fields under AOS")


def _own_time(task: str) -> str:
    return (f"The profile's seconds for '{task}' are its own code running on its processor (copies and waiting are "
            "not in them): a mapping can move the task (to another processor kind, for which it needs a variant) or "
            "change its instances' memory and layout, not the work its code does")


def test_aos_advice_says_it_needs_accessors_and_the_heaviest_task_is_said_to_be_its_own_code(tmp_path):
    """A user's program whose kernel takes a raw pointer into one field, as SOA lays it out, computed wrong numbers
    under the suggested `Layout * * * AOS;`, and its heaviest task was slow in its own loop, which no mapping
    shortens: the advice offering AOS says which kernels it suits, and the heaviest task's advice says that a mapping
    moves its code, not speeds it. Neither where AOS is not offered or the counted tasks fill little of the run."""
    result = daxpy_result(tmp_path)
    fb = explain(result)
    assert "`Layout daxpy * * AOS;`" in fb.suggestion and _RAW_POINTERS in fb.suggestion, fb.suggestion
    assert fb.suggestion.index("`Layout * * * AOS;`") < fb.suggestion.index(_RAW_POINTERS), fb.suggestion
    assert _own_time("daxpy") in fb.suggestion, fb.suggestion
    fb = explain(dataclasses.replace(result, dsl=DAXPY_DSL + "Layout daxpy 0 * AOS C_order;\n"))
    assert "AOS;`" not in fb.suggestion and "raw pointer" not in fb.suggestion, fb.suggestion
    assert _own_time("daxpy") in fb.suggestion, fb.suggestion
    # the counted tasks a sliver of the process's wall time: the time is elsewhere, and the advice says that instead
    fb = explain(dataclasses.replace(result, time_s=1000 * result.time_s))
    assert "can win back little" in fb.suggestion and "own code running" not in fb.suggestion, fb.suggestion
    # a benchmark's heaviest task likewise (circuit's real profile, one CPU)
    fb = explain(_profiled(1, 0, "-ll:csize 300"))
    assert _own_time("calculate_new_currents") in fb.suggestion, fb.suggestion
