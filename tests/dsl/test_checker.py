"""Checker: the examples are clean, and every error and warning class is reported with its message and location."""

import re
from dataclasses import replace
from pathlib import Path

import pytest

from mapperopt.descriptions import AppDescription, parse_machine_spec
from mapperopt.dsl import Diagnostic, DslSyntaxError, check, parse
from mapperopt.dsl import ast as A
from mapperopt.dsl.ast import Loc
from mapperopt.dsl.commands import load_app
from mapperopt.dsl.errors import SOURCE_WIDTH, render_all

EXAMPLES = Path(__file__).parent / "examples"
STRATEGIES = sorted(EXAMPLES.glob("s*.dsl"))
EXPERTS = sorted(EXAMPLES.glob("e*.dsl"))
# The experts written for programs whose task names mapperopt's benchmarks share; the others name tasks of the
# original programs (docs/dsl-reference.md §14), so they are checked without an application.
EXPERT_APP = {"e1_circuit.dsl": "circuit", "e2_stencil.dsl": "stencil"}

CONFIGS = EXAMPLES.parent.parent.parent / "configs"


def diags(src, app=None, machine=None):
    return check(parse(src, "p.dsl"), app, machine)


def only(src, code, app=None, machine=None):
    """The single diagnostic of `src` with `code` (other codes may be present)."""
    found = [d for d in diags(src, app, machine) if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in diags(src, app, machine)]
    return found[0]


def at(d: Diagnostic):
    return d.loc.line, d.loc.col


@pytest.mark.parametrize("path", STRATEGIES, ids=lambda p: p.name)
def test_strategies_are_clean_on_m14(path, circuit, m14):
    """Clean but for W304 on the fixed prelude's models (`mcpu`, `mgpu`) that a strategy does not read."""
    program = parse(path.read_text(), path.name)
    prelude = {s.name for s in program.statements if isinstance(s, A.Assign) and isinstance(s.value, A.MachineLit)}
    for found in (check(program, circuit, m14), check(program)):
        assert all(d.code == "W304" and d.message.startswith("machine model '") and d.message.split("'")[1] in prelude
                   for d in found), found


@pytest.mark.parametrize("path", EXPERTS, ids=lambda p: p.name)
def test_experts_have_no_errors(path, m14, m24):
    program = parse(path.read_text(), path.name)
    app = load_app(EXPERT_APP[path.name]) if path.name in EXPERT_APP else None
    for machine in (None, m14, m24):
        found = check(program, app, machine)
        assert not [d for d in found if d.is_error], found
        if app is not None and machine in (m14, m24):
            assert found == []


@pytest.mark.parametrize("name, bench", [("circuit", "circuit"), ("circuit-zerocopy", "circuit"), ("cosma", "cosma"),
                                         ("gemm2d", "cannon"), ("gemm2d", "summa"), ("johnson", "johnson"),
                                         ("pennant", "pennant"), ("solomonik", "solomonik"), ("stencil", "stencil"),
                                         ("stencil-zerocopy", "stencil")])
def test_config_mappers_are_clean(name, bench, m14):
    """The shipped mappers are portable (`Task * GPU,CPU;`, GPU-only statements): no finding on a machine with GPUs
    nor on one without, where their GPU statements are the guarded fallback, not a mistake (no W302/W303)."""
    program = parse((CONFIGS / f"{name}.dsl").read_text())
    app = load_app(bench)
    assert check(program, app, m14) == []
    assert check(program, app, parse_machine_spec("1x0x2")) == []


def test_fig_a5(circuit, m14):
    found = check(parse((EXAMPLES / "fig_a5.dsl").read_text()), circuit, m14)
    # W330: AOS Align==128 on distribute_charge's reductions, whose instances' fill crashes in the installed Realm
    assert [(d.code, d.severity) for d in found] == [("W303", "warning"), ("W330", "warning")] + [("W304", "note")] * 3
    assert "'OMP'" in found[0].message
    assert "argument 1 (rp_shared) of distribute_charge" in found[1].message and "fills" in found[1].message
    assert [d.message.split("'")[1] for d in found[2:]] == ["mgpu", "m_2d", "same_point"]


# ------------------------------------------------------------------------------------------ checker cases


def test_e200_function_defined_later():
    d = only("IndexTaskMap t1 f;\ndef f(Task task) { return m[0]; }\nm = Machine(GPU);", "E200")
    assert at(d) == (1, 17)
    assert d.hints == ("define it before this statement: def f(Task task) { ... }",)
    assert d.notes == ("'f' is defined at p.dsl:2:1",)
    d = only("IndexTaskMap t1 lineblock;\ndef linearblock(Task task) { return 1; }", "E200")
    assert d.hints == ("did you mean 'linearblock'?",)  # a close name alone: defining `lineblock` is not the fix


def test_e200_close_names_ignore_case():
    """`machine(GPU)` means the built-in `Machine`; `B` means `def b`. The hint names it, and only it."""
    d = only("mgpu = machine(GPU);", "E200")
    assert d.message == "undefined function 'machine'" and d.hints == ("did you mean 'Machine'?",)
    d = only("def b(Task task) { return Machine(CPU)[0, 0]; }\nIndexTaskMap t B;", "E200")
    assert d.hints == ("did you mean 'b'?",)
    # A mapping statement names a function, never the built-in.
    assert only("IndexTaskMap t machine;", "E200").hints == (
        "define it before this statement: def machine(Task task) { ... }",)


def test_e200_hint_follows_the_call_and_the_python_built_ins():
    """A call's hint has as many parameters as the call has arguments; Python's len, min, max and abs get the DSL's
    spelling (`t.len`, the conditional expression), never a one-Task definition or the built-in Machine."""
    d = only("x = foo(3, 4);", "E200")
    assert d.hints == ("define it before this statement, with 2 parameters as called here: def foo(TYPE a, TYPE b) "
                       "{ ... } (types: Task, int, bool, IPoint, ISpace, MSpace)",), d.hints
    assert only("t = (1, 2);\nx = len(t);", "E200").hints == ("the DSL has no len(): a tuple's length is t.len",)
    d = only("def f(Task task) { return min(task.ipoint[0], 0); }", "E200")
    assert d.hints == ("the DSL has no min(): write it with the conditional expression, e.g. a < b ? a : b",)
    assert "x < 0 ? -x : x" in only("x = abs(-3);", "E200").hints[0]
    assert "a > b ? a : b" in only("x = max(1, 2);", "E200").hints[0]


def test_e200_e201_hints_for_the_three_operand_index_task_map_follow_its_form(circuit):
    """The older `IndexTaskMap t m f;` maps a function of (IPoint, ISpace, MSpace): an undefined `f` (even `len`)
    is hinted with that signature (a one-Task definition gives E208), and an undefined model with the processor
    kind the program's tasks run on (Machine(GPU) in a CPU-only program gives E205 or E209). Each hint, followed,
    checks clean."""
    head = "Task * CPU;\nm = Machine(CPU);\n"
    for name in ("foo", "len"):
        d = only(f"{head}IndexTaskMap calculate_new_currents m {name};", "E200", circuit)
        assert d.hints == (f"define it before this statement: def {name}(IPoint p, ISpace s, MSpace m) {{ ... }}",)
    d = only(f"{head}IndexTaskMap calculate_new_currents m foo;\n"
             "def foo(IPoint p, ISpace s, MSpace m) { return (0, 0); }", "E200", circuit)
    assert d.hints == ("define it before this statement: def foo(IPoint p, ISpace s, MSpace m) { ... }",)
    fixed = f"{head}def foo(IPoint p, ISpace s, MSpace m) {{ return (0, p[0] % m.size[1]); }}\n" \
            "IndexTaskMap calculate_new_currents m foo;"
    assert [x.code for x in diags(fixed, circuit, parse_machine_spec("1x4"))] == ["W309"]
    src = ("Task * CPU;\ndef f(IPoint p, ISpace s, MSpace m) { return (0, p[0] % m.size[1]); }\n"
           "IndexTaskMap calculate_new_currents mc f;")
    assert only(src, "E201", circuit).hints == ("add 'mc = Machine(CPU);' at top level",)
    fixed = src.replace("IndexTaskMap", "mc = Machine(CPU);\nIndexTaskMap")
    assert [x.code for x in diags(fixed, circuit, parse_machine_spec("1x4"))] == ["W309"]
    # no Task statement: the machine's kind (GPU where it has GPUs)
    src = "def f(Task task) { return mx[0, 0]; }"
    assert only(src, "E201", circuit, parse_machine_spec("1x0x2")).hints == ("add 'mx = Machine(CPU);' at top level",)
    assert only(src, "E201", circuit, parse_machine_spec("1x4")).hints == ("add 'mx = Machine(GPU);' at top level",)


def test_e200_not_called_is_the_logical_not():
    """`not (y)` parses as a call of a function `not`: the hint is the DSL's '!', never a definition of `not`, and
    written so it checks."""
    for arg, fixed in (("(y)", "!(y)"), ("(x > 2)", "!(x > 2)")):
        d = only(f"x = 1;\ny = True;\nz = not {arg};", "E200")
        assert d.hints == (f"logical not is '!': write {fixed}",), d.hints
        assert diags(f"x = 1;\ny = True;\nz = {fixed};") == []


def test_e201_lower_case_true_and_false_are_the_bool_literals():
    assert only("x = true;", "E201").hints == ("did you mean 'True'?",)
    assert "no None" in only("x = None;", "E201").hints[0]
    assert only("def f(Task task) { return false; }", "E201").hints == ("did you mean 'False'?",)


def test_a_variable_used_as_a_function_is_said_to_be_one(stencil):
    """`IndexTaskMap ... mcpu;` with `mcpu = Machine(CPU);` is not an undefined function whose fix is `def mcpu`
    (that gives E211): it says what mcpu is and what a mapping function looks like."""
    d = only("mcpu = Machine(CPU);\nIndexTaskMap init_tile,stencil,increment,check mcpu;", "E206", stencil)
    assert at(d) == (2, 48) and d.message == "'mcpu' is a machine model (a variable), not a function"
    example = "def f(Task task) { return mcpu[task.ipoint[0] % mcpu.size[0], 0]; }"
    assert d.hints == (f"IndexTaskMap needs a function taking a Task, e.g. {example}",)
    # The example is valid as written: pasted in, with the statement naming it, the program checks clean.
    fixed = f"Task * CPU;\nmcpu = Machine(CPU);\n{example}\nIndexTaskMap init_tile,stencil,increment,check f;"
    assert diags(fixed, stencil, parse_machine_spec("2x4")) == []
    d = only("def f(Task t) { return t; }\nm = Machine(GPU).merge(0, 1);\nIndexTaskMap init_tile m;", "E206", stencil)
    example = "def f1(Task task) { return m[task.ipoint[0] % m.size[0]]; }"  # `f` is taken
    assert d.hints == (f"IndexTaskMap needs a function taking a Task, e.g. {example}",)
    assert not [x for x in diags("mcpu = Machine(CPU);\nIndexTaskMap t mcpu;") if x.code in ("E200", "W304")]
    d = only("n = 2;\nSingleTaskMap t n;", "E206")
    assert d.message == "'n' is an int (a variable), not a function" and d.hints[0].startswith("SingleTaskMap needs")
    d = only("def f(Task task) { return m(task); }\nm = Machine(GPU).merge(0, 1);\nIndexTaskMap t f;", "E206")
    assert d.message == "'m' is a machine model (a variable), not a function"
    assert d.hints == ("index it instead: m[i0]",)
    assert only("def f(Task task) { return task(1); }", "E206").message == "'task' is a variable, not a function"


def test_e201_undefined_machine_variable():
    d = only("def f(Task task) { return mgpu[0, 0]; }", "E201")
    assert at(d) == (1, 27) and d.message == "undefined variable 'mgpu'"
    assert d.hints == ("add 'mgpu = Machine(GPU);' at top level",)
    assert only("def f(Task task) { return mcpu[0, 0]; }", "E201").hints == ("add 'mcpu = Machine(CPU);' at top level",)
    d = only("mgpu = Machine(GPU);\ndef f(Task task) { return mgpuu[0, 0]; }", "E201")
    assert d.hints == ("did you mean 'mgpu'?",)
    # on a machine without GPUs, the definition that falls back to CPUs (a GPU model there is empty: E205 next)
    d = only("def f(Task task) { return mgpu[0, 0]; }", "E201", None, parse_machine_spec("1x0x2"))
    assert d.hints == ("add 'mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);' at top level (this "
                       "machine has no GPUs: Machine(GPU) alone is empty here)",), d.hints
    fixed = "mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);\ndef f(Task task) { return mgpu[0, 0]; }"
    assert [x for x in diags(fixed, None, parse_machine_spec("1x0x2")) if x.is_error] == []


def test_e201_task_in_a_function_whose_task_parameter_has_another_name():
    d = only("m = Machine(CPU);\ndef block(Task t) {\n    return m[task.ipoint[0], 0];\n}\nIndexTaskMap x block;",
             "E201")
    assert d.message == "undefined variable 'task'"
    assert d.hints == ("did you mean 't'? (the Task parameter of 'block')",)


def test_misspelt_names_leave_no_unused_notes_before_their_error():
    """A typo in a function's name makes the function it meant, and the model only it reads, look unused: the
    E200 is the finding, without W304 notes before it."""
    src = ("mcpu = Machine(CPU);\ndef block(Task task) { return mcpu[0, 0]; }\n"
           "def block2(Task task) { return mcpu[0, 0]; }\nIndexTaskMap t blok;")
    assert [(d.code, d.hints[0]) for d in diags(src)] == [("E200", "did you mean 'block'?")]
    assert [d.code for d in diags(src.replace("blok", "block"))] == ["W304"]  # block2, once the typo is fixed


def test_e201_kind_in_lower_case():
    # A kind written in lower case is an undefined name; its spelling comes before a close name (`mcpu`).
    found = [d for d in diags("mcpu = Machine(CPU);\nx = mcpu.has(cpu) || mcpu[0, 0].has(sysmem);") if d.code == "E201"]
    assert [(d.message, d.hints) for d in found] == [
        ("undefined variable 'cpu'", ("did you mean 'CPU'? (kinds are written in capitals)",)),
        ("undefined variable 'sysmem'", ("did you mean 'SYSMEM'? (kinds are written in capitals)",))]


def test_e201_legion_kind_name():
    # Legion's name of a kind, as a value: the DSL's kind it means, before a close name.
    found = [d for d in diags("mgpu = Machine(GPU);\nx = mgpu[0, 0].has(GPU_MEM) || mgpu[0, 0].has(z_copy_mem);")
             if d.code == "E201"]
    assert [(d.message, d.hints) for d in found] == [
        ("undefined variable 'GPU_MEM'", ("did you mean 'FBMEM'? (Legion's GPU_FB_MEM is the DSL's FBMEM)",)),
        ("undefined variable 'z_copy_mem'", ("did you mean 'ZCMEM'? (Legion's Z_COPY_MEM is the DSL's ZCMEM)",))]


def test_e201_top_level_scoping():
    d = only("x = y;\ny = 1;", "E201")
    assert at(d) == (1, 5)
    assert "no task" not in d.message
    # assigned further down: said as for a function used before its definition, with where
    assert d.message == "variable 'y' is read before its assignment", d.message
    assert d.hints == ("assign 'y' before this statement (top-level statements run from top to bottom): its first "
                       "assignment, `y = 1;`, comes after it, on line 2",), d.hints
    assert d.notes == ("'y' is assigned at p.dsl:2:1",), d.notes
    assert diags("y = 1;\nx = y;") == []  # the hint followed
    assert only("x = 1; z = w; w = 2;", "E201").notes == ("'w' is assigned at p.dsl:1:15",)  # later on the line
    # assigned nowhere, or first by the statement that reads it: as before
    assert only("x = yy;\ny = 1;", "E201").message == "undefined variable 'yy'"
    assert only("y = y + 1;", "E201").message == "undefined variable 'y'"
    d = only("x = task.ipoint;", "E201")
    assert "before any task exists" in d.hints[0]
    assert only("IndexTaskMap t m f;\nm = Machine(GPU);\ndef f(IPoint p, ISpace s, MSpace m) { return 0; }",
                "E201").message == "variable 'm' is read before its assignment"
    # function bodies may use globals defined later
    assert diags("def f(Task task) { return m[0, 0]; }\nm = Machine(GPU);\nIndexTaskMap t f;") == []
    assert diags("x = tuple(i for i in (1, 2));") == []


def test_e202_unknown_task(circuit):
    d = only("Task calc_new_currents GPU;", "E202", circuit)
    assert at(d) == (1, 6)
    assert d.message == "unknown task 'calc_new_currents' (application 'circuit')"
    assert d.hints[0] == "did you mean 'calculate_new_currents'?"
    assert "calculate_new_currents" in d.hints[1]


def test_e202_e203_elide_an_over_long_name_as_e100_does(circuit):
    """A name of thousands of characters is shown cut short in the message (its start and its length), as E100
    shows a long literal, not repeated in full."""
    task = "calculate_new_currents" * 200
    d = only(f"Task {task} CPU;", "E202", circuit)
    assert d.message == (f"unknown task 'calculate_new_currents{task[22:24]}... ({len(task)} characters)' "
                         "(application 'circuit')"), d.message
    d = only(f"Region * {'r' * 3000} CPU SYSMEM;", "E203", circuit)
    assert d.message == f"unknown region '{'r' * 24}... (3000 characters)' for any task", d.message
    assert all(len(h) < 2000 for h in d.hints if h), d.hints
    # A name of ordinary length is shown whole.
    assert only("Region * rp_shard GPU ZCMEM;", "E203", circuit).message == "unknown region 'rp_shard' for any task"


@pytest.mark.parametrize("src, code", [
    ("x = {v};", "E201"),
    ("y = {v}();", "E200"),
    ("def f(Task task) {{ return {v}[0, 0]; }}\nIndexTaskMap calculate_new_currents f;", "E201"),
    ("m = Machine(CPU);\nz = m.{v};", "E213"),
    ("IndexTaskMap calculate_new_currents {v};", "E200"),
])
def test_e200_e201_e213_elide_an_over_long_name_as_e202_does(src, code, circuit):
    """E200, E201 and E213 quoted a 3,000-character name in full (lines of 3,000 characters and more, hints too),
    where E202 and E203 show its start and its length."""
    v = "v" * 3000
    found = [d for d in diags("Task * CPU;\n" + src.format(v=v), circuit) if d.code == code]
    assert found, diags("Task * CPU;\n" + src.format(v=v), circuit)
    for d in found:
        assert f"'{'v' * 24}... (3000 characters)'" in d.message and len(d.message) < 200, d.message
        assert all(len(h) < 300 for h in d.hints if h), d.hints


def test_w315_a_task_the_discovered_run_did_not_launch_is_a_warning_unless_a_near_miss(circuit):
    """A user's program lists only the tasks its discovery run launched: a name that is no near-miss of one of them
    may be launched by other flags (W315, naming the command line), beside a task that ran (E225 as the only one); a
    benchmark's list is complete (E202)."""
    assert only("Task frobnicate GPU;", "E202", circuit).is_error
    discovered = replace(circuit, discovered_as="circuit -steps 0")
    assert only("Task frobnicate GPU;", "E225", discovered).is_error
    d = only("Task frobnicate GPU;\nTask check_circuit CPU;", "W315", discovered)
    assert not d.is_error and at(d) == (1, 6)
    assert d.message == ("task 'frobnicate' did not run in discovery (`circuit -steps 0`): this statement applies "
                         "only to runs that launch it")
    # What to do, one hint; the tasks that did run are a fact beside it.
    assert d.hints == ("if your runs launch it, check with their flags after `--`: `mapperopt check p.dsl --app "
                       "... -- FLAGS`",)
    assert d.notes == ("tasks that ran: init_piece, init_pointers, calculate_new_currents, distribute_charge, "
                       "update_voltages, check_circuit",
                       "if 'frobnicate' is a variant's name (TaskVariantRegistrar's), name its task: statements name "
                       "tasks (discovery does not see variant names)")
    assert only("Task calc_new_currents GPU;", "E202", discovered).hints[0] == "did you mean 'calculate_new_currents'?"


def test_a_task_named_by_a_cpp_enum_value_gets_the_task_its_name_contains(circuit):
    """`UPDATE_VOLTAGES_TASK_ID`, a task ID's C++ name, is not a near-miss by spelling: E202 of a benchmark (W315 of a
    discovered program) names the task it contains and says that C++ names are not task names. A lower-case name
    that only contains a task's name is not taken for one."""
    note = ("'UPDATE_VOLTAGES_TASK_ID' looks like a C++ enum value (a task ID): Legion knows a task by the name it "
            "is registered with, not by C++ names")
    d = only("Task UPDATE_VOLTAGES_TASK_ID CPU;", "E202", circuit)
    assert d.hints[0] == "did you mean 'update_voltages'?" and note in d.notes, d
    d = only("Task UPDATE_VOLTAGES_TASK_ID CPU;", "W315", replace(circuit, discovered_as="circuit -steps 0"))
    alone = only("Task UPDATE_VOLTAGES_TASK_ID CPU;", "E225", replace(circuit, discovered_as="circuit -steps 0"))
    assert alone.hints[0] == "did you mean 'update_voltages' for 'UPDATE_VOLTAGES_TASK_ID'?", alone
    assert note in alone.notes, alone  # as W315 says it: E225 had only the hint
    assert d.hints[0] == "did you mean 'update_voltages'?" and note in d.notes, d
    d = only("Task my_update_voltages_copy CPU;", "E202", circuit)
    assert "looks like a C++ enum value" not in " ".join(d.notes), d


