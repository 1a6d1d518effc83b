"""A program that names none of its regions, as most Legion tutorials (tests/app/timed.cc: an index launch of `work`
over an unnamed partition of an unnamed region): `explain` shows '-' for its argument, and a mapper that names a
region (a C++ variable's name, say) gets E203 with a hint that says why and what to write instead: the argument's
index, or a name attached in the program. Also a region written as a path (`data.pieces`), a syntax error (E100)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from mapperopt.cli import main


def check(capsys, *args) -> tuple[int, str]:
    code = main(["check", *map(str, args)])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


@pytest.mark.parametrize("written, whose, fixed", [
    ("Region work pieces CPU SYSMEM;", "task 'work'", "Region work 0 CPU SYSMEM;"),
    ("Layout work data_lp * SOA C_order;", "task 'work'", "Layout work 0 * SOA C_order;"),
    # `*`: the hint names a task that has a region argument (the top-level task has none)
    ("Region * pieces CPU SYSMEM;", "any task", "Region work 0 CPU SYSMEM;"),
])
def test_a_region_name_of_a_program_that_names_none_gets_the_index_and_attach_name(tmp_path, timed_exe, capsys,
                                                                                   written, whose, fixed):
    mapper = tmp_path / "m.dsl"
    mapper.write_text(written + "\n")
    code, out = check(capsys, mapper, "--app", timed_exe)
    assert code == 1 and "error[E203]: unknown region" in out, out
    hint = out[out.index("hint:"):]
    assert f"no region argument of {whose} has a name (explain shows '-')" in hint, out
    assert "C++ variable names" in hint and "runtime->attach_name(" in hint, out
    assert f"`{fixed}`" in hint, out
    # the statement the hint writes checks clean against the program
    mapper.write_text(fixed + "\n")
    code, out = check(capsys, mapper, "--app", timed_exe)
    assert code == 0 and "E203" not in out, out


def test_the_hint_asks_for_a_rebuild_naming_the_executables_date(tmp_path, timed_exe, capsys, monkeypatch):
    """A user who added attach_name calls but did not rebuild was told to add them again: the hint now says to
    rebuild a program whose sources attach names already, with the executable's date (`check` and `run` alike)."""
    monkeypatch.chdir(tmp_path)
    exe = tmp_path / "build" / "timed"
    exe.parent.mkdir()
    shutil.copy2(timed_exe, exe)
    stamp = time.mktime((2026, 3, 4, 5, 6, 0, 0, 0, -1))  # local time, as the hint gives it
    os.utime(exe, (stamp, stamp))
    Path("m.dsl").write_text("Region work pieces CPU SYSMEM;\n")
    rebuild = ("; if the program attaches names already, rebuild it (the executable build/timed is dated "
               "2026-03-04 05:06)")
    code, out = check(capsys, "m.dsl", "--app", "./build/timed")
    assert code == 1 and f'runtime->attach_name(region, "name"){rebuild}' in out, out
    assert main(["run", "--app", "./build/timed", "--mapper", "m.dsl", "--once", "--out", "run"]) != 0
    out = capsys.readouterr()
    assert rebuild in " ".join((out.out + out.err).split()), out


def test_a_field_ids_enum_name_for_a_region_is_said_to_be_a_field(tmp_path, timed_exe, capsys):
    """The C++ enum name of a field ID (timed.cc's FID_X) where a region goes: E203 says, as W315 says of a task ID's
    name, that it looks like a C++ enum value, here a field's, and that a field selects no argument."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Region work FID_X CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", timed_exe)
    assert code == 1 and "error[E203]: unknown region 'FID_X' for task 'work'" in out, out
    assert "`Region work 0 CPU SYSMEM;`" in out, out
    assert ("note: 'FID_X' looks like a C++ enum value (a field ID): a statement selects a task's region argument by "
            "its region's name or its index, never by a field") in out, out
    mapper.write_text("Region work pieces CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", timed_exe)
    assert code == 1 and "looks like a C++ enum value" not in out, out


def test_explains_name_of_an_unnamed_field_for_a_region_is_said_to_be_explains(tmp_path, timed_exe, capsys):
    """`field_1`, the name explain gives timed.cc's field ID 1 (FID_X has no name in the program), where a region
    goes: E203's note says where that name comes from, not that it looks like a C++ enum value (it is mapperopt's)."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Layout work field_1 * AOS;\n")
    code, out = check(capsys, mapper, "--app", timed_exe)
    assert code == 1 and "error[E203]: unknown region 'field_1' for task 'work'" in out, out
    assert ("note: 'field_1' is the name explain gives field ID 1, which has no name: a statement selects a task's "
            "region argument by its region's name or its index, never by a field") in out, out
    assert "looks like a C++ enum value" not in out, out


def test_explain_shows_the_unnamed_argument_as_a_dash(tmp_path, timed_exe, capsys):
    """What the hint quotes: explain's row of the argument, with '-' as its name."""
    mapper = tmp_path / "empty.dsl"
    mapper.write_text("")
    assert main(["explain", str(mapper), "--app", str(timed_exe)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^ +0 +- +SYSMEM ", out, re.M), out


def test_a_region_written_as_a_path_gets_a_hint(tmp_path, timed_exe, capsys):
    """`data.pieces`, as a C++ member or a file path: the DSL selects by one name, so the parser stops at the '.'
    (E100) and its hint says what selects a region."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Region work data.pieces CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", timed_exe)
    assert code == 1 and "error[E100]: unexpected '.'" in out, out
    assert "hint: a region is selected by one name" in out and "or by its argument index" in out, out
    assert "`Region work pieces CPU SYSMEM;`" in out, out


def test_an_unknown_name_of_a_program_that_names_its_regions_says_where_names_come_from(tmp_path, pieces_exe,
                                                                                        capsys):
    """tests/app/pieces.cc names its region and partition; a C++ variable's name (`owned_lp`), close to none of
    them, gets the names and a note: they are the attached ones, and an argument is also selected by its index."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Region fill owned_lp CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pieces_exe)
    assert code == 1 and "hint: region names of task 'fill': block_0, blocks, cells" in out, out
    assert "note: these are the names the program attached (runtime->attach_name(" in out, out
    assert "never C++ variable names" in out and "`Region fill 0 CPU SYSMEM;`" in out, out
    mapper.write_text("Region fill 0 CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pieces_exe)
    assert code == 0 and "E203" not in out, out
