"""A mapper that checks compiles and runs exactly as written: no user text can change the generated C++, names of
generated functions never clash, the kind selector places what the evaluator places, run-time messages cite the
user's file and line, and the placement trace names the processor each point really ran on."""

from __future__ import annotations

import subprocess

import pytest

from compiler_support import build_testapp, by_task, expected_records, run, run_policy
from mapperopt import toolchain
from mapperopt.compiler import compile_program, generate
from mapperopt.dsl import check, parse

LEGION_IO = ("-ll:cpu", "2", "-ll:io", "1")


def preprocessed(cpp: str) -> str:
    """`cpp` after the compiler's own line splicing and comment removal (what the C++ compiler really reads)."""
    out = subprocess.run([toolchain.cxx(), "-fpreprocessed", "-dD", "-E", "-x", "c++", "-"], input=cpp,
                         capture_output=True, text=True, check=True)
    return out.stdout


@pytest.mark.parametrize("comment", ["# dirs C:\\ \\", "# " + "x" * 96 + "\\" + "y" * 20, "// ??/", "# tab\tand é \\"])
def test_no_user_text_reaches_the_cpp_as_code(comment):
    dsl = (f"m = Machine(CPU);  {comment}\n"
           f"def f(Task task) {{  {comment}\n    x = 1;  {comment}\n    return m[0, x];  {comment}\n}}\n"
           f"Region * * CPU SYSMEM;  {comment}\nIndexTaskMap step f;  {comment}\nTask * CPU;  {comment}\n")
    code = preprocessed(generate(parse(dsl, "p.dsl")))
    for needle in ("RegionRule{", "MapRule{", "TaskRule{", "Value v_x =", "return index(",
                   "cx.globals[G_m] = machine("):
        assert needle in code, needle


def test_a_trailing_backslash_does_not_drop_a_statement(tmp_path):
    dsl = ("m = Machine(CPU);\n"
           "def f(Task task) {  # C:\\ \\\n    return m[0, 1];  # C:\\ \\\n}\n"
           "IndexTaskMap step f;  # dirs C:\\ \\\n"
           "Task * CPU;\n")
    result = run_policy(dsl, tmp_path)
    assert result.ok(), result.stderr[-2000:]
    steps = by_task(result.trace, "step")
    assert steps and all(r["proc"]["index"] == 1 for r in steps)
    assert all(r["proc"]["index"] == 1 for r in result.reports if r["task"] == "step")
    assert result.trace == expected_records(dsl, result, ("-ll:cpu", "2"))


def test_generated_names_never_clash(tmp_path):
    # The same (function, machine) twice, and two pairs whose joined names coincide (a_b + c, a + b_c).
    dsl = ("m = Machine(CPU);\nb_c = m;\nc = m;\n"
           "def f(IPoint p, ISpace s, MSpace m) { return (0, p[0] % m.size[1]); }\n"
           "def a_b(IPoint p, ISpace s, MSpace m) { return (0, 1); }\n"
           "def a(IPoint p, ISpace s, MSpace m) { return (0, 0); }\n"
           "IndexTaskMap step m f;\nIndexTaskMap init m f;\nIndexTaskMap tile c a_b;\nIndexTaskMap left_work b_c a;\n"
           "Region * 2147483648 * SYSMEM;\nRegion * 9223372036854775807 * SYSMEM;\n")
    assert not [d for d in check(parse(dsl)) if d.is_error]
    result = run_policy(dsl, tmp_path)
    assert result.ok(), result.stderr[-2000:]
    assert result.trace == expected_records(dsl, result, ("-ll:cpu", "2"))
    assert {r["proc"]["index"] for r in by_task(result.trace, "tile")} == {1}


def test_kind_selector_precedence_matches_the_evaluator(tmp_path):
    dsl = ("mc = Machine(CPU);\nmi = Machine(IO);\n"
           "def on_io(Task task) { return mi[0, 0]; }\n"
           "def cpu1(Task task) { return mc[0, 1]; }\n"
           "def cpu0(Task task) { return mc[0, 0]; }\n"
           "Task step,check IO,CPU;\nTask * CPU;\n"
           "IndexTaskMap * cpu0;\nIndexTaskMap CPU cpu1;\nIndexTaskMap IO on_io;\nIndexTaskMap init cpu0;\n"
           "SingleTaskMap IO on_io;\n")
    assert not [d for d in check(parse(dsl)) if d.is_error]
    result = run_policy(dsl, tmp_path, legion=LEGION_IO)
    assert result.ok(), result.stderr[-2000:]
    assert result.trace == expected_records(dsl, result, LEGION_IO)
    procs = lambda task: {(r["proc"]["kind"], r["proc"]["index"]) for r in by_task(result.trace, task)}  # noqa: E731
    assert procs("step") == {("IO", 0)}  # the kind selector of the kind it runs on
    assert procs("tile") == {("CPU", 1)}  # CPU beats *
    assert procs("init") == {("CPU", 0)}  # a name beats a kind
    assert procs("check") == {("IO", 0)}  # SingleTaskMap IO


