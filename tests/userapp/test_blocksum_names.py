"""Names in a user's program as a Legion developer writes it (tests/app/blocksum.cc): a named region `grid` and its
block partition `blocks`, and a 1-element region, left unnamed as most tutorials leave their regions, that every point
of `accumulate` reduces into (`-unnamed`: the program attaches no name at all). Tasks registered under C++ enum IDs
(UPDATE_TASK_ID, ...) and the names `update`, `accumulate` and `check`. Each check discovers the program."""

from __future__ import annotations

import pytest

from mapperopt.cli import main


def check(capsys, tmp_path, text: str, app: str) -> tuple[int, str]:
    """`mapperopt check m.dsl --app APP` of a mapper `text`: its exit status and output, whitespace folded."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text(text)
    code = main(["check", str(mapper), "--app", app])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


@pytest.mark.parametrize("flags", ["", " -unnamed"])
@pytest.mark.parametrize("layout", ["Layout accumulate 1 * AOS Align==64;", "Layout * * * AOS Align==64;"])
def test_w330_warns_of_a_padded_aos_reduction_instance_of_an_unnamed_region(tmp_path, blocksum_exe, capsys, flags,
                                                                            layout):
    """AOS with a padding Align on accumulate's reduction (Realm's fill of such an instance can crash): the same
    warning whether or not the program attaches names, as the region's name does not change its instance."""
    code, out = check(capsys, tmp_path, f"Task * CPU;\nRegion * * CPU SYSMEM;\n{layout}\n", f"{blocksum_exe}{flags}")
    assert code == 0, out
    assert (f"m.dsl:3:1: warning[W330]: line 3's `{layout}` gives argument 1 of accumulate AOS instances with an "
            "element stride of 64 bytes (AOS Align==64 pads each 8-byte field to 64 bytes), for a reduction: Realm "
            "fills a reduction instance") in out, out
    assert out.count("warning[W330]") == 1, out
    fixed = layout.replace(" Align==64", "")
    assert f"hint: drop the Align: write `{fixed}` instead" in out, out
    code, out = check(capsys, tmp_path, f"Task * CPU;\nRegion * * CPU SYSMEM;\n{fixed}\n", f"{blocksum_exe}{flags}")
    assert code == 0 and "W330" not in out, out


def test_w330_pairs_no_unnamed_requirements_it_cannot_place_in_one_region_tree(tmp_path, blocksum_exe, capsys):
    """AOS of update's two fields beside accumulate's SOA of one: with names, both on the partition `blocks` (copies
    within one subregion, no W330); without, discovery does not say that they share a region tree, so W330's copy
    case does not pair them either."""
    for flags in ("", " -unnamed"):
        code, out = check(capsys, tmp_path, "Task * CPU;\nLayout update 0 * AOS;\n", f"{blocksum_exe}{flags}")
        assert code == 0 and "W330" not in out, (flags, out)


def test_an_unknown_region_name_of_a_task_with_an_unnamed_argument_names_that_argument(tmp_path, blocksum_exe,
                                                                                       capsys):
    """`Region accumulate sum ...`, the C++ variable's name of the unnamed reduction region: the hint lists the names
    attached to accumulate's arguments and the unnamed argument by its index, privilege and field, and the example
    selects that argument (index 1), not the named one (0)."""
    code, out = check(capsys, tmp_path, "Region accumulate sum CPU SYSMEM;\n", str(blocksum_exe))
    assert code == 1 and "error[E203]: unknown region 'sum' for task 'accumulate'" in out, out
    assert ("hint: region names of task 'accumulate': blocks, grid; argument 1 of 'accumulate' (reduce sum_f64; field "
            "field_300) has no name (explain shows '-'): `Region accumulate 1 CPU SYSMEM;` selects it") in out, out
    assert "an argument is also selected by its index, `Region accumulate 1 CPU SYSMEM;`" in out, out
    assert "Region accumulate 0 " not in out, out
    code, out = check(capsys, tmp_path, "Region accumulate 1 CPU SYSMEM;\n", str(blocksum_exe))
    assert code == 0 and "E203" not in out, out


@pytest.mark.parametrize("written, task", [("UPDATE_TASK_ID", "update"), ("ACCUMULATE_TASK", "accumulate"),
                                           ("CHECK_ID", "check"), ("TID_UPDATE", "update")])
def test_a_task_named_by_its_cpp_enum_id_gets_the_task_it_means(tmp_path, blocksum_exe, capsys, written, task):
    """A task written as its C++ enum value: W315 (another command line may launch a task of that name), with the
    registered name it contains and a note that enum names are not Legion task names. Beside a task that ran, a
    warning (exit status 0); as the mapper's only task name, the mapper maps no task of the program by name: E225
    (the check passed with exit status 0, its `did you mean` only in a warning)."""
    code, out = check(capsys, tmp_path, f"Task * CPU;\nTask update CPU;\nTask {written} CPU;\n", str(blocksum_exe))
    assert code == 0 and "E225" not in out, out
    assert f"warning[W315]: task '{written}' did not run in discovery" in out, out
    assert f"hint: did you mean '{task}'?" in out, out
    assert (f"note: '{written}' looks like a C++ enum value (a task ID): Legion knows a task by the name it is "
            "registered with, not by C++ names") in out, out
    code, out = check(capsys, tmp_path, f"Task {written} CPU;\nRegion {written} * CPU SYSMEM;\n", str(blocksum_exe))
    assert code == 1, out
    assert (f"m.dsl: error[E225]: the one task this mapper names did not run in discovery (`blocksum`): '{written}'; "
            "its statements that name tasks select nothing in this program") in out, out
    assert (f"hint: did you mean '{task}' for '{written}'? hint: if your runs do launch this task, check with "
            "their flags after `--`") in out, out
    assert "it looks like the mapper of another program" not in out, out
    # the warning on each statement keeps its hint and note
    assert out.count(f"warning[W315]: task '{written}' did not run in discovery") == 2, out
    assert f"hint: did you mean '{task}'?" in out and "looks like a C++ enum value" in out, out
    assert "m.dsl: 1 error(s), 2 warning(s)" in out, out