def test_e225_a_mapper_none_of_whose_tasks_ran_is_refused(circuit):
    """Task names of which none ran in discovery, nor is a near-miss of one that did: the mapper of another program
    (Stencil's, here), one error naming the program's tasks instead of a warning per name (W315)."""
    discovered = replace(circuit, discovered_as="circuit -steps 0")
    src = "Task stencil GPU;\nIndexTaskMap increment,stencil f;\ndef f(Task t) { return Machine(GPU)[0, 0]; }\n"
    d = only(src, "E225", discovered)
    assert d.is_error and at(d) == (0, 0)
    assert d.message == ("none of the 2 tasks this mapper names ran in discovery (`circuit -steps 0`): 'stencil' and "
                         "'increment'; it looks like the mapper of another program")
    assert d.hints == ("give the mapper written for this program, or, if your runs do launch these tasks, check with "
                       "their flags after `--`: `mapperopt check p.dsl --app ... -- FLAGS`",)
    assert d.notes == ("tasks that ran: init_piece, init_pointers, calculate_new_currents, distribute_charge, "
                       "update_voltages, check_circuit", "if these are variants' names (TaskVariantRegistrar's), "
                       "name their tasks: statements name tasks (discovery does not see variant names)")
    assert not [x for x in diags(src, discovered) if x.code == "W315"]
    # the options that gave the program, where known, are pasted back in place of `--app ...`
    given = replace(discovered, given_as=("--app", "my app.yaml", "--size", "big"))
    assert only(src, "E225", given).hints[0].endswith("`mapperopt check p.dsl --app 'my app.yaml' --size big -- FLAGS`")
    assert only("Task stencil GPU;\nTask check_circuit CPU;", "W315", given).hints[0].endswith(
        "--app 'my app.yaml' --size big -- FLAGS`")
    one = only("Task stencil GPU;", "E225", given)
    assert one.message == ("the one task this mapper names did not run in discovery (`circuit -steps 0`): 'stencil'; "
                           "its statements that name tasks select nothing in this program"), one.message
    assert one.hints[0].startswith("give the mapper written for this program, or, if your runs do launch this task")
    # One task that ran, or a near-miss of one: this program's mapper, whose other names get W315 or E202.
    assert not [x for x in diags(src + "Task check_circuit CPU;\n", discovered) if x.code == "E225"]
    assert not [x for x in diags("Task stencil GPU;\nTask calc_new_currents GPU;\n", discovered) if x.code == "E225"]


def test_e203_unknown_region(circuit):
    d = only("Region * rp_shard GPU ZCMEM;", "E203", circuit)
    assert at(d) == (1, 10) and d.hints == ("did you mean 'rp_shared'?",)
    d = only("Region update_voltages rp_ghost GPU ZCMEM;", "E203", circuit)
    assert d.message == "unknown region 'rp_ghost' for task 'update_voltages'"
    assert "rp_shared" in d.hints[0]
    assert diags("Region update_voltages all_nodes GPU ZCMEM; CollectMemory * all_wires;", circuit) == []


def test_e203_suggests_a_name_explain_shows_before_a_parent_region_s(stencil):
    """`pxm` was told "did you mean 'xm'?", the parent region's name, which `explain` never shows (it names each
    argument by its nearest name, `pxm_in`): a suggestion is first sought among the arguments' own names, and a name
    that begins one of them is taken for it."""
    assert only("Region stencil pxm CPU SYSMEM;", "E203", stencil).hints == ("did you mean 'pxm_in'?",)
    assert only("Region increment pxm CPU SYSMEM;", "E203", stencil).hints == ("did you mean 'pxm_out'?",)
    assert only("Region stencil pym_i CPU SYSMEM;", "E203", stencil).hints == ("did you mean 'pym_in'?",)
    seen = {r.name for t in stencil.tasks for r in t.regions}
    for name in ("pxm", "pxp", "pym", "pyp", "px_in", "pxmin"):
        for task in ("stencil", "increment", "*"):
            (hint,) = only(f"Region {task} {name} CPU SYSMEM;", "E203", stencil).hints
            if hint.startswith("did you mean"):  # else the task's region names are listed
                assert hint.removeprefix("did you mean '").removesuffix("'?") in seen, (name, task, hint)


def test_e203_on_a_field_name_says_which_arguments_hold_it_and_how_to_select_them(circuit):
    """A statement maps a whole region argument, all its fields: a field name selects nothing, and the hint says
    which arguments hold that field and gives the statement that selects one by name or index."""
    d = only("Region update_voltages charge CPU SYSMEM;", "E203", circuit)
    assert d.hints == ("'charge' is a field of argument 0 (rp_private) of 'update_voltages', argument 1 (rp_shared) of "
                       "'update_voltages': a Region statement applies to a whole region argument, all its fields, "
                       "selected by a name of its region tree or by its index, e.g. "
                       "`Region update_voltages 0 CPU SYSMEM;` or `Region update_voltages rp_private CPU SYSMEM;` "
                       "(which also selects argument 2)",)  # rp_private is argument 2's region too
    # for several tasks an index means a different argument in each: only the name is offered
    d = only("Layout * in_ptr * AOS;", "E203", circuit)
    assert d.hints[0].startswith("'in_ptr' is a field of argument 0 (rp_wires) of 'init_pointers', argument 3 "
                                 "(rp_wires) of 'calculate_new_currents', argument 3 (rp_wires) of "
                                 "'distribute_charge': a Layout statement")
    assert d.hints[0].endswith("e.g. `Layout * rp_wires * AOS;`")
    assert only("Region * rp_wire CPU SYSMEM;", "E203", circuit).hints == ("did you mean 'rp_wires'?",)


def test_e203_on_a_field_name_gives_the_index_first_where_the_name_selects_several_arguments(circuit):
    """Where the argument's name is shared by other arguments of the task (two arguments from one partition,
    `blocks`), the name selects them all: the index comes first, and the name's example says what else it selects."""
    def shared(t):
        regions = tuple(replace(r, names=("blocks", *r.names)) if r.index in (0, 1) else r for r in t.regions)
        return replace(t, regions=regions) if t.name == "update_voltages" else t
    app = replace(circuit, tasks=tuple(shared(t) for t in circuit.tasks))
    d = only("Region update_voltages charge CPU SYSMEM;", "E203", app)
    assert d.hints[0].endswith("e.g. `Region update_voltages 0 CPU SYSMEM;` or "
                               "`Region update_voltages blocks CPU SYSMEM;` (which also selects argument 1)"), d.hints
    d = only("Layout update_voltages charge * AOS;", "E203", app)
    assert d.hints[0].endswith("e.g. `Layout update_voltages 0 * AOS;` or `Layout update_voltages blocks * AOS;` "
                               "(which also selects argument 1)"), d.hints


def test_e204_region_index(circuit):
    d = only("Region distribute_charge 7 GPU ZCMEM;", "E204", circuit)
    assert at(d) == (1, 26)
    assert d.hints == ("task 'distribute_charge' has 4 region requirements (0..3)",)
    # `*` selects every task: no task has the requirement, and the hint names the largest count (not one task)
    d = only("Layout * 5 * SOA;", "E204", circuit)
    assert d.message == "region index 5 is out of range for every task: no task has a region requirement 5", d.message
    assert d.hints == ("the most region requirements of a task is 5 (0..4), of 'calculate_new_currents'",), d.hints
    assert diags("Layout * 4 * SOA;", circuit) == []


def test_e205_static_evaluation(circuit, m14, with_domain):
    program = parse((EXAMPLES / "s01.dsl").read_text(), "s01.dsl")
    found = [d for d in check(program, with_domain(circuit, (8,)), m14) if d.code != "W304"]  # the unread mcpu
    assert [d.code for d in found] == ["E205"]
    d = found[0]
    assert "point (4,)" in d.message and "index 1 >= size 1 in dimension 0" in d.message
    # the edit in the mapper's own names, for the failed dimension only
    assert d.hints == ("reduce the index modulo the size of that dimension: `mgpu[(task.ipoint[0] / mgpu.size[1]) % "
                       "mgpu.size[0], task.ipoint[0] % mgpu.size[1]]`",)
    assert (d.loc.line, d.loc.col) == (9, 37)
    assert any("IndexTaskMap calculate_new_currents,distribute_charge,update_voltages linearblock;" in n
               for n in d.notes)
    assert [d.code for d in check(program, with_domain(circuit, (8,)), parse_machine_spec("2x4"))] == ["W304"]
    assert only("m = Machine(GPU); def f(Task task) { return m[-1, 0]; } IndexTaskMap t f;", "E205").loc.col == 47


def test_e205_e219_on_a_machine_without_gpus_hint_the_fallback(circuit):
    """Machine(GPU) is empty on a CPU-only machine: `i % m.size[1]` would divide by zero, so the hint says the
    machine has no GPUs and gives the portable fallback (or --machine) instead, for an index (E205) as for a
    division by the model's size (E219); a model that has processors keeps the modulo hint."""
    cpu = parse_machine_spec("1x0x1")
    fallback = "`Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU)`"
    d = only("m = Machine(GPU);\ndef f(Task task) { return m[0, task.ipoint[0]]; }\nIndexTaskMap update_voltages f;",
             "E205", circuit, cpu)
    assert len(d.hints) == 1 and "this machine (1 node of 1 CPU) has no GPUs" in d.hints[0] and fallback in d.hints[0]
    assert "--machine" in d.hints[0] and "m.size" not in d.hints[0]
    src = ("m = Machine(GPU).merge(0, 1);\ndef f(Task task) { return m[task.ipoint[0] % m.size[0]]; }\n"
           "IndexTaskMap update_voltages f;")
    (d,) = [d for d in diags(src, circuit, cpu) if d.is_error]
    assert d.code == "E219" and at(d) == (2, 44) and "has no GPUs" in d.hints[0] and fallback in d.hints[0]
    assert "has no GPUs" in only("x = 4 / Machine(GPU).volume;", "E219", None, cpu).hints[0]  # at load
    d = only("m = Machine(CPU);\ndef f(Task task) { return m[0, task.ipoint[0]]; }\nIndexTaskMap update_voltages f;",
             "E205", circuit, cpu)
    assert d.hints == ("reduce the index modulo the size of that dimension: `m[0, task.ipoint[0] % m.size[1]]`",)
    # a hard-coded modulus (written for 2 CPUs): the fix is the model's size in its place, not a second modulo
    d = only("mc = Machine(CPU);\ndef f(Task task) { return mc[0, (task.ipoint[0] + 1) % 2]; }\n"
             "IndexTaskMap update_voltages f;", "E205", circuit, cpu)
    assert d.hints == ("the modulus 2 is not the size of dimension 1 on this machine: use the model's size, "
                       "`mc[0, (task.ipoint[0] + 1) % mc.size[1]]`",), d.hints
    d = only("mc = Machine(CPU);\ndef f(Task task) { t = (0, 3); return mc[*t]; }\nIndexTaskMap update_voltages f;",
             "E205", circuit, cpu)
    assert d.hints == ("reduce the index modulo the size of that dimension, e.g. `i % mc.size[1]` for the machine "
                       "model `mc` being indexed",)


def test_e206_type_errors(circuit):
    d = only("x = 1 < 2 < 3;", "E206")
    assert d.message == "operator '<' cannot be applied to bool and int" and at(d) == (1, 11)
    assert only("x = Machine(GPU) / 2;", "E206").message == "operator '/' cannot be applied to MSpace and int"
    assert only("x = 1 ? 2 : 3;", "E206").message == "the condition of '?' must be a bool, not an int"
    assert only("m = Machine(GPU); x = m[0];", "E206").message == "1 index value for a 2-dimensional machine model"
    assert only("x = (1, 2) + (1, 2, 3);", "E206").message == "operator '+' needs tuples of equal length, not 2 and 3"
    assert only("def f(Task t) { return 1; }\nIndexTaskMap x f;", "E206").message.startswith(
        "mapping function 'f' returns an int")
    # the hint indexes a machine model of the program with what the function returned (none: it defines one)
    d = only("mcpu = Machine(CPU);\ndef f(Task task) { return task.ipoint[0] % 2; }\nIndexTaskMap x f;", "E206")
    assert d.hints == ("index a machine model to return one of its processors, e.g. "
                       "`return mcpu[0, (task.ipoint[0] % 2) % mcpu.size[1]];` (node, then processor)",)
    # parentheses written around it are the pair the example needs, not one more
    d = only("mcpu = Machine(CPU);\ndef f(Task task) { return (task.ipoint[0] % 2); }\nIndexTaskMap x f;", "E206")
    assert "`return mcpu[0, (task.ipoint[0] % 2) % mcpu.size[1]];`" in d.hints[0], d.hints
    # reduced modulo the model's size, the example is valid for more points than processors (it was E205)
    d = only("def f(Task task) { return task.ipoint[0]; }\nIndexTaskMap x f;", "E206")
    assert "e.g. `return m[0, task.ipoint[0] % m.size[1]];`, with `m = Machine(CPU);`" in d.hints[0]
    fixed = ("m = Machine(CPU);\ndef f(Task task) { return m[0, task.ipoint[0] % m.size[1]]; }\n"
             "IndexTaskMap update_voltages f;")
    assert not [d for d in diags(fixed, circuit, parse_machine_spec("1x0x1")) if d.is_error]
    assert only("def f(Task t) { return 1; }\nIndexTaskMap x f;", "E206").hints == (
        "index a machine model to return one of its processors, e.g. `return m[0, 1 % m.size[1]];`, with "
        "`m = Machine(CPU);` (node, then processor)",)
    assert only("m = Machine(GPU);\ndef f(Task t) { return m; }\nIndexTaskMap x f;", "E206").hints == (
        "index a machine model to return one of its processors, e.g. `return m[0, t.ipoint[0] % m.size[1]];` "
        "(node, then processor)",)
    assert only("def f(int n) { return n; }\nx = f((1, 2));", "E206").message == (
        "argument 'n' of 'f' must be int, not a tuple")
    assert only("def f(int n) { return n; }\nx = f;", "E206").message == "'f' is a function, not a value"
    # a ternary whose branches have different types has an unknown type, which is not an error
    assert diags("x = True ? Machine(GPU) : 3;") == []
    assert diags("m = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);\n"
                 "def f(Task task) { return m[0, 0]; }\nIndexTaskMap t f;") == []


def test_e206_index_made_a_tuple_lines_before():
    # `lin` is a tuple because of the division by `task.ispace` (element-wise): the error is at the use, its note
    # points at the division.
    src = ("mcpu = Machine(CPU);\ndef blk(Task task) {\n    lin = task.ipoint[0] * mcpu.volume / task.ispace;\n"
           "    return mcpu[lin, 0];\n}\nIndexTaskMap t blk;")
    d = only(src, "E206")
    assert d.message == "an index must be an int, not a tuple" and at(d) == (4, 17)
    assert d.hints == ("for one element of task.ispace, index it: task.ispace[0]",)
    assert d.notes == ("'lin' is a tuple because '/' at p.dsl:3:40 combines an int with the tuple task.ispace element "
                       "by element",)
    # Made where it is used: no note.
    d = only("m = Machine(CPU);\ndef f(Task task) { return m[2 * task.ipoint, 0]; }\nIndexTaskMap t f;", "E206")
    assert d.hints == ("for one element of task.ipoint, index it: task.ipoint[0]",) and d.notes == ()
    # A tuple from tuples alone gets neither.
    d = only("m = Machine(CPU);\ndef f(Task task) { return m[task.ipoint + task.ispace, 0]; }\nIndexTaskMap t f;",
             "E206")
    assert d.hints == () and d.notes == ()


def test_e206_a_point_as_one_of_several_machine_indices(stencil):
    """`mc[0, task.ipoint]`: one coordinate of it, or the point unpacked where its length fits the model; each
    rewrite checks clean on stencil (1-D launches)."""
    head = "Task * CPU;\nmc = Machine(CPU);\n"
    src = head + "def f(Task task) { return mc[0, task.ipoint]; }\nIndexTaskMap stencil f;\n"
    d = only(src, "E206", stencil)
    assert d.hints == ("take one element of it, e.g. task.ipoint[0], or unpack it, one index per element: "
                       "mc[0, *task.ipoint]",), d.hints
    for fixed in ("mc[0, task.ipoint[0] % mc.size[1]]", "mc[0, *task.ipoint]"):
        found = [x for x in diags(src.replace("mc[0, task.ipoint]", fixed), stencil, parse_machine_spec("1x0x4"))
                 if x.is_error]
        assert not found, (fixed, found)
    # a 2-D model indexed by an int and a pair: unpacking gives three indices, so only one element is offered
    d = only(head + "def f(Task t) { p = (1, 2); return mc[0, p]; }\n", "E206")
    assert d.hints == ("take one element of it, e.g. p[0]",), d.hints


def test_e205_a_processor_set_across_nodes_gets_one_nodes_set(stencil):
    """`mc[*, 0]` on two nodes of one CPU: a set must be on one node; the hint takes one node's processors,
    chosen from the point, which checks clean."""
    two = parse_machine_spec("2x0x1")
    src = "Task * CPU;\nmc = Machine(CPU);\ndef f(Task task) { return mc[*, 0]; }\nIndexTaskMap stencil f;\n"
    d = only(src, "E205", stencil, two)
    assert "processor set spans nodes [0, 1]" in d.message, d.message
    assert d.hints == ("index the node with one value and its processors with '*', e.g. "
                       "`mc[task.ipoint[0] % mc.size[0], *]`",), d.hints
    fixed = src.replace("mc[*, 0]", "mc[task.ipoint[0] % mc.size[0], *]")
    assert not [x for x in diags(fixed, stencil, two) if x.is_error]
    # a transformed model: which dimensions are the node's, the hint cannot rewrite; it says what to do
    src = src.replace("mc = Machine(CPU);", "mc = Machine(CPU).swap(0, 1);").replace("mc[*, 0]", "mc[0, *]")
    d = only(src, "E205", stencil, two)
    assert d.hints == ("index the dimensions of `mc` that span nodes with one value each, leaving '*' only where "
                       "the processors of one node differ",), d.hints


def test_e206_a_point_as_one_machine_index():
    """`m[task.ipoint]` is one error, at the tuple, whose hint unpacks it; a wrong count of ints hints the same."""
    found = [d for d in diags("m = Machine(CPU);\ndef f(Task t) { return m[t.ipoint]; }\nIndexTaskMap x f;")
             if d.is_error]
    assert [(d.code, d.message, at(d)) for d in found] == [("E206", "an index must be an int, not a tuple", (2, 26))]
    assert found[0].hints == ("unpack it, one index per dimension: m[*t.ipoint]",)
    d = only("m = Machine(CPU);\ndef f(Task t) { return m[t.ipoint[0]]; }\nIndexTaskMap x f;", "E206")
    assert d.hints == ("give one index per dimension: m[i0, i1], or a point's coordinates: m[*t.ipoint]",
                       "merge dimensions: m.merge(0, 1)[t.ipoint[0] % m.volume]")
    assert only("m = Machine(CPU); x = m[1];", "E206").hints == ("give one index per dimension: m[i0, i1]",
                                                                  "merge dimensions: m.merge(0, 1)[1 % m.volume]")


def test_e206_a_point_of_other_dimensions_than_the_model(circuit, with_domain):
    """Unpacking a point works only where it has as many coordinates as the model has dimensions: on circuit (1-D
    launches, a 2-D machine model) the hint merges dimensions, for a 2-D launch on a 1-D model it combines
    coordinates; each hint, followed as written, gives a program that checks clean."""
    one = parse_machine_spec("1x1")
    head = "Task * CPU;\nm = Machine(CPU);\n"
    merge = "m.merge(0, 1)[t.ipoint[0] % m.volume]"
    for index in ("m[t.ipoint]", "m[*t.ipoint]"):  # a type error; an error of static evaluation
        src = head + f"def f(Task t) {{ return {index}; }}\nIndexTaskMap calculate_new_currents f;"
        d = only(src, "E206", circuit, one)
        assert d.hints == (f"merge dimensions: {merge}",), d
        assert diags(src.replace(index, merge), circuit, one) == []
    src = head + "def f(Task t) { return m[t.ipoint[0] + 1]; }\nIndexTaskMap calculate_new_currents f;"
    d = only(src, "E206", circuit, one)
    merge = "m.merge(0, 1)[(t.ipoint[0] + 1) % m.volume]"
    assert d.hints == ("give one index per dimension: m[i0, i1]", f"merge dimensions: {merge}")  # no 1-D unpacking
    assert diags(src.replace("m[t.ipoint[0] + 1]", merge), circuit, one) == []
    # A 2-D launch on a 1-D model.
    square = with_domain(circuit, (2, 3))
    head = "Task * CPU;\nm = Machine(CPU).merge(0, 1);\n"
    combine = "m[(t.ipoint[0] * t.ispace[1] + t.ipoint[1]) % m.size[0]]"
    for index in ("m[t.ipoint]", "m[*t.ipoint]"):
        src = head + f"def f(Task t) {{ return {index}; }}\nIndexTaskMap calculate_new_currents f;"
        assert only(src, "E206", square, one).hints == (f"combine coordinates: {combine}",)
        assert diags(src.replace(index, combine), square, one) == []
    # Where the point matches, unpacking stays the hint.
    src = "m = Machine(CPU);\ndef f(Task t) { return m[t.ipoint]; }\nIndexTaskMap calculate_new_currents f;"
    assert only(src, "E206", square, one).hints == ("unpack it, one index per dimension: m[*t.ipoint]",)


def test_e207_argument_counts():
    d = only("def f(int a, int b) { return a; }\nx = f(1);", "E207")
    assert d.message == "'f' takes 2 arguments, 1 given" and d.hints == ("the signature is def f(int a, int b)",)
    assert only("m = Machine(GPU); x = m.merge(0);", "E207").hints == ("the signature is merge(int, int)",)
    assert only("m = Machine(GPU); x = m.size();", "E207").message == "'size' of an MSpace is a property, not a method"


def test_e208_mapping_function_signature():
    d = only("def f(int n) { return n; }\nIndexTaskMap t f;", "E208")
    assert at(d) == (2, 16) and d.hints == ("mapping functions have the form def f(Task task) { ... }",)
    d = only("m = Machine(GPU);\ndef f(int t) { return 0; }\nIndexTaskMap t m f;", "E208")
    assert d.hints == ("the three-operand form needs def f(IPoint p, ISpace s, MSpace m)",)
    # The older three-operand form with a function of a Task: drop the machine model (defined or not: not E201).
    drop = ("a function of a Task is mapped without a machine model: drop 'm', IndexTaskMap t,u f;",
            "the three-operand form needs def f(IPoint p, ISpace s, MSpace m)")
    assert only("m = Machine(GPU);\ndef f(Task t) { return 0; }\nIndexTaskMap t,u m f;", "E208").hints == drop
    found = diags("def f(Task t) { return 0; }\nIndexTaskMap t,u m f;")
    assert [d.code for d in found] == ["E208"] and found[0].hints == drop


