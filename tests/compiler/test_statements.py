"""Every statement kind takes effect in a real Legion run (docs/compiler.md): the test application runs with at least
two processors of the kind concerned; each test asserts on the placement trace, on what the application itself saw
(its -report lines: processor, memory, strides, instance origin) and, where the Python evaluator can know the answer,
that the trace equals the evaluator's decisions."""

from __future__ import annotations

import json
import re
from collections import Counter

from compiler_support import app_description, build_testapp, by_task, expected_records, run, run_policy


def ran_on(result, task):
    """{point (tuple or None): processor index} from the application's own reports."""
    return {tuple(r["point"]) if r["point"] else None: (r["proc"]["kind"], r["proc"]["index"])
            for r in result.reports if r["task"] == task}


def traced_on(result, task):
    return {tuple(r["point"]) if r["point"] else None: (r["proc"]["kind"], r["proc"]["index"])
            for r in result.trace if r["task"] == task}


# ---------------------------------------------------------------------------------------------------- Task


TASK_POLICY = """
Task * IO,CPU;
Task check IO;
"""


def test_task_kind_preference_uses_variants_and_processors(tmp_path):
    legion = ("-ll:cpu", "2", "-ll:io", "2")
    result = run_policy(TASK_POLICY, tmp_path, legion=legion)
    assert result.ok(), result.stderr
    # step and check have IO variants and run on IO processors; tile has only a CPU variant: next kind, CPU.
    assert {k for k, _ in ran_on(result, "step").values()} == {"IO"}
    assert {k for k, _ in ran_on(result, "check").values()} == {"IO"}
    assert {k for k, _ in ran_on(result, "tile").values()} == {"CPU"}
    assert {r["proc"]["kind"] for r in by_task(result.trace, "step")} == {"IO"}
    assert result.trace == expected_records(TASK_POLICY, result, legion)


def test_task_kind_falls_back_when_no_processor_of_the_kind(tmp_path):
    legion = ("-ll:cpu", "2", "-ll:io", "0")
    result = run_policy("Task * IO,CPU;", tmp_path, legion=legion)
    assert result.ok(), result.stderr
    assert {k for k, _ in ran_on(result, "step").values()} == {"CPU"}
    assert result.trace == expected_records("Task * IO,CPU;", result, legion)


def test_no_usable_kind_is_r404(tmp_path):
    result = run_policy("Task step IO;", tmp_path, legion=("-ll:cpu", "2"))
    assert result.aborted(), result.stderr
    [line] = [ln for ln in result.mapper_errors() if "R404" in ln]
    assert line.startswith("[mapperopt] error R404: no usable processor kind for task 'step': tried IO; ")
    assert "variants CPU, IO" in line and "IO 0" in line


# ---------------------------------------------------------------------------------------------------- IndexTaskMap


INDEX_POLICY = """
m = Machine(CPU);
def backwards(Task task) { return m[0, m.size[1] - 1 - task.ipoint[0] % m.size[1]]; }
def tiles(Task task) { return m[0, (task.ipoint[0] + 2 * task.ipoint[1]) % m.size[1]]; }
IndexTaskMap init,step,reduce_sum,left_work backwards;
IndexTaskMap tile tiles;
"""


def test_index_task_map_places_every_point(tmp_path):
    legion = ("-ll:cpu", "3")
    result = run_policy(INDEX_POLICY, tmp_path, legion=legion)
    assert result.ok(), result.stderr
    for task in ("init", "step", "reduce_sum", "left_work", "tile"):
        assert ran_on(result, task) == traced_on(result, task), task
    assert ran_on(result, "step") == {(0,): ("CPU", 2), (1,): ("CPU", 1), (2,): ("CPU", 0), (3,): ("CPU", 2)}
    assert ran_on(result, "tile") == {(0, 0): ("CPU", 0), (1, 0): ("CPU", 1), (0, 1): ("CPU", 2),
                                      (1, 1): ("CPU", 0)}
    assert result.trace == expected_records(INDEX_POLICY, result, legion)


# ---------------------------------------------------------------------------------------------------- SingleTaskMap