def test_several_tasks_named_by_their_enum_ids_are_not_taken_for_another_programs_mapper(tmp_path, blocksum_exe,
                                                                                         capsys):
    """Two enum names, neither of which ran: E225, not as the mapper of another program but with the task each
    likely means, and a W315 with its task each."""
    code, out = check(capsys, tmp_path, "Task UPDATE_TASK_ID CPU;\nTask ACCUMULATE_TASK_ID CPU;\n", str(blocksum_exe))
    assert code == 1 and "error[E225]: none of the 2 tasks this mapper names ran in discovery" in out, out
    assert "it looks like the mapper of another program" not in out, out
    assert ("hint: did you mean 'update' for 'UPDATE_TASK_ID' and 'accumulate' for 'ACCUMULATE_TASK_ID'? hint: if "
            "your runs do launch these tasks, check with their flags after `--`") in out, out
    assert "hint: did you mean 'update'?" in out and "hint: did you mean 'accumulate'?" in out, out


def test_runs_note_r453_for_a_task_named_by_its_enum_id_says_the_task_it_means(tmp_path, blocksum_exe, capsys):
    """The mapper's note R453 that `run` prints after its table, for a statement naming a task by its C++ enum ID:
    check's `did you mean` and its note on enum names (the note said only that no such task was mapped)."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nTask update CPU;\nTask ACCUMULATE_TASK_ID CPU;\n")
    assert main(["run", "--app", str(blocksum_exe), "--mapper", str(mapper), "--once", "--out",
                 str(tmp_path / "run")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (f"note R453: {mapper}:3: this Task statement matched nothing in this run: no task named "
            "'ACCUMULATE_TASK_ID' was mapped; did you mean 'accumulate'? ('ACCUMULATE_TASK_ID' looks like a C++ enum "
            "value (a task ID): Legion knows a task by the name it is registered with, not by C++ names)") in printed, \
        printed


def test_a_single_task_name_the_program_did_not_run_is_e225(tmp_path, blocksum_exe, capsys):
    """A mapper whose one task name matches no task the program ran and resembles none: E225 (exit status 1), with
    what to do (the program's tasks; other flags after `--`), instead of a warning that a script's exit status
    hides."""
    code, out = check(capsys, tmp_path, "Task frobnicate CPU;\n", str(blocksum_exe))
    assert code == 1 and "W315" not in out, out
    assert ("error[E225]: the one task this mapper names did not run in discovery (`blocksum`): 'frobnicate'; its "
            "statements that name tasks select nothing in this program") in out, out
    assert ("hint: give the mapper written for this program, or, if your runs do launch this task, check with "
            "their flags after `--`") in out, out
    assert "note: tasks that ran: top_level, " in out, out


def test_explain_says_how_statements_reach_the_top_level_task(tmp_path, blocksum_exe, capsys):
    """explain lists the top-level task; a statement that names it is E202 but for ControlReplicate, and `*` and kind
    selectors map it: explain says so under it."""
    mapper = tmp_path / "empty.dsl"
    mapper.write_text("")
    assert main(["explain", str(mapper), "--app", str(blocksum_exe)]) == 0
    out = capsys.readouterr().out
    section = out.split("\ntop_level (top-level task)\n", 1)[1].split("\n\n", 1)[0]
    # in plain words: what the top-level task is, and which statements reach it (it read "names it only in
    # ControlReplicate (E202 elsewhere)")
    assert ("  the top-level task runs once, on the first processor (unless a `SingleTaskMap` of `*` or of its kind "
            "places it), and launches the others; only a ControlReplicate statement may name it (any other statement "
            "that names it is error E202); statements with `*` or a processor kind (`Task * CPU;`, "
            "`SingleTaskMap CPU f;`) apply to it") in section, section
    code, out = check(capsys, tmp_path, "Task top_level CPU;\n", str(blocksum_exe))
    assert code == 1 and "error[E202]: task 'top_level' is the top-level task" in out, out
    code, out = check(capsys, tmp_path, "Task * CPU;\nControlReplicate top_level;\n", str(blocksum_exe))
    assert "E202" not in out, out


def test_runs_e225_for_enum_names_pastes_the_program_and_says_they_are_enum_values(tmp_path, blocksum_exe, capsys):
    """`run` refuses a mapper that names tasks only by their C++ enum IDs with E225, as `check` does: its command to
    check with other flags gives the program (it printed `--app ...`), and it says, as W315 does, that such a name
    is a C++ enum value."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nTask UPDATE_TASK_ID CPU;\nRegion * * CPU SYSMEM;\n")
    assert main(["run", "--app", f"{blocksum_exe} -unnamed", "--mapper", str(mapper), "--once", "--out",
                 str(tmp_path / "run")]) == 1
    out = capsys.readouterr()
    printed = " ".join((out.out + out.err).split())
    assert "error[E225]: the one task this mapper names did not run in discovery" in printed, printed
    assert (f"check with their flags after `--`: `mapperopt check {mapper} --app '{blocksum_exe} -unnamed' -- "
            "FLAGS`") in printed, printed
    assert ("note: 'UPDATE_TASK_ID' looks like a C++ enum value (a task ID): Legion knows a task by the name it is "
            "registered with, not by C++ names") in printed, printed