def test_a_function_where_the_three_operand_form_takes_its_machine_model(circuit):
    """`IndexTaskMap t f g;` with `f` a defined function: not "undefined variable 'f'" but what it is, with the
    likely intent (`f` alone, a function of a Task) as the hint; the stray `g` gets no second error."""
    src = "m = Machine(GPU);\ndef f(Task t) { return m[0, 0]; }\nIndexTaskMap calculate_new_currents f g;"
    found = diags(src, circuit)
    assert [(d.code, at(d)) for d in found] == [("E206", (3, 37))], [(d.code, d.message) for d in found]
    assert found[0].message == "'f' is a function, not a machine model"
    assert found[0].hints == ("the three-operand form `IndexTaskMap TASKS MODEL FUNC;` takes a machine model here; "
                              "a function of a Task is mapped alone: IndexTaskMap calculate_new_currents f;",)
    # A three-operand function there: the form's hint alone.
    src = ("def f(IPoint p, ISpace s, MSpace m) { return p[0]; }\ndef g(Task t) { return 0; }\n"
           "IndexTaskMap calculate_new_currents f g;")
    d = only(src, "E206", circuit)
    assert d.message == "'f' is a function, not a machine model" and at(d) == (3, 37)
    assert d.hints == ("the three-operand form `IndexTaskMap TASKS MODEL FUNC;` takes a machine model here",)


def test_e209_kinds_without_variants(circuit, m14):
    d = only("Task init_piece GPU;", "E209", circuit)
    assert d.message == "task 'init_piece' cannot run on any kind of its list GPU"
    assert d.notes == ("variants of 'init_piece': CPU",)
    # A `Task *` statement that leaves several tasks without a kind: one error, whose message names them all (it
    # named the first only, the others in a note) and whose hint is the `*` fix.
    [d] = [x for x in diags("Task * GPU;\nRegion * * GPU FBMEM;", circuit, parse_machine_spec("1x0x2"))
           if x.code == "E209"]
    assert (at(d), d.message) == ((1, 1), "tasks 'init_piece', 'init_pointers', 'calculate_new_currents', "
                                          "'distribute_charge', 'update_voltages' and 'check_circuit' cannot run on "
                                          "any kind of their list GPU")
    assert d.hints == ("list a kind these tasks have a variant for after the others: `Task * GPU,CPU;`",)
    assert d.notes == ("variants: CPU, GPU; processors per node: GPU 0",)
    d = only("Task * GPU;", "E209", circuit)  # no machine: the tasks without a GPU variant
    assert d.message == ("tasks 'init_piece', 'init_pointers' and 'check_circuit' cannot run on any kind of their "
                         "list GPU")
    assert d.notes == ("variants: CPU",)
    d = only("Task * GPU;\nTask init_piece,init_pointers CPU;", "E209", circuit)
    assert d.hints == ("list a kind it has a variant for after the others: `Task * GPU,CPU;`",)
    assert d.notes == ("variants of 'check_circuit': CPU",)
    d = only("Task calculate_new_currents GPU;", "E209", circuit, parse_machine_spec("1x0x1"))
    assert "processors per node: GPU 0" in d.notes[0]
    # a variant of a kind this build has no processors of (OMP) is not offered in the hint; the note lists it
    omp = replace(circuit, tasks=tuple(replace(t, variants=("OMP", "CPU")) if t.name == "init_piece" else t
                                       for t in circuit.tasks))
    d = only("Task init_piece GPU;", "E209", omp, parse_machine_spec("1x0x2"))
    assert d.hints == ("add a kind it has a variant for, e.g. Task init_piece CPU;",), d.hints
    assert d.notes[0].startswith("variants of 'init_piece': OMP, CPU"), d.notes
    # the E209 above needed no evaluation: the note says which E209 still waits for static evaluation
    assert "(E205, E209 for a kind a mapping function returns, E217," in only(
        "Task calculate_new_currents GPU;", "W314", circuit, parse_machine_spec("1x0x1")).message
    src = "mcpu = Machine(CPU);\ndef f(Task task) { return mcpu[0, 0]; }\nIndexTaskMap update_voltages f;"
    d = only("Task * GPU,CPU;\n" + src, "E209", circuit, m14)
    assert "a CPU processor, but task 'update_voltages' runs on GPU" in d.message
    assert d.hints == ("return a processor of Machine(GPU), where 'update_voltages' runs, or run it on CPU: "
                       "Task update_voltages CPU;",)
    assert not [x for x in diags("Task * GPU,CPU;\nTask update_voltages CPU;\n" + src, circuit, m14) if x.is_error]


def test_e210_e211_definitions():
    d = only("def f(Task t) { return 1; }\ndef f(Task t) { return 2; }", "E210")
    assert at(d) == (2, 1) and d.notes == ("first definition at p.dsl:1:1",)
    assert only("f = 1;\ndef f(Task t) { return 1; }", "E211").message == "'f' is both a variable and a function"
    assert only("def f(int a, int a) { return a; }", "E211").message == "parameter 'a' of 'f' is declared twice"


def test_e212_recursion():
    d = only("def g(Task task) { return g(task); }", "E212")
    assert d.message == "recursive call: g -> g" and at(d) == (1, 27)
    d = only("def a(int x) { return b(x); }\ndef b(int x) { return a(x); }", "E212")
    assert d.message in ("recursive call: a -> b -> a", "recursive call: b -> a -> b")


def test_e213_unknown_member():
    d = only("def f(Task task) { return task.ipont; }", "E213")
    assert d.message == "unknown property or method 'ipont' of a Task"
    assert d.hints == ("did you mean 'ipoint'?", "a Task has: ipoint, ispace, parent, processor")
    assert only("x = (1, 2).length;", "E213").hints[-1] == "a tuple has: len, volume, size"


@pytest.mark.parametrize("constraints,message", [
    ("SOA AOS", "contradictory layout constraints 'SOA' and 'AOS'"),
    ("C_order F_order", "contradictory layout constraints 'C_order' and 'F_order'"),
    ("Align==64 Align==128", "two Align constraints in one Layout statement"),
    ("Align==64 No_Align", "contradictory layout constraints 'Align' and 'No_Align'"),
])
def test_e214_contradictions(constraints, message):
    d = only(f"Layout * * * {constraints};", "E214")
    # at the constraint that contradicts an earlier one, not at the statement
    assert d.message == message and at(d) == (1, 15 + len(constraints.split()[0]))
    assert at(only("Layout * * * SOA SOA AOS;", "E214")) == (1, 22)


def test_e215_e216_e217_e218_e219_e220(m14):
    d = only("InstanceLimit t 0;", "E215")
    assert d.message == "InstanceLimit count 0 must be at least 1" and at(d) == (1, 17)  # at the count, not the keyword
    assert d.hints == ("give a count of 1 or more (the most instances of the task mapped and unfinished per "
                       "processor), e.g. `InstanceLimit t 1;`, or remove the statement to leave them unlimited",)
    assert at(only("Layout * * * Align==0;", "E215")) == (1, 21)

    d = only('print("{} {}", 1);', "E216")
    assert d.message == "print has 2 placeholders '{}' but 1 argument"
    assert only("m = Machine(GPU); x = m.merge(0, 0);", "E217").message == (
        "invalid merge: the two dimensions must differ, both are 0")
    assert only("m = Machine(GPU); x = m.swap(0, 2);", "E217").message.startswith("invalid swap: dimension 2")
    d = only("m = Machine(GPU); x = m.split(1, 3);", "E217", machine=m14)  # needs the machine's sizes
    assert "split(1, 3)" in d.message and any("R409" in n for n in d.notes)
    # its hint: balance_split, which gives the same dimensions for any size (here (3, 1)), in the mapper's names
    d = only("mcpu = Machine(CPU);\nm2 = mcpu.merge(0, 1).split(0, 2);", "E217", machine=parse_machine_spec("1x0x3"))
    assert d.hints == ("2 does not divide 3: `mcpu.merge(0, 1).balance_split(0, 2)` splits dimension 0 in two, as "
                       "split does, whatever its size (here 3 and 1), or give split a factor of 3",), d.hints
    d = only("mcpu = Machine(CPU);\nm2 = mcpu.merge(0, 1).split(0, 4);", "E217", machine=parse_machine_spec("1x0x6"))
    assert d.hints[0].startswith("4 does not divide 6: `mcpu.merge(0, 1).balance_split(0, 2)`") and \
        "(here 3 and 2)" in d.hints[0], d.hints
    fixed = "mcpu = Machine(CPU);\nm2 = mcpu.merge(0, 1).balance_split(0, 2);"
    assert not [x for x in diags(fixed, None, parse_machine_spec("1x0x3")) if x.is_error]
    assert [d.code for d in diags("m = Machine(GPU); x = m.split(1, 3);")] == ["W304", "W304"]  # no E217 here
    assert only("x = (*1, 2);", "E218").message == "'*' unpacks a tuple, not an int"
    assert only("x = (1, 2)[*];", "E218").message == "a lone '*' is only allowed in a machine index"
    assert at(only("x = 1 / 0;", "E219")) == (1, 7)
    assert only("def f(int x) { return x % 0; }", "E219").message == "remainder by zero"
    d = only("InstanceLimit * 3;", "E220")
    assert d.hints == ("list the task names",) and at(d) == (1, 15)
    assert only("ControlReplicate *;", "E220").message == "'*' is not allowed as the task of ControlReplicate"


# ---------------------------------------------------------------------------------------------------- warnings


@pytest.mark.parametrize("align", ["Align==0", "Align<1", "Align<0", "Align<=0"])
def test_e215_an_align_no_alignment_satisfies(align):
    """An alignment is at least 1 byte: the constraint is judged, not its number (`Align<1` was accepted)."""
    d = only(f"Layout * * * SOA {align};", "E215")
    assert d.message == f"{align} can never hold: an alignment is at least 1 byte", d.message
    assert d.hints == ("give the alignment wanted, e.g. Align==64, or drop the constraint",)


@pytest.mark.parametrize("align", ["Align!=0", "Align>=0", "Align>0", "Align>=1"])
def test_e215_an_align_every_alignment_satisfies(align):
    """`Align!=0` or `Align>=0` holds for every alignment: not "must be at least 1 byte", but that it constrains
    nothing; `Align>=1` too, as `Align>0` (it was accepted)."""
    d = only(f"Layout * * * SOA {align};", "E215")
    assert d.message == f"{align} holds for every alignment (at least 1 byte): it constrains nothing", d.message
    assert d.hints == ("drop it",)


@pytest.mark.parametrize("align", ["Align==4611686018427387904", "Align>=2147483648", "Align>1073741824",
                                   "Align==9223372036854775807"])
def test_e227_an_align_above_1_gib(align):
    """`Align==2^62` passed check, then its run crashed (AOS: 24 fields padded to 2^62 bytes wrap the stride to 0)
    or asked 3 x 2^62 bytes: an alignment above 1 GiB is refused where it is written."""
    d = only(f"Layout * * * AOS {align};", "E227")
    assert d.message == f"{align} asks for an alignment above 1 GiB (1,073,741,824 bytes), the most a Layout may " \
                        "ask for", d.message
    assert at(d) == (1, 18 + len(align.rstrip("0123456789"))), at(d)  # at the number
    assert d.hints == ("give the alignment wanted, e.g. Align==64 (a cache line) or Align==4096 (a page)",)


def test_align_constraints_that_can_hold_stay_accepted():
    for align in ("Align==1", "Align<2", "Align<=1", "Align>=2", "Align!=1", "Align>=128", "Align==64",
                  "Align==1073741824", "Align>=1073741824", "Align<=4611686018427387904", "Align!=4611686018427387904"):
        assert diags(f"Layout * * * SOA {align};") == [], align


def test_w300_overridden_statement():
    d = only("Region * * GPU FBMEM; Region * * GPU ZCMEM;", "W300")
    assert at(d) == (1, 1) and d.severity == "warning"
    assert d.notes == ("overridden by p.dsl:1:23: Region * * GPU ZCMEM;",)
    src = "def f(Task t) { return 1; }\nIndexTaskMap task_1 f;\nIndexTaskMap task_1,task_2 f;"
    assert only(src, "W300").loc.line == 2
    # A list of tasks that a later statement repeats only in part is overridden for those tasks only.
    src = "def f(Task t) { return 1; }\nIndexTaskMap task_1,task_2 f;\nIndexTaskMap task_1 f;"
    assert only(src, "W300").message == ("this IndexTaskMap statement is overridden by a later one for task_1 (it "
                                         "still applies to task_2)")
    assert diags("Task * GPU; Task t CPU; Region * * GPU FBMEM; Region * * CPU SYSMEM; CollectMemory t *; "
                 "CollectMemory t *;") == []


def test_w301_to_w309(circuit, m14):
    assert only("Region * * GPU VIRTUAL,FBMEM;", "W301").message == (
        "FBMEM after VIRTUAL can only be used by leaf variants")
    cpu = parse_machine_spec("1x0x1")
    d = only("Region * * * SYSMEM;\nRegion * * CPU ZCMEM;", "W302", machine=cpu)
    assert d.message == "memory kind 'ZCMEM' does not exist on this machine; it is skipped" and at(d) == (2, 16)
    assert any(h.startswith("RDMEM exists only when the run sizes it (-ll:rsize MiB): ")
               for h in only("Region * * CPU SYSMEM,RDMEM;", "W302", machine=cpu).hints)
    # One W302 per statement: fixing the first does not leave the next to the next check.
    found = [(d.code, at(d)) for d in diags("Task * GPU,CPU;\nRegion * * GPU RDMEM,FBMEM;\n"
                                            "Region * * CPU RDMEM,SYSMEM;", circuit, parse_machine_spec("2x4"))
             if d.code == "W302"]
    assert found == [("W302", (2, 16)), ("W302", (3, 16))], found
    assert only("Task * OMP,CPU;", "W303").loc.col == 8
    assert only("Task * GPU;", "W303", machine=cpu).message.startswith("processor kind 'GPU' has no processors")
    assert only("Task calc GPU;\nTask * GPU;", "W303", machine=cpu).loc.line == 1
    # A processor kind the machine lacks in a list with one it has is the portable fallback, and a statement for
    # tasks on a kind without processors never applies: neither is reported.
    for src in ("Task * GPU,CPU;", "Task calc GPU;\nTask * CPU;", "Region * * GPU FBMEM,ZCMEM;",
                "Layout * * GPU AOS;", "Region * * GPU RDMEM;"):
        assert [d for d in diags(src, None, cpu) if d.code in ("W302", "W303")] == [], src
    # A memory kind the machine lacks is skipped at every mapping even before one it has: W302 at it, as for any.
    for src in ("Region * * CPU ZCMEM,SYSMEM;", "Region * * * SYSMEM,ZCMEM;"):
        d = only(src, "W302", machine=cpu)
        assert d.message == "memory kind 'ZCMEM' does not exist on this machine; it is skipped", src
    d = only("def unused(Task task) { return 1; }", "W304")
    assert d.severity == "note"
    d = only("def f(Task t) { return 1; }\nIndexTaskMap check_circuit f;", "W305", circuit)
    assert "never index-launched" in d.message
    assert "only index-launched" in only("def f(Task t) { return 1; }\nSingleTaskMap update_voltages f;", "W305",
                                         circuit).message
    assert only("CollectMemory update_voltages 0;", "W305", circuit).message == (
        "CollectMemory has no effect: the selected requirements are not read-only (requirement 0 of 'update_voltages' "
        "(rp_private) is read-write)")  # which requirement, with the privilege that keeps it
    assert diags("CollectMemory update_voltages *;", circuit) == []
    # Johnson's task_4 reduces into A: task_1's read of A stays tracked (note R457), so collecting it does nothing;
    # task_4's own reads of B and C are collected.
    johnson = load_app("johnson")
    d = only("CollectMemory task_1 *;", "W305", johnson)
    assert d.message == ("CollectMemory has no effect: the selected requirements stay tracked, as 'task_4' reduces "
                         "into their fields (note R457)")
    assert [d for d in diags("CollectMemory task_4 *;\nCollectMemory task_2 *;", johnson) if d.code == "W305"] == []
    # Pennant's adv_pos_full reads pmaswt and pf_x, pf_y in its requirement 2, which sum_point_mass and
    # sum_point_force reduce into: both are named, in the application's order.
    d = only("CollectMemory adv_pos_full 2;", "W305", load_app("pennant"))
    assert d.message == ("CollectMemory has no effect: the selected requirements stay tracked, as 'sum_point_mass' "
                         "and 'sum_point_force' reduce into their fields (note R457)")
    # Past three reducers, the first three and a count.
    many = replace(johnson, tasks=johnson.tasks + tuple(replace(johnson.task("task_4"), name=f"task_4{c}")
                                                        for c in "abcd"))
    assert only("CollectMemory task_1 *;", "W305", many).message == (
        "CollectMemory has no effect: the selected requirements stay tracked, as 'task_4', 'task_4a', 'task_4b' and "
        "2 more reduce into their fields (note R457)")
    inner = replace(circuit, tasks=tuple(replace(t, inner=True) for t in circuit.tasks))
    assert "inner tasks" in only("Region update_voltages * GPU ZCMEM;", "W305", inner).message
    assert only("Layout * * * Align==48;", "W306").message == "Align value 48 is not a power of two"
    d = only("m = 1;\ndef f(int x) { m = x; return m; }", "W307")
    assert at(d) == (2, 16) and d.message == "local variable 'm' shadows the global variable 'm'"
    assert at(only("Task * GPU,CPU,GPU;", "W308")) == (1, 16)
    d = only("m = Machine(GPU).merge(0, 1);\ndef f(IPoint p, ISpace s, MSpace m) { return p[0]; }\n"
             "IndexTaskMap t m f;", "W309")
    assert d.severity == "note"
    # an int indexes the (1-dimensional) model as it is: `m[*r]` would unpack an int (E218)
    assert "def g(Task task) { r = f(task.ipoint, task.ispace, m); return m[r]; }" in d.message


def test_three_operand_int_function_on_a_model_of_two_dimensions(circuit):
    """The older form indexes the model with the function's int, m[f(...)]: one index, which fits a 1-dimensional
    model only. On `Machine(CPU)` that is a type error said as such (not "returned (0,); expected an int"), whose
    hint, followed literally, checks clean; no W309 rewrite that is the same error again."""
    src = ("Task * CPU;\ndef f(IPoint p, ISpace s, MSpace m) { return p[0] % m.size[1]; }\nmm = Machine(CPU);\n"
           "IndexTaskMap update_voltages mm f;\n")
    found = [d for d in diags(src, circuit, parse_machine_spec("2x4")) if d.code != "W314"]
    assert [(d.code, at(d)) for d in found] == [("E206", (4, 33))], [(d.code, d.message) for d in found]
    d = found[0]
    assert d.message == ("'f' returns an int, one index, but the three-operand form indexes the 2-dimensional "
                         "machine model 'mm' with it: mm[f(...)] needs 2"), d.message
    fix = ("IndexTaskMap update_voltages g; with def g(Task task) { r = f(task.ipoint, task.ispace, mm); "
           "return mm.merge(0, 1)[r]; }")
    assert d.hints == (f"index the model merged into one dimension: {fix}",), d.hints
    statement, function = fix.split(" with ")
    rewritten = src.replace("IndexTaskMap update_voltages mm f;\n", f"{function}\n{statement}\n")
    assert [x for x in diags(rewritten, circuit, parse_machine_spec("2x4")) if x.is_error] == []


def test_parent_dependent_functions_are_evaluated_with_the_parent_explain_uses(circuit, m14):
    """A function reading task.parent is evaluated with the top-level task on CPU 0 of node 0 as the parent, the one
    `explain` uses: what explain would hit, check finds (it used to skip such functions and say ok)."""
    src = "m = Machine(CPU);\ndef f(Task t) { return m[t.parent.ipoint[0] + 5, 0]; }\nIndexTaskMap update_voltages f;"
    d = only(src, "E205", circuit, m14)
    assert at(d) == (2, 24) and "index 5 >= size 1" in d.message
    assert any("task.parent was the top-level task on the first CPU of node 0" in n for n in d.notes)
    d = only("m = Machine(GPU);\ndef p(Task task) { return m[*task.parent.processor(m)]; }\n"
             "IndexTaskMap update_voltages p;", "E206", circuit, m14)
    assert "processor CPU[node 0, proc 0] is not in Machine(GPU)" in d.message
    d = only("m = Machine(CPU);\ndef p(Task task) { return m[*task.parent.parent.processor(m)]; }\n"
             "IndexTaskMap update_voltages p;", "E206", circuit, m14)
    assert "has no parent" in d.message
    src = ("mg = Machine(GPU);\nmc = Machine(CPU);\n"
           "def p(Task task) { return mg[task.parent.processor(mc)[0], task.ipoint[0] % mg.size[1]]; }\n"
           "IndexTaskMap update_voltages p;")
    assert diags(src, circuit, m14) == []


def test_the_top_level_task_has_no_parent(circuit, m14):
    """The mapper maps the top-level task too (Circuit's 'main', which its description names only as its tasks'
    parent): a map statement selecting it whose function reads task.parent fails there (R406), so check says so;
    naming the other tasks is fine."""
    src = "m = Machine(CPU);\ndef near(Task task) { return m[*task.parent.processor(m)]; }\nSingleTaskMap * near;"
    d = only(src, "E206", circuit, m14)
    assert at(d) == (2, 33) and "task 'main' has no parent (it is the top-level task)" in d.message
    assert d.hints == ("`SingleTaskMap * near;` selects the top-level task too: name the tasks it is for",)
    assert not any("task.parent was the top-level task" in n for n in d.notes)
    assert diags(src.replace("Map *", "Map check_circuit"), circuit, m14) == []