SINGLE_POLICY = """
m = Machine(CPU);
def last(Task task) { return m[0, m.size[1] - 1]; }
def second(Task task) { return m[0, 1]; }
def with_parent(Task task) { return m[*task.parent.processor(m)]; }
SingleTaskMap check last;
SingleTaskMap spawn second;
SingleTaskMap child with_parent;
"""


def test_single_task_map_and_parent_processor(tmp_path):
    legion = ("-ll:cpu", "3")
    result = run_policy(SINGLE_POLICY, tmp_path, legion=legion)
    assert result.ok(), result.stderr
    assert ran_on(result, "check") == {None: ("CPU", 2)}
    # spawn (inner, not reported by the application) is on CPU 1; its children follow it.
    assert traced_on(result, "spawn") == {None: ("CPU", 1)}
    assert [(r["proc"]["kind"], r["proc"]["index"]) for r in result.reports if r["task"] == "child"] == [("CPU", 1)] * 2
    assert result.trace == expected_records(SINGLE_POLICY, result, legion)


def test_single_task_map_to_a_processor_set(tmp_path):
    dsl = "m = Machine(CPU);\ndef any_cpu(Task task) { return m[0, *]; }\nSingleTaskMap check any_cpu;\n"
    result = run_policy(dsl, tmp_path, legion=("-ll:cpu", "2"))
    assert result.ok(), result.stderr
    [record] = by_task(result.trace, "check")
    assert record["proc"]["node"] == 0 and record["proc"]["index"] in (0, 1)
    assert ran_on(result, "check")[None][0] == "CPU"


def test_an_index_launch_on_a_processor_set_spreads_its_points(tmp_path):
    # Every point of a launch is placed before any is mapped: the points already given to a member count as its
    # load, so a 4-point launch on a set of 4 CPUs puts one point on each (not all on the first member).
    from mapperopt.cli import main

    dsl = tmp_path / "sets.dsl"
    dsl.write_text("Task * CPU;\nRegion * * CPU SYSMEM;\nmc = Machine(CPU);\n"
                   "def anycpu(Task task) { return mc[0, *]; }\n"
                   "IndexTaskMap stencil,increment,check,init_tile anycpu;\n")
    out = tmp_path / "run"
    assert main(["run", "stencil", "--mapper", str(dsl), "--cpus", "4", "--once", "--trace", "--no-profile",
                 "--out", str(out), "--", "-lg:no_physical_tracing"]) == 0
    records = [json.loads(ln) for ln in (out / "trace.jsonl").read_text().splitlines()]
    launches = {}
    for r in records:
        if r["task"] in ("stencil", "increment", "check", "init_tile"):
            assert r["placed_by"] == "map" and r["domain"] == [4], r
            launches.setdefault(r["task"], []).append(r["proc"]["index"])
    assert set(launches) == {"stencil", "increment", "check", "init_tile"}
    # init_tile, the first launch, finds no load: its 4 points on the 4 CPUs, one each. Later launches find
    # points of earlier ones mapped and not yet finished (which count too), so they spread unevenly, but spread.
    assert sorted(launches["init_tile"]) == [0, 1, 2, 3], launches
    for task in ("stencil", "increment", "check"):
        assert len(set(launches[task])) >= 2, launches


def test_single_launches_on_a_processor_set_spread_before_they_are_mapped(tmp_path):
    # spawn launches its two children back to back: both choose a member before either is mapped; the first
    # choice counts as load of its member, so the second child goes to the other CPU.
    dsl = ("m = Machine(CPU);\ndef any_cpu(Task task) { return m[0, *]; }\n"
           "def first(Task task) { return m[0, 0]; }\nSingleTaskMap child any_cpu;\nSingleTaskMap * first;\n")
    result = run_policy(dsl, tmp_path, legion=("-ll:cpu", "2"))
    assert result.ok(), result.stderr
    children = [(r["proc"]["kind"], r["proc"]["index"]) for r in result.reports if r["task"] == "child"]
    assert sorted(children) == [("CPU", 0), ("CPU", 1)], children
    assert sorted(r["proc"]["index"] for r in by_task(result.trace, "child")) == [0, 1]


# ---------------------------------------------------------------------------------------------------- Region


def memories(result, task, index):
    return {r["regions"][index]["memory"] for r in result.reports if r["task"] == task}


