"""Naming the top-level task, and a Region statement for a task without region arguments, in a user's program
(tests/app/foreign.cc: its top-level task `top_level`; `epoch worker` takes no region) as in a benchmark: the same
rule for both ways of describing a program."""

from __future__ import annotations

from mapperopt.cli import main

TUNABLE = "Tunable 11 = 2 int32;\n"  # foreign.cc asks its mapper for tunable 11


def check(tmp_path, capsys, text: str, *program: str) -> tuple[int, str]:
    (tmp_path / "m.dsl").write_text(text)
    code = main(["check", str(tmp_path / "m.dsl"), *program])
    return code, " ".join(capsys.readouterr().out.split())


def test_the_top_level_task_is_named_only_in_control_replicate_in_a_program_as_in_a_benchmark(tmp_path, capsys,
                                                                                              foreign_exe):
    """`Task main CPU;` is E202 for a benchmark (its description names `main` only as its tasks' parent), while
    `Task top_level CPU;` passed for a user's program, whose discovery lists its top-level task: E202 for both,
    ControlReplicate accepted for both."""
    app = ["--app", f"{foreign_exe} -n 1000 -steps 1", "--", "-ll:cpu", "2"]
    for program, top in ((app, "top_level"), (["--bench", "stencil"], "main")):
        code, out = check(tmp_path, capsys, f"Task * CPU;\n{TUNABLE if program is app else ''}Task {top} CPU;\n",
                          *program)
        assert code != 0 and (f"error[E202]: task '{top}' is the top-level task: a statement names it only in "
                              "ControlReplicate; the others reach it through `*` or a kind selector") in out, out
        code, out = check(tmp_path, capsys, f"Task * CPU;\n{TUNABLE if program is app else ''}Region {top} * CPU "
                          "SYSMEM;\n", *program)
        assert code != 0 and f"error[E202]: task '{top}' is the top-level task" in out, out
        assert "W305" not in out, out  # nothing more of a statement that cannot name it
        # it has no region arguments: no `Region * * CPU SYSMEM;` "applies to it with every other task"
        assert ("hint: remove the statement: the top-level task has no region arguments, so no Region statement "
                "applies to it") in out and "applies to it with every other task" not in out, out
        code, out = check(tmp_path, capsys, f"Task * CPU;\n{TUNABLE if program is app else ''}ControlReplicate "
                          f"{top};\n", *program)
        assert code == 0 and "E202" not in out, out


def test_a_region_statement_for_a_task_without_region_arguments_has_no_effect(tmp_path, capsys, foreign_exe):
    """`Region "epoch worker" * CPU SYSMEM;` (foreign.cc's epoch worker takes no region) passed silently; so did
    `Region calc_global_dt * CPU SYSMEM;` for pennant: W305, as for a statement without effect, naming the task."""
    app = ["--app", f"{foreign_exe} -n 1000 -steps 1", "--", "-ll:cpu", "2"]
    code, out = check(tmp_path, capsys, f'Task * CPU;\n{TUNABLE}Region "epoch worker" * CPU SYSMEM;\n', *app)
    assert code == 0 and ("warning[W305]: Region has no effect on epoch worker: it has no region arguments (as "
                          "launched in discovery)") in out, out
    code, out = check(tmp_path, capsys, f'Task * CPU;\n{TUNABLE}Layout "epoch worker",sum * CPU AOS;\n', *app)
    assert code == 0 and "warning[W305]: Layout has no effect on epoch worker: it has no region arguments" in out, out
    code, out = check(tmp_path, capsys, "Task * CPU;\nRegion calc_global_dt * CPU SYSMEM;\n", "--bench", "pennant")
    assert code == 0 and "warning[W305]: Region has no effect on calc_global_dt: it has no region arguments" in out, \
        out
    assert "hint: remove the statement" in out, out
    # a task with region arguments beside it: no warning for it
    code, out = check(tmp_path, capsys, f'Task * CPU;\n{TUNABLE}Region sum * CPU SYSMEM;\n', *app)
    assert code == 0 and "W305" not in out, out