def test_a_note_says_static_evaluation_waits_for_the_errors_to_be_fixed(circuit, m14):
    """An error elsewhere stops the evaluation at the launch points (this E205 is not found): a note, after the
    statements, says that and what is evaluated once the errors are fixed."""
    src = ("m = Machine(CPU);\ndef f(Task t) { return m[t.ipoint[0] + 5, 0]; }\nIndexTaskMap update_voltages f;\n"
           "InstanceLimit update_voltages 0;")
    found = diags(src, circuit, m14)
    assert [(d.code, d.loc.line) for d in found] == [("E215", 4), ("W314", 0)]  # 0: the whole file
    assert found[1].severity == "note" and found[1].message.startswith(
        "static evaluation skipped because of the errors above: once they are fixed, check evaluates the load phase, "
        "every mapping function at every launch point")
    assert [d.code for d in diags(src.replace(" 0;", " 1;"), circuit, m14)] == ["E205"]
    assert [d.code for d in diags(src)] == ["E215"]  # without a machine nothing is evaluated anyway


def test_a_diagnostic_about_the_whole_file_names_the_file_without_a_line(circuit, m14):
    """W314 and W311 are about the whole file: no line (not one past the last) and no source excerpt; after the
    diagnostics of the statements."""
    src = "Task * CPU;\nInstanceLimit update_voltages 0;\n"
    assert render_all(diags(src, circuit, m14), src) == (
        "p.dsl:2:31: error[E215]: InstanceLimit count 0 must be at least 1\n"
        "  2 | InstanceLimit update_voltages 0;\n"
        "    |                               ^\n"
        "  hint: give a count of 1 or more (the most instances of the task mapped and unfinished per processor), "
        "e.g. `InstanceLimit update_voltages 1;`, or remove the statement to leave them unlimited\n"
        "p.dsl: note[W314]: static evaluation skipped because of the errors above: once they are fixed, check "
        "evaluates the load phase, every mapping function at every launch point and the instance each requirement "
        "gets (E205, E209, E217, E219, E222, E223)")
    for empty in ("", "# only a comment\n"):
        assert render_all(diags(empty), empty) == (
            "p.dsl: warning[W311]: the mapper is empty: every decision is Legion's default mapper's\n"
            "  hint: start from a Task statement, e.g. Task * GPU,CPU;")
    # The layout a GEMM's variants reject comes from no statement (the default): the file lacks one, no line has it.
    src = "Task * CPU;\n"
    (d,) = [d for d in diags(src, load_app("cannon"), parse_machine_spec("1x0x2")) if d.code == "E223"]
    assert d.render(src).startswith("p.dsl: error[E223]: the application's variants need C_order instances, but "
                                    "this mapper gives F_order to requirements 0 (A_tiles)")
    # What the run does with them (the GEMMs run without -lg:safe_mapper; then the task's own code decides),
    # not a rejection by the variant that never comes when Legion does not check.
    assert " against the layout constraint their CPU variant registers\n  hint: add `Layout * * * C_order;` " \
           "(without a Layout statement, instances are SOA F_order)\n  note: at run time: `mapperopt run cannon` " \
           "passes no -lg:safe_mapper, so the task runs on these instances" in d.render(src)
    assert "task_4's BLAS call aborts with `DGEMM parameter number N had an illegal value`" in d.render(src)
    assert "rejects" not in d.render(src) and "taco_validate" not in d.render(src)


def test_at_most_twenty_errors_in_source_order():
    found = diags("\n".join(f"x{i} = 1 / 0;" for i in range(30)))
    assert len(found) == 20
    assert [d.loc.line for d in found] == list(range(1, 21))


def test_render_format():
    d = Diagnostic("E201", "error", "undefined variable 'mgpu'", Loc("policy.map", 2, 27),
                   ("add 'mgpu = Machine(GPU);' at top level",), ("some note",))
    source = "Task * GPU;\ndef f(Task task) { return mgpu[0, 0]; }\n"
    assert d.render(source) == (
        "policy.map:2:27: error[E201]: undefined variable 'mgpu'\n"
        "  2 | def f(Task task) { return mgpu[0, 0]; }\n"
        "    |                           ^\n"
        "  hint: add 'mgpu = Machine(GPU);' at top level\n"
        "  note: some note")
    assert Diagnostic("W300", "warning", "m", Loc("f", 9, 1)).render(None) == "f:9:1: warning[W300]: m"


def test_portable_prelude_matters_on_a_cpu_only_machine(circuit):
    """E1 as printed divides by Machine(GPU).size[1] = 0 on a machine without GPUs; the configs' prelude does not."""
    cpu = parse_machine_spec("1x0x2")
    found = check(parse((EXAMPLES / "e1_circuit.dsl").read_text()), circuit, cpu)
    assert [d.code for d in found if d.is_error] == ["E219"]
    assert not [d for d in check(parse((CONFIGS / "circuit.dsl").read_text()), circuit, cpu) if d.is_error]


def test_e222_a_memory_the_task_cannot_use(circuit, m14):
    """A list with no memory the task can use where it runs fails at run time (R403): check says so statically.
    VIRTUAL alone for a leaf task (every circuit task is a leaf) and a framebuffer for a CPU task are errors; a
    fallback from another statement makes them fine; a list of absent kinds stays E221 only."""
    cpu = parse_machine_spec("1x0x1")
    d = only("Task * CPU;\nRegion * * CPU VIRTUAL;", "E222", circuit, cpu)
    assert at(d) == (2, 1) and d.is_error
    assert d.message.startswith("no memory of the list VIRTUAL can hold requirement 0 (")
    assert "of task 'init_piece': VIRTUAL: the variant is a leaf task (and " in d.message
    # The statement the hint gives checks clean (after VIRTUAL, a memory would draw W301).
    (hint,) = [h for h in d.hints if "a leaf task needs a physical instance" in h]
    assert "`Region * * CPU SYSMEM;`" in hint
    assert diags("Task * CPU;\n" + hint.split("`")[1], circuit, cpu) == []
    d = only("Task * CPU;\nRegion calculate_new_currents 3 CPU VIRTUAL;", "E222", circuit, cpu)
    assert "requirement 3 (rp_wires" in d.message and "more requirement" not in d.message
    assert not [x for x in diags("Task * CPU;\nRegion calculate_new_currents 3 CPU VIRTUAL;\nRegion * * * SYSMEM;",
                                 circuit, cpu) if x.is_error]
    d = only("Task * CPU;\nRegion * * CPU FBMEM;", "E222", circuit, m14)  # the framebuffer is the GPUs'
    assert "FBMEM: not visible from CPU[node 0, proc 0]" in d.message
    assert any("add a memory that CPU processors can use, e.g. SYSMEM" in h for h in d.hints)
    assert [x.code for x in diags("Task * CPU;\nRegion * * CPU RDMEM;", circuit, cpu) if x.is_error] == ["E221"]
    assert not [x for x in diags("Task * CPU;\nRegion * * CPU VIRTUAL;", circuit) if x.is_error]  # needs a machine


def test_w329_virtual_for_leaf_tasks_only(circuit):
    """VIRTUAL as one entry of a leaf task's memory list (here with a later statement's SYSMEM) passed silently; the
    run skips it (note R452) and uses SYSMEM. Not for a statement that also selects a task that can map virtually, nor
    where the list has nothing else (E222)."""
    cpu = parse_machine_spec("1x0x1")
    d = only("Task * CPU;\nRegion calculate_new_currents 3 CPU VIRTUAL;\nRegion * * CPU SYSMEM;", "W329", circuit, cpu)
    assert at(d) == (2, 1) and not d.is_error
    assert d.message.startswith("a leaf task cannot use a virtual instance: VIRTUAL in this statement cannot map "
                                "requirement 3 (rp_wires"), d.message
    assert d.message.endswith("of task 'calculate_new_currents'; the run skips VIRTUAL (note R452) and uses SYSMEM, "
                              "the next memory of the list"), d.message
    [hint] = d.hints
    assert "`Region calculate_new_currents 3 CPU SYSMEM;`" in hint
    assert diags("Task * CPU;\n" + hint.split("`")[1] + "\nRegion * * CPU SYSMEM;", circuit, cpu) == []
    d = only("Task * CPU;\nRegion * * CPU SYSMEM;\nRegion * * * VIRTUAL;", "W329", circuit, cpu)
    assert "the run uses SYSMEM, listed before VIRTUAL" in d.message, d.message
    assert "more requirement(s) of leaf tasks" in d.message, d.message
    assert "`Region * * * SYSMEM;`" in d.hints[0]
    assert "W329" not in [x.code for x in diags("Task * CPU;\nRegion * * CPU VIRTUAL;", circuit, cpu)]  # E222
    # A statement that also selects an inner task (mapped virtually) or a non-leaf one: VIRTUAL has a use there.
    tree = AppDescription.from_json({"schema": "mapperopt.app/1", "app": "tree", "discovered": True, "region_tree": [],
                                     "tasks": [
        {"name": "fill", "variants": ["CPU"], "launch": "single", "inner": True, "leaf": False,
         "regions": [{"index": 0, "names": ["data"], "privilege": "read_write", "fields": ["V"]}]},
        {"name": "leaf", "variants": ["CPU"], "launch": "single",
         "regions": [{"index": 0, "names": ["pieces", "data"], "privilege": "write_discard", "fields": ["V"]}]}]})
    assert "W329" not in [x.code for x in diags("Region * data CPU VIRTUAL;\nRegion * * CPU SYSMEM;", tree, cpu)]
    assert "W329" in [x.code for x in diags("Region leaf data CPU VIRTUAL;\nRegion * * CPU SYSMEM;", tree, cpu)]


def test_e221_suggests_a_memory_of_the_statements_processor_kind(circuit):
    """A GPU statement whose only kind is absent (no zero-copy memory) is offered the GPU's framebuffer, not the
    system memory; a CPU statement SYSMEM."""
    no_zc = parse_machine_spec("1x4", ("-ll:zsize", "0"))
    d = only("Task * GPU,CPU;\nRegion * * GPU ZCMEM;", "E221", circuit, no_zc)
    assert d.hints[0] == "add a kind the machine has, e.g. FBMEM (the GPUs' framebuffer), after the others", d.hints
    d = only("Task * CPU;\nRegion * * CPU RDMEM;", "E221", circuit, parse_machine_spec("1x0x1"))
    assert d.hints[0] == "add a kind the machine has, e.g. SYSMEM, after the others", d.hints


def test_w302_a_memory_the_statements_processor_kind_never_sees(circuit, m14):
    """FBMEM listed before SYSMEM for CPU tasks: the machine has a framebuffer, but no CPU sees it, so it is skipped
    for every CPU task, as a kind the machine lacks is (W302 at the kind); alone it is E222, and for GPU tasks fine."""
    d = only("Task * GPU,CPU;\nRegion * * CPU FBMEM,SYSMEM;", "W302", circuit, m14)
    assert at(d) == (2, 16)
    assert d.message == "memory kind 'FBMEM' is not visible from CPU processors on this machine; it is skipped"
    assert not [x for x in diags("Task * GPU,CPU;\nRegion * * GPU FBMEM,SYSMEM;", circuit, m14) if x.code == "W302"]


def test_w302_a_statement_whose_only_memory_its_processor_kind_never_sees(circuit, m14):
    """`Region * rp_shared CPU FBMEM;` after `Region * * CPU SYSMEM;` passed as ok: no CPU sees the framebuffer, so
    the statement does nothing (rp_shared goes on to the earlier statement's SYSMEM), as FBMEM does in
    `CPU FBMEM,SYSMEM` (W302). Alone it is E222 (nothing else to go on to). On a machine without GPUs, W302 says
    that CPUs never see FBMEM anyway, so that the statement is not taken for one that works on a GPU machine."""
    src = "Task * CPU;\nRegion * * CPU SYSMEM;\nRegion * rp_shared CPU FBMEM;"
    d = only(src, "W302", circuit, m14)
    assert at(d) == (3, 24) and not d.is_error
    assert d.message == "memory kind 'FBMEM' is not visible from CPU processors on this machine; it is skipped"
    [hint] = d.hints
    assert "so the statement places no instance" in hint and "`Region * rp_shared GPU FBMEM;`" in hint, hint
    assert not [x for x in diags(src, circuit, m14) if x.is_error]
    assert only(src, "W302", None, m14).message == d.message  # without an application
    alone = [x.code for x in diags("Task * CPU;\nRegion * rp_shared CPU FBMEM;", circuit, m14)]
    assert "E222" in alone and "W302" not in alone, alone
    # Where no task runs on CPUs, the statement never applies (as where the machine has no CPUs): not reported.
    assert "W302" not in [x.code for x in diags(src.replace("Task * CPU;", "Task * GPU;"), circuit, m14)]
    cpu = parse_machine_spec("1x0x1")
    d = only(src, "W302", circuit, cpu)
    assert d.message == ("memory kind 'FBMEM' does not exist on this machine, and CPU processors never see it on "
                         "any machine (FBMEM is a GPU's memory); it is skipped"), d.message
    d = only("Task * CPU;\nRegion * rp_shared CPU FBMEM;", "E221", circuit, cpu)
    assert "CPU processors never see FBMEM on any machine (FBMEM is a GPU's memory)" in d.notes, d.notes
    # A kind another processor kind's machine would let it see is only absent here.
    assert only("Region * * * SYSMEM;\nRegion * * CPU ZCMEM;", "W302", machine=cpu).message == (
        "memory kind 'ZCMEM' does not exist on this machine; it is skipped")


def test_a_tuple_index_out_of_range_is_e205_not_a_type_error(circuit, m14):
    """docs/dsl-reference.md: E206 is a type error; an index out of range is E205 statically (R408 at run time)."""
    d = only("t = (0,);\nx = t[1];", "E205", None, m14)
    assert at(d) == (2, 5) and d.message.startswith("tuple index 1 out of range for (0,)")
    assert any("at run time: R408" in n for n in d.notes)
    assert "E206" not in [d.code for d in diags("t = (0,);\nx = t[1];", None, m14)]
    src = "m = Machine(CPU);\ndef f(Task t) { i = (0, 1); return m[i[-3], 0]; }\nIndexTaskMap update_voltages f;"
    assert only(src, "E205", circuit, m14).message.startswith("tuple index -3 out of range")
    assert only("t = (0,);\nx = t[1 < 2];", "E206", None, m14)  # a wrong index type stays a type error


def test_e205_for_an_ipoint_index_past_the_launchs_dimensions_says_how_many_it_has(circuit, m14):
    """`task.ipoint[1]` of a 1-D launch: the hint says task.ipoint has 1 dimension, that of the launch domain."""
    src = "m = Machine(CPU);\ndef f(Task t) { return m[0, t.ipoint[1] % m.size[1]]; }\nIndexTaskMap update_voltages f;"
    d = only(src, "E205", circuit, m14)
    assert d.message.startswith("tuple index 1 out of range for (0,)"), d.message
    assert "t.ipoint has 1 dimension, one per dimension of the launch domain: index it with 0" in d.hints, d.hints


def test_w316_control_replicate_on_one_node_is_a_note():
    d = only("Task * CPU;\nControlReplicate calc,dist;", "W316", machine=parse_machine_spec("1x0x2"))
    assert (d.severity, at(d)) == ("note", (2, 1))
    assert d.message == ("ControlReplicate has no effect on this machine (1 node of 2 CPUs): it makes one shard per "
                         "node, and there is one node")
    # Several nodes, or no machine to check against: nothing said.
    for machine in (parse_machine_spec("2x1"), None):
        assert [d.code for d in diags("ControlReplicate calc;", None, machine)] == []


def test_w304_notes_an_unused_machine_model_like_an_unused_function():
    """`check` notes every definition tune would drop: a machine model nothing reads, and one (or a function) read
    only by definitions that are themselves unused, which says by which."""
    d = only("mgpu = Machine(GPU);\nTask * CPU;", "W304")
    assert d.severity == "note" and at(d) == (1, 1)
    assert d.message == "machine model 'mgpu' is defined but never used"
    found = [d for d in diags("mio = Machine(CPU);\nmc = Machine(CPU);\ndef far(Task t) { return mio[0, 0]; }\n"
                              "def spare(Task t) { return far(t); }\ndef f(Task t) { return mc[0, 0]; }\n"
                              "IndexTaskMap a f;") if d.code == "W304"]
    assert [d.message for d in found] == ["machine model 'mio' is used only by 'far', which nothing uses",
                                          "function 'far' is used only by 'spare', which nothing uses",
                                          "function 'spare' is defined but never used"]
    assert not [d for d in diags("m = Machine(CPU);\ndef f(Task t) { return 0; }\nIndexTaskMap a m f;")
                if d.code == "W304"]  # read by the map statement's machine only


def test_w304_notes_an_unused_transformed_machine_model():
    """A model made by transforming another (`grid = mc.auto_split(...)`) and read by nothing was not noted, nor the
    model only it reads: W304 notes both, as for `Machine(K)` alone; a used one is not noted."""
    src = "Task * CPU;\nmc = Machine(CPU);\ngrid = mc.auto_split(0, (2, 2));\nmm = Machine(CPU);\n"
    found = [(d.message, at(d), d.severity) for d in diags(src, None, parse_machine_spec("1x0x4")) if d.code == "W304"]
    assert found == [("machine model 'mc' is used only by 'grid', which nothing uses", (2, 1), "note"),
                     ("machine model 'grid' is defined but never used", (3, 1), "note"),
                     ("machine model 'mm' is defined but never used", (4, 1), "note")], found
    d = only("Task * CPU;\nb = Machine(CPU).balance_split(1, 2);", "W304")
    assert d.message == "machine model 'b' is defined but never used", d.message
    used = src + "def f(Task t) { return grid[0, 0, 0]; }\nIndexTaskMap stencil f;\n"
    assert [d.message for d in diags(used) if d.code == "W304"] == ["machine model 'mm' is defined but never used"]


def test_unused_definitions_are_only_what_nothing_reads():
    """What tune drops from the programs it writes: a model read only by a map statement's machine, a global or a
    function another used function calls stays; a function only an unused one calls goes, and the model it reads."""
    from mapperopt.dsl.checker import unused_definitions

    program = parse("mg = Machine(GPU);\nmc = Machine(CPU);\nm2 = Machine(CPU);\nmall = m2.merge(0, 1);\n"
                    "mio = Machine(CPU);\ndef far(Task t) { return mio[0, 0]; }\ndef spare(Task t) { return far(t); }\n"
                    "def near(Task t) { return mg[0, 0]; }\ndef f(Task t) { return near(t); }\n"
                    "IndexTaskMap a mc f;\n", "p.dsl")
    assert [s.name for s in unused_definitions(program)] == ["mio", "far", "spare"]


def test_e209_offers_only_kinds_the_task_has_a_variant_for(circuit, m14):
    """A mapping function returning a GPU for init_piece (CPU variant only): running it on GPU is no fix."""
    src = "Task * GPU,CPU;\nmg = Machine(GPU);\ndef g(Task t) { return mg[0, 0]; }\nIndexTaskMap init_piece g;"
    d = only(src, "E209", circuit, m14)
    assert d.hints == ("return a processor of Machine(CPU), where 'init_piece' runs",)


def test_w305_collect_memory_on_a_name_with_a_written_requirement(circuit):
    """rp_wires names requirement 3 (read-only) and 4 (read-write) of calculate_new_currents: the run ignores 4
    (warning R450), so check warns too."""
    d = only("CollectMemory calculate_new_currents rp_wires;", "W305", circuit)
    assert d.message == ("CollectMemory ignores the selected requirements that are not read-only (requirement 4 of "
                         "'calculate_new_currents' (rp_wires) is read-write)")
    assert d.hints == ("CollectMemory only releases read-only instances; select the read-only ones by index: "
                       "CollectMemory calculate_new_currents 3;",)
    assert diags("CollectMemory calculate_new_currents 3;", circuit) == []


def test_w309_rewrite_uses_a_free_name():
    src = ("m = Machine(CPU);\ndef f(IPoint p, ISpace s, MSpace mm) { return (0, p[0]); }\n"
           "def g(Task t) { return m[0, 0]; }\ng2 = 1;\nIndexTaskMap t m f;")
    d = only(src, "W309", None)
    assert "IndexTaskMap t g3; with def g3(Task task) { r = f(task.ipoint, task.ispace, m); return m[*r]; }" in (
        d.message)


def test_w309_rewrites_compile_together_for_an_int_and_a_tuple(circuit):
    """The notes' rewrites, followed literally for both statements, give a program without errors: the int-returning
    function's model is indexed by the int, the tuple's unpacked, and each note proposes a name of its own."""
    src = ("mcpu = Machine(CPU);\nmflat = mcpu.merge(0, 1);\n"
           "def cyc(IPoint p, ISpace s, MSpace m) { return (0, p[0] % m.size[1]); }\n"
           "def lin(IPoint p, ISpace s, MSpace m) { return p[0] % m.volume; }\n"
           "IndexTaskMap calculate_new_currents mcpu cyc;\nIndexTaskMap distribute_charge mflat lin;\n")
    notes = [d.message for d in diags(src, circuit) if d.code == "W309"]
    assert len(notes) == 2
    rewritten = src.split("IndexTaskMap")[0]
    for note in notes:
        statement, function = note.split("equivalent to ")[1].split(" with ")
        rewritten += f"{function}\n{statement}\n"
    assert "return mflat[r];" in rewritten and "return mcpu[*r];" in rewritten
    assert [d for d in diags(rewritten, circuit) if d.is_error] == []


@pytest.mark.parametrize("src", [
    "r = Machine(CPU);\ndef f(IPoint p, ISpace s, MSpace m) { return (0, p[0] % m.size[1]); }\n"
    "IndexTaskMap calculate_new_currents r f;\n",
    "mcpu = Machine(CPU);\nmflat = mcpu.merge(0, 1);\ndef r(IPoint p, ISpace s, MSpace m) { return p[0]; }\n"
    "IndexTaskMap calculate_new_currents mflat r;\n",
    "task = Machine(CPU);\ndef f(IPoint p, ISpace s, MSpace m) { return (0, p[0] % m.size[1]); }\n"
    "IndexTaskMap calculate_new_currents task f;\n",
])
def test_w309_rewrite_names_its_parameter_and_local_free_of_the_programs_names(src, circuit):
    """A machine or a function called `r` (or `task`) is not the rewrite's local (or parameter): followed literally,
    the note gives a program without errors or warnings (a fixed `r` indexed the tuple, or clashed with the
    function: E206, E211)."""
    (note,) = [d.message for d in diags(src, circuit) if d.code == "W309"]
    statement, function = note.split("equivalent to ")[1].split(" with ")
    rewritten = src.split("IndexTaskMap")[0] + f"{function}\n{statement}\n"
    assert diags(rewritten, circuit) == [], rewritten