def test_region_memory_list_skips_an_absent_kind(tmp_path):
    dsl = "Region * * CPU RDMEM,SYSMEM;\n"
    result = run_policy(dsl, tmp_path, legion=("-ll:cpu", "2"))
    assert result.ok(), result.stderr
    assert memories(result, "step", 0) == {"SYSMEM"}
    assert {r["regions"][0]["memory"] for r in by_task(result.trace, "step")} == {"SYSMEM"}
    notes = [ln for ln in result.mapper_errors() if "R452" in ln]
    assert notes and all("RDMEM skipped (absent), using SYSMEM" in ln for ln in notes)
    assert result.trace == expected_records(dsl, result, ("-ll:cpu", "2"))


def test_region_memory_list_falls_back_after_a_failed_allocation(tmp_path):
    # 1 MB of registered memory: the small regions (acc, extra) fit; grid (4 fields x 65536 points = 2 MB) does not.
    dsl = "Region * * CPU RDMEM,SYSMEM;\n"
    result = run_policy(dsl, tmp_path, legion=("-ll:cpu", "2", "-ll:rsize", "1"), app_flags=("-report", "-n", "65536"))
    assert result.ok(), result.stderr
    assert memories(result, "step", 0) == {"SYSMEM"}
    assert memories(result, "reduce_sum", 1) == {"RDMEM"}
    assert memories(result, "child", 0) == {"RDMEM"}
    assert {r["regions"][0]["memory"] for r in by_task(result.trace, "child")} == {"RDMEM"}
    notes = [ln for ln in result.mapper_errors() if "R452" in ln and "'step'" in ln]
    assert notes and "RDMEM skipped (allocation of" in notes[0] and "-ll:rsize" in notes[0]


def test_region_nothing_fits_is_r403(tmp_path):
    result = run_policy("Region * * CPU RDMEM;\n", tmp_path, legion=("-ll:cpu", "2", "-ll:rsize", "1"),
                        app_flags=("-n", "65536"))
    assert result.aborted(), result.stderr
    [line] = [ln for ln in result.mapper_errors() if "R403" in ln]
    assert line.startswith("[mapperopt] error R403: no memory of the list RDMEM can hold requirement 0 (")
    assert "RDMEM: allocation of " in line and "capacity 1048576 bytes; -ll:rsize sizes it" in line


SPY_INSTANCE = re.compile(r"\{legion_spy\}: Physical Instance [0-9a-f]+ [0-9a-f]+ [0-9a-f]+ (\d+) ")


def reduction_instances(stderr: str) -> int:
    """Reduction instances Legion created in a run with `-lg:spy 1`: its `Physical Instance` lines (event, instance,
    memory, redop, ...) whose redop is not 0."""
    return sum(m.group(1) != "0" for m in SPY_INSTANCE.finditer(stderr))


def test_reduction_instances_are_found_before_created_as_by_the_default_mapper(tmp_path):
    # reduce_sum's 8 points run on one processor and all reduce into `acc`: Legion's DefaultMapper maps them to one
    # reduction instance (find, then create); a fresh instance per point costs an allocation, an identity fill and a
    # fold copy each (Solomonik's two task_4 steps per product made 4x as many on one GPU).
    legion, flags = ("-ll:cpu", "1", "-lg:spy", "1"), ("-report", "-p", "8")
    default = run(build_testapp(), None, tmp_path, legion=legion, app_flags=flags)
    assert default.ok(), default.stderr[-2000:]
    result = run_policy("Region * * CPU SYSMEM;\n", tmp_path, legion=legion, app_flags=flags)
    assert result.ok(), result.stderr[-2000:]
    assert len([r for r in result.reports if r["task"] == "reduce_sum"]) == 8
    assert reduction_instances(result.stderr) == reduction_instances(default.stderr) == 1


# ---------------------------------------------------------------------------------------------------- Layout


LAYOUT_POLICY = """
Layout * * * SOA F_order;
Layout tile * * C_order;
Layout * left * AOS;
Layout step 1 CPU Exact;
Layout check grid SYSMEM Align==128;
"""


def fields(result, task, index):
    return [f for r in result.reports if r["task"] == task for f in r["regions"][index]["fields"]]


