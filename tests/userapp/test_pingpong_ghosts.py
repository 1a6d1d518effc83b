"""The usual Legion ping-pong with ghost cells (tests/app/pingghost.cc): `step` reads cur's ghost partition and
writes next's blocks, then next's ghosts and cur's blocks. Discovery records each task's first launch only, so the
names of the later launches (`next_ghost`) are not in its region tree: `check` warns (W322) instead of refusing them,
and warns (W328) that a name of the first launch selects the argument on only some of the launches, naming those
that differ (discovery compares every launch's regions with the first's)."""

from __future__ import annotations

import pytest

from mapperopt.benchmarks.apps import describe_app
from mapperopt.benchmarks.userapp import app_from_command
from mapperopt.cli import main
from mapperopt.descriptions import AppDescription
from mapperopt.dsl.checker import check as check_program
from mapperopt.dsl.parser import parse


def check(capsys, *args) -> tuple[int, str]:
    code = main(["check", *map(str, args)])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


@pytest.mark.parametrize("flags", [("--", "-steps", "1"), ("--", "-unnamed", "-steps", "1")],
                         ids=["named", "unnamed"])
def test_the_partner_regions_ghost_partition_is_a_warning_not_an_error(tmp_path, pingghost, capsys, flags):
    """One launch of `step`: discovery never saw `next_ghost`, named like `cur_ghost` with the partner's name."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nRegion step next_ghost CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pingghost, *flags)
    assert code == 0, out
    assert "E203" not in out and "warning[W322]: region 'next_ghost' is not among the names of task 'step'" in out, out
    assert "named like 'cur_ghost' with 'next' for 'cur'" in out, out
    mapper.write_text("Task * CPU;\nRegion step next_gohst CPU SYSMEM;\n")  # a typo stays an error
    code, out = check(capsys, mapper, "--app", pingghost, *flags)
    assert code == 1 and "error[E203]: unknown region 'next_gohst' for task 'step'" in out, out
    # its hint does not offer the name of the other argument (next_blocks, the written one)
    assert "did you mean 'next_blocks'" not in out and "did you mean 'next_ghost'" in out, out


def test_a_name_discovery_saw_on_later_launches_only_is_a_warning_not_an_error(tmp_path, pingghost, capsys):
    """-ab names the ghost partitions ghost_a and ghost_b (no region's name in them, so not derivable from the first
    launch's): discovery recorded ghost_b for launches 2 and 4 of `step`, and the statement selects argument 0 there."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nRegion step ghost_b CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pingghost, "--", "-ab")
    assert code == 0 and "E203" not in out, out
    assert ("warning[W322]: region 'ghost_b' is not among the names of the first launch of task 'step' (blockip, "
            "blocks_b, cells, cur, ghost_a, ghostip, next, vals), but discovery saw it on others: launches 2, 4 have "
            "argument 0 in 'ghost_b', so this statement selects argument 0 on those launches only") in out, out
    assert "hint: `Region step 0 CPU SYSMEM;` selects argument 0 on every launch" in out, out
    mapper.write_text("Task * CPU;\nRegion step ghost_c CPU SYSMEM;\n")  # a name no launch used stays an error
    code, out = check(capsys, mapper, "--app", pingghost, "--", "-ab")
    assert code == 1 and "error[E203]: unknown region 'ghost_c' for task 'step'" in out, out


def test_e203_near_a_name_lists_the_arguments_names_and_the_index(tmp_path, pingghost, capsys):
    """One `did you mean` may name the wrong argument or the other half of a ping-pong: the note lists each argument's
    names, those later launches use, and the index selector."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nRegion step ghost_x CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pingghost, "--", "-ab")
    assert code == 1 and "error[E203]: unknown region 'ghost_x' for task 'step'" in out, out
    assert ("note: arguments of 'step': 0 (ghost_a, ghostip, cur, cells, vals; ghost_b on launches 2, 4), 1 "
            "(blocks_b, blockip, next, cells, vals; blocks_a on launches 2, 4); a statement also selects an argument "
            "by its index, `Region step 0 CPU SYSMEM;`") in out, out


def test_roots_alike_in_their_fields_are_a_ping_pong_pair(tmp_path, pingghost, capsys):
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nRegion sum next CPU SYSMEM;\n")
    code, out = check(capsys, mapper, "--app", pingghost, "--", "-unnamed")
    assert code == 0 and "warning[W322]: region 'next' is not among the names of task 'sum'" in out, out
    assert "with the same fields (field_1) as 'cur'" in out, out


@pytest.mark.parametrize("flags", [(), ("--", "-unnamed")], ids=["named", "unnamed"])
def test_a_name_of_the_first_launch_of_a_ping_pong_task_warns_it_may_cover_some_launches_only(
        tmp_path, pingghost, capsys, flags):
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nLayout step cur_ghost * C_order;\n")
    code, out = check(capsys, mapper, "--app", pingghost, *flags)
    assert code == 0, out
    # one name for each thing: the name selected, its region, and the partner; and no more than discovery knows
    assert ("warning[W328]: 'cur_ghost' (a partition of region 'cur') selects argument 0 of task 'step'; "
            "argument 1 is on region 'next', a possible ping-pong partner of 'cur'") in out, out
    # the launches that swap them, as explain names them (4 steps: 2 and 4); swapped, argument 1 is in
    # 'cur_blocks', which 'cur_ghost' does not select
    assert ("in discovery, launches 2, 4 differ in arg 0 (region next_ghost) and arg 1 (region cur_blocks): where a "
            "launch swaps them, 'cur_ghost' selects argument 1 on it only where that argument is in 'cur_ghost' "
            "itself (on the first launch it is in 'next_blocks'), else no argument") in out, out
    assert "cannot tell" not in out, out
    assert "`Layout step 0 * C_order;` selects argument 0 on every launch" in out, out
    mapper.write_text("Task * CPU;\nLayout step cur * C_order;\n")  # the region itself
    code, out = check(capsys, mapper, "--app", pingghost, *flags)
    assert code == 0 and "warning[W328]: region 'cur' selects argument 0 of task 'step'; argument 1 is on region " \
        "'next', a possible ping-pong partner of 'cur'" in out, out
    assert "where a launch swaps them, 'cur' selects argument 1 on it" in out, out
    for fine in ("Layout step 0 * C_order;", "Layout step * * C_order;", "Layout init cur_blocks * C_order;"):
        mapper.write_text(f"Task * CPU;\n{fine}\n")
        code, out = check(capsys, mapper, "--app", pingghost, *flags)
        assert code == 0 and "W328" not in out, (fine, out)


def test_w328_says_when_discoverys_launches_do_not_swap_the_arguments(tmp_path, pingghost, capsys):
    """One step: discovery's only launch of `step` is the one it shows, so the name selects argument 0 on it; the
    warning stays (another input may take more steps)."""
    mapper = tmp_path / "m.dsl"
    mapper.write_text("Task * CPU;\nLayout step cur * C_order;\n")
    code, out = check(capsys, mapper, "--app", pingghost, "--", "-steps", "1")
    assert code == 0 and "warning[W328]: region 'cur' selects argument 0 of task 'step';" in out, out
    assert ("discovery mapped 1 index launch of 'step', so 'cur' selects argument 0 "
            "on it; if a launch swaps them in a run with other input, 'cur' selects argument 1 on it") in out, out
    assert "differ" not in out and "cannot tell" not in out, out


def test_w328_of_a_description_that_did_not_compare_launches(pingghost):
    """A description discovered before launches were compared (no `other_regions`) says whether any launch swaps the
    arguments is not known; one whose launches all agree (its groups emptied, as discovery writes them for a task
    launched on the same regions each time) says the name selects the argument on each."""
    desc = describe_app(app_from_command(pingghost))  # as check loads it
    program = parse("Task * CPU;\nLayout step cur * C_order;\n")

    def w328(tasks) -> str:
        found = [d for d in check_program(program, AppDescription.from_json({**desc, "tasks": tasks}))
                 if d.code == "W328"]
        assert len(found) == 1 and found[0].severity == "warning", found
        return found[0].message

    old = w328([{k: v for k, v in t.items() if k != "other_regions"} for t in desc["tasks"]])
    assert old.endswith("if a later launch swaps them, 'cur' selects argument 1 on it; discovery records each "
                        "task's first launch only, so it cannot tell whether any launch swaps them"), old
    same = w328([{**t, "other_regions": {"groups": [], "unlisted": 0}} for t in desc["tasks"]])
    assert ("discovery's 4 index launches of 'step' are all on the same regions in arguments 0 and 1, so 'cur' "
            "selects argument 0 on each; if a launch swaps them in a run with other input") in same, same