def test_render_shows_a_window_of_a_long_line_around_the_caret():
    """A source line longer than `SOURCE_WIDTH` is cut to a window around the caret, each cut marked '...', so that
    the caret stays on screen; a short line is shown whole, as above."""
    tasks = ",".join(f"task_number_{i}" for i in range(25))
    text = f"Region {tasks} * CPU SYSMEM,ZCMEM FBMEM;"
    col = text.index("FBMEM") + 1
    lines = Diagnostic("E100", "error", "unexpected 'FBMEM'", Loc("p.dsl", 1, col)).render(text).splitlines()
    shown, caret = lines[1], lines[2]
    assert shown.startswith("  1 | ...") and shown.endswith("SYSMEM,ZCMEM FBMEM;"), shown
    assert len(shown) - len("  1 | ") <= SOURCE_WIDTH + 3, shown
    assert shown[caret.index("^"):].startswith("FBMEM;"), (shown, caret)
    # The caret at the start of a long line: the line's start, cut at its end.
    lines = Diagnostic("E100", "error", "m", Loc("p.dsl", 1, 1)).render(text).splitlines()
    assert lines[1].startswith("  1 | Region task_number_0,") and lines[1].endswith("...") and lines[2] == "    | ^"
    # In the middle of a long expression: cut at both ends, the caret under its character.
    body = "  return " + " + ".join(f"task.ipoint[{i % 2}]" for i in range(30)) + ";"
    col = body.index("ipoint[0] + task.ipoint[1] + task.ipoint[0] + task.ipoint[1] + task", 200) + 1
    lines = Diagnostic("E104", "error", "m", Loc("p.dsl", 1, col)).render(body).splitlines()
    assert lines[1].startswith("  1 | ...") and lines[1].endswith("..."), lines[1]
    assert lines[1][lines[2].index("^"):].startswith("ipoint[0]"), lines


def test_e223_quotes_the_layout_constraint_legion_finds_failed():
    """With -lg:safe_mapper Legion names the constraint an instance fails, `Ordering` or `Alignment`: E223's note
    quotes the one that conflicts (it quoted the ordering one for an alignment too)."""
    spec = load_app("cannon").to_json()
    for task in spec["tasks"]:
        for r in task["regions"]:
            r.pop("layout", None)
    (task_4,) = [t for t in spec["tasks"] if t["name"] == "task_4"]
    task_4["regions"][0]["required_align"] = {"CPU": {"op": ">=", "bytes": 128}}
    app = AppDescription.from_json(spec)
    src = "Task * CPU;\nLayout * * * Align==16;\n"
    (d,) = [d for d in diags(src, app, parse_machine_spec("1x0x2")) if d.code == "E223"]
    assert d.message.startswith("the application's variants need Align>=128 instances, but this mapper gives "
                                "Align==16 to requirement 0 (A_tiles) of task_4"), d.message
    (note,) = d.notes
    assert "`Invalid mapper output ... fails to satisfy the corresponding Alignment layout constraint`" in note, note
    assert "Ordering" not in note and "ordering" not in note, note
    # A dimension order: the ordering constraint.
    (d,) = [d for d in diags("Task * CPU;\n", load_app("cannon"), parse_machine_spec("1x0x2")) if d.code == "E223"]
    assert "`Invalid mapper output ... fails to satisfy the corresponding Ordering layout constraint`" in d.notes[0]
    assert "Alignment" not in d.notes[0]


def test_w317_for_any_instance_limit_on_a_launch_mapped_collectively():
    """The mapper maps a collectively mapped requirement (the description's `collective`) per point under any
    InstanceLimit of its task (or, with collective coherence, holds back no point; compiler/runtime/dsl_mapper.cc,
    note R459), whatever N: W317 says so for a limit at or above the launch's points too, and for no other task."""
    app = AppDescription.from_json({"schema": "mapperopt.app/1", "app": "hist", "tasks": [
        {"name": "histogram", "variants": ["CPU"], "launch": "index", "domain": [8], "regions": [
            {"index": 0, "names": ["pieces"], "privilege": "read_only"},
            {"index": 1, "names": ["bins"], "privilege": "reduce", "redop": "sum_i64", "collective": True}]},
        {"name": "fill", "variants": ["CPU"], "launch": "index", "domain": [8],
         "regions": [{"index": 0, "names": ["pieces"], "privilege": "read_write"}]}]})
    for limit in (2, 8, 100):
        d = only(f"Task * CPU;\nInstanceLimit histogram {limit};\n", "W317", app)
        assert d.message == (
            f"InstanceLimit {limit} applies to the index launch of 'histogram' (8 points): Legion maps its "
            "requirement 1 (bins), which every point reduces into, with all points together; under an InstanceLimit "
            "of any count the mapper maps it per point instead, or, with collective coherence, holds back no point "
            "of the launch (note R459)"), d.message
        assert d.hints == ("without an InstanceLimit on 'histogram', Legion maps it collectively again",)
    assert not [d for d in diags("Task * CPU;\nInstanceLimit fill 2;\n", app) if d.code == "W317"]


def test_w318_says_which_launch_points_the_static_evaluation_left_out(circuit, m14, with_domain):
    """Static evaluation stops at a launch's first 4096 points: a function that fails only past them gets a note
    naming the launch and the points left, so that `ok` is not read as every point checked."""
    src = ("Task * GPU,CPU;\nmgpu = Machine(GPU);\n"
           "def f(Task task) { return mgpu[0, task.ipoint[0] < 5000 ? task.ipoint[0] % 4 : 4]; }\n"
           "IndexTaskMap calculate_new_currents f;\n")
    app = with_domain(circuit, (6000,))
    d = only(src, "W318", app, m14)
    assert (d.severity, at(d)) == ("note", (4, 1))
    assert d.message == ("static evaluation checked the first 4096 points of the index launch of "
                         "'calculate_new_currents' over (6000,) (up to point (4095,)); its other 1904 points were not "
                         "evaluated")
    assert not [x for x in diags(src, app, m14) if x.is_error]
    # Every point evaluated, or one that failed (an error names it): nothing to note.
    assert "W318" not in [x.code for x in diags(src, with_domain(circuit, (4096,)), m14)]
    late = src.replace("5000", "100")
    assert [x.code for x in diags(late, app, m14) if x.code in ("W318", "E205")] == ["E205"]
    d = only(src, "W318", with_domain(circuit, (100, 50)), m14)
    assert "over (100, 50) (up to point (81, 45)); its other 904 points" in d.message


def test_w319_control_replicate_of_a_task_legion_cannot_replicate(circuit, m24):
    """Legion replicates only tasks launched one at a time with a replicable variant, and no benchmark registers one:
    check says so instead of ok; the top-level task, which the description names as its tasks' parent, is no
    unknown task (E202) for ControlReplicate."""
    src = "Task * CPU;\nControlReplicate calculate_new_currents,check_circuit;\nControlReplicate main;\n"
    found = diags(src, circuit, m24)
    assert [(d.code, at(d)) for d in found] == [("W319", (2, 18)), ("W319", (2, 41)), ("W319", (3, 18))], found
    assert found[0].message == ("ControlReplicate cannot replicate 'calculate_new_currents': it is index-launched, and "
                                "Legion replicates only tasks launched one at a time; the statement has no effect")
    assert found[1].message == ("ControlReplicate cannot replicate 'check_circuit' (a task launched one at a time): "
                                "Legion replicates only a variant registered as replicable, and benchmark 'circuit' "
                                "registers none; it runs unreplicated")
    assert "'main' (the top-level task)" in found[2].message
    assert only("ControlReplicate mian;", "E202", circuit, m24).message == "unknown task 'mian' (application 'circuit')"
    # A user's program may register a replicable variant: only the index-launched task is said.
    user = replace(circuit, discovered_as="./circuit -p 4")
    assert [d.code for d in diags(src, user, m24)] == ["W319"]


def test_task_statement_on_a_kind_without_processors_says_it_is_skipped(stencil):
    """`Task check IO;` on a machine without IO processors: 'check' went on with the `Task *` list (CPU), silently.
    GPU alone is the portable fallback (`Task calc GPU;` with `Task * CPU;`), not reported."""
    machine = parse_machine_spec("1x4x2")
    src = "Task * GPU,CPU;\nTask check IO;\n"
    d = only(src, "W303", stencil, machine)
    assert d.message.startswith("processor kind 'IO' has no processors on this machine") and at(d) == (2, 12)
    assert "'check' goes on with the kinds of the `Task *` statements" in d.message
    assert [x for x in diags("Task * CPU;\nTask stencil GPU;\n", stencil, parse_machine_spec("1x0x2"))
            if x.code == "W303"] == []


def test_task_statement_for_a_kind_the_task_has_no_variant_for_never_applies(stencil):
    """`Task check IO;` for stencil, whose 'check' has only a CPU variant: it applies on no machine (with IO
    processors too), said as W305 is for other statements without effect; W303 does not promise it applies on a
    machine with IO processors."""
    src = "Task * CPU;\nTask check IO;\n"
    for machine in (None, parse_machine_spec("1x0x1"), parse_machine_spec("1x4x2")):
        d = only(src, "W305", stencil, machine)
        assert d.message == "Task check IO; has no effect: task 'check' has no IO variant (variants: CPU)", d.message
        assert at(d) == (2, 1) and d.hints == ("drop it, or list a kind 'check' has a variant for",), d.hints
    d = only("Task * GPU,CPU;\nTask check IO;\n", "W303", stencil, parse_machine_spec("1x4x2"))
    assert not any("applies on a machine with IO processors" in h for h in d.hints), d.hints
    # A kind the task has a variant for: no W305.
    assert "W305" not in [x.code for x in diags("Task * CPU;\nTask stencil GPU,CPU;\n", stencil)]


@pytest.mark.parametrize("src,fixed", [
    ("Region calculate_new_currents SYSMEM rp_ghost CPU;", "Region calculate_new_currents rp_ghost CPU SYSMEM;"),
    ("Region calculate_new_currents FBMEM,ZCMEM rp_ghost GPU;",
     "Region calculate_new_currents rp_ghost GPU FBMEM,ZCMEM;"),
    ("Region CPU calculate_new_currents rp_ghost SYSMEM;", "Region calculate_new_currents rp_ghost CPU SYSMEM;"),
    ("Layout CPU calculate_new_currents rp_ghost SOA;", "Layout calculate_new_currents rp_ghost CPU SOA;"),
    ("InstanceLimit CPU calculate_new_currents 2;", "InstanceLimit calculate_new_currents CPU 2;"),
    ("InstanceLimit GPU calculate_new_currents,distribute_charge 2;",
     "InstanceLimit calculate_new_currents,distribute_charge GPU 2;"),
    ("Layout SYSMEM * * AOS;", "Layout * * SYSMEM AOS;"),
    ("Layout calculate_new_currents SYSMEM rp_ghost SOA Align==64;",
     "Layout calculate_new_currents rp_ghost SYSMEM SOA Align==64;"),
    ("CollectMemory calculate_new_currents CPU rp_ghost;", "CollectMemory calculate_new_currents rp_ghost;"),
    # The kind before the task of a Task statement; task lists; `*` after a leading kind; a kind before a
    # CollectMemory's task.
    ("Task CPU calculate_new_currents;", "Task calculate_new_currents CPU;"),
    ("Task CPU *;", "Task * CPU;"),
    ("Task GPU,CPU calculate_new_currents,distribute_charge;",
     "Task calculate_new_currents,distribute_charge GPU,CPU;"),
    ("Region calculate_new_currents,distribute_charge GPU rp_ghost FBMEM,ZCMEM;",
     "Region calculate_new_currents,distribute_charge rp_ghost GPU FBMEM,ZCMEM;"),
    ("Region calculate_new_currents,distribute_charge SYSMEM rp_ghost CPU;",
     "Region calculate_new_currents,distribute_charge rp_ghost CPU SYSMEM;"),
    ("Region CPU calculate_new_currents,distribute_charge rp_ghost SYSMEM;",
     "Region calculate_new_currents,distribute_charge rp_ghost CPU SYSMEM;"),
    ("Layout GPU * rp_ghost AOS;", "Layout * rp_ghost GPU AOS;"),
    ("Layout calculate_new_currents,distribute_charge CPU rp_ghost SOA;",
     "Layout calculate_new_currents,distribute_charge rp_ghost CPU SOA;"),
    ("CollectMemory CPU * rp_ghost;", "CollectMemory * rp_ghost;"),
    ("CollectMemory CPU calculate_new_currents rp_ghost;", "CollectMemory calculate_new_currents rp_ghost;"),
])
def test_e109_a_kind_out_of_place_gets_the_statement_in_order(src, fixed, circuit, m14):
    """A kind written before the region (memory and processor kinds swapped around it), before the task
    (InstanceLimit, Layout with a memory kind), or in a CollectMemory, which takes none: E109's hint writes the
    statement in order, and that statement checks clean."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    err = info.value
    assert err.code == "E109", str(err)
    assert any(h.endswith(f"write {fixed}") for h in err.diagnostic.hints), err.diagnostic.hints
    for machine in (m14, parse_machine_spec("1x0x2")):
        # W330: AOS of all_nodes' 4 fields beside other tasks' SOA, a run-time risk not tested here
        assert [d for d in diags(fixed, circuit, machine) if d.code != "W330"] == [], fixed


def test_e109_row_of_dsl_reference_says_when_a_statement_is_written():
    """Every statement dsl-reference's E109 entry (below its table) gives as getting a rewrite gets one ("write ..."),
    and the task-list example gets none."""
    text = (Path(__file__).parents[2] / "docs" / "dsl-reference.md").read_text()
    entry = text.split("\n**E109** ", 1)[1].split("\n**", 1)[0]  # to the next entry
    rewritten, rest = entry.split("writes the statement in order", 1)[1].split("A processor kind inside a task list")
    for src in re.findall(r"`([^`]*;)`", rewritten):
        with pytest.raises(DslSyntaxError) as info:
            parse(src, "bad.dsl")
        assert info.value.code == "E109" and any("write " in h for h in info.value.diagnostic.hints), (src, info.value)
    for src in [x for x in re.findall(r"`([^`]*;)`", rest) if "," in x.split()[1]]:
        with pytest.raises(DslSyntaxError) as info:
            parse(src, "bad.dsl")
        assert not any("write " in h for h in info.value.diagnostic.hints), (src, info.value)


@pytest.mark.parametrize("src", ["IndexTaskMap calculate_new_currents,CPU f;\ndef f(Task t) { return 0; }",
                                 "SingleTaskMap calculate_new_currents,GPU f;",
                                 "Region calculate_new_currents,CPU rp_ghost SYSMEM;"])
def test_e109_a_kind_after_a_name_in_a_task_list_says_what_a_task_list_holds(src):
    """A kind after a task name in a task list: whether a kind selector or the task names were meant is not clear,
    so no statement is written, but the hint says what each form is (it gave none)."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    err = info.value
    assert err.code == "E109", str(err)
    assert err.diagnostic.hints and "task list" in err.diagnostic.hints[0], err.diagnostic.hints
    assert not any("write " in h for h in err.diagnostic.hints), err.diagnostic.hints


@pytest.mark.parametrize("stmt,what", [
    ("Region check * GPU FBMEM;", "task 'check' has no GPU variant (variants: CPU)"),
    ("InstanceLimit check GPU 2;", "task 'check' has no GPU variant (variants: CPU)"),
    ("Layout check * GPU AOS;", "task 'check' has no GPU variant (variants: CPU)"),
    ("Region check * IO SYSMEM;", "task 'check' has no IO variant (variants: CPU)"),
    ("InstanceLimit check IO 2;", "task 'check' has no IO variant (variants: CPU)"),
    # FBMEM is a GPU's own memory: only a task running on a GPU gets an instance there.
    ("Layout check * FBMEM AOS;", "FBMEM is a GPU's memory, and task 'check' has no GPU variant (variants: CPU)"),
])
def test_statement_for_a_kind_a_named_task_has_no_variant_for_never_applies(stmt, what, stencil):
    """Region, InstanceLimit and Layout statements for a processor kind the task they name has no variant for (or
    Layout for a memory only that kind reaches) apply on no machine, as `Task check IO;` does (W305): check said ok."""
    src = f"Task * GPU,CPU;\n{stmt}\n"
    for machine in (None, parse_machine_spec("1x4"), parse_machine_spec("1x0x2")):
        d = only(src, "W305", stencil, machine)
        assert d.message == f"{stmt} has no effect: {what}", d.message
        assert at(d) == (2, 1) and d.hints[0].startswith("drop it"), d


@pytest.mark.parametrize("stmt", ["Region check * GPU FBMEM;", "Region check * GPU FBMEM,ZCMEM;",
                                  "Region check * IO SYSMEM;",
                                  "InstanceLimit check GPU 2;", "Layout check * GPU AOS;", "Layout check * FBMEM AOS;",
                                  "Region check,stencil * GPU FBMEM;", "InstanceLimit stencil,check GPU 2;",
                                  "Layout check,stencil * FBMEM SOA;"])
def test_w305_hint_applied_checks_clean(stmt, stencil):
    """W305's hint names the statements to write instead; pasted in place of the statement, they check clean (the
    Region hint said "write it for a kind 'check' has a variant for: CPU", and `Region check * CPU FBMEM;` is E222)."""
    src = f"Task * GPU,CPU;\n{stmt}\n"
    d = only(src, "W305", stencil)
    written = re.findall(r"`([^`]*)`", d.hints[0])
    assert written, d.hints
    fixed = src.replace(stmt, "\n".join(written))
    for machine in (None, parse_machine_spec("1x4"), parse_machine_spec("1x2x2")):
        assert diags(fixed, stencil, machine) == [], (d.hints, fixed, machine)


def test_statement_for_a_kind_only_some_named_tasks_lack_says_which(stencil):
    d = only("Task * GPU,CPU;\nInstanceLimit stencil,check GPU 2;\n", "W305", stencil)
    assert d.message == ("InstanceLimit stencil,check GPU 2; has no effect on 'check': task 'check' has no GPU "
                         "variant (variants: CPU)"), d.message


@pytest.mark.parametrize("stmt", ["Region check * CPU SYSMEM;", "Region stencil * GPU FBMEM;", "InstanceLimit check 2;",
                                  "InstanceLimit check * 2;", "Layout check * ZCMEM AOS;", "Layout check * SYSMEM AOS;",
                                  "Layout stencil * FBMEM AOS;", "Region * * GPU FBMEM;", "Layout check * * AOS;"])
def test_statement_for_a_kind_a_task_can_run_on_is_no_w305(stmt, stencil):
    assert "W305" not in [x.code for x in diags(f"Task * GPU,CPU;\n{stmt}\n", stencil, parse_machine_spec("1x4"))]


def test_empty_machine_model_hint_names_only_what_machine_option_describes(circuit):
    """Machine(IO) with no IO processor: the hint suggested `--machine 1x4`, which has no IO processor either; it says
    what --machine describes. For GPUs it still suggests a --machine with GPUs."""
    cpu = parse_machine_spec("1x0x2")
    for kind in ("IO", "PY"):
        src = f"Task * CPU;\nm = Machine({kind});\ndef f(Task t) {{ return m[0, 0]; }}\nIndexTaskMap init_piece f;\n"
        d = only(src, "E205", circuit, cpu)
        text = " ".join(d.hints)
        assert "--machine 1x4" not in text and "--machine describes nodes, GPUs and CPUs only" in text, d.hints
    src = "Task * CPU;\nm = Machine(GPU);\ndef f(Task t) { return m[0, 0]; }\nIndexTaskMap init_piece f;\n"
    assert "--machine 1x4" in " ".join(only(src, "E205", circuit, cpu).hints)


def test_e206_after_a_split_names_the_split():
    """A model made by `split(1, 3)` and indexed as the model it split (two values for three dimensions): the hint
    names the split, what it did and the model with that many dimensions, not a merge undoing it."""
    src = ("Task * CPU;\nm = Machine(CPU);\ndef f(Task t) {\n  s = m.split(1, 3);\n  return s[0, t.ipoint[0] % 3];\n}\n"
           "IndexTaskMap x f;")
    d = only(src, "E206")
    assert d.message == "2 index values for a 3-dimensional machine model", d
    assert d.hints == ("give one index per dimension: s[i0, i1, i2], or a point's coordinates: s[*t.ipoint]",
                       "`s` is `m.split(1, 3)`: the split made dimension 1 of `m` two, of sizes 3 and m.size[1] / 3; "
                       "`m` itself takes 2 index values"), d
    d = only("m = Machine(CPU);\nx = m.split(0, 1)[0, 0];", "E206")
    assert d.hints[1] == ("`m.split(0, 1)`: the split made dimension 0 of `m` two, of sizes 1 and m.size[0] / 1; "
                          "`m` itself takes 2 index values"), d


NODE0 = ("Task * GPU,CPU;\nmgpu = Machine(GPU);\n"
         "def node0(Task task) { return mgpu[0, task.ipoint[0] % mgpu.size[1]]; }\n"
         "IndexTaskMap calculate_new_currents,distribute_charge node0;\n")