def test_layout_constraints_take_effect(tmp_path):
    legion = ("-ll:cpu", "2")
    app_flags = ("-report", "-n", "4100")
    result = run_policy(LAYOUT_POLICY, tmp_path, legion=legion, app_flags=app_flags)
    assert result.ok(), result.stderr
    assert result.trace == expected_records(LAYOUT_POLICY, result, legion, app_flags[1:])
    # tile: C order on a 2-D region, the last dimension fastest (8-byte doubles).
    assert {tuple(f["strides"]) for f in fields(result, "tile", 0)} == {(8 * 16, 8)}
    # check reads mat with the default F order: the first dimension fastest.
    assert {tuple(f["strides"]) for f in fields(result, "check", 1)} == {(8, 8 * 16)}
    # left_work (name found two levels up the chain): AOS, so the 4 fields of one point are adjacent.
    assert {tuple(f["strides"]) for f in fields(result, "left_work", 0)} == {(32,)}
    assert {tuple(f["strides"]) for f in fields(result, "step", 0)} == {(8,)}
    # Exact: each step point gets its own instance of its block for requirement 1, but shares the root for 0.
    assert len({f["origin"] for f in fields(result, "step", 1)}) == 4
    assert len({f["origin"] for f in fields(result, "step", 0)}) == 1
    # Align==128 on every field of check's grid instance (4100 doubles: unaligned field starts without it).
    assert all(f["address_mod_4096"] % 128 == 0 for f in fields(result, "check", 0))


def test_layout_without_statements_is_soa_f_order(tmp_path):
    result = run_policy("Task * CPU;\n", tmp_path, app_flags=("-report", "-n", "4100"))
    assert result.ok(), result.stderr
    assert any(f["address_mod_4096"] % 128 for f in fields(result, "check", 0))  # the control for Align above
    assert {tuple(f["strides"]) for f in fields(result, "tile", 0)} == {(8, 8 * 16)}
    assert {reg["layout"]["order"] for r in result.trace for reg in r["regions"] if reg["layout"]} == {"SOA"}


def test_alignment_is_of_each_fields_start_and_pads_aos_elements(tmp_path):
    """What the application observes for `Align==64` (the meaning docs/dsl-reference.md §7.3 gives): with SOA each
    field's array starts on a multiple of 64 bytes and the strides stay packed; with AOS every field of every element
    is aligned, so one 8-byte field takes 64 bytes per point and grid's 4 fields 256."""
    (tmp_path / "soa").mkdir()
    (tmp_path / "aos").mkdir()
    soa = run_policy("Layout * * * SOA Align==64;\n", tmp_path / "soa", app_flags=("-report", "-n", "4100"))
    assert soa.ok(), soa.stderr
    assert {tuple(f["strides"]) for f in fields(soa, "check", 1)} == {(8, 8 * 16)}
    assert {tuple(f["strides"]) for f in fields(soa, "check", 0)} == {(8,)}
    assert all(f["address_mod_4096"] % 64 == 0 for f in fields(soa, "check", 0) + fields(soa, "check", 1))
    aos = run_policy("Layout * * * AOS Align==64;\n", tmp_path / "aos", app_flags=("-report", "-n", "4100"))
    assert aos.ok(), aos.stderr
    assert {tuple(f["strides"]) for f in fields(aos, "check", 1)} == {(64, 64 * 16)}
    assert {tuple(f["strides"]) for f in fields(aos, "check", 0)} == {(256,)}


# ---------------------------------------------------------------------------------------------------- InstanceLimit


LIMIT_BASE = """
m = Machine(CPU);
def first(Task task) { return m[0, 0]; }
IndexTaskMap step first;
"""


def max_in_flight(result_stdout: str) -> int:
    """The most `step` points mapped (trace line) but not finished (report line) at once, from the interleaved
    stream of trace and report lines (both written to stdout as they happen)."""
    busy = worst = 0
    for line in result_stdout.splitlines():
        if line.startswith('{"task": "step"'):
            busy += 1
        elif line.startswith('TESTAPP_RUN {"task": "step"'):
            busy -= 1
        worst = max(worst, busy)
    return worst


