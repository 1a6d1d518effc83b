"""Run-time errors of the generated mapper (dsl-reference.md §11.1, §11.5): every place a DSL function can produce an
impossible processor prints one `[mapperopt] error Rnnn: ...` line on stderr, naming the function, the task, the point
and the machine model, then aborts. The line must be the evaluator's message for the same decision (positions refer to
the canonical text, `CompiledMapper.dsl_text`, as `mapper.dsl`), followed by the machine."""

from __future__ import annotations

import pytest

from compiler_support import app_description, machine, run, build_testapp
from mapperopt.compiler import compile_program
from mapperopt.dsl import DslRuntimeError, Evaluator, parse

CASES = {
    "R400": "def f(Task task) { return m[0, task.ipoint[0]]; }",
    "R401": "def f(Task task) { return m[0, 0 * (1 / (task.ipoint[0] - 1))]; }",
    "R402": "def f(Task task) { return Machine(IO)[0, 0]; }",
    "R406": "def f(Task task) { return m[*task.processor(m)]; }",
    "R407": "def f(Task task) { return m[0, (task.ipoint[0] + 9223372036854775807) % 2]; }",
    "R408": "def f(Task task) { return m[0, task.ipoint[1]]; }",
    "R409": "def f(Task task) { return m.split(1, 3)[0, 0, 0]; }",
    "R410": "def f(Task task) { return task.ipoint[0] < 2 ? m[0, 0] : m; }",
}
LEGION = ("-ll:cpu", "2", "-ll:io", "1")
SOURCE_NAME = "mapper.dsl"


def first_error(dsl: str, task: str, domain: tuple[int, ...]) -> DslRuntimeError:
    """The evaluator's error for the first failing point of `task`'s launch over `domain` (Legion's point order)."""
    ev = Evaluator(parse(dsl, SOURCE_NAME), machine(*LEGION), app_description())
    for i in range(domain[0]):
        try:
            ev.decide(task, (i,), domain)
        except DslRuntimeError as err:
            return err
    raise AssertionError("the evaluator found no error")


@pytest.mark.parametrize("code", sorted(CASES))
def test_mapping_function_errors(code, tmp_path):
    cm = compile_program(f"m = Machine(CPU);\n{CASES[code]}\nIndexTaskMap step f;\n", SOURCE_NAME)
    result = run(build_testapp(), cm.so_path, tmp_path, legion=LEGION)
    assert result.aborted(), result.stderr
    errors = result.mapper_errors()
    assert len(errors) == 1 and errors[0].startswith(f"[mapperopt] error {code}: "), result.stderr
    expected = str(first_error(cm.dsl_text, "step", (4,)))
    assert errors[0] == f"{expected}; machine Machine(CPU) (1, 2)"


def test_single_task_map_error_names_the_task(tmp_path):
    cm = compile_program("m = Machine(CPU);\ndef f(Task task) { return m[0, 7]; }\nSingleTaskMap check f;\n",
                         SOURCE_NAME)
    result = run(build_testapp(), cm.so_path, tmp_path, legion=LEGION)
    assert result.aborted()
    [line] = result.mapper_errors()
    ev = Evaluator(parse(cm.dsl_text, SOURCE_NAME), machine(*LEGION), app_description())
    with pytest.raises(DslRuntimeError) as err:
        ev.decide("check", None, None)
    assert line == f"{err.value}; machine Machine(CPU) (1, 2)"
    assert line.startswith("[mapperopt] error R400: processor index out of bound: index 7 >= size 2 in dimension 1 "
                           "of Machine(CPU) (1, 2); in function 'f' at mapper.dsl:2:27, SingleTaskMap of task 'check'")


def test_load_phase_error(tmp_path):
    cm = compile_program("m = Machine(CPU);\nx = m[0, m.size[1]];\n", SOURCE_NAME)
    result = run(build_testapp(), cm.so_path, tmp_path, legion=LEGION)
    assert result.aborted()
    [line] = result.mapper_errors()
    with pytest.raises(DslRuntimeError) as err:
        Evaluator(parse(cm.dsl_text, SOURCE_NAME), machine(*LEGION), app_description())
    assert line == f"{err.value}, load phase"


def test_task_map_error_is_on_stderr_before_stdout_is_lost(tmp_path):
    # The line is flushed before abort(): it survives even though Realm's stdout buffer is lost.
    cm = compile_program("m = Machine(CPU);\n" + CASES["R400"] + "\nIndexTaskMap step f;\n", SOURCE_NAME)
    result = run(build_testapp(), cm.so_path, tmp_path, legion=LEGION, app_flags=("-report",))
    assert result.aborted()
    assert result.stderr.rstrip().splitlines()[-1].startswith("[mapperopt] error R400")