def test_w320_every_point_of_an_index_launch_on_one_node_of_several(circuit, m14, m24, with_domain):
    """A mapping function that puts every point of a launch on node 0 of a machine of several nodes, more points than
    node 0 has processors, left the others idle, and check said ok: one warning per statement, naming its launches
    and the nodes left without a point."""
    app = with_domain(circuit, (8,))
    d = only(NODE0, "W320", app, parse_machine_spec("4x4"))
    assert at(d) == (4, 1), d
    assert d.message == ("every point of the index launches of 'calculate_new_currents' and 'distribute_charge' "
                         "(8 points each) runs on node 0, more points than its 4 GPUs: nodes 1-3 of this machine "
                         "get none of them")
    # The hint's example uses the file's own machine model.
    assert d.hints == ("spread the points over the nodes from task.ipoint, e.g. "
                       "`mgpu[task.ipoint[0] % mgpu.size[0], ...]`, or describe the machine meant with --machine",)
    assert "W320" not in [x.code for x in diags(NODE0, app, m14)]  # one node
    spread = NODE0.replace("mgpu[0,", "mgpu[task.ipoint[0] % mgpu.size[0],")
    assert "W320" not in [x.code for x in diags(spread, app, m24)]
    # Two launches each on its own node: a warning per node.
    two = NODE0.replace("IndexTaskMap calculate_new_currents,distribute_charge node0;",
                        "def node1(Task task) { return mgpu[1, 0]; }\nIndexTaskMap calculate_new_currents node0;\n"
                        "IndexTaskMap distribute_charge node1;")
    found = [x.message for x in diags(two, app, m24) if x.code == "W320"]
    assert [m[m.index("runs on"):] for m in found] == [
        "runs on node 0, more points than its 4 GPUs: node 1 of this machine gets none of them",
        "runs on node 1, more points than its 4 GPUs: node 0 of this machine gets none of them"], found
    # One GPU per node: "its 1 GPU", not "1 GPUs".
    one = only(NODE0, "W320", app, parse_machine_spec("4x1"))
    assert "runs on node 0, more points than its 1 GPU: nodes 1-3 " in one.message, one.message
    # No more points than node 0 has GPUs: one per GPU, maybe meant (near their data).
    assert "W320" not in [x.code for x in diags(NODE0, with_domain(circuit, (4,)), parse_machine_spec("4x4"))]


@pytest.mark.parametrize("src,first,fixed", [
    # The one-operand form, with the parameter named otherwise than `task`.
    ("Task * GPU,CPU;\nmgpu = Machine(GPU);\ndef node0(Task t) { return mgpu[0, t.ipoint[0] % mgpu.size[1]]; }\n"
     "IndexTaskMap calculate_new_currents node0;\n", "mgpu[0,", "mgpu[t.ipoint[0] % mgpu.size[0], ...]"),
    # The three-operand form: the function returns the index, from its own parameters (the model passed is `m2`).
    ("Task * GPU,CPU;\ndef g(IPoint pt, ISpace sp, MSpace mm) { return (0, pt[0] % mm.size[1]); }\n"
     "m2 = Machine(GPU);\nIndexTaskMap calculate_new_currents m2 g;\n", "(0,", "(pt[0] % mm.size[0], ...)"),
    # ... one index of a model merged into one dimension.
    ("Task * GPU,CPU;\ndef g(IPoint p, ISpace s, MSpace m) { return p[0] % 4; }\n"
     "m1 = Machine(GPU).merge(0, 1);\nIndexTaskMap calculate_new_currents m1 g;\n", "p[0] % 4", "p[0] % m.size[0]"),
])
def test_w320_hint_is_written_in_the_form_of_the_function(src, first, fixed, circuit, with_domain):
    """The hint's example is an expression the function can return as written, in its own names: `task.ipoint` and
    `m[...]` were offered for a three-operand form's function, which has neither; pasted in (its `...` the rest of
    what the function returned), W320 goes."""
    app, machine = with_domain(circuit, (8,)), parse_machine_spec("4x4")
    d = only(src, "W320", app, machine)
    (example,) = [h.split("`")[1] for h in d.hints]
    assert example == fixed, d.hints
    done = example.split(", ...")[0] + ("," if ", ..." in example else "")
    assert "W320" not in [x.code for x in diags(src.replace(first, done), app, machine)]


@pytest.mark.parametrize("src,example,old,new", [
    # After swap(0, 1) index 0 is the processor and index 1 the node: the hint indexes dimension 1 (it repeated the
    # function's own `ms[task.ipoint[0] % ms.size[0], ...]`, and pasted in, the warning stayed).
    ("Task * CPU;\nms = Machine(CPU).swap(0, 1);\n"
     "def f(Task task) { return ms[task.ipoint[0] % ms.size[0], 0]; }\nIndexTaskMap calculate_new_currents f;\n",
     "ms[..., task.ipoint[0] % ms.size[1]]", "ms.size[0], 0]", "ms.size[0], task.ipoint[0] % ms.size[1]]"),
    # The three-operand form, the model passed swapped.
    ("Task * CPU;\ndef g(IPoint p, ISpace s, MSpace m) { return (p[0] % m.size[0], 0); }\n"
     "m2 = Machine(CPU).swap(0, 1);\nIndexTaskMap calculate_new_currents m2 g;\n",
     "(..., p[0] % m.size[1])", "m.size[0], 0)", "m.size[0], p[0] % m.size[1])"),
    # A model of three dimensions whose nodes are its last.
    ("Task * CPU;\nm3 = Machine(CPU).split(1, 2).swap(0, 2);\n"
     "def f(Task t) { return m3[t.ipoint[0] % m3.size[0], 0, 0]; }\nIndexTaskMap calculate_new_currents f;\n",
     "m3[..., t.ipoint[0] % m3.size[2]]", "m3.size[0], 0, 0]", "m3.size[0], 0, t.ipoint[0] % m3.size[2]]"),
])
def test_w320_hint_indexes_the_models_dimension_of_nodes(src, example, old, new, circuit, with_domain):
    """W320's example indexes the dimension of the model that runs over the nodes, which a transformed model may
    have elsewhere than at 0; pasted in, the warning goes."""
    app, machine = with_domain(circuit, (8,)), parse_machine_spec("2x0x4")
    d = only(src, "W320", app, machine)
    assert [h.split("`")[1] for h in d.hints] == [example], d.hints
    assert "W320" not in [x.code for x in diags(src.replace(old, new), app, machine)]


def test_w320_hint_offers_no_index_where_the_model_reaches_one_node(circuit, with_domain):
    """A model sliced to one node: no index of it spreads the points, so the hint names none."""
    src = ("Task * CPU;\nm1 = Machine(CPU).slice(0, 0, 0);\n"
           "def f(Task task) { return m1[0, task.ipoint[0] % m1.size[1]]; }\nIndexTaskMap calculate_new_currents f;\n")
    d = only(src, "W320", with_domain(circuit, (8,)), parse_machine_spec("2x0x4"))
    assert "`" not in d.hints[0] and "'m1' reaches node 0 only" in d.hints[0], d.hints


def test_w321_a_sharded_launch_whose_function_reads_the_parent(circuit, m14, m24):
    """Under control replication Legion's sharding of an index launch calls its IndexTaskMap function with no parent
    (the run stops with R406 where it reads task.parent), though check evaluates it with one: check warns where the
    launching task may be replicated on several nodes (named by ControlReplicate in a user's program, or a user's
    top-level task, which Legion's default mapper replicates when its variant is replicable). A benchmark's
    tasks are never replicated (W319)."""
    src = ("ControlReplicate check_circuit;\nm = Machine(CPU);\n"
           "def near(Task task) { return m[task.parent.processor(m)[0], 0]; }\nIndexTaskMap update_voltages near;\n")
    nested = replace(circuit, discovered_as="./circuit -p 4",
                     tasks=tuple(replace(t, parent="check_circuit") if t.name == "update_voltages" else t
                                 for t in circuit.tasks))
    d = only(src, "W321", nested, m24)
    assert at(d) == (4, 30), d
    assert d.message == ("function 'near' reads task.parent, but it places the points of 'update_voltages', which "
                         "'check_circuit' launches: when 'check_circuit' is control-replicated (ControlReplicate), "
                         "Legion's sharding of the launch calls the function without a parent, and the run stops "
                         "there (R406)")
    assert d.hints == ("choose the node from task.ipoint and task.ispace alone, e.g. "
                       "`m[task.ipoint[0] % m.size[0], ...]`",)
    mine = only(src.replace("m[", "mc[").replace("(m)", "(mc)").replace("m = ", "mc = "), "W321", nested, m24)
    assert mine.hints == ("choose the node from task.ipoint and task.ispace alone, e.g. "
                          "`mc[task.ipoint[0] % mc.size[0], ...]`",)
    top = replace(circuit, discovered_as="./circuit -p 4")
    d = only(src, "W321", top, m24)
    assert "which 'main' launches: when 'main' is control-replicated (Legion's default mapper replicates the " \
           "top-level task on several nodes when its variant is registered replicable)" in d.message
    for app, machine in ((circuit, m24), (nested, m14)):
        assert "W321" not in [x.code for x in diags(src, app, machine)]


def test_e202_for_the_top_level_task_says_what_it_is(circuit, m24):
    """`Task main CPU;` said "unknown task 'main'" while other diagnostics call 'main' the top-level task: E202 says
    what it is and which statements reach it."""
    d = only("Task main CPU;\n", "E202", circuit, m24)
    assert d.message == ("task 'main' is the top-level task: a statement names it only in ControlReplicate; the "
                         "others reach it through `*` or a kind selector")
    # each statement gets the fix: what reaches the top-level task instead (it had no hint but SingleTaskMap's)
    assert d.hints == ("remove the statement: `Task * CPU;` chooses its kind with every other task's",)
    d = only("m = Machine(CPU);\ndef f(Task t) { return m[0, 0]; }\nSingleTaskMap main f;\n", "E202", circuit, m24)
    assert d.hints == ("`SingleTaskMap CPU f;` maps it with the tasks launched one at a time on CPUs",)
    d = only("m = Machine(CPU);\ndef f(Task t) { return m[0, 0]; }\nIndexTaskMap main,calculate_new_currents f;\n",
             "E202", circuit, m24)
    assert d.hints == ("remove it from the task list: `SingleTaskMap CPU f;` maps it with the tasks launched one at "
                       "a time on CPUs",)
    for stmt in ("Region main * CPU SYSMEM;", "Layout main * * SOA;", "CollectMemory main *;",
                 "InstanceLimit main 2;"):
        (hint,) = only(stmt, "E202", circuit, m24).hints
        assert hint.startswith("remove the statement"), (stmt, hint)
    assert only("Region main,calculate_new_currents * CPU SYSMEM;", "E202", circuit, m24).hints[0].startswith(
        "remove it from the task list")


def test_e223_hints_do_not_break_another_requirement_the_check_knows():
    """Legion's layout_constraints example (transpose): init_matrix and check_matrix need column-major (F_order)
    instances, transpose's input row-major (C_order). `Layout * * * C_order;` breaks the first two, and E223's hint
    was `Layout * * * F_order;`, which breaks transpose's input: the next check said the opposite. Every statement a
    hint writes must pass the check."""
    def req(index, name, order):
        return {"index": index, "names": [name], "privilege": "read_write", "fields": ["v"], "layout": order}

    app = AppDescription.from_json({"schema": "mapperopt.app/1", "app": "transpose", "tasks": [
        {"name": "init_matrix", "variants": ["CPU"], "launch": "single", "regions": [req(0, "input_lr", "F_order")]},
        {"name": "transpose", "variants": ["CPU"], "launch": "single",
         "regions": [req(0, "output_lr", "F_order"), req(1, "input_lr", "C_order")]},
        {"name": "check_matrix", "variants": ["CPU"], "launch": "single",
         "regions": [req(0, "output_lr", "F_order")]}]})
    machine = parse_machine_spec("1x0x2")
    src = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * C_order;\nLayout transpose output_lr * F_order;\n"
    d = only(src, "E223", app, machine)
    assert d.hints == ("keep line 3 for the other tasks and add `Layout init_matrix 0 CPU F_order;` and "
                       "`Layout check_matrix 0 CPU F_order;` after it",), d.hints
    fixed = src + "Layout init_matrix 0 CPU F_order;\nLayout check_matrix 0 CPU F_order;\n"
    assert not [x for x in diags(fixed, app, machine) if x.code in ("E223", "W312")]
    # The default layout (no Layout statement) is F_order: adding `Layout * * * C_order;` would break the others.
    d = only("Task * CPU;\n", "E223", app, machine)
    assert d.hints == ("add `Layout transpose 1 CPU C_order;` for requirement 1 (input_lr) of transpose",), d.hints
    assert not [x for x in diags("Task * CPU;\nLayout transpose 1 CPU C_order;\n", app, machine)
                if x.code in ("E223", "W312")]


def test_w323_with_the_programs_mapper_kept_says_it_may_assume_its_own_answer(circuit):
    """Legion's spmd_cgsolver with --keep-app-mapper and `Tunable 11 = 2 int32;`: the program's mapper, which chose
    1 shard in discovery, asserts on the second shard's tag. W323 spoke of launch domains only."""
    from mapperopt.descriptions import TunableInfo

    app = replace(circuit, tunables=(TunableInfo(11, 1, "int32"),), discovered_as="cgsolver -g 32")
    d = only("Task * CPU;\nTunable 11 = 2 int32;\n", "W323", app)
    assert not any("kept" in n for n in d.notes), d.notes
    d = only("Task * CPU;\nTunable 11 = 2 int32;\n", "W323", replace(app, keep_app_mapper=True))
    assert d.notes == ("the program's own mapper, kept for the tasks no statement names, answered 1 in discovery: "
                       "its decisions may assume that value, not this one",), d.notes


def test_a_boolean_answer_is_said_in_the_dsls_spelling(circuit):
    """A mapper answering a tunable with a bool, which discovery recorded as an int8 (the size the program reads):
    W323 said "answered 1 here" for `Tunable 11 = True;`, and E224, for a program reading an int32, "(1 bytes)"."""
    from mapperopt.descriptions import TunableInfo

    app = replace(circuit, tunables=(TunableInfo(11, 0, "int8"),), discovered_as="prog -x")
    d = only("Task * CPU;\nTunable 11 = True;\n", "W323", app)
    assert d.message.startswith("tunable 11 is answered True here, but 0 in discovery"), d.message
    d = only("Task * CPU;\nTunable 11 = False;\n", "E224", replace(app, tunables=(TunableInfo(11, 0, "int32"),)))
    assert d.message.startswith("tunable 11 is answered as bool (1 byte), but the application reads it as int32 "
                                "(4 bytes)"), d.message


def test_w325_for_a_subregion_of_the_launchs_partition_discovery_saw_elsewhere_not_for_a_close_name(m14):
    """Discovery records the first point of `fill`'s launch over partition 'blocks' ('block_0') and, from another
    launch, 'last_block', a subregion of 'blocks' too: a statement for `fill` naming it applies to that point only
    (W325), however unlike the recorded name it is. 'halo', a region of 'cells' but of no partition of the launch,
    and 'block_9', a number the 4 points lack, name no subregion of the launch (E203). 'block_0x' was W325 for
    being close to 'block_0'."""
    def req(names):
        return {"index": 0, "names": names, "privilege": "read_write", "fields": ["v"]}

    app = AppDescription.from_json({
        "schema": "mapperopt.app/1", "app": "pieces", "discovered_as": "./pieces",
        "tasks": [{"name": "fill", "variants": ["CPU"], "launch": "index", "domain": [4],
                   "regions": [req(["block_0", "blocks", "cells"])]},
                  {"name": "tail", "variants": ["CPU"], "launch": "single", "regions": [req(["last_block", "blocks",
                                                                                            "cells"])]},
                  {"name": "edge", "variants": ["CPU"], "launch": "single", "regions": [req(["halo", "cells"])]}],
        "region_tree": [{"name": "cells", "kind": "region", "parent": None},
                        {"name": "blocks", "kind": "index_partition", "parent": "cells"},
                        {"name": "block_0", "kind": "region", "parent": "blocks"},
                        {"name": "last_block", "kind": "region", "parent": "blocks"},
                        {"name": "halo", "kind": "region", "parent": "cells"}]})
    d = only("Task * CPU;\nLayout fill last_block * C_order;\n", "W325", app, m14)
    assert d.message.startswith("region 'last_block' is not a name discovery saw for task 'fill': it records one "
                                "point of each index launch, whose subregion of partition 'blocks' is 'block_0'"), \
        d.message
    assert only("Task * CPU;\nLayout fill block_3 * C_order;\n", "W325", app, m14)
    for name in ("halo", "block_9", "block_0x"):
        found = [x.code for x in diags(f"Task * CPU;\nLayout fill {name} * C_order;\n", app, m14)]
        assert "E203" in found and "W325" not in found, (name, found)
    # E203's hint for a name close to one point's subregion: the partition, which applies to every point, as W325's
    # hint says; it said "did you mean 'block_0'?", which gets W325 (point 0 only)
    for name in ("block_9", "block_x"):
        d = only(f"Task * CPU;\nLayout fill {name} * C_order;\n", "E203", app, m14)
        assert d.hints == ("`Layout fill blocks * C_order;` applies to every point (a point's own subregion, such as "
                           "'block_0', applies to that point only)",), d.hints
    # The partition unnamed, the chain goes from the point's subregion to the launch's whole region: another region
    # of it is no point's subregion, as far as the tree tells.
    unnamed = AppDescription.from_json({**app.to_json(), "tasks": [
        {"name": "fill", "variants": ["CPU"], "launch": "index", "domain": [4], "regions": [req(["block_0", "cells"])]},
        {"name": "edge", "variants": ["CPU"], "launch": "single", "regions": [req(["halo", "cells"])]}],
        "region_tree": [{"name": "cells", "kind": "region", "parent": None},
                        {"name": "block_0", "kind": "region", "parent": "cells"},
                        {"name": "halo", "kind": "region", "parent": "cells"}]})
    assert only("Task * CPU;\nLayout fill block_2 * C_order;\n", "W325", unnamed, m14)
    found = [x.code for x in diags("Task * CPU;\nLayout fill halo * C_order;\n", unnamed, m14)]
    assert "W325" not in found, found


BENCHMARKS = sorted(p.name.removesuffix(".app.json") for p in CONFIGS.glob("*.app.json"))


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_e203_for_every_task_and_region_name_of_each_benchmark(bench):
    """Every Region, Layout and CollectMemory statement naming, for one task, a region name of the benchmark's
    description is checked without a traceback: fine when the task's chains have the name, else E203 naming the task.
    A root of the region tree that only other tasks use (stencil's `Region check xm ...`) once crashed the checker."""
    app = load_app(bench)
    machine = parse_machine_spec("1x0x1")
    names = sorted({n for t in app.tasks for r in t.regions for n in r.names} | {n.name for n in app.region_tree})
    for t in app.tasks:
        own = {n for r in t.regions for n in r.names}
        for name in names:
            for stmt in (f"Region {t.name} {name} CPU SYSMEM;", f"Layout {t.name} {name} * SOA;",
                         f"CollectMemory {t.name} {name};"):
                found = [(d.code, d.message) for d in diags(f"Task * CPU;\n{stmt}\n", app, machine)]
                expected = [] if name in own else [("E203", f"unknown region '{name}' for task '{t.name}'")]
                # E223: the layout the benchmark's variants need (C_order, F_order), not this test's concern
                assert [f for f in found if f[0].startswith("E") and f[0] != "E223"] == expected, (stmt, found)


def test_e226_points_at_the_type_or_the_value():
    assert at(only("Tunable 7 = 3 foo;", "E226")) == (1, 15)
    assert at(only("Tunable 7 = 300 int8;", "E226")) == (1, 13)
    assert at(only("Tunable 7 = -300 int8;", "E226")) == (1, 13)  # the sign is the value's


def test_e226_a_type_in_other_capitals_gets_its_spelling():
    assert only("Tunable 7 = 3 Int8;", "E226").hints[0] == "did you mean 'int8'?"
    assert only("Tunable 7 = 1 BOOL;", "E226").hints[0] == "did you mean 'bool'?"
    assert only("Tunable 7 = 3 foo;", "E226").hints[0].startswith("types: int8, ")


def test_w327_aos_alignment_padding_breaks_a_blas_leafs_row_major_tiles():
    """A GEMM's BLAS leaf needs row-major tiles with unit stride (the description's `layout`); AOS with an Align
    above 8 bytes (the GEMMs' element, a double) pads each element to the alignment: every run aborts (`the tile
    of C is not row-major`; Align==16 too: `column stride 2 elements`). W327 at the statement, its hint the same
    statement without the Align (AutoGuide's edit; SOA, which aligns only each field's start, works too). SOA with
    the Align, and AOS without one or with Align==8 (no padding), run and are not reported."""
    cannon, cpu = load_app("cannon"), parse_machine_spec("1x0x1")
    d = only("Task * CPU;\nLayout * * * AOS C_order Align==64;", "W327", cannon, cpu)
    assert at(d) == (2, 1) and not d.is_error
    assert d.message.startswith("AOS with an alignment of 64 bytes pads each element of requirement 0 (A_tiles) of "
                                "taco_fill, requirement 1 (B_tiles) of taco_fill, requirement 2 (C_tiles) of taco_fill "
                                "and 6 more to 64 bytes"), d.message
    assert d.hints[0].startswith("drop the Align: write `Layout * * * AOS C_order;` instead"), d.hints
    assert only("Task * CPU;\nLayout * C_tiles * Align==64 AOS C_order;", "W327", load_app("johnson"), cpu)
    d = only("Task * CPU;\nLayout * * * AOS C_order Align==16;", "W327", load_app("summa"), cpu)
    assert "to 16 bytes" in d.message and "8-byte" in d.notes[0], (d.message, d.notes)
    for fine in ("Layout * * * SOA C_order Align==64;", "Layout * * * AOS C_order;",
                 "Layout * * * AOS C_order Align==8;", "Layout * * * AOS C_order Align>=8;"):
        assert not [x for x in diags(f"Task * CPU;\n{fine}", cannon, cpu) if x.code == "W327" or x.is_error], fine