def run_limit(dsl, tmp_path):
    from compiler_support import run, build_testapp
    from mapperopt.compiler import compile_program

    cm = compile_program(dsl)
    return run(build_testapp(), cm.so_path, tmp_path, legion=("-ll:cpu", "2"), trace=False,
               app_flags=("-report", "-work-ms", "60", "-iters", "1", "-mapper-trace", "/dev/stdout"))


def test_instance_limit_bounds_mapped_but_unfinished_points(tmp_path):
    limited = run_limit(LIMIT_BASE + "InstanceLimit step 1;\n", tmp_path)
    assert limited.ok(), limited.stderr
    assert max_in_flight(limited.stdout) == 1
    unlimited = run_limit(LIMIT_BASE, tmp_path)  # the control: without the limit all 4 points map at once
    assert unlimited.ok(), unlimited.stderr
    assert max_in_flight(unlimited.stdout) >= 3
    traced = [ln for ln in limited.stdout.splitlines() if ln.startswith('{"task":')]
    assert all(('"limited": true' in ln) == ln.startswith('{"task": "step"') for ln in traced)


def test_instance_limit_for_another_kind_does_not_apply(tmp_path):
    result = run_limit(LIMIT_BASE + "InstanceLimit step IO 1;\n", tmp_path)
    assert result.ok(), result.stderr
    assert max_in_flight(result.stdout) >= 3
    assert '"limited": true' not in result.stdout


# ---------------------------------------------------------------------------------------------------- CollectMemory


def test_collect_memory_selects_read_only_requirements(tmp_path):
    dsl = "CollectMemory step *;\nCollectMemory reduce_sum blocks;\nCollectMemory check 3;\n"
    result = run_policy(dsl, tmp_path)
    assert result.ok(), result.stderr
    assert {tuple(r["collect"]) for r in by_task(result.trace, "step")} == {(0,)}
    assert {tuple(r["collect"]) for r in by_task(result.trace, "reduce_sum")} == {(0,)}
    assert {tuple(r["collect"]) for r in by_task(result.trace, "check")} == {(3,)}
    assert {tuple(r["collect"]) for r in by_task(result.trace, "tile")} == {()}
    assert result.trace == expected_records(dsl, result, ("-ll:cpu", "2"))


def test_collect_memory_on_a_written_requirement_warns_once(tmp_path):
    result = run_policy("CollectMemory step 1;\n", tmp_path)
    assert result.ok(), result.stderr
    warnings = [ln for ln in result.mapper_errors() if "R450" in ln]
    assert len(warnings) == 1 and "requirement 1 of task 'step', which is not read-only" in warnings[0]
    assert {tuple(r["collect"]) for r in by_task(result.trace, "step")} == {()}


# ---------------------------------------------------------------------------------------------------- names, replicate


NAMES_POLICY = """
Layout * grid * AOS;
Layout * blocks * SOA C_order;
Layout step 1 * AOS;
Region step blocks CPU SYSMEM;
"""


def test_region_names_and_precedence(tmp_path):
    result = run_policy(NAMES_POLICY, tmp_path)
    assert result.ok(), result.stderr
    step = by_task(result.trace, "step")[0]["regions"]
    assert [(r["name"], r["layout"]["order"], r["layout"]["dims"]) for r in step] == [
        ("blocks", "SOA", "C"), ("blocks", "AOS", "C")]
    [check] = by_task(result.trace, "check")
    assert check["regions"][0]["layout"]["order"] == "AOS"  # grid itself: only the `grid` statement applies
    [left] = by_task(result.trace, "left_work")[:1]
    assert left["regions"][0]["name"] == "left_blocks" and left["regions"][0]["layout"]["order"] == "AOS"
    assert {tuple(f["strides"]) for f in fields(result, "step", 1)} == {(32,)}
    assert result.trace == expected_records(NAMES_POLICY, result, ("-ll:cpu", "2"))


def test_control_replicate_on_one_node_is_a_note(tmp_path):
    result = run_policy("ControlReplicate main;\n", tmp_path)
    assert result.ok(), result.stderr
    assert Counter("R451" in ln for ln in result.mapper_errors())[True] == 1


def test_app_description_matches_the_test_app():
    app = app_description()
    assert [r.names for r in app.task("left_work").regions] == [("left_blocks", "left", "halves", "grid")]
    assert app.task("step").variants == ("CPU", "IO")
