"""A task launched several times (tests/app/twofields.cc: `scale` index launched over `blocks` on field `a`, then on
`b`, then single launched on `b` of `grid`; `total` single launched on `a`, then on `b`; blocksum.cc: `update` on the
same blocks every step; pingghost.cc: `step` alternating between cur and next, a ping-pong; rotate.cc: `touch` on
10 regions in turn). Discovery records each
task's requirements on its first launch (of each kind) only, and every launch's region names (its placement trace):
`explain` says how many launches discovery mapped and whether they are all on the regions it shows or which differ
where, and that the fields it shows are the first one's, instead of silently showing field `a` alone. Descriptions
stored before launches were counted, or compared, still load."""

from __future__ import annotations

import re

import pytest

from mapperopt.benchmarks.userapp import app_from_command, discover
from mapperopt.cli import main
from mapperopt.descriptions import AppDescription, DescriptionError, OtherRegions

FIELDS_NOTE = "(discovery records no other launch's fields)"
BY_NAME_NOTE = ("the same statements map every launch (a statement that selects an argument by a region name, on the "
                "launches where it is in that region)")


def sections(out: str) -> dict[str, str]:
    """explain's text per task (the lines under `NAME (...)`), whitespace collapsed."""
    found = {}
    for block in out.split("\n\n"):
        head = re.match(r"(\w+) \(", block)
        if head:
            found[head.group(1)] = " ".join(block.split())
    return found


def explained(tmp_path, capsys, exe, *args) -> dict[str, str]:
    """`sections` of `mapperopt explain` of a mapper that maps every task on CPUs, for the program `exe`."""
    (tmp_path / "m.dsl").write_text("Task * CPU;\n")
    assert main(["explain", str(tmp_path / "m.dsl"), "--app", str(exe), *args]) == 0
    return sections(capsys.readouterr().out)


def test_explain_says_the_fields_shown_are_the_first_launchs(tmp_path, twofields_exe, capsys):
    by_task = explained(tmp_path, capsys, twofields_exe)
    # the first launches' field, `a`, as the table shows it
    assert re.search(r"0 blocks SYSMEM \S+ \S+ \w+ a ", by_task["scale"]), by_task["scale"]
    assert re.search(r"0 grid SYSMEM \S+ \S+ \w+ a ", by_task["total"]), by_task["total"]
    # the single launch of `scale` is on the whole region, not on the blocks the table shows
    assert ("2 index launches and 1 single launch in discovery; single launch 1 differs in arg 0 (region grid); the "
            f"fields above are its first index launch's {FIELDS_NOTE}; {BY_NAME_NOTE}") in by_task["scale"], \
        by_task["scale"]
    assert ("2 single launches in discovery, all on the regions above; the fields above are its first launch's "
            f"{FIELDS_NOTE}; the same statements map every launch") in by_task["total"], by_task["total"]
    # launched once: nothing to say
    assert "in discovery" not in by_task["top"], by_task["top"]


def test_explain_says_a_time_loops_launches_are_all_on_the_regions_shown(tmp_path, blocksum_exe, capsys):
    by_task = explained(tmp_path, capsys, blocksum_exe, "--", "-steps", "40")
    assert re.search(r"0 blocks SYSMEM \S+ \S+ \w+ temp, flux", by_task["update"]), by_task["update"]
    assert (f"40 index launches in discovery, all on the regions above; the fields above are its first launch's "
            f"{FIELDS_NOTE}; the same statements map every launch") in by_task["update"], by_task["update"]
    assert "differ" not in by_task["update"] and "may use other" not in by_task["update"], by_task["update"]


@pytest.mark.parametrize("flags", [(), ("-unnamed",)], ids=["named", "unnamed"])
def test_explain_names_the_ping_pong_launches_on_the_other_regions(tmp_path, pingghost, capsys, flags):
    by_task = explained(tmp_path, capsys, pingghost, "--", "-steps", "40", *flags)
    assert re.search(r"0 cur_ghost SYSMEM .* 1 next_blocks SYSMEM", by_task["step"]), by_task["step"]
    # every second step reads next's ghosts and writes cur's blocks
    assert ("40 index launches in discovery; launches 2, 4, ..., 40 differ in arg 0 (region next_ghost) and arg 1 "
            f"(region cur_blocks); the fields above are its first launch's {FIELDS_NOTE}; {BY_NAME_NOTE}") \
        in by_task["step"], by_task["step"]
    by_task = explained(tmp_path, capsys, pingghost, "--", "-steps", "3", *flags)
    assert "3 index launches in discovery; launch 2 differs in arg 0 (region next_ghost) and arg 1 (region " \
        "cur_blocks);" in by_task["step"], by_task["step"]


def test_explain_lists_the_first_groups_of_launches_on_other_regions(tmp_path, rotate_exe, capsys):
    """`touch` on r0, r1, ..., r9 in turn (12 launches): 9 ways of differing from the first, of which explain lists
    8 and counts the launches of the rest; `scan` over the whole grid, then over the blocks, named one by one."""
    by_task = explained(tmp_path, capsys, rotate_exe)
    assert "2 index launches in discovery; launch 2 differs in arg 0 (regions block_0, block_1, block_2 and 1 more);" \
        in by_task["scan"], by_task["scan"]
    listed = "; ".join(f"launch {n} differs in arg 0 (region r{n - 1})" for n in range(3, 10))
    assert (f"12 single launches in discovery; launches 2, 12 differ in arg 0 (region r1); {listed}; 1 other launch "
            f"on other regions; the fields above are its first launch's {FIELDS_NOTE}; {BY_NAME_NOTE}") \
        in by_task["touch"], by_task["touch"]


def test_a_description_without_launch_counts_still_loads(twofields_exe):
    """A description stored before discovery counted launches (a tuning folder's settings.json, the discovery cache
    of an older version) loads with the counts unknown; a new one keeps them through to_json."""
    desc = discover(app_from_command(str(twofields_exe)))
    app = AppDescription.from_json(desc)
    assert dict(app.task("scale").launches) == {"index": 2, "single": 1}
    assert dict(app.task("total").launches) == {"single": 2}
    assert app.task("scale").other_regions == (OtherRegions("single", ((1, 1, 1),), ((0, ("grid",)),)),)
    assert app.task("total").other_regions == ()
    again = AppDescription.from_json(app.to_json()).task("scale")
    assert (again.launches, again.other_regions) == (app.task("scale").launches, app.task("scale").other_regions)
    old = {**desc, "tasks": [{k: v for k, v in t.items() if k not in ("launches", "other_regions")}
                             for t in desc["tasks"]]}
    assert AppDescription.from_json(old).task("scale").launches == ()
    assert AppDescription.from_json(old).task("scale").other_regions is None
    assert AppDescription.from_json(old) == app  # the same tasks, regions and fields
    bad = {**desc, "tasks": [{**t, "launches": {"index": "2"}} for t in desc["tasks"]]}
    with pytest.raises(DescriptionError, match=r"task 'top' has launches \{'index': '2'\}"):
        AppDescription.from_json(bad)
    bad = {**desc, "tasks": [{**t, "other_regions": {"groups": [{"kind": "index"}], "unlisted": 0}}
                             for t in desc["tasks"]]}
    with pytest.raises(DescriptionError, match=r"task 'top' has other_regions .*; expected an object of launch groups"):
        AppDescription.from_json(bad)