def test_run_time_errors_cite_the_users_file_and_line(tmp_path):
    dsl = ("# a mapper with comments and blank lines, so that the formatted text has other line numbers\n\n\n"
           "m = Machine(CPU);   # every CPU\n\n\n"
           "def f(Task task)\n{\n\n    return m[0,\n             task.ipoint[0]];\n}\n\n"
           "IndexTaskMap step f;\n")
    cm = compile_program(dsl, "my/user.dsl")
    result = run(build_testapp(), cm.so_path, tmp_path, legion=("-ll:cpu", "2"))
    assert result.aborted()
    [line] = result.mapper_errors()
    assert "R400" in line and "in function 'f' at my/user.dsl:10:12," in line, line


def test_a_processor_set_point_runs_where_the_trace_says(tmp_path):
    dsl = "m = Machine(CPU);\ndef any_cpu(Task task) { return m[0, *]; }\nIndexTaskMap step,init,tile any_cpu;\n"
    result = run_policy(dsl, tmp_path, app_flags=("-report", "-iters", "4"))
    assert result.ok(), result.stderr[-2000:]
    ran = {(r["task"], tuple(r["point"])): [] for r in result.reports if r["point"] is not None}
    for r in result.reports:
        if r["point"] is not None:
            ran[(r["task"], tuple(r["point"]))].append(r["proc"])
    traced = {}
    for r in result.trace:
        if r["point"] is not None and r["task"] in ("step", "init", "tile"):
            traced.setdefault((r["task"], tuple(r["point"])), []).append(r["proc"])
    assert traced
    for key, procs in traced.items():
        assert sorted(map(str, procs)) == sorted(map(str, ran[key])), key


def test_a_default_placed_task_is_traced_with_the_processors_legion_chose_among(tmp_path):
    # No map statement: Legion's default mapping offers every CPU and the task runs on the first one free, after
    # map_task: the trace says so (`placed_by`, `candidates`), with no index, and the task ran on a candidate.
    result = run_policy("Task * CPU;\n", tmp_path, app_flags=("-report", "-iters", "4"))
    assert result.ok(), result.stderr[-2000:]
    ran = {(r["task"], tuple(r["point"] or ())): r["proc"]["index"] for r in result.reports}
    traced = [r for r in result.trace if (r["task"], tuple(r["point"] or ())) in ran]
    assert traced
    for r in traced:
        assert r["placed_by"] == "default" and r["candidates"] == [0, 1], r
        assert r["proc"] == {"kind": "CPU", "node": 0, "index": None}, r
        assert ran[(r["task"], tuple(r["point"] or ()))] in r["candidates"], r


@pytest.mark.parametrize("order,dims", [("SOA", "F_order"), ("SOA", "C_order"), ("AOS", "F_order"),
                                        ("AOS", "C_order")])
def test_layouts_are_what_the_application_observes(order, dims, tmp_path):
    # What the tasks' accessors see, not what the mapper reports: strides of tile's 16 x 16 region give the
    # dimension order, those of left_work's 1-D region (an instance of four fields) the interleaving.
    dsl = f"Task * CPU;\nLayout * * * {order} {dims};\n"
    result = run_policy(dsl, tmp_path)
    assert result.ok(), result.stderr[-2000:]
    tiles = [f for r in result.reports if r["task"] == "tile" for f in r["regions"][0]["fields"]]
    assert tiles and {tuple(f["strides"]) for f in tiles} == {(8, 8 * 16) if dims == "F_order" else (8 * 16, 8)}
    # left_work's instance holds the region's four fields: AOS puts them next to each other (stride 4 x 8 bytes).
    lefts = [f for r in result.reports if r["task"] == "left_work" for f in r["regions"][0]["fields"]]
    assert lefts and {tuple(f["strides"]) for f in lefts} == {(32,) if order == "AOS" else (8,)}
    assert result.trace == expected_records(dsl, result, ("-ll:cpu", "2"))