def test_a_mapper_that_names_no_task_beside_the_programs_kept_mapper_is_said_to_change_nothing(circuit):
    """With the program's own mapper kept (--keep-app-mapper), a `*` names no task: a mapper whose statements name
    none leaves every task to that mapper (W326). `check` said `ok`, and a tune measured such mappers as gains."""
    app = replace(circuit, keep_app_mapper=True, own_mapper="my_mapper")
    d = only("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * AOS;\n", "W326", app)
    assert d.message == ("no statement names a task, and a `*` names none when the program's own mapper is kept "
                         "(--keep-app-mapper): 'my_mapper' maps every task; this mapper changes nothing"), d.message
    assert d.hints[0].startswith("name the tasks it is for, e.g. `Task init_piece,init_pointers,"), d.hints
    tunable = only("Task * CPU;\nTunable 11 = 2 int32;\n", "W326", app)
    assert tunable.message.endswith("'my_mapper' maps every task; this mapper only answers tunables"), tunable
    for src, described in (("Task * CPU;\nLayout update_voltages * * AOS;\n", app),
                           ("Task * CPU;\n", replace(app, keep_app_mapper=False)),
                           ("Task * CPU;\n", replace(app, own_mapper=None))):
        assert "W326" not in [x.code for x in diags(src, described)], src


def test_tasks_without_names_are_explained_where_a_name_is_unknown(circuit):
    """A program that registers its tasks without a task name (only variant names, `TaskVariantRegistrar(ID,
    "daxpy_cpu_variant")`): Legion calls each `unnamed_task_<task ID>`. E225, E202 and W315 say so and how to name
    them; E225 said only "it looks like the mapper of another program"."""
    data = circuit.to_json()
    names = {t["name"]: f"unnamed_task_{i}" for i, t in enumerate(data["tasks"])}
    for t in data["tasks"]:
        t["name"], t["parent"] = names[t["name"]], names.get(t["parent"], t["parent"])
    nameless = replace(AppDescription.from_json(data), discovered_as="noname -n 1000")
    note = ("the program's tasks have no names: Legion calls a task registered without one unnamed_task_<its task "
            "ID>, a name statements may use (`Task unnamed_task_0 CPU;`); to name a task, give its name as the "
            "second argument of `Runtime::preregister_task_variant` (TaskVariantRegistrar's is the variant's)")
    d = only("Task daxpy CPU;\nTask init_field CPU;\n", "E225", nameless)
    assert note in d.notes, d.notes
    assert any("variants' names" in n for n in d.notes), d.notes
    assert note in only("Task daxpy CPU;\nTask unnamed_task_0 CPU;\n", "W315", nameless).notes
    assert note in only("Task unnamed_task CPU;\n", "E202", nameless).notes
    assert note not in only("Task daxpy CPU;\nTask check_circuit CPU;\n", "W315",
                            replace(circuit, discovered_as="circuit")).notes
    # Some named (`preregister_task_variant<...>(r, "daxpy")` for one task only): the note says which have none.
    for t in data["tasks"]:
        t["name"], t["parent"] = (n if n in ("unnamed_task_0", "unnamed_task_1") or n is None else
                                  n.replace("unnamed_task_", "named_") for n in (t["name"], t["parent"]))
    some = replace(AppDescription.from_json(data), discovered_as="named1 -n 1000")
    notes = only("Task daxpy CPU;\nTask unnamed_task_0 CPU;\n", "W315", some).notes
    assert not any("the program's tasks have no names" in n for n in notes), notes
    said = (f"2 of the program's {len(data['tasks'])} tasks have no names ('unnamed_task_0' and 'unnamed_task_1'): "
            "Legion")
    assert any(n.startswith(said) for n in notes), notes
    # its example is one of the program's own unnamed tasks, not a task ID the program named (task 2 here)
    assert any("(`Task unnamed_task_0 CPU;`)" in n for n in notes) and not any("unnamed_task_2" in n for n in notes)


def test_w318_hint_sends_a_launch_too_large_for_explain_to_a_smaller_domain(circuit, m14, with_domain):
    """W318's hint said that `mapperopt explain` with the same options evaluates every point: for a launch of
    500000 points that command ran for minutes without output. Above explain's limit it names `--domain` instead;
    within it, it keeps sending the user to explain as is."""
    from mapperopt.dsl.checker import MAX_EXPLAIN_POINTS

    src = ("Task * CPU;\nmc = Machine(CPU);\ndef f(Task task) { return mc[0, 0]; }\n"
           "IndexTaskMap calculate_new_currents f;\n")
    d = only(src, "W318", with_domain(circuit, (MAX_EXPLAIN_POINTS + 1,)), m14)
    assert "with the same options" not in " ".join(d.hints), d.hints
    assert f"--domain with at most {MAX_EXPLAIN_POINTS} points" in d.hints[0], d.hints
    d = only(src, "W318", with_domain(circuit, (MAX_EXPLAIN_POINTS,)), m14)
    assert d.hints[0].startswith("`mapperopt explain` with the same options evaluates every point"), d.hints


@pytest.mark.parametrize("src,old,new", [
    # A model merged into one dimension: the hint named `m`, which the file lacks, with two indices (E201, E206).
    ("Task * CPU;\nmc = Machine(CPU).merge(0, 1);\ndef f(Task task) { return mc[0]; }\n"
     "IndexTaskMap calculate_new_currents f;\n", "mc[0]", "mc[task.ipoint[0] % mc.size[0]]"),
    # ... named `m` in a file whose unmerged model is `m`: the merged one is indexed.
    ("Task * CPU;\nm = Machine(CPU);\nmc = m.merge(0, 1);\ndef f(Task t) { return mc[t.ipoint[0] % 2]; }\n"
     "IndexTaskMap calculate_new_currents f;\n", "mc[t.ipoint[0] % 2]", "mc[t.ipoint[0] % mc.size[0]]"),
])
def test_w320_hint_on_a_merged_model_names_it_with_one_index(src, old, new, circuit, with_domain):
    """W320 on a one-operand function indexing a model merged into one dimension: the example is that model, with
    one index; pasted in, the file checks clean."""
    app, machine = with_domain(circuit, (8,)), parse_machine_spec("2x0x2")
    d = only(src, "W320", app, machine)
    assert [h.split("`")[1] for h in d.hints] == [new], d.hints
    assert diags(src.replace(old, new), app, machine) == []


def test_w320_hint_names_no_model_where_the_function_reads_none(circuit, with_domain):
    """A function whose model is not a global it reads (here a helper's): no expression naming a model that may
    not exist."""
    src = ("Task * CPU;\nmc = Machine(CPU);\ndef g(Task task) { return mc[0, 0]; }\n"
           "def f(Task task) { return g(task); }\nIndexTaskMap calculate_new_currents f;\n")
    d = only(src, "W320", with_domain(circuit, (8,)), parse_machine_spec("2x0x2"))
    assert "`" not in d.hints[0] and "through a model of several nodes" in d.hints[0], d.hints


@pytest.mark.parametrize("stmt", ["Region check * GPU ZCMEM;", "Region check * GPU FBMEM,ZCMEM;"])
def test_w305_hint_names_a_memory_the_machine_has(stmt, stencil):
    """W305's hint for a CPU instead keeps ZCMEM only on a machine that has it (on a CPU-only machine
    `Region check * CPU ZCMEM;` was E221): pasted in, it checks clean on each machine."""
    src = f"Task * GPU,CPU;\n{stmt}\n"
    for spec in ("1x0x4", "1x0x2", "1x4", "2x4"):
        machine = parse_machine_spec(spec)
        d = only(src, "W305", stencil, machine)
        written = re.findall(r"`([^`]*)`", d.hints[0])
        assert written, d.hints
        fixed = src.replace(stmt, "\n".join(written))
        assert diags(fixed, stencil, machine) == [], (spec, d.hints, fixed)


@pytest.mark.parametrize("src,fixed", [
    # Two kinds before the task of a statement that takes one kind: one statement per kind.
    ("InstanceLimit GPU,CPU calculate_new_currents 2;",
     "InstanceLimit calculate_new_currents GPU 2; InstanceLimit calculate_new_currents CPU 2;"),
    ("Layout SYSMEM,ZCMEM calculate_new_currents * AOS;",
     "Layout calculate_new_currents * SYSMEM AOS; Layout calculate_new_currents * ZCMEM AOS;"),
    ("Region GPU,CPU calculate_new_currents rp_private FBMEM;",
     "Region calculate_new_currents rp_private GPU FBMEM; Region calculate_new_currents rp_private CPU FBMEM;"),
    ("Region GPU,CPU * rp_ghost SYSMEM,ZCMEM;",
     "Region * rp_ghost GPU SYSMEM,ZCMEM; Region * rp_ghost CPU SYSMEM,ZCMEM;"),
    # ... and before a CollectMemory's task, which takes none: written without them.
    ("CollectMemory GPU,CPU * rp_ghost;", "CollectMemory * rp_ghost;"),
])
def test_e109_two_kinds_before_the_task_get_the_statements(src, fixed, circuit, m14):
    """Two kinds before the task got the statement's form only: the hint writes the statements, which check clean."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    assert info.value.code == "E109", str(info.value)
    assert any(h.endswith(f"write {fixed}") for h in info.value.diagnostic.hints), info.value.diagnostic.hints
    assert diags(fixed.replace("; ", ";\n"), circuit, m14) == [], fixed


@pytest.mark.parametrize("src,fixed", [("Task * CPU GPU;", "Task * CPU,GPU;"),
                                       ("Task calculate_new_currents GPU CPU;", "Task calculate_new_currents GPU,CPU;"),
                                       ("Region * * GPU FBMEM ZCMEM;", "Region * * GPU FBMEM,ZCMEM;")])
def test_e100_kinds_without_their_comma_get_the_statement(src, fixed, circuit, m14):
    """Two kinds of a list written without the comma between them: a bare E100, now with the statement written."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    assert info.value.code == "E100", str(info.value)
    assert f"kinds are separated by commas: `{fixed}`" in info.value.diagnostic.hints, info.value.diagnostic.hints
    assert diags(fixed, circuit, m14) == [], fixed


def test_e100_instance_limit_with_two_kinds_gets_one_statement_per_kind(circuit, m14):
    """`InstanceLimit t GPU CPU 2;`: a bare E100 ("expected an integer"); an InstanceLimit takes one processor kind,
    so the hint writes one statement per kind, which check clean."""
    fixed = "InstanceLimit calculate_new_currents GPU 2; InstanceLimit calculate_new_currents CPU 2;"
    with pytest.raises(DslSyntaxError) as info:
        parse("InstanceLimit calculate_new_currents GPU CPU 2;", "bad.dsl")
    assert info.value.code == "E100", str(info.value)
    assert any(h.endswith(f"write one statement per kind, {fixed}") for h in info.value.diagnostic.hints), \
        info.value.diagnostic.hints
    assert diags(fixed.replace("; ", ";\n"), circuit, m14) == [], fixed


@pytest.mark.parametrize("src,fixed", [
    ("InstanceLimit calculate_new_currents 2 CPU;", "InstanceLimit calculate_new_currents CPU 2;"),
    ("InstanceLimit calculate_new_currents,distribute_charge 3 GPU;",
     "InstanceLimit calculate_new_currents,distribute_charge GPU 3;"),
    ("InstanceLimit calculate_new_currents 2 *;", "InstanceLimit calculate_new_currents * 2;"),
    # Two kinds at the end: one statement per kind, as for two kinds before the number.
    ("InstanceLimit calculate_new_currents 2 GPU,CPU;",
     "InstanceLimit calculate_new_currents GPU 2; InstanceLimit calculate_new_currents CPU 2;"),
])
def test_e100_instance_limit_kind_after_the_number_gets_the_statement(src, fixed, circuit, m14):
    """`InstanceLimit t 2 CPU;`: a bare E100 ("expected ';'"); the hint says where the kind goes and writes the
    statement, which checks clean."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    assert info.value.code == "E100", str(info.value)
    hints = info.value.diagnostic.hints
    assert any("the processor kind goes before the number" in h and h.endswith(f"write {fixed}") for h in hints), \
        hints
    assert diags(fixed.replace("; ", ";\n"), circuit, m14) == [], fixed


@pytest.mark.parametrize("src,fixed", [
    ("Layout calculate_new_currents rp_private SOA GPU;", "Layout calculate_new_currents rp_private GPU SOA;"),
    ("Layout * * AOS C_order SYSMEM;", "Layout * * SYSMEM AOS C_order;"),
    ("Layout calculate_new_currents * SOA Align==64 *;", "Layout calculate_new_currents * * SOA Align==64;"),
    # no kind at all: `*`, every kind
    ("Layout calculate_new_currents rp_private SOA;", "Layout calculate_new_currents rp_private * SOA;"),
])
def test_e100_layout_constraints_before_the_kind_get_the_statement(src, fixed, circuit, m14):
    """`Layout t r SOA GPU;`: a bare E100 ("expected '*', a processor kind or a memory kind"); the hint says the kind
    goes before the constraints and writes the statement, which checks clean."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    assert info.value.code == "E100", str(info.value)
    hints = info.value.diagnostic.hints
    assert any("the kind goes before the constraints" in h and h.endswith(f"write {fixed}") for h in hints), hints
    # W330: AOS of all_nodes' 4 fields in SYSMEM beside the GPU tasks' SOA, a run-time risk not tested here
    assert [d for d in diags(f"Task * GPU,CPU;\n{fixed}", circuit, m14) if d.code != "W330"] == [], fixed


@pytest.mark.parametrize("src,fixed", [
    ("CollectMemory calculate_new_currents rp_private GPU;", "CollectMemory calculate_new_currents rp_private;"),
    ("CollectMemory * rp_ghost GPU,CPU;", "CollectMemory * rp_ghost;"),
    ("CollectMemory * * SYSMEM;", "CollectMemory * *;"),
])
def test_e100_collect_memory_kind_after_the_region_gets_the_statement(src, fixed, circuit, m14):
    """`CollectMemory t r GPU;`: a bare E100 ("expected ';'"); as for a kind before the region (E109), the hint says
    a CollectMemory takes no kind and writes it without, which checks clean."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    assert info.value.code == "E100", str(info.value)
    hints = info.value.diagnostic.hints
    assert any("(it takes no kind)" in h and h.endswith(f"write {fixed}") for h in hints), hints
    assert diags(fixed, circuit, m14) == [], fixed


@pytest.mark.parametrize("src", ["Task calculate_new_currents CPU GPU FBMEM;", "Region * * GPU FBMEM ZCMEM SOA;",
                                 "Task * CPU GPU 2;"])
def test_e100_kinds_without_their_comma_name_no_statement_that_does_not_parse(src):
    """Two kinds without their comma in a statement that is wrong beyond that (`Task t CPU GPU FBMEM;`): the hint
    wrote `Task t CPU,GPU FBMEM;`, itself a syntax error; it says only that kinds are separated by commas."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    hints = info.value.diagnostic.hints
    assert any(h.startswith("kinds are separated by commas") for h in hints), hints
    for written in (w for h in hints for w in re.findall(r"`([^`]*)`", h)):
        parse(written, "hint.dsl")


MAPPED = {"f": "Task * GPU,CPU;\nm = Machine(GPU);\ndef f(Task task) { return m[0, task.ipoint[0] % m.size[1]]; }\n",
          "g": "Task * GPU,CPU;\nmc = Machine(CPU);\ndef g(Task task) { return mc[0, 0]; }\n"}


@pytest.mark.parametrize("stmt,fixed", [
    ("IndexTaskMap calculate_new_currents GPU f;", "IndexTaskMap calculate_new_currents f;"),
    ("IndexTaskMap calculate_new_currents f GPU;", "IndexTaskMap calculate_new_currents f;"),
    ("SingleTaskMap check_circuit CPU g;", "SingleTaskMap check_circuit g;"),
    ("IndexTaskMap calculate_new_currents,distribute_charge GPU f;",
     "IndexTaskMap calculate_new_currents,distribute_charge f;"),
])
def test_e109_kind_beside_the_function_of_a_map_statement_gets_the_statement(stmt, fixed, circuit, m14):
    """`IndexTaskMap t GPU f;`: a bare E109 (a reserved word as a name); the hint says that a kind stands alone as
    the selector, that the Task statement picks the tasks' kind, and writes the statement without it, which checks
    clean."""
    prelude = MAPPED[fixed[-2]]
    with pytest.raises(DslSyntaxError) as info:
        parse(prelude + stmt, "bad.dsl")
    assert info.value.code == "E109", str(info.value)
    hints = info.value.diagnostic.hints
    assert any("a processor kind stands alone" in h and h.endswith(f"write {fixed}") for h in hints), hints
    assert diags(prelude + fixed, circuit, m14) == [], fixed


def _many_defs(n):
    """A program of `n` chains f{i}_a -> f{i}_b -> m{i}: chain 0 is used by a map statement, the others are unused."""
    lines = ["Task * CPU;"]
    for i in range(n):
        lines += [f"m{i} = Machine(CPU);",
                  f"def f{i}_b(Task t) {{ return m{i}[0, t.ipoint[0] % m{i}.size[1]]; }}",
                  f"def f{i}_a(Task t) {{ return f{i}_b(t); }}"]
    lines.append("IndexTaskMap a f0_a;")
    return "\n".join(lines)


def test_w304_on_many_definitions_reads_each_definition_once(monkeypatch):
    """W304 on a file of many chains (a uses b uses a model) and unused ones gives every note, and finds who uses
    what in one pass: each statement's references are collected once, not once per other unused definition (a file
    of 1,000 functions took minutes)."""
    from mapperopt.dsl import checker as C
    n = 60
    src = _many_defs(n)
    seen: dict[int, int] = {}
    walk = C._references

    def counting(s):
        seen[id(s)] = seen.get(id(s), 0) + 1
        return walk(s)

    monkeypatch.setattr(C, "_references", counting)
    found = [d for d in diags(src) if d.code == "W304"]
    expected = []
    for i in range(1, n):
        expected += [f"machine model 'm{i}' is used only by 'f{i}_b', which nothing uses",
                     f"function 'f{i}_b' is used only by 'f{i}_a', which nothing uses",
                     f"function 'f{i}_a' is defined but never used"]
    assert [d.message for d in found] == expected
    assert [d.loc.line for d in found] == sorted(d.loc.line for d in found)
    assert seen and max(seen.values()) == 1, max(seen.values())


def test_many_warnings_of_one_code_are_shown_up_to_a_cap_then_counted():
    """Thousands of one warning (a generated file) print the first few, then one line that counts the rest; every
    error is still shown (they are capped apart, at 20 in all), and the summary still counts every diagnostic."""
    from mapperopt.dsl.errors import REPEATS
    n = REPEATS + 25
    src = "Task * CPU;\n" + "".join(f"def f{i}(Task t) {{ return 0; }}\n" for i in range(n))
    found = diags(src)
    assert [d.code for d in found].count("W304") == n
    text = render_all(found, src)
    assert text.count("note[W304]: function") == REPEATS, text
    assert text.endswith("p.dsl: ... and 25 more note[W304] like this"), text[-300:]
    assert "function 'f0' is defined" in text and f"function 'f{n - 1}' is defined" not in text
    few = "Task * CPU;\n" + "def f(Task t) { return 0; }\n" * 2
    assert "more" not in render_all(diags(few), few)


def _spmv_like(y_apart=False):
    """A user's SpMV program as discovery describes it: `x_ghost`, an image partition of `vec`, whose field space
    holds two 8-byte doubles (x, y; with `y_apart`, y is in a region `y` of its own); `nnz` two fields; `rows` one
    16-byte field; `total` a one-field reduction."""
    def req(i, names, priv, fields, sizes, **more):
        if y_apart and fields == ["field_201"]:
            names = ["y_blocks", "y"]
        return {"index": i, "names": names, "privilege": priv, "fields": fields, "field_sizes": sizes, **more}
    spec = {"schema": "mapperopt.app/1", "app": "spmv", "region_tree": [
        {"name": "rows", "kind": "region"}, {"name": "row_blocks", "kind": "partition", "parent": "rows"},
        {"name": "vec", "kind": "region"}, {"name": "vec_blocks", "kind": "partition", "parent": "vec"},
        {"name": "x_ghost", "kind": "partition", "parent": "vec"}, {"name": "nnz", "kind": "region"},
        {"name": "nnz_blocks", "kind": "partition", "parent": "nnz"}, {"name": "total", "kind": "region"},
        {"name": "y", "kind": "region"}, {"name": "y_blocks", "kind": "partition", "parent": "y"}],
        "tasks": [
            {"name": "top_level", "variants": ["CPU"], "launch": "single", "leaf": False},
            {"name": "init_rows", "variants": ["CPU"], "launch": "index", "parent": "top_level", "domain": [4],
             "regions": [req(0, ["row_blocks", "rows"], "write_discard", ["field_100"], [16]),
                         req(1, ["vec_blocks", "vec"], "write_discard", ["field_200"], [8])]},
            {"name": "init_nnz", "variants": ["CPU"], "launch": "index", "parent": "top_level", "domain": [4],
             "regions": [req(0, ["nnz_blocks", "nnz"], "write_discard", ["field_300", "field_301"], [8, 8])]},
            {"name": "spmv", "variants": ["CPU"], "launch": "index", "parent": "top_level", "domain": [4],
             "regions": [req(0, ["row_blocks", "rows"], "read_only", ["field_100"], [16]),
                         req(1, ["nnz_blocks", "nnz"], "read_only", ["field_300", "field_301"], [8, 8]),
                         req(2, ["x_ghost", "vec"], "read_only", ["field_200"], [8]),
                         req(3, ["vec_blocks", "vec"], "write_discard", ["field_201"], [8])]},
            {"name": "update", "variants": ["CPU"], "launch": "index", "parent": "top_level", "domain": [4],
             "regions": [req(0, ["vec_blocks", "vec"], "read_only", ["field_201"], [8]),
                         req(1, ["vec_blocks", "vec"], "read_write", ["field_200"], [8]),
                         req(2, ["total"], "reduce", ["field_400"], [8], redop="sum_f64", collective=True)]}]}
    return replace(AppDescription.from_json(spec), discovered_as="./spmv -n 10000")


def test_w330_says_why_a_task_on_the_same_partition_is_not_named():
    """A tutorial-style daxpy: init_field writes X (then Y) through input_lp, daxpy reads X, Y through input_lp and
    check reads them from the whole region `input`, SOA both. W330 of `Layout daxpy 0 * AOS C_order;` named check
    alone, while `run --profile`'s advice named init_field and check as keeping SOA: a note names init_field, whose
    copies stay within one subregion of the same partition (no risk of the crash), and says why it is not named."""
    def req(i, names, priv, fields):
        return {"index": i, "names": names, "privilege": priv, "fields": fields, "field_sizes": [8] * len(fields)}
    spec = {"schema": "mapperopt.app/1", "app": "daxpy", "region_tree": [
        {"name": "input", "kind": "region"}, {"name": "input_lp", "kind": "partition", "parent": "input"},
        {"name": "output", "kind": "region"}, {"name": "output_lp", "kind": "partition", "parent": "output"}],
        "tasks": [
            {"name": "top_level", "variants": ["CPU"], "launch": "single", "leaf": False},
            {"name": "init_field", "variants": ["CPU"], "launch": "index", "parent": "top_level", "domain": [4],
             "regions": [req(0, ["input_lp", "input"], "write_discard", ["X"])]},
            {"name": "daxpy", "variants": ["CPU"], "launch": "index", "parent": "top_level", "domain": [4],
             "regions": [req(0, ["input_lp", "input"], "read_only", ["X", "Y"]),
                         req(1, ["output_lp", "output"], "write_discard", ["Z"])]},
            {"name": "check", "variants": ["CPU"], "launch": "single", "parent": "top_level",
             "regions": [req(0, ["input"], "read_only", ["X", "Y"]), req(1, ["output"], "read_only", ["Z"])]}]}
    app = replace(AppDescription.from_json(spec), discovered_as="./daxpy -n 1000")
    d = only("Task * CPU;\nLayout daxpy 0 * AOS C_order;", "W330", app, parse_machine_spec("1x0x2"))
    assert "but check (argument 0) keeps SOA on these fields" in d.message, d.message
    assert "init_field" not in d.message, d.message
    assert d.notes[1] == ("init_field (argument 0) keeps SOA on these fields through 'input_lp', as the AOS "
                          "argument does: Realm copies between the layouts there too, but within one subregion, "
                          "which has not crashed, so it is not named above"), d.notes


def test_w330_aos_beside_another_layout_of_the_same_fields_is_the_realm_copy_crash():
    """The installed Realm (25.6) crashes copying between an instance whose element stride is not its field's size
    (AOS of a field space of 2+ fields: mapperopt's instances hold every field; or AOS with an Align above the
    field's size) and one of another layout over an image partition's many runs (SIGFPE, `address_list.cc:152
    ... Assertion 'read_pointer == max_entries' failed`, `malloc(): invalid size`): a user's SpMV with `Layout spmv *
    * AOS;` crashed every run at n=10000. W330 at the statement, naming the others that keep SOA and the fix; the
    same layout for every task (no layout-changing copy) and AOS that keeps the field's stride are not reported."""
    app, cpu = _spmv_like(), parse_machine_spec("1x0x2")
    head = "Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\n"
    for machine in (cpu, None):
        d = only(head + "Layout spmv x_ghost * AOS F_order;", "W330", app, machine)
        assert at(d) == (4, 1) and not d.is_error
        assert d.message.startswith("line 4's `Layout spmv x_ghost * AOS F_order;` gives argument 2 (x_ghost) of spmv "
                                    "AOS instances with an element stride of 16 bytes (each instance holds all 2 "
                                    "fields of 'vec'"), d.message
        for part in ("init_rows (argument 1) and update (argument 1) keep SOA", "sparse or aliased partition"):
            assert part in d.message, (part, d.message)
        assert "StanfordLegion/realm#436" in d.notes[0] and "realm#436" not in d.message, d
        assert d.hints[0] == ("give every task that uses these fields the same layout, e.g. "
                              "`Layout * vec * AOS F_order;`"), d.hints
        assert d.hints[1] == "or keep this argument SOA: write `Layout spmv x_ghost * SOA F_order;` instead"
    # the user's suggestion that crashed: every argument of spmv; of those on field spaces of two fields, x_ghost
    # reads what init_rows and update wrote through vec_blocks, SOA. nnz_blocks and vec_blocks are read as they were
    # written, through the same partition: a copy within one block, which runs (a program with `vec` of one field)
    d = only(head + "Layout spmv * * AOS;", "W330", app, cpu)
    assert "gives argument 2 (x_ghost) of spmv AOS instances" in d.message and "nnz" not in d.message, d.message
    assert d.hints[0].endswith("e.g. `Layout * vec * AOS;`"), d.hints
    # with `vec` of one field (x), AOS keeps its stride, but an Align above its 8 bytes pads it (a run crashed so)
    apart = _spmv_like(y_apart=True)
    assert not [x for x in diags(head + "Layout spmv x_ghost * AOS;", apart, cpu) if x.code == "W330"]
    d = only(head + "Layout spmv x_ghost * AOS Align==32;", "W330", apart, cpu)
    assert "an element stride of 32 bytes (AOS Align==32 pads each 8-byte field to 32 bytes)" in d.message, d.message
    assert d.hints[1] == "or drop the Align: write `Layout spmv x_ghost * AOS;` instead", d.hints
    assert not [x for x in diags(head + "Layout spmv x_ghost * AOS Align==8;", apart, cpu) if x.code == "W330"]
    # a reduction instance's fill with AOS and a padding Align: even where every task has the layout
    d = only("Task * CPU;\nLayout * * * AOS Align==64;", "W330", app, cpu)
    assert "argument 2 (total) of update AOS instances" in d.message and "fills a reduction instance" in d.message
    assert d.hints == ("drop the Align: write `Layout * * * AOS;` instead",), d.hints
    for fine in ("Layout * * * AOS;", "Layout * * * AOS F_order;", "Layout * vec * AOS;",
                 "Layout * * * SOA F_order Align==64;", "Layout spmv row_blocks * AOS;",
                 "Layout spmv row_blocks * AOS Align==16;", "Layout * total * AOS;", "Layout update total * AOS;",
                 "Layout spmv nnz_blocks * AOS;"):
        found = [x for x in diags(head + fine, app, cpu) if x.code == "W330" or x.is_error]
        assert not found, (fine, found)


def test_w330_hint_names_the_statements_that_keep_soa_never_the_flagged_one(circuit):
    """A user's circuit mapper with `Layout * all_nodes * AOS C_order;` and, on nearer names, `Layout * rp_shared CPU
    SOA C_order;` and `Layout * rp_ghost CPU SOA C_order;`: W330's hint suggested the flagged line itself, and
    following it never cleared the warning (the nearer names override it). The hint names the overriding lines and
    rewrites them; following it (or removing them) clears W330."""
    cpu = parse_machine_spec("1x0x2")
    src = ("Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * all_nodes * AOS C_order;\n"
           "Layout * rp_shared CPU SOA C_order;\nLayout * rp_ghost CPU SOA C_order;\n")
    for machine in (cpu, None):
        d = only(src, "W330", circuit, machine)
        assert not any("`Layout * all_nodes * AOS C_order;`" in h for h in d.hints), d.hints
        assert d.hints[0] == ("lines 4 and 5 (nearer names) keep SOA on these fields: remove them or give "
                              "them the same layout: `Layout * rp_shared CPU AOS C_order;` and "
                              "`Layout * rp_ghost CPU AOS C_order;`"), d.hints
    lines = src.splitlines(keepends=True)
    for fixed in ("".join(lines[:3]), "".join(lines[:3]) + "Layout * rp_shared CPU AOS C_order;\n"
                  "Layout * rp_ghost CPU AOS C_order;\n"):
        assert not [x for x in diags(fixed, circuit, cpu) if x.code == "W330" or x.is_error], fixed
    # a padded AOS: the reduction instances the nearer lines keep SOA cannot take it (their fill would crash)
    d = only(src.replace("AOS C_order;", "AOS C_order Align==64;"), "W330", circuit, cpu)
    assert not any("`Layout * all_nodes * AOS C_order Align==64;`" in h for h in d.hints), d.hints
    assert d.hints[0].endswith("the reduction instances of distribute_charge (arguments 1 and 2) cannot take an AOS "
                               "layout padded by an Align (Realm's fill of such an instance crashes), so removing "
                               "or rewriting those lines does not help"), d.hints
    # all_nodes has several fields: AOS without the Align still interleaves them, so the hint keeps them SOA
    assert d.hints[1] == "or keep these arguments SOA: write `Layout * all_nodes * SOA C_order Align==64;` instead"
    fixed = src.replace("AOS C_order;", "AOS C_order Align==64;").replace(
        "Layout * all_nodes * AOS C_order Align==64;", "Layout * all_nodes * SOA C_order Align==64;")
    assert not [x for x in diags(fixed, circuit, cpu) if x.code == "W330" or x.is_error], fixed


def _followed(src: str, stmt: str, hint: str) -> str:
    """`src` with W330's `hint` followed as written: `write `X` instead` replaces the line `stmt`; a statement the
    hint gives otherwise (`e.g. `X``) is added."""
    written = re.search(r"write `([^`]+)` instead", hint)
    if written:
        return src.replace(stmt, written[1])
    return src + "".join(f"{x}\n" for x in re.findall(r"`([^`]+;)`", hint))


def test_w330_hints_only_fixes_that_clear_it_for_circuits_wires(circuit):
    """A user's `Layout calculate_new_currents rp_wires SYSMEM AOS C_order Align==64;`: W330's second hint said
    "drop the Align", and following it gave W330 again (all_wires has 24 fields: AOS interleaves them with or
    without an Align). Every hint, followed as written, clears W330 and adds no error."""
    stmt = "Layout calculate_new_currents rp_wires SYSMEM AOS C_order Align==64;"
    src = f"Task * CPU;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\n{stmt}\n"
    for machine in (parse_machine_spec("1x0x2"), None):
        d = only(src, "W330", circuit, machine)
        assert not any("drop the Align" in h for h in d.hints), d.hints
        assert d.hints[1] == ("or keep this argument SOA: write `Layout calculate_new_currents rp_wires SYSMEM SOA "
                              "C_order Align==64;` instead"), d.hints
        for hint in d.hints:
            fixed = _followed(src, stmt, hint)
            assert fixed != src, hint
            found = [x for x in diags(fixed, circuit, machine) if x.code == "W330" or x.is_error]
            assert not found, (hint, found)


def test_w330_where_the_variant_gives_aos_the_hint_says_aos():
    """A program whose variant asks AOS for an argument on two fields and a mapper that gives it only an Align: the
    same layout for every task needs the AOS said (the others are SOA by default), and neither dropping the Align
    nor SOA (against the variant: E223) is a fix. The hint, followed, clears W330."""
    app = _spmv_like()
    tasks = tuple(replace(t, regions=tuple(replace(r, interleave="AOS") if r.index == 2 else r for r in t.regions))
                  if t.name == "spmv" else t for t in app.tasks)
    app, cpu = replace(app, tasks=tasks), parse_machine_spec("1x0x1")
    stmt = "Layout spmv x_ghost * Align==32;"
    src = f"Task * CPU;\n{stmt}\n"
    d = only(src, "W330", app, cpu)
    assert d.hints == ("give every task that uses these fields the same layout, e.g. `Layout * vec * AOS Align==32;`",)
    assert not [x for x in diags(_followed(src, stmt, d.hints[0]), app, cpu) if x.code == "W330" or x.is_error]


def test_w330_says_when_the_copy_can_crash_not_that_it_does(circuit):
    """Users' mappers with W330 ran to completion, verified (`Layout * rp_shared * AOS;` on circuit at --size ci): the
    message says the copies are a crash risk, and when (a sparse or aliased partition, which the description does
    not record), not that they crash; the fills can crash."""
    d = only("Task * CPU;\nLayout * rp_shared * AOS;", "W330", circuit, parse_machine_spec("1x0x2"))
    assert d.message.endswith("so Realm copies between the two layouts, which can crash over a sparse or aliased "
                              "partition"), d.message
    assert d.notes == ("a risk, not a certainty: the installed Realm's copies between two layouts crash only over a "
                       "sparse or aliased partition (an image, a preimage), not over an equal or block one, and the "
                       "benchmark's description does not record which partition this is; a Realm bug fixed upstream "
                       "in StanfordLegion/realm#436, not in the legate wheel",), d.notes
    d = only("Task * CPU;\nLayout * * * AOS Align==64;", "W330", circuit, parse_machine_spec("1x0x2"))
    assert d.message.endswith("for a reduction: Realm fills a reduction instance with the reduction's identity, and "
                              "in the installed Realm such fills can crash"), d.message
    [note] = d.notes
    assert "SIGFPE" in note and "StanfordLegion/realm#436" in note and "SIGFPE" not in d.message, note


def test_w330_lists_three_fields_of_a_field_space_then_how_many(circuit):
    """A user's `Layout * rp_wires * AOS C_order;` on circuit got one line of about 700 characters listing all 24
    fields of all_wires and the Realm issue: the message lists three fields then the count, as explain does, and
    leaves the Realm issue to its note; a field space of three fields or fewer is listed whole."""
    d = only("Task * CPU;\nRegion * * CPU SYSMEM;\n\nLayout * rp_wires * AOS C_order;", "W330", circuit,
             parse_machine_spec("1x0x1"))
    assert ("(each instance holds every field of 'all_wires': inductance, resistance, wire_cap, ... (24 fields)), "
            "but check_circuit (argument 1) keeps SOA on these fields") in d.message, d.message
    assert "current_0" not in d.message and len(d.message) < 520, (len(d.message), d.message)  # about 840 before


def test_e205_hint_wraps_every_dimension_that_goes_out_of_range(with_domain):
    """A 4x4 launch mapped with `mc[task.ipoint[0], task.ipoint[1]]` on one CPU: static evaluation sees every point,
    so the hint wraps both dimensions (it wrapped only the one that failed first, and following it gave a second
    E205); following it once clears E205. A dimension that stays in range is left as it is."""
    app, cpu = with_domain(load_app("summa"), (4, 4)), parse_machine_spec("1x0x1")
    head = ("mc = Machine(CPU);\ndef f(Task task) { return mc[%s]; }\nIndexTaskMap task_4 f;\n"
            "Layout * * * SOA C_order;\n")
    d = only(head % "task.ipoint[0], task.ipoint[1]", "E205", app, cpu)
    assert d.hints[0] == ("reduce the indices modulo the sizes of those dimensions: "
                          "`mc[task.ipoint[0] % mc.size[0], task.ipoint[1] % mc.size[1]]`"), d.hints
    assert not [x for x in diags(head % "task.ipoint[0] % mc.size[0], task.ipoint[1] % mc.size[1]", app, cpu)
                if x.is_error]
    # every point fails dimension 0 first: dimension 1 is out of range too
    d = only(head % "task.ipoint[0] + 1, task.ipoint[1] + 1", "E205", app, cpu)
    assert d.hints[0].endswith("`mc[(task.ipoint[0] + 1) % mc.size[0], (task.ipoint[1] + 1) % mc.size[1]]`"), d.hints
    d = only(head % "task.ipoint[0], 0", "E205", app, cpu)
    assert d.hints[0] == ("reduce the index modulo the size of that dimension: "
                          "`mc[task.ipoint[0] % mc.size[0], 0]`"), d.hints


def test_w308_every_repeated_layout_constraint():
    """`Layout * * * Exact Exact;` passed with no W308 (only `SOA SOA` and the like were caught): every constraint
    listed twice is W308, once per constraint, and a constraint listed once is not."""
    for src, name in (("Layout * * * Exact Exact;", "Exact"), ("Layout * * * SOA Compact C_order Compact;", "Compact"),
                      ("Layout * * * No_Align No_Align;", "No_Align"), ("Layout * * * SOA SOA;", "SOA"),
                      ("Layout * * * Exact F_order Exact Exact;", "Exact")):
        d = only(src, "W308")
        assert d.message == f"constraint '{name}' is listed twice" and not d.is_error, (src, d)
    d = [x.message for x in diags("Layout * * * Exact Compact Exact Compact;") if x.code == "W308"]
    assert d == ["constraint 'Exact' is listed twice", "constraint 'Compact' is listed twice"], d
    assert not [x for x in diags("Layout * * * SOA C_order Exact Compact No_Align;") if x.code == "W308"]


def test_w331_a_launch_that_leaves_most_processors_idle(circuit, with_domain, m24):
    """`mg[0, task.ipoint[0] % 2]` over 8 points on 2 nodes of 4 GPUs stays in range but runs every point on 2 of the
    8 GPUs (`explain`: "2 of 8 GPUs used"): a note naming how many are used, once per statement. A launch spread over
    every GPU, one with fewer points than GPUs and one mapped to processor sets get none."""
    app = with_domain(circuit, (8,))
    head = "Task * GPU,CPU;\nmg = Machine(GPU);\ndef f(Task task) { return %s; }\n" \
           "IndexTaskMap calculate_new_currents,distribute_charge,update_voltages f;\n"
    d = only(head % "mg[task.ipoint[0] % 2, task.ipoint[0] % 2]", "W331", app, m24)
    assert d.severity == "note" and at(d) == (4, 1), d
    assert d.message == ("the index launches of 'calculate_new_currents', 'distribute_charge' and 'update_voltages' "
                         "(8 points each) run on 2 of the 8 GPUs of this machine: the other 6 get none of their "
                         "points"), d.message
    # on one node of two: W320 says it, not W331
    assert "W331" not in [x.code for x in diags(head % "mg[0, task.ipoint[0] % 2]", app, m24)]
    assert "mg.size" in d.hints[0], d.hints
    for fine in ("mg[task.ipoint[0] / 4, task.ipoint[0] % 4]", "mg[0, *]", "mg[task.ipoint[0] % mg.size[0], "
                 "(task.ipoint[0] / mg.size[0]) % mg.size[1]]"):
        assert not [x for x in diags(head % fine, app, m24) if x.code == "W331" or x.is_error], fine
    assert not [x for x in diags(head % "mg[task.ipoint[0] % 2, 0]", with_domain(circuit, (4,)), m24)
                if x.code == "W331"]


def test_e223_note_speaks_of_the_program_at_hand():
    """E223's note on what the run does names only the program being checked: the stencil's kernel and the sizes at
    which `mapperopt run stencil` passes -lg:safe_mapper for the stencil, task_4's BLAS call (no -lg:safe_mapper) for
    a GEMM, neither for a user's program, for which it names the application file's legion_flags."""
    one = parse_machine_spec("1x0x1")
    (d,) = [d for d in diags("Layout * * * C_order;\n", load_app("stencil"), one) if d.code == "E223"]
    (note,) = d.notes
    assert "DGEMM" not in note and "GEMM" not in note and "task_4" not in note, note
    assert "`mapperopt run stencil` passes -lg:safe_mapper at size ci" in note, note
    assert "the CPU stencil kernel's stride assertion aborts" in note, note
    (d,) = [d for d in diags("Task * CPU;\n", load_app("cannon"), parse_machine_spec("1x0x2")) if d.code == "E223"]
    (note,) = d.notes
    assert "stencil" not in note and "`mapperopt run cannon` passes no -lg:safe_mapper" in note, note
    assert "task_4's BLAS call aborts with `DGEMM parameter number N had an illegal value`" in note, note
    own = replace(load_app("stencil"), discovered_as="./stencil -nx 68")
    (d,) = [d for d in diags("Layout * * * C_order;\n", own, one) if d.code == "E223"]
    (note,) = d.notes
    assert "GEMM" not in note and "task_4" not in note and "stencil kernel" not in note, note
    assert ("only when the run's flags include -lg:safe_mapper (`legion_flags` in the application file, or after "
            "`--`)") in note, note


@pytest.mark.parametrize("src,fixed", [
    # a region written as a path (a C++ member, a file path, a scoped name): its last name, which the argument's
    # name chain has (a partition, then the region it divides), selects it
    ("Region calculate_new_currents all_nodes.rp_private GPU FBMEM;",
     "Region calculate_new_currents rp_private GPU FBMEM;"),
    ("Layout calculate_new_currents all_nodes/rp_private GPU SOA;",
     "Layout calculate_new_currents rp_private GPU SOA;"),
    ("CollectMemory * all_nodes::rp_private;", "CollectMemory * rp_private;"),
    # the task and the region joined by a '.': two fields
    ("Region calculate_new_currents.rp_private GPU FBMEM;", "Region calculate_new_currents rp_private GPU FBMEM;"),
])
def test_e100_a_region_written_as_a_path_gets_the_statement(src, fixed, circuit, m14):
    """`Region t a.b GPU FBMEM;`: a bare E100 ("unexpected '.'"); the hint says a region is selected by one name (or
    its index) and writes the statement, which checks clean."""
    with pytest.raises(DslSyntaxError) as info:
        parse(src, "bad.dsl")
    assert info.value.code == "E100", str(info.value)
    assert info.value.diagnostic.message.startswith("unexpected '"), str(info.value)  # §11.2's message, unchanged
    hints = info.value.diagnostic.hints
    assert any("a region is selected by one name" in h and f"`{fixed}`" in h for h in hints), hints
    assert diags(fixed, circuit, m14) == [], fixed


def test_e100_a_region_path_that_is_one_attached_name_gets_the_string_first():
    """A program attached "grid.ghost" to a partition, and the mapper names it bare: the hint offered only the
    nearest name, `ghost`, which the program does not have (an E203 next). The parser does not know the program's
    names, so the hint offers the string first, for such a name, then the nearest; the string checks clean."""
    from mapperopt.descriptions import AppDescription

    app = AppDescription.from_json({"schema": "mapperopt.app/1", "app": "heat", "discovered": True, "tasks": [
        {"name": "stencil", "task_id": 2, "variants": ["CPU"], "launch": "index", "leaf": True, "domain": [4],
         "regions": [{"index": 0, "names": ["grid.ghost", "grid"], "privilege": "read_only", "fields": ["u"],
                      "field_sizes": [8]}]}],
        "region_tree": [{"name": "grid", "kind": "region", "parent": None},
                        {"name": "grid.ghost", "kind": "partition", "parent": "grid"}]})
    with pytest.raises(DslSyntaxError) as info:
        parse("Region stencil grid.ghost CPU SYSMEM;\n", "bad.dsl")
    (hint,) = [h for h in info.value.diagnostic.hints if "a region is selected by one name" in h]
    quoted, nearest = '`Region stencil "grid.ghost" CPU SYSMEM;`', "`Region stencil ghost CPU SYSMEM;`"
    assert quoted in hint and nearest in hint and hint.index(quoted) < hint.index(nearest), hint
    assert diags(quoted.strip("`"), app) == [], quoted
